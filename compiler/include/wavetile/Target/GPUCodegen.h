//===- GPUCodegen.h - gpu.module (LLVM dialect) to hsaco / PTX --*- C++ -*-===//
//
// Compiler-internal (uses MLIR and LLVM). Everything runs in-process (design
// brief, decision 2): MLIR LLVM dialect -> LLVM IR (translateModuleToLLVMIR on
// the gpu.module) -> LLVM O3 -> llvm::TargetMachine -> AMDGPU assembly or ELF
// relocatable object -> lld linked as a library -> hsaco (code object v5); or
// PTX text for NVIDIA. No subprocess is spawned (unlike upstream
// `gpu-module-to-binary format=bin`, which runs ld.lld / ptxas).
//
// Input contract (what the distribution pass and `*-to-rocdl` / `*-to-nvvm`
// produce):
//  - a `gpu.module` whose body is LLVM dialect plus rocdl / nvvm ops;
//  - kernels are `llvm.func` with `rocdl.kernel` (AMD) or `nvvm.kernel` (NVIDIA);
//  - AMD kernels declare their block size: `rocdl.flat_work_group_size =
//    "min,max"` and/or `rocdl.reqd_work_group_size = array<i32: x, y, z>`
//    (or the legacy `rocdl.max_flat_work_group_size`). Without one, ROCDL
//    silently caps the kernel at 256 threads, so codegen refuses the kernel.
//    The distribution pass sets them from tile.num_warps. With only
//    reqd_work_group_size, codegen sets amdgpu-flat-work-group-size to
//    "x*y*z,x*y*z" (ROCDL's translation alone would keep the 256 cap).
//  - NVIDIA kernels may carry `nvvm.maxntid` / `nvvm.reqntid`; they are kept
//    (emitted as .maxntid / .reqntid).
//
// Threads: calls on different MLIRContexts may run concurrently (each builds
// its own llvm::LLVMContext and TargetMachine; lld links are serialized inside
// linkAmdgpuObject). Calls on one MLIRContext must not overlap: codegen appends
// the translation interfaces to the context and loads dialects into it.
//
// Outputs are checked: an hsaco whose dynamic symbol table has undefined
// symbols (e.g. `__ocml_*`, `__ockl_*` device-library calls) links but will
// not load, so it is an error naming them; PTX with `.extern .func`
// declarations of libdevice functions (`__nv_*`) is an error likewise.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_TARGET_GPUCODEGEN_H
#define WAVETILE_TARGET_GPUCODEGEN_H

#include "wavetile/Target/GPUTargets.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace wavetile {

/// The dialect translations codegen needs (builtin, LLVM, ROCDL, NVVM, GPU).
/// `compileGpuModule` appends them to the module's context itself; this is for
/// callers that build their own registry.
void registerGpuTranslations(mlir::DialectRegistry &registry);

/// Initializes the AMDGPU and NVPTX LLVM targets (MC, asm printer/parser,
/// disassembler) once per process.
void initializeGpuLLVMTargets();

/// The vendor whose kernels `module` holds, or failure with a message when it
/// holds none or both.
mlir::FailureOr<GpuVendor> gpuModuleVendor(mlir::gpu::GPUModuleOp module, std::string *error);

/// gpu.modules -> one LLVM module with the target's triple and data layout,
/// block sizes settled, COV5 module flag (AMD), optimized with the LLVM O3
/// pipeline. Several gpu.modules are linked at the LLVM IR level (llvm::Linker):
/// a code object carries one HSA metadata note, and linking several AMDGPU
/// objects with lld would leave one note per object, of which loaders read one.
mlir::FailureOr<std::unique_ptr<llvm::Module>>
translateAndOptimizeGpuModules(llvm::ArrayRef<mlir::gpu::GPUModuleOp> modules, const GpuTarget &target,
                               llvm::LLVMContext &context, std::string *error);

/// Compiles gpu.modules (all for `target`'s vendor) into one output: LLVM IR
/// text, assembly text (AMDGPU asm or PTX), or the binary (AMD hsaco, checked
/// for unresolved symbols; NVIDIA PTX, checked for libdevice externs).
mlir::FailureOr<std::string> compileGpuModules(llvm::ArrayRef<mlir::gpu::GPUModuleOp> modules,
                                               const GpuTarget &target, GpuEmit emit, std::string *error);

/// AMD only: the ELF relocatable object of the gpu.modules (before linking).
mlir::FailureOr<std::string> compileGpuModulesToObject(llvm::ArrayRef<mlir::gpu::GPUModuleOp> modules,
                                                       const GpuTarget &target, std::string *error);

/// Links one relocatable object into a shared object (`ld.lld -shared`) with lld as a
/// library; `what` names it in errors. Thread-safe (links are serialized: lld keeps one
/// global context per process). Fails, without running lld, once an earlier link in this
/// process crashed (lld's canRunAgain = false).
mlir::FailureOr<std::string> linkSharedObject(llvm::StringRef object, llvm::StringRef what, std::string *error);

/// Links one AMDGPU relocatable object into a shared code object with `linkSharedObject`,
/// then checks the result with `findUndefinedSymbols`.
mlir::FailureOr<std::string> linkAmdgpuObject(llvm::StringRef object, std::string *error);

/// Names of undefined symbols in an ELF shared object's dynamic symbol table
/// (and static symbol table). Failure when `elf` is not a readable ELF file.
mlir::FailureOr<std::vector<std::string>> findUndefinedSymbols(llvm::StringRef elf, std::string *error);

/// Functions a PTX module declares `.extern .func` but does not define, except
/// those the CUDA driver provides (vprintf, malloc, free, __assertfail).
std::vector<std::string> findUnresolvedPtxFunctions(llvm::StringRef ptx);

} // namespace wavetile

#endif
