//===- CompileGpu.cpp - the plain-C++ entry point for pre-lowered modules -===//

#include "wavetile/Pipeline/ModuleImpl.h"
#include "wavetile/Target/GPUCodegen.h"
#include "wavetile/Target/GPUTargets.h"

#include "mlir/IR/BuiltinOps.h"

using namespace wavetile;

bool wavetile::hasGpuModules(const Module &module) {
  return !module.impl().module.get().getOps<mlir::gpu::GPUModuleOp>().empty();
}

std::optional<std::string> wavetile::compileGpuModules(const Module &module, const GpuTarget &target, GpuEmit emit,
                                                       std::string *error) {
  std::string scratch;
  if (!error)
    error = &scratch;
  std::vector<mlir::gpu::GPUModuleOp> selected;
  for (auto gpuModule : module.impl().module.get().getOps<mlir::gpu::GPUModuleOp>()) {
    auto vendor = gpuModuleVendor(gpuModule, error);
    if (mlir::failed(vendor))
      return std::nullopt;
    if (*vendor == target.vendor)
      selected.push_back(gpuModule);
  }
  if (selected.empty()) {
    *error = std::string("no gpu.module with ") + (target.isAMD() ? "rocdl.kernel" : "nvvm.kernel") +
             " kernels to compile for " + std::string(target.name) + "\n";
    return std::nullopt;
  }
  auto out = compileGpuModules(selected, target, emit, error);
  if (mlir::failed(out))
    return std::nullopt;
  return std::move(*out);
}
