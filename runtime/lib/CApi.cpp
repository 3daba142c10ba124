//===- CApi.cpp - the C API over Device and LoadedModule ---------------------===//

#include "wavetile/runtime/wavetile_runtime.h"

#include "wavetile/runtime/Device.h"

#include <cstring>

using namespace wavetile;

struct wt_device {
  std::unique_ptr<Device> device;
};
struct wt_module {
  std::unique_ptr<LoadedModule> module;
};

namespace {
thread_local std::string lastError;

int failed(const std::string &message) {
  lastError = message;
  return 1;
}
int result(bool ok) { return ok ? 0 : 1; }
} // namespace

extern "C" {

const char *wt_last_error(void) { return lastError.c_str(); }

wt_device *wt_device_open(int backend, int ordinal) {
  std::unique_ptr<Device> device;
  switch (backend) {
  case WT_BACKEND_ANY:
    device = Device::openAny(ordinal, &lastError);
    break;
  case WT_BACKEND_CUDA:
    device = Device::open(Backend::CUDA, ordinal, &lastError);
    break;
  case WT_BACKEND_HIP:
    device = Device::open(Backend::HIP, ordinal, &lastError);
    break;
  case WT_BACKEND_HOST:
    device = Device::open(Backend::Host, ordinal, &lastError);
    break;
  default:
    failed("unknown backend " + std::to_string(backend));
  }
  return device ? new wt_device{std::move(device)} : nullptr;
}

void wt_device_close(wt_device *device) { delete device; }
const char *wt_device_name(const wt_device *device) { return device->device->name().c_str(); }
const char *wt_device_target(const wt_device *device) { return device->device->target().c_str(); }

wt_module *wt_module_load(wt_device *device, const void *image, size_t size, const char *manifestText) {
  ModuleManifest manifest;
  if (!parseManifest(manifestText ? manifestText : "", &manifest, &lastError))
    return nullptr;
  auto module = device->device->load(std::string_view(static_cast<const char *>(image), size), std::move(manifest),
                                     &lastError);
  return module ? new wt_module{std::move(module)} : nullptr;
}

void wt_module_unload(wt_module *module) { delete module; }

const wt_kernel *wt_module_kernel(const wt_module *module, const char *name) {
  return reinterpret_cast<const wt_kernel *>(module->module->kernel(name, &lastError));
}

int wt_kernel_launch(const wt_kernel *kernel, uint32_t gridX, uint32_t gridY, uint32_t gridZ, const wt_arg *args,
                     size_t count, void *stream) {
  constexpr size_t kMaxArguments = 64;
  if (count > kMaxArguments)
    return failed("more than " + std::to_string(kMaxArguments) + " arguments");
  KernelArg converted[kMaxArguments];
  for (size_t i = 0; i < count; ++i) {
    if (args[i].kind < WT_ARG_POINTER || args[i].kind > WT_ARG_F64)
      return failed("argument " + std::to_string(i) + " has unknown kind " + std::to_string(args[i].kind));
    converted[i].kind = static_cast<ArgKind>(args[i].kind);
    std::memcpy(&converted[i].pointer, &args[i].value, sizeof(args[i].value)); // whatever the kind
    converted[i].extentBytes = args[i].extent_bytes;
  }
  auto *k = reinterpret_cast<const LoadedModule::Kernel *>(kernel);
  return result(k->launch({gridX, gridY, gridZ}, converted, count, stream, &lastError));
}

void *wt_malloc(wt_device *device, size_t bytes) { return device->device->allocate(bytes, &lastError); }
int wt_free(wt_device *device, void *pointer) { return result(device->device->release(pointer, &lastError)); }
int wt_copy_to_device(wt_device *device, void *dst, const void *src, size_t bytes) {
  return result(device->device->copyToDevice(dst, src, bytes, &lastError));
}
int wt_copy_to_host(wt_device *device, void *dst, const void *src, size_t bytes) {
  return result(device->device->copyToHost(dst, src, bytes, &lastError));
}
int wt_synchronize(wt_device *device) { return result(device->device->synchronize(&lastError)); }

void *wt_event_create(wt_device *device) { return device->device->createEvent(&lastError); }
int wt_event_record(wt_device *device, void *event, void *stream) {
  return result(device->device->recordEvent(event, stream, &lastError));
}
int wt_event_elapsed_ms(wt_device *device, void *start, void *end, float *ms) {
  return result(device->device->elapsedMilliseconds(start, end, ms, &lastError));
}
int wt_event_destroy(wt_device *device, void *event) {
  return result(device->device->destroyEvent(event, &lastError));
}
}
