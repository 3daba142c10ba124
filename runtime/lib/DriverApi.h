//===- DriverApi.h - the entry points a device backend provides ----------===//
//
// Internal to the runtime. The CUDA driver and HIP fill this table from their libraries
// (Device.cpp); the host fills it with its own functions (HostDevice.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_RUNTIME_DRIVERAPI_H
#define WAVETILE_RUNTIME_DRIVERAPI_H

#include "wavetile/runtime/Device.h"

#include <string>

namespace wavetile {

struct Device::Api {
  Backend backend;
  void *library = nullptr;
  int (*init)(unsigned) = nullptr;
  int (*deviceCount)(int *) = nullptr;
  int (*moduleLoadData)(void **, const void *) = nullptr;
  int (*moduleUnload)(void *) = nullptr;
  int (*moduleGetFunction)(void **, void *, const char *) = nullptr;
  int (*launchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                      void **) = nullptr;
  int (*memAlloc)(void **, size_t) = nullptr;
  int (*memFree)(void *) = nullptr;
  int (*memcpyHtoD)(void *, const void *, size_t) = nullptr;
  int (*memcpyDtoH)(void *, const void *, size_t) = nullptr;
  int (*synchronize)() = nullptr;
  int (*eventCreate)(void **, unsigned) = nullptr;
  int (*eventRecord)(void *, void *) = nullptr;
  int (*eventSynchronize)(void *) = nullptr;
  int (*eventElapsedTime)(float *, void *, void *) = nullptr;
  int (*eventDestroy)(void *) = nullptr;
  // cuFuncGetAttribute / hipFuncGetAttribute (value, attribute, function): the same signature
  // and attribute numbers (3: local memory bytes per thread).
  int (*funcGetAttribute)(int *, int, void *) = nullptr;
  // CUDA only.
  int (*cuGetErrorName)(int, const char **) = nullptr;
  int (*cuFuncSetAttribute)(void *, int, int) = nullptr;
  int (*cuDeviceGet)(int *, int) = nullptr;
  int (*cuDeviceGetName)(char *, int, int) = nullptr;
  int (*cuDeviceGetAttribute)(int *, int, int) = nullptr;
  int (*cuPrimaryCtxRetain)(void **, int) = nullptr;
  int (*cuPrimaryCtxRelease)(int) = nullptr;
  int (*cuCtxSetCurrent)(void *) = nullptr;
  // HIP and the host: the name of an error code.
  const char *(*describeError)(int) = nullptr;
  int (*hipSetDevice)(int) = nullptr;
  int (*hipGetDeviceProperties)(void *, int) = nullptr;

  std::string errorName(int result) const {
    const char *name = nullptr;
    if (cuGetErrorName)
      cuGetErrorName(result, &name);
    else if (describeError)
      name = describeError(result);
    return name ? std::string(name) : "error " + std::to_string(result);
  }
};

/// The host backend's table: code objects are shared objects loaded with dlopen, memory is
/// host memory, launches run to completion on the calling thread.
const Device::Api *hostApi();

} // namespace wavetile

#endif
