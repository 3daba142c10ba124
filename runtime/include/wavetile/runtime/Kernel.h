//===- Kernel.h - what a compiled kernel takes and how it is launched ----*- C++ -*-===//
//
// Plain C++ shared by the compiler (which produces these descriptions) and the runtime
// (which checks launches against them). No LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_RUNTIME_KERNEL_H
#define WAVETILE_RUNTIME_KERNEL_H

#include <array>
#include <cstddef>
#include <cstdint>
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
  /// Pointers only: the kernel was compiled on the promise that it touches nothing 2 GiB or
  /// more past the pointer (DSL Reach::within2GiB), so launches must pass smaller tensors.
  bool within2GiB = false;
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
  /// For pointers: bytes of the tensor from `pointer` on (0: unknown, not checked).
  uint64_t extentBytes = 0;
  static KernelArg ptr(void *p, std::string elementType = {}, uint64_t extentBytes = 0);
  static KernelArg fromI32(int32_t v);
  static KernelArg fromI64(int64_t v);
  static KernelArg fromF32(float v);
  static KernelArg fromF64(double v);
};

/// The most programs along a grid's y or z axis, on every backend (CUDA's limit).
inline constexpr uint32_t kMaxGridYZ = 65535;

/// Checks a launch of `kernel` before anything runs: the argument count and kinds, pointer
/// element types and extents where the caller gave them, and the grid (x in [1, 2^31), y and z
/// in [1, kMaxGridYZ]). On failure writes a message naming the argument and returns false.
bool checkLaunch(const KernelSignature &kernel, std::array<uint32_t, 3> grid, const KernelArg *args,
                 size_t count, std::string *error);

/// What the runtime needs to launch one compiled GPU kernel.
struct KernelManifest {
  KernelSignature signature;
  std::array<uint32_t, 3> block{1, 1, 1}; // threads per workgroup / block
  uint32_t sharedBytes = 0;               // statically declared shared memory (LDS)
  /// Dynamic shared memory each launch provides (kernels past the static limit: NVIDIA's
  /// 48 KiB); the runtime raises the kernel's limit to it when loading.
  uint32_t dynamicSharedBytes = 0;
  /// Our GPU kernels take the grid size as this many trailing i32 arguments after the
  /// user's (x, y, z); the launcher appends them.
  uint32_t gridArguments = 3;
};

/// Targets of emulated devices are "emulate:<GPU target>" (Device::openEmulated); the GPU
/// target of one, or empty for any other target.
std::string_view emulatedGpuTarget(std::string_view target);
/// "emulate:<gpuTarget>".
std::string emulatedTargetName(std::string_view gpuTarget);

/// A compiled module's kernels for one target.
struct ModuleManifest {
  std::string target; // "gfx942", "sm_90", ...
  std::vector<KernelManifest> kernels;
  const KernelManifest *find(std::string_view name) const;
};

/// The manifest as versioned text (what sits next to a code object in caches and bundles).
std::string printManifest(const ModuleManifest &manifest);
/// Parses printManifest's text; on malformed input returns false with the line and the problem.
bool parseManifest(std::string_view text, ModuleManifest *manifest, std::string *error);

} // namespace wavetile

#endif
