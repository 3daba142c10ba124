//===- Compiler.h - public C++ API of the Wavetile compiler -----*- C++ -*-===//
//
// Plain C++: no MLIR or LLVM headers, so users and bindings compile fast.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_COMPILER_H
#define WAVETILE_COMPILER_H

#include "wavetile/Target/GPUTargets.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wavetile {

/// Kinds of kernel arguments as the launcher passes them.
enum class ArgKind { Pointer, I32, I64, F32, F64 };
const char *argKindName(ArgKind kind);

struct KernelParam {
  std::string name;        // from the DSL, or "arg<i>"
  ArgKind kind;
  std::string elementType; // pointee type for pointers ("f32", "bf16", ...), else the scalar type
};

struct KernelSignature {
  std::string name;
  std::vector<KernelParam> params;
};

/// One argument value of a launch.
struct KernelArg {
  ArgKind kind;
  union {
    void *pointer;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
  };
  std::string elementType; // for pointers: checked against the kernel when not empty

  static KernelArg ptr(void *p, std::string elementType = {});
  static KernelArg fromI32(int32_t v);
  static KernelArg fromI64(int64_t v);
  static KernelArg fromF32(float v);
  static KernelArg fromF64(double v);
};

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

/// How K loops of kernels with tile.num_stages are software-pipelined on the host: the way
/// NVIDIA targets do it (async copies) or the way CDNA does it (tiles staged in registers),
/// so the host runs, and checks, the program a GPU target gets.
enum class LoopPipelining { AsyncCopies, Registers };

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
