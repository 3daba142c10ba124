//===- Registration.cpp - dialects, passes, pipelines ---------------------===//

#include "wavetile/Pipeline/Pipelines.h"

#include "wavetile/Conversion/Passes.h"
#include "wavetile/Dialect/Tile/IR/TileDialect.h"
#include "wavetile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void wavetile::registerDialects(mlir::DialectRegistry &registry) {
  registry.insert<tile::TileDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
}

namespace {
struct GpuPipelineOptions : mlir::PassPipelineOptions<GpuPipelineOptions> {
  Option<std::string> target{*this, "target", llvm::cl::desc("gfx942, gfx950, sm_90 or sm_90a")};
};
} // namespace

void wavetile::registerPasses() {
  static bool registered = [] {
    mlir::registerAllPasses();
    tile::registerTilePasses();
    registerWavetileConversionPasses();
    mlir::PassPipelineRegistration<>(
        "wavetile-host-pipeline", "Lower tile kernels to LLVM for the host JIT",
        [](mlir::OpPassManager &pm) { (void)buildHostPipeline(pm); });
    mlir::PassPipelineRegistration<GpuPipelineOptions>(
        "wavetile-gpu-pipeline", "Lay out, distribute and lower tile kernels for a GPU target",
        [](mlir::OpPassManager &pm, const GpuPipelineOptions &options) {
          (void)buildGpuPipeline(pm, options.target);
        });
    return true;
  }();
  (void)registered;
}
