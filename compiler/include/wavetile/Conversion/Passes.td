//===- Passes.td - conversions between dialects ---------------*- tablegen -*-===//
#ifndef WAVETILE_CONVERSION_PASSES
#define WAVETILE_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTileToHost : Pass<"convert-tile-to-host", "::mlir::ModuleOp"> {
  let summary = "Lower tile kernels to loops over tensors that run one program at a time";
  let description = [{
    Every tile op becomes explicit `scf.for` nests over `tensor.extract`/`tensor.insert`
    (bufferized later), pointers become `!llvm.ptr`, layouts are dropped (a tile's value does
    not depend on its distribution), barriers vanish and async copies complete at once.
    Each kernel `@k` gets six trailing i32 arguments (program id and grid size per axis)
    and a driver `@k__grid(args..., gx, gy, gz)` that runs every program in order.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::memref::MemRefDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::func::FuncDialect"];
}

def ExpandHostBF16 : Pass<"wavetile-host-expand-bf16"> {
  let summary = "Expand bf16 extensions and truncations into exact integer arithmetic";
  let description = [{
    The host keeps bf16 conversions exact (round to nearest even, subnormals kept) by doing
    them in integer arithmetic. Unlike `arith-expand`, this leaves `maximumf`/`minimumf`
    alone, so LLVM's intrinsics keep their IEEE-754 2019 semantics (-0 < +0, NaN wins).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ConvertTileToGPU : Pass<"convert-tile-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Distribute laid-out tile kernels over threads as gpu.func kernels";
  let description = [{
    Runs after `tile-assign-layouts`. Each tile kernel becomes a `gpu.func` in the
    `gpu.module @wavetile`: a tile becomes the vector of the elements its layout gives each
    thread; elementwise ops work on those vectors; loads and stores become per-thread
    accesses (a replicated element is written by one owner thread only); layout changes,
    broadcasts, transposes and reshapes stay in registers when the layouts prove every
    thread already holds what it needs, and otherwise pass through shared memory;
    reductions combine in-thread, then across lanes with butterfly shuffles, then across
    warps through shared memory. The kernel takes the grid size as three trailing i32
    arguments (for `tile.num_programs`) and declares its block size.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "GPU target: gfx942, gfx950, sm_90 or sm_90a">,
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t", /*default=*/"0",
           "Shared memory one kernel may use (0: no limit); larger kernels are an error">,
    Option<"maxStaticSharedBytes", "max-static-shared-bytes", "int64_t", /*default=*/"0",
           "Beyond this many bytes (0: never) a kernel's shared buffer is dynamic shared memory, "
           "sized at launch from the manifest">,
    Option<"directToLds", "direct-to-lds", "bool", /*default=*/"true",
           "AMD: write async copies whose layouts allow it with load-to-LDS instructions "
           "(global_load_lds / buffer_load ... lds) instead of through registers">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::memref::MemRefDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::ROCDL::ROCDLDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::amdgpu::AMDGPUDialect"];
}

def LowerGPUMath : Pass<"wavetile-gpu-math"> {
  let summary = "Rewrite math ops that have no native GPU instruction into arithmetic";
  let description = [{
    Upstream GPU lowerings turn math ops into calls to the vendors' device libraries
    (`__ocml_*`, `__nv_*`), which a code object cannot resolve without them. This pass
    expands composite ops (rsqrt, tanh, powf, ...) and replaces transcendental ones (exp, log,
    erf, ...) with polynomial approximations in plain arithmetic, computing f16/bf16 in f32.
    What remains (sqrt, fabs, floor, fma, ...) maps to LLVM intrinsics both backends
    implement natively (`convert-math-to-llvm`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def ConvertGPUKernelsToLLVM : Pass<"wavetile-gpu-to-llvm", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower distributed kernels to the LLVM dialect with ROCDL or NVVM, without device libraries";
  let description = [{
    The upstream GPU->ROCDL/NVVM patterns for kernels, thread ids, shuffles, barriers and
    workgroup memory, with math mapped to LLVM intrinsics the backends implement natively
    (never to `__ocml_*`/`__nv_*` library calls; run `wavetile-gpu-math` first).
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "GPU target: gfx942, gfx950, sm_90 or sm_90a">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::ROCDL::ROCDLDialect", "::mlir::NVVM::NVVMDialect"];
}

#endif
