// Round-trip of the program-instance queries tile.program_id and tile.num_programs.
// RUN: %wavetile-opt %s | %wavetile-opt | FileCheck %s
// RUN: %wavetile-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: %wavetile-opt %s -canonicalize | FileCheck %s --check-prefix=CANON

// CHECK-LABEL: func.func @program_ids
// CHECK:         %[[X:.*]] = tile.program_id 0
// CHECK-NEXT:    %[[Y:.*]] = tile.program_id 1
// CHECK-NEXT:    %[[Z:.*]] = tile.program_id 2
// CHECK-NEXT:    return %[[X]], %[[Y]], %[[Z]] : i32, i32, i32
// GENERIC-LABEL: sym_name = "program_ids"
// GENERIC:         "tile.program_id"() <{axis = 0 : i32}> : () -> i32
// GENERIC:         "tile.program_id"() <{axis = 2 : i32}> : () -> i32
func.func @program_ids() -> (i32, i32, i32) {
  %x = tile.program_id 0
  %y = tile.program_id 1
  %z = tile.program_id 2
  return %x, %y, %z : i32, i32, i32
}

// CHECK-LABEL: func.func @grid_sizes
// CHECK:         %[[X:.*]] = tile.num_programs 0
// CHECK-NEXT:    %[[Y:.*]] = tile.num_programs 1
// CHECK-NEXT:    %[[Z:.*]] = tile.num_programs 2 {tag}
// CHECK-NEXT:    return %[[X]], %[[Y]], %[[Z]] : i32, i32, i32
// GENERIC-LABEL: sym_name = "grid_sizes"
// GENERIC:         "tile.num_programs"() <{axis = 1 : i32}> : () -> i32
func.func @grid_sizes() -> (i32, i32, i32) {
  %x = tile.num_programs 0
  %y = tile.num_programs 1
  %z = tile.num_programs 2 {tag}
  return %x, %y, %z : i32, i32, i32
}

// Both queries are Pure: unused ones are erased as dead code.
// CHECK-LABEL: func.func @pure
// CHECK:         tile.program_id 0
// CHECK:         tile.num_programs 0
// CANON-LABEL: func.func @pure
// CANON-NOT:     tile.
// CANON:         return
func.func @pure() {
  %0 = tile.program_id 0
  %1 = tile.num_programs 0
  return
}
