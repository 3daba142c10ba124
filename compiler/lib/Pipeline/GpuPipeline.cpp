//===- GpuPipeline.cpp - tile IR to LLVM-dialect GPU kernels --------------===//

#include "wavetile/Pipeline/Pipelines.h"

#include "wavetile/Target/GPUTargets.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

// Written as text so the same pipeline can be replayed with wavetile-opt --pass-pipeline.
// Layouts and distribution work on the module; vendor lowering on each gpu.module.
static constexpr const char *kGpuPipeline =
    "canonicalize,cse,{4}"
    "tile-pipeline-loops{{mode={2}},canonicalize,cse,{6}"
    "tile-assign-layouts{{warp-size={1} target={0}},"
    "convert-tile-to-gpu{{target={0} max-shared-bytes={3} max-static-shared-bytes={5}},"
    "canonicalize,cse,"
    "gpu.module("
    "wavetile-gpu-math,"
    "convert-scf-to-cf,"
    "wavetile-gpu-to-llvm{{target={0}},"
    "canonicalize,cse),"
    "reconcile-unrealized-casts";

mlir::LogicalResult wavetile::buildGpuPipeline(mlir::OpPassManager &pm, llvm::StringRef targetName) {
  auto target = lookupGpuTarget(std::string_view(targetName.data(), targetName.size()));
  if (!target)
    return mlir::failure();
  // NVIDIA's cp.async overlaps copies with compute. On CDNA a two-stage ring is staged
  // through registers (loads in flight during the next dot, one LDS buffer pair); deeper
  // rings use async copies, which are load-to-LDS instructions there.
  const char *prefetch = target->vendor == GpuVendor::NVIDIA ? "async-copies" : "by-depth";
  // CDNA buffer resources make masked and bounds-checked accesses branch-free.
  const char *bufferViews = target->vendor == GpuVendor::AMD ? "func.func(tile-use-buffer-views)," : "";
  // sm_90a's wgmma reads dot operands from the pipeline's shared buffers themselves.
  const char *warpgroupDots = targetName == "sm_90a" ? "tile-use-warpgroup-dots," : "";
  return mlir::parsePassPipeline(llvm::formatv(kGpuPipeline, targetName, target->waveSize, prefetch,
                                               target->maxSharedBytesPerWorkgroup, bufferViews,
                                               target->maxStaticSharedBytes, warpgroupDots)
                                     .str(),
                                 pm);
}
