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

#endif
