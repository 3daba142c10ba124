//===- HostPipeline.cpp - tile IR to LLVM for the host --------------------===//

#include "wavetile/Pipeline/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

// Written as text so the same pipeline can be replayed with wavetile-opt --pass-pipeline.
static constexpr const char *kHostPipeline =
    "canonicalize,cse,"
    "func.func(tile-use-buffer-views)," // as on CDNA, so host runs check the rewrite
    "tile-pipeline-loops{{mode={0}},canonicalize,cse,"
    "convert-tile-to-host,"
    "canonicalize,"
    "one-shot-bufferize{{bufferize-function-boundaries=true allow-return-allocs-from-loops=true},"
    "buffer-deallocation-pipeline,"
    "convert-scf-to-cf,"
    "wavetile-host-expand-bf16,"
    "expand-strided-metadata,"
    "finalize-memref-to-llvm,"
    "convert-math-to-llvm,"  // intrinsics first; libm only for what has none (erf, tanh)
    "convert-math-to-libm,"
    "convert-to-llvm,"
    "reconcile-unrealized-casts";

mlir::LogicalResult wavetile::buildHostPipeline(mlir::OpPassManager &pm, llvm::StringRef loopPipelining) {
  return mlir::parsePassPipeline(llvm::formatv(kHostPipeline, loopPipelining).str(), pm);
}
