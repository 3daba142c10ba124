//===- Compiler.h - public C++ API of the Wavetile compiler -----*- C++ -*-===//
//
// Plain C++: no MLIR or LLVM headers, so users and bindings compile fast.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_COMPILER_H
#define WAVETILE_COMPILER_H

#include "wavetile/Target/GPUTargets.h"
#include "wavetile/runtime/Kernel.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wavetile {

/// A module of tile kernels (owns its IR). Built by the DSL or parsed from text.
class Module {
public:
  struct Impl;
  explicit Module(std::unique_ptr<Impl> impl);
  ~Module();
  Module(Module &&) noexcept;
  Module &operator=(Module &&) noexcept;

  /// Parses tile IR; on failure returns null and writes located diagnostics to *error.
  static std::unique_ptr<Module> parse(std::string_view text, std::string_view bufferName,
                                       std::string *error);
  /// Runs the verifiers; diagnostics name the source location of the offending op.
  bool verify(std::string *error) const;
  /// The tile IR as text (with source locations when `withLocations`).
  std::string str(bool withLocations = false) const;
  /// The tile IR as text with each block's operations in an order that depends only on their
  /// structure and dependencies, not on the order they were built in: equal for the same
  /// kernel written in the C++ and the Python DSL.
  std::string canonicalStr() const;
  std::vector<KernelSignature> kernels() const;

  Impl &impl() { return *impl_; }
  const Impl &impl() const { return *impl_; }

private:
  std::unique_ptr<Impl> impl_;
};

/// Stages `lowerForHost` can stop at.
enum class HostStage { LLVMDialect, LLVMIR };

/// The module lowered for the host, as MLIR LLVM-dialect text or LLVM IR text.
std::optional<std::string> lowerForHost(const Module &module, HostStage stage, std::string *error);

/// Compiles the module for a GPU target: tile kernels go through layout assignment,
/// distribution and vendor lowering; gpu.modules already in the LLVM dialect pass through.
/// The result is LLVM IR, assembly (AMDGPU or PTX), or the binary (hsaco; PTX for NVIDIA).
std::optional<std::string> compileForGpu(const Module &module, const GpuTarget &target, GpuEmit emit,
                                         std::string *error);

/// A code object (hsaco for AMD, PTX for NVIDIA, a shared object for the host) and the
/// manifest the runtime launches its tile kernels by.
struct CodeObject {
  std::string image;
  ModuleManifest manifest;
};
/// With `dumpDirectory`, also writes every stage there: the tile IR, the IR after each pass
/// that changed it, the LLVM IR after O3, the assembly, the code object and the manifest.
std::optional<CodeObject> compileKernelsForGpu(const Module &module, const GpuTarget &target, std::string *error,
                                              const std::optional<std::string> &dumpDirectory = std::nullopt);

/// The module lowered for `target` as compileKernelsForGpu lowers it: `image` is the
/// per-thread MLIR before LLVM code generation (LLVM dialect with ROCDL or NVVM ops) that the
/// emulator runs (wavetile/Emulator.h), with the same manifest. The code object is generated
/// as well and dropped, so what fails to compile for the GPU fails here too. `dumpDirectory`
/// as for compileKernelsForGpu (without the code object's files).
std::optional<CodeObject> lowerKernelsForEmulation(const Module &module, const GpuTarget &target, std::string *error,
                                                   const std::optional<std::string> &dumpDirectory = std::nullopt);

/// How K loops of kernels with tile.num_stages are software-pipelined on the host: the way
/// NVIDIA targets do it (async copies) or the way CDNA does it (tiles staged in registers),
/// so the host runs, and checks, the program a GPU target gets.
enum class LoopPipelining { AsyncCopies, Registers };

/// The module's kernels as a shared object for this CPU (linked by lld in-process), with
/// their manifest (target "host"). The runtime's host device loads it with dlopen and calls
/// `<kernel>__packed(args)`, so host kernels are cached and launched like GPU code objects.
std::optional<CodeObject> compileKernelsForHost(const Module &module, std::string *error,
                                               LoopPipelining pipelining = LoopPipelining::AsyncCopies);

/// Kernels JIT-compiled for this CPU; each launch runs every program of the grid in turn.
class HostExecutable {
public:
  struct Impl;
  ~HostExecutable();
  static std::unique_ptr<HostExecutable> compile(const Module &module, std::string *error,
                                                 LoopPipelining pipelining = LoopPipelining::AsyncCopies);

  /// Runs `kernel` over grid (x, y, z). Checks the argument count and kinds (and pointer
  /// element types where given) against the kernel before running anything.
  bool launch(std::string_view kernel, std::array<uint32_t, 3> grid, const std::vector<KernelArg> &args,
              std::string *error) const;
  const std::vector<KernelSignature> &kernels() const;

private:
  explicit HostExecutable(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace wavetile

#endif
