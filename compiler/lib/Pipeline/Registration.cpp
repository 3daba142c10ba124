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

void wavetile::registerPasses() {
  static bool registered = [] {
    mlir::registerAllPasses();
    tile::registerTilePasses();
    registerWavetileConversionPasses();
    mlir::PassPipelineRegistration<>(
        "wavetile-host-pipeline", "Lower tile kernels to LLVM for the host JIT",
        [](mlir::OpPassManager &pm) { (void)buildHostPipeline(pm); });
    return true;
  }();
  (void)registered;
}
