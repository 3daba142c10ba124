//===- Pipelines.h - registration and pass pipelines ------------*- C++ -*-===//
//
// Compiler-internal (uses MLIR). The public entry points are in wavetile/Compiler.h.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_PIPELINE_PIPELINES_H
#define WAVETILE_PIPELINE_PIPELINES_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

namespace wavetile {
/// Every dialect, interface and translation a Wavetile context needs.
void registerDialects(mlir::DialectRegistry &registry);
/// Our passes and pipelines plus the upstream ones they use (idempotent).
void registerPasses();
/// Tile IR -> LLVM dialect ready for the ORC JIT ("wavetile-host-pipeline"). K loops are
/// pipelined with `loopPipelining` ("async-copies" or "registers", as tile-pipeline-loops).
mlir::LogicalResult buildHostPipeline(mlir::OpPassManager &pm, llvm::StringRef loopPipelining = "async-copies");
/// Tile IR -> gpu.module @wavetile in the LLVM dialect with ROCDL/NVVM for a GPU target
/// ("wavetile-gpu-pipeline{target=...}"); fails for unknown targets.
mlir::LogicalResult buildGpuPipeline(mlir::OpPassManager &pm, llvm::StringRef target);
} // namespace wavetile

#endif
