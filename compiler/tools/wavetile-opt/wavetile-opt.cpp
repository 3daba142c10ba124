//===- wavetile-opt.cpp - every dialect and pass, for lit tests -----------===//

#include "wavetile/Pipeline/Pipelines.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  wavetile::registerDialects(registry);
  wavetile::registerPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "Wavetile optimizer driver\n", registry));
}
