//===- Emulator.h - running GPU kernels on the host, lane by lane -*- C++ -*-===//
//
// Executes a module's kernels for a GPU target without the GPU: the IR after distribution
// to threads (LLVM dialect with ROCDL or NVVM ops, what LLVM code generation receives) is
// interpreted with every lane of a workgroup as its own context, the target's wave size,
// barriers that wait for the whole workgroup, per-workgroup LDS, cross-lane operations
// computed from the vendors' documented lane maps, buffer loads and stores with the
// hardware's range checks, and every global and LDS access bounds-checked. What is and is
// not modelled: docs/emulator.md.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_EMULATOR_H
#define WAVETILE_EMULATOR_H

#include "wavetile/Compiler.h"
#include "wavetile/runtime/Device.h"

namespace wavetile {

class EmulatedModule {
public:
  struct Impl;
  explicit EmulatedModule(std::unique_ptr<Impl> impl);
  ~EmulatedModule();

  /// Lowers `module` for `target` as compileKernelsForGpu does, up to the per-thread IR.
  static std::unique_ptr<EmulatedModule> compile(const Module &module, const GpuTarget &target, std::string *error);

  const ModuleManifest &manifest() const;

  /// Runs `kernel` over `grid` workgroups on host memory: pointer arguments are host
  /// addresses with their extents (every access is checked against them). False with the
  /// reason (lane, operation, address) on an invalid access, an operation the emulator
  /// does not model, a deadlock, or bad arguments.
  bool launch(std::string_view kernel, std::array<uint32_t, 3> grid, const std::vector<KernelArg> &args,
              std::string *error) const;

  /// The module from lowerKernelsForEmulation's output (a cached "emulate:<target>" code
  /// object): the per-thread IR as text and its manifest.
  static std::unique_ptr<EmulatedModule> fromLowered(std::string_view text, ModuleManifest manifest,
                                                     const GpuTarget &target, std::string *error);

private:
  std::unique_ptr<Impl> impl_;
};

/// A runtime device of `target` that runs every kernel through the emulator, on host memory
/// (registers the emulator with the runtime first). Library ops and JIT launches work on it
/// as on a GPU: their kernels are compiled for "emulate:<target>".
std::unique_ptr<Device> openEmulatedDevice(std::string_view target, std::string *error);

} // namespace wavetile

#endif
