//===- Device.cpp - the CUDA driver and HIP behind one device interface ---===//
//
// The two driver APIs have the same shape (module load, function lookup, launch, memory,
// events), so one table of entry points serves both; only device discovery differs. Their
// handle types are pointers or 64-bit integers, passed the same way on x86-64 and AArch64.
//
//===----------------------------------------------------------------------===//

#include "DriverApi.h"

#include "wavetile/Target/GPUTargets.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <dlfcn.h>
#include <mutex>

using namespace wavetile;

const char *wavetile::backendName(Backend backend) {
  switch (backend) {
  case Backend::CUDA:
    return "CUDA";
  case Backend::HIP:
    return "HIP";
  case Backend::Host:
    return "host";
  case Backend::Emulated:
    return "emulated";
  }
  return "?";
}

static const EmulatorHooks *emulatorHooks = nullptr;

void wavetile::registerEmulator(const EmulatorHooks *hooks) { emulatorHooks = hooks; }
const EmulatorHooks *wavetile::registeredEmulator() { return emulatorHooks; }

std::unique_ptr<Device> Device::openEmulated(std::string_view target, std::string *error) {
  if (!emulatorHooks) {
    *error = "no emulator is registered (wavetile::openEmulatedDevice registers the compiler's)";
    return nullptr;
  }
  if (!lookupGpuTarget(target)) {
    *error = "unknown target '" + std::string(target) + "'; known targets: " + gpuTargetNameList();
    return nullptr;
  }
  std::unique_ptr<Device> device(new Device());
  device->backend_ = Backend::Emulated;
  device->api_ = hostApi(); // host memory, copies, events
  device->name_ = "emulated " + std::string(target);
  device->arch_ = std::string(target);
  device->target_ = emulatedTargetName(target);
  return device;
}

namespace {

template <typename F> bool bind(void *library, const char *symbol, F *slot, std::string *missing) {
  *slot = reinterpret_cast<F>(dlsym(library, symbol));
  if (!*slot && missing->empty())
    *missing = symbol;
  return *slot != nullptr;
}

/// Opens the backend's driver library and binds its entry points (once per process).
const Device::Api *loadApi(Backend backend, std::string *error) {
  if (backend == Backend::Host)
    return hostApi();
  static std::mutex mutex;
  static Device::Api *loaded[2] = {nullptr, nullptr};
  static std::string failure[2];
  std::lock_guard<std::mutex> lock(mutex);
  int slot = backend == Backend::CUDA ? 0 : 1;
  if (loaded[slot])
    return loaded[slot];
  if (!failure[slot].empty()) {
    *error = failure[slot];
    return nullptr;
  }
  const char *libraryName = backend == Backend::CUDA ? "libcuda.so.1" : "libamdhip64.so";
  auto api = std::make_unique<Device::Api>();
  api->backend = backend;
  api->library = dlopen(libraryName, RTLD_NOW | RTLD_LOCAL);
  if (!api->library && backend == Backend::HIP)
    api->library = dlopen("/opt/rocm/lib/libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
  if (!api->library) {
    const char *why = dlerror();
    failure[slot] = std::string(backendName(backend)) + ": cannot load " + libraryName + " (" +
                    (why ? why : "not found") + ")";
    *error = failure[slot];
    return nullptr;
  }
  void *lib = api->library;
  std::string missing;
  if (backend == Backend::CUDA) {
    bind(lib, "cuInit", &api->init, &missing);
    bind(lib, "cuDeviceGetCount", &api->deviceCount, &missing);
    bind(lib, "cuModuleLoadData", &api->moduleLoadData, &missing);
    bind(lib, "cuModuleUnload", &api->moduleUnload, &missing);
    bind(lib, "cuModuleGetFunction", &api->moduleGetFunction, &missing);
    bind(lib, "cuLaunchKernel", &api->launchKernel, &missing);
    bind(lib, "cuMemAlloc_v2", &api->memAlloc, &missing);
    bind(lib, "cuMemFree_v2", &api->memFree, &missing);
    bind(lib, "cuMemcpyHtoD_v2", &api->memcpyHtoD, &missing);
    bind(lib, "cuMemcpyDtoH_v2", &api->memcpyDtoH, &missing);
    bind(lib, "cuCtxSynchronize", &api->synchronize, &missing);
    bind(lib, "cuEventCreate", &api->eventCreate, &missing);
    bind(lib, "cuEventRecord", &api->eventRecord, &missing);
    bind(lib, "cuEventSynchronize", &api->eventSynchronize, &missing);
    bind(lib, "cuEventElapsedTime", &api->eventElapsedTime, &missing);
    bind(lib, "cuEventDestroy_v2", &api->eventDestroy, &missing);
    bind(lib, "cuGetErrorName", &api->cuGetErrorName, &missing);
    bind(lib, "cuFuncSetAttribute", &api->cuFuncSetAttribute, &missing);
    bind(lib, "cuFuncGetAttribute", &api->funcGetAttribute, &missing);
    bind(lib, "cuDeviceGet", &api->cuDeviceGet, &missing);
    bind(lib, "cuDeviceGetName", &api->cuDeviceGetName, &missing);
    bind(lib, "cuDeviceGetAttribute", &api->cuDeviceGetAttribute, &missing);
    bind(lib, "cuDevicePrimaryCtxRetain", &api->cuPrimaryCtxRetain, &missing);
    bind(lib, "cuDevicePrimaryCtxRelease_v2", &api->cuPrimaryCtxRelease, &missing);
    bind(lib, "cuCtxSetCurrent", &api->cuCtxSetCurrent, &missing);
  } else {
    bind(lib, "hipInit", &api->init, &missing);
    bind(lib, "hipGetDeviceCount", &api->deviceCount, &missing);
    bind(lib, "hipModuleLoadData", &api->moduleLoadData, &missing);
    bind(lib, "hipModuleUnload", &api->moduleUnload, &missing);
    bind(lib, "hipModuleGetFunction", &api->moduleGetFunction, &missing);
    bind(lib, "hipModuleLaunchKernel", &api->launchKernel, &missing);
    bind(lib, "hipFuncGetAttribute", &api->funcGetAttribute, &missing);
    bind(lib, "hipMalloc", &api->memAlloc, &missing);
    bind(lib, "hipFree", &api->memFree, &missing);
    bind(lib, "hipMemcpyHtoD", &api->memcpyHtoD, &missing);
    bind(lib, "hipMemcpyDtoH", &api->memcpyDtoH, &missing);
    bind(lib, "hipDeviceSynchronize", &api->synchronize, &missing);
    bind(lib, "hipEventCreateWithFlags", &api->eventCreate, &missing);
    bind(lib, "hipEventRecord", &api->eventRecord, &missing);
    bind(lib, "hipEventSynchronize", &api->eventSynchronize, &missing);
    bind(lib, "hipEventElapsedTime", &api->eventElapsedTime, &missing);
    bind(lib, "hipEventDestroy", &api->eventDestroy, &missing);
    bind(lib, "hipGetErrorName", &api->describeError, &missing);
    bind(lib, "hipSetDevice", &api->hipSetDevice, &missing);
    // ROCm 6 versions the properties struct; older releases export only the plain name.
    std::string unversioned;
    if (!bind(lib, "hipGetDevicePropertiesR0600", &api->hipGetDeviceProperties, &unversioned))
      bind(lib, "hipGetDeviceProperties", &api->hipGetDeviceProperties, &missing);
  }
  if (!missing.empty()) {
    failure[slot] = std::string(backendName(backend)) + ": " + libraryName + " lacks " + missing;
    dlclose(lib);
    *error = failure[slot];
    return nullptr;
  }
  int result = api->init(0);
  if (result != 0) {
    failure[slot] = std::string(backendName(backend)) + ": initialization failed: " + api->errorName(result);
    *error = failure[slot];
    return nullptr;
  }
  loaded[slot] = api.release();
  return loaded[slot];
}

/// The gcnArchName ("gfx942:sramecc+:xnack-") inside HIP's device properties. The struct's
/// layout changes between ROCm releases, so the name is found by its form rather than at a
/// fixed offset: the only field holding "gfx" followed by hex digits and a NUL or ':'.
std::string findGcnArchName(const unsigned char *properties, size_t size) {
  for (size_t i = 0; i + 4 < size; ++i) {
    if (std::memcmp(properties + i, "gfx", 3) != 0 || (i > 0 && properties[i - 1] != 0))
      continue;
    size_t end = i + 3;
    while (end < size && std::isxdigit(properties[end]))
      ++end;
    if (end == i + 3 || end >= size)
      continue;
    size_t stop = end;
    while (stop < size && properties[stop] != 0)
      ++stop;
    if (stop < size && (properties[end] == 0 || properties[end] == ':'))
      return std::string(reinterpret_cast<const char *>(properties + i), stop - i);
  }
  return {};
}

} // namespace

bool wavetile::targetForDevice(Backend backend, std::string_view deviceName, std::string_view arch,
                               std::string *target, std::string *error) {
  GpuVendor vendor = backend == Backend::CUDA ? GpuVendor::NVIDIA : GpuVendor::AMD;
  std::string described = std::string(backendName(backend)) + " device '" + std::string(deviceName) + "' (" +
                          (backend == Backend::CUDA ? "compute capability " : "") + std::string(arch) + ")";
  if (const char *forced = std::getenv("WAVETILE_TARGET"); forced && *forced) {
    auto known = lookupGpuTarget(forced);
    if (!known) {
      *error = "WAVETILE_TARGET='" + std::string(forced) + "' is not a target; known targets: " + gpuTargetNameList();
      return false;
    }
    if (known->vendor != vendor) {
      *error = "WAVETILE_TARGET='" + std::string(forced) + "' cannot run on " + described;
      return false;
    }
    *target = forced;
    return true;
  }
  std::string candidate;
  if (backend == Backend::CUDA) {
    // sm_90a's wgmma and setmaxnreg run on compute capability 9.0 exactly, which is every
    // Hopper part (H100, H200, GH200); WAVETILE_TARGET=sm_90 keeps mma.sync-only code.
    if (arch == "9.0")
      candidate = "sm_90a";
  } else {
    candidate = std::string(arch.substr(0, arch.find(':')));
  }
  auto known = candidate.empty() ? std::nullopt : lookupGpuTarget(candidate);
  if (!known || known->vendor != vendor) {
    *error = "unsupported " + described + "; Wavetile targets " + gpuTargetNameList() +
             " (set WAVETILE_TARGET to choose one explicitly)";
    return false;
  }
  *target = candidate;
  return true;
}

bool Device::check(int result, const char *what, std::string *error) const {
  if (result == 0)
    return true;
  if (error)
    *error = std::string(what) + " failed: " + api_->errorName(result);
  return false;
}

std::unique_ptr<Device> Device::open(Backend backend, int ordinal, std::string *error) {
  std::string ignored;
  error = error ? error : &ignored;
  if (backend == Backend::Emulated) {
    *error = "emulated devices are opened by target (Device::openEmulated), not by ordinal";
    return nullptr;
  }
  const Api *api = loadApi(backend, error);
  if (!api)
    return nullptr;
  std::unique_ptr<Device> device(new Device());
  device->backend_ = backend;
  device->api_ = api;
  device->ordinal_ = ordinal;
  int count = 0;
  if (!device->check(api->deviceCount(&count), "counting devices", error))
    return nullptr;
  if (ordinal < 0 || ordinal >= count) {
    *error = std::string(backendName(backend)) + ": no device " + std::to_string(ordinal) + " (" +
             std::to_string(count) + " present)";
    return nullptr;
  }
  if (backend == Backend::Host) {
    device->name_ = "host CPU";
    device->arch_ = "host";
    device->target_ = "host"; // host code objects are compiled for the CPU they run on
    device->multiprocessors_ = int(std::thread::hardware_concurrency());
    return device;
  }
  if (backend == Backend::CUDA) {
    int handle = 0, major = 0, minor = 0;
    char name[256] = {};
    constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76; // CUdevice_attribute
    constexpr int kMultiprocessorCount = 16;
    if (!device->check(api->cuDeviceGet(&handle, ordinal), "cuDeviceGet", error) ||
        !device->check(api->cuDeviceGetName(name, sizeof(name) - 1, handle), "cuDeviceGetName", error) ||
        !device->check(api->cuDeviceGetAttribute(&major, kComputeCapabilityMajor, handle), "cuDeviceGetAttribute",
                       error) ||
        !device->check(api->cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, handle), "cuDeviceGetAttribute",
                       error) ||
        !device->check(api->cuDeviceGetAttribute(&device->multiprocessors_, kMultiprocessorCount, handle),
                       "cuDeviceGetAttribute", error) ||
        !device->check(api->cuPrimaryCtxRetain(&device->context_, handle), "cuDevicePrimaryCtxRetain", error))
      return nullptr;
    device->ordinal_ = handle;
    device->name_ = name;
    device->arch_ = std::to_string(major) + "." + std::to_string(minor);
    if (!device->check(api->cuCtxSetCurrent(device->context_), "cuCtxSetCurrent", error))
      return nullptr;
  } else {
    // Larger than any release's hipDeviceProp_t (about 1.5 KiB in ROCm 6).
    std::vector<unsigned char> properties(16384, 0);
    if (!device->check(api->hipSetDevice(ordinal), "hipSetDevice", error) ||
        !device->check(api->hipGetDeviceProperties(properties.data(), ordinal), "hipGetDeviceProperties", error))
      return nullptr;
    device->name_ = std::string(reinterpret_cast<const char *>(properties.data()), strnlen(
        reinterpret_cast<const char *>(properties.data()), 256));
    device->arch_ = findGcnArchName(properties.data(), properties.size());
    if (device->arch_.empty()) {
      *error = "HIP: device " + std::to_string(ordinal) + " reports no gcnArchName";
      return nullptr;
    }
  }
  if (!targetForDevice(backend, device->name_, device->arch_, &device->target_, error))
    return nullptr;
  return device;
}

std::unique_ptr<Device> Device::openAny(int ordinal, std::string *error) {
  std::string reasons;
  for (Backend backend : {Backend::CUDA, Backend::HIP}) {
    std::string why;
    if (auto device = open(backend, ordinal, &why))
      return device;
    reasons += (reasons.empty() ? "" : "; ") + why;
  }
  if (error)
    *error = "no GPU device: " + reasons;
  return nullptr;
}

Device::~Device() {
  if (backend_ == Backend::CUDA && context_)
    api_->cuPrimaryCtxRelease(ordinal_);
}

std::unique_ptr<LoadedModule> Device::load(std::string_view image, ModuleManifest manifest, std::string *error) const {
  if (manifest.target != target_) {
    if (error)
      *error = "code object for " + manifest.target + " cannot load on " + name_ + " (target " + target_ + ")";
    return nullptr;
  }
  std::unique_ptr<LoadedModule> module(new LoadedModule());
  module->device_ = this;
  module->manifest_ = std::move(manifest);
  if (backend_ == Backend::Emulated) {
    module->handle_ = emulatorHooks->load(image, module->manifest_, error);
    if (!module->handle_)
      return nullptr;
    for (const KernelManifest &k : module->manifest_.kernels) {
      auto kernel = std::make_unique<LoadedModule::Kernel>();
      kernel->device_ = this;
      kernel->manifest_ = &k;
      kernel->function_ = module->handle_; // the emulator finds the kernel by name
      module->kernels_.push_back(std::move(kernel));
    }
    return module;
  }
  // Contexts are current per thread: a loading thread may not be the one that opened the device.
  if (backend_ == Backend::CUDA && !check(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent", error))
    return nullptr;
  if (backend_ == Backend::HIP && !check(api_->hipSetDevice(ordinal_), "hipSetDevice", error))
    return nullptr;
  // PTX is text the driver reads up to a NUL; a code object is read by its own headers.
  std::string owned(image);
  if (!check(api_->moduleLoadData(&module->handle_, owned.c_str()), "loading the code object", error))
    return nullptr;
  for (const KernelManifest &k : module->manifest_.kernels) {
    auto kernel = std::make_unique<LoadedModule::Kernel>();
    kernel->device_ = this;
    kernel->manifest_ = &k;
    std::string what = "looking up kernel '" + k.signature.name + "'";
    if (!check(api_->moduleGetFunction(&kernel->function_, module->handle_, k.signature.name.c_str()), what.c_str(),
               error))
      return nullptr;
    // CUDA kernels opt in to dynamic shared memory beyond 48 KiB (CDNA LDS needs no opt-in).
    constexpr int kMaxDynamicSharedSizeBytes = 8; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    if (k.dynamicSharedBytes && api_->cuFuncSetAttribute &&
        !check(api_->cuFuncSetAttribute(kernel->function_, kMaxDynamicSharedSizeBytes, int(k.dynamicSharedBytes)),
               "allowing the kernel's dynamic shared memory", error))
      return nullptr;
    module->kernels_.push_back(std::move(kernel));
  }
  return module;
}

LoadedModule::~LoadedModule() {
  if (handle_ && device_->backend() == Backend::Emulated)
    emulatorHooks->unload(handle_);
  else if (handle_)
    device_->api().moduleUnload(handle_);
}

const LoadedModule::Kernel *LoadedModule::kernel(std::string_view name, std::string *error) const {
  for (const auto &k : kernels_)
    if (k->manifest().signature.name == name)
      return k.get();
  if (error)
    *error = "no kernel named '" + std::string(name) + "' in this module";
  return nullptr;
}

bool LoadedModule::Kernel::launch(std::array<uint32_t, 3> grid, const KernelArg *args, size_t count, void *stream,
                               std::string *error) const {
  constexpr size_t kMaxArguments = 64;
  const KernelManifest &k = *manifest_;
  if (!checkLaunch(k.signature, grid, args, count, error))
    return false;
  if (count + k.gridArguments > kMaxArguments) {
    if (error)
      *error = "kernel '" + k.signature.name + "' has more than " + std::to_string(kMaxArguments) + " arguments";
    return false;
  }
  if (device_->backend() == Backend::Emulated) // runs to completion before returning
    return emulatorHooks->launch(function_, k.signature.name, grid, args, count, error);
  // The driver copies the values at launch; the union member sits at the same address for
  // every kind.
  void *params[kMaxArguments];
  int32_t gridValues[3] = {int32_t(grid[0]), int32_t(grid[1]), int32_t(grid[2])};
  for (size_t i = 0; i < count; ++i)
    params[i] = const_cast<void *>(static_cast<const void *>(&args[i].pointer));
  for (uint32_t i = 0; i < k.gridArguments; ++i)
    params[count + i] = &gridValues[i];
  return device_->check(device_->api().launchKernel(function_, grid[0], grid[1], grid[2], k.block[0], k.block[1],
                                                    k.block[2], k.dynamicSharedBytes, stream, params, nullptr),
                        "launching the kernel", error);
}

std::optional<int64_t> LoadedModule::Kernel::localMemoryBytes(std::string *error) const {
  constexpr int kLocalSizeBytes = 3; // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, HIP_FUNC_ATTRIBUTE_...
  const Device::Api &api = device_->api();
  if (!api.funcGetAttribute)
    return 0;
  int bytes = 0;
  if (!device_->check(api.funcGetAttribute(&bytes, kLocalSizeBytes, function_), "querying the kernel's local memory",
                      error))
    return std::nullopt;
  return bytes;
}

void *Device::allocate(size_t bytes, std::string *error) const {
  void *pointer = nullptr;
  return check(api_->memAlloc(&pointer, bytes), "allocating device memory", error) ? pointer : nullptr;
}
bool Device::release(void *pointer, std::string *error) const {
  return check(api_->memFree(pointer), "freeing device memory", error);
}
bool Device::copyToDevice(void *device, const void *host, size_t bytes, std::string *error) const {
  return check(api_->memcpyHtoD(device, host, bytes), "copying to the device", error);
}
bool Device::copyToHost(void *host, const void *device, size_t bytes, std::string *error) const {
  return check(api_->memcpyDtoH(host, device, bytes), "copying to the host", error);
}
bool Device::synchronize(std::string *error) const {
  return check(api_->synchronize(), "synchronizing the device", error);
}
void *Device::createEvent(std::string *error) const {
  void *event = nullptr;
  return check(api_->eventCreate(&event, 0), "creating an event", error) ? event : nullptr;
}
bool Device::recordEvent(void *event, void *stream, std::string *error) const {
  return check(api_->eventRecord(event, stream), "recording an event", error);
}
bool Device::elapsedMilliseconds(void *start, void *end, float *ms, std::string *error) const {
  return check(api_->eventSynchronize(end), "waiting for an event", error) &&
         check(api_->eventElapsedTime(ms, start, end), "timing events", error);
}
bool Device::destroyEvent(void *event, std::string *error) const {
  return check(api_->eventDestroy(event), "destroying an event", error);
}
