# Helpers shared by every folder of the tree.

# Libraries that never touch MLIR (layout algebra, atom table) stay plain C++.
function(wavetile_add_plain_library name)
  add_library(${name} STATIC ${ARGN})
  target_include_directories(${name} PUBLIC ${WAVETILE_SOURCE_DIR}/compiler/include)
endfunction()

# Libraries that use MLIR/LLVM. MLIR_LIBS / LLVM_COMPONENTS list what is needed; with
# WAVETILE_LINK_DYLIB they collapse to the two shared libraries.
function(wavetile_add_mlir_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;MLIR_LIBS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC
    ${WAVETILE_SOURCE_DIR}/compiler/include ${WAVETILE_BINARY_DIR}/compiler/include)
  target_include_directories(${name} SYSTEM PUBLIC ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  target_compile_definitions(${name} PUBLIC ${LLVM_DEFINITIONS})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  if(WAVETILE_LINK_DYLIB)
    target_link_libraries(${name} PUBLIC MLIR LLVM ${ARG_LINK_LIBS})
  else()
    target_link_libraries(${name} PUBLIC ${ARG_MLIR_LIBS} ${ARG_LINK_LIBS})
  endif()
endfunction()
