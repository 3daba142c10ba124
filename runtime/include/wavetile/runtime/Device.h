//===- Device.h - GPU devices through the vendors' driver libraries -----*- C++ -*-===//
//
// One device interface over the CUDA driver (libcuda), HIP (libamdhip64) and the host CPU.
// The vendor libraries are opened with dlopen when a device is first opened: nothing links
// against them, and a machine without one gets an error naming the library. No LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_RUNTIME_DEVICE_H
#define WAVETILE_RUNTIME_DEVICE_H

#include "wavetile/runtime/Kernel.h"

#include <memory>
#include <optional>

namespace wavetile {

/// CUDA and HIP open their driver libraries with dlopen; the host runs shared objects the
/// compiler made for this CPU (compileKernelsForHost), also loaded with dlopen; an emulated
/// device runs a GPU target's per-thread code lane by lane on host memory through the
/// compiler's emulator (wavetile/Emulator.h: openEmulatedDevice).
enum class Backend { CUDA, HIP, Host, Emulated };
const char *backendName(Backend backend);

/// How an emulated device loads and runs code objects. The runtime has no interpreter: the
/// compiler's emulator provides these (registerEmulator) before such a device is opened.
struct EmulatorHooks {
  void *(*load)(std::string_view image, const ModuleManifest &manifest, std::string *error);
  void (*unload)(void *module);
  bool (*launch)(void *module, std::string_view kernel, std::array<uint32_t, 3> grid, const KernelArg *args,
                 size_t count, std::string *error);
};
void registerEmulator(const EmulatorHooks *hooks);
/// The hooks registered last (null before any): a test can wrap them to inject a fault.
const EmulatorHooks *registeredEmulator();

/// The Wavetile target for a device: `WAVETILE_TARGET` when set (it must name a target of
/// the device's vendor), else the one matching the device's architecture (`arch`: the
/// compute capability "9.0" for CUDA, the gcnArchName "gfx942:sramecc+:xnack-" for HIP).
/// An unsupported device is an error listing the supported targets; there is no default.
bool targetForDevice(Backend backend, std::string_view deviceName, std::string_view arch, std::string *target,
                     std::string *error);

class Device;

/// A code object loaded on a device, with the kernels its manifest describes.
class LoadedModule {
public:
  ~LoadedModule();
  const ModuleManifest &manifest() const { return manifest_; }
  class Kernel;
  /// The kernel named `name` (null with an error when the manifest or the code object lacks it).
  const Kernel *kernel(std::string_view name, std::string *error) const;

  class Kernel {
  public:
    const KernelManifest &manifest() const { return *manifest_; }
    /// Bytes of local (scratch) memory per thread the loaded kernel uses, register spills
    /// and stack, as the driver reports them; 0 on the host and emulated devices, which
    /// report none.
    std::optional<int64_t> localMemoryBytes(std::string *error) const;
    /// Checks the arguments against the manifest, then enqueues the kernel on `stream`
    /// (null: the default stream). Appends the grid-size arguments. Does not wait and does
    /// not allocate (what CUDA-graph capture needs).
    bool launch(std::array<uint32_t, 3> grid, const KernelArg *args, size_t count, void *stream,
                std::string *error) const;

  private:
    friend class Device; // binds it when loading the module
    const Device *device_ = nullptr;
    const KernelManifest *manifest_ = nullptr;
    void *function_ = nullptr;
  };

private:
  friend class Device;
  LoadedModule() = default;
  const Device *device_ = nullptr;
  void *handle_ = nullptr;
  ModuleManifest manifest_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
};

class Device {
public:
  struct Api; // the driver library's entry points
  ~Device();
  /// Opens device `ordinal` of `backend`.
  static std::unique_ptr<Device> open(Backend backend, int ordinal, std::string *error);
  /// Opens device `ordinal` of the first backend whose library loads and has devices
  /// (CUDA, then HIP); the error lists why each failed.
  static std::unique_ptr<Device> openAny(int ordinal, std::string *error);
  /// An emulated device of GPU target `target` (needs registered EmulatorHooks); its target()
  /// is "emulate:<target>", its memory host memory.
  static std::unique_ptr<Device> openEmulated(std::string_view target, std::string *error);

  Backend backend() const { return backend_; }
  const std::string &name() const { return name_; }
  const std::string &architecture() const { return arch_; }
  const std::string &target() const { return target_; }
  /// Streaming multiprocessors (CUDA), the host's hardware threads (host); 0 where not known
  /// (HIP). Tuned configurations are keyed by it.
  int multiprocessors() const { return multiprocessors_; }

  /// Loads a code object (PTX text or an hsaco) whose kernels `manifest` describes; every
  /// kernel in the manifest must be in it. The manifest's target must be the device's. Any
  /// thread may load (the device's context is made current in it).
  std::unique_ptr<LoadedModule> load(std::string_view image, ModuleManifest manifest, std::string *error) const;

  void *allocate(size_t bytes, std::string *error) const;
  bool release(void *pointer, std::string *error) const;
  bool copyToDevice(void *device, const void *host, size_t bytes, std::string *error) const;
  bool copyToHost(void *host, const void *device, size_t bytes, std::string *error) const;
  bool synchronize(std::string *error) const;

  void *createEvent(std::string *error) const;
  bool recordEvent(void *event, void *stream, std::string *error) const;
  /// Milliseconds between two recorded events, waiting for the second.
  bool elapsedMilliseconds(void *start, void *end, float *ms, std::string *error) const;
  bool destroyEvent(void *event, std::string *error) const;

  const Api &api() const { return *api_; }
  /// Fails with "<what>: <driver error name>" unless `result` is success.
  bool check(int result, const char *what, std::string *error) const;

private:
  Device() = default;
  Backend backend_ = Backend::CUDA;
  std::string name_, arch_, target_;
  const Api *api_ = nullptr;
  void *context_ = nullptr; // CUDA: the retained primary context
  int ordinal_ = 0;
  int multiprocessors_ = 0;
};

} // namespace wavetile

#endif
