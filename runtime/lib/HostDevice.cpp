//===- HostDevice.cpp - the host CPU behind the device interface ----------===//
//
// Code objects are shared objects for this CPU (the compiler's compileKernelsForHost). They
// are loaded from memory through a memfd with dlopen, and a kernel is its
// `<kernel>__packed(void **args)` entry: the same argument array GPU drivers take, grid
// size included, so Kernel::launch serves every backend. Launches run the whole grid on the
// calling thread before returning; streams do not apply.
//
//===----------------------------------------------------------------------===//

#include "DriverApi.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace wavetile;

namespace {

thread_local std::string hostError;

int failed(std::string message) {
  hostError = std::move(message);
  return 1;
}

const char *describeError(int) { return hostError.c_str(); }

/// The size of an ELF64 image: its last header table or section ends it.
size_t elfSize(const void *image) {
  Elf64_Ehdr header;
  std::memcpy(&header, image, sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64)
    return 0;
  size_t end = std::max<size_t>(header.e_shoff + size_t(header.e_shnum) * header.e_shentsize,
                                header.e_phoff + size_t(header.e_phnum) * header.e_phentsize);
  const auto *sections = reinterpret_cast<const Elf64_Shdr *>(static_cast<const char *>(image) + header.e_shoff);
  for (unsigned i = 0; i < header.e_shnum; ++i)
    if (sections[i].sh_type != SHT_NOBITS)
      end = std::max<size_t>(end, sections[i].sh_offset + sections[i].sh_size);
  return end;
}

int init(unsigned) { return 0; }
int deviceCount(int *count) {
  *count = 1;
  return 0;
}

/// A loaded code object. Its memfd stays open while it is loaded: dlopen knows objects by
/// path, and a closed descriptor's number (and so its /proc/self/fd path) would be reused by
/// the next code object.
struct LoadedObject {
  void *handle;
  int fd;
};

int moduleLoadData(void **module, const void *image) {
  size_t size = elfSize(image);
  if (!size)
    return failed("the host code object is not a 64-bit ELF shared object");
  int fd = memfd_create("wavetile-kernels", MFD_CLOEXEC);
  if (fd < 0)
    return failed(std::string("memfd_create: ") + std::strerror(errno));
  const char *bytes = static_cast<const char *>(image);
  for (size_t written = 0; written < size;) {
    ssize_t n = write(fd, bytes + written, size - written);
    if (n <= 0) {
      close(fd);
      return failed(std::string("writing the host code object: ") + std::strerror(errno));
    }
    written += size_t(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    close(fd);
    const char *why = dlerror();
    return failed(std::string("dlopen of the host code object: ") + (why ? why : "unknown error"));
  }
  *module = new LoadedObject{handle, fd};
  return 0;
}

int moduleUnload(void *module) {
  auto *object = static_cast<LoadedObject *>(module);
  int result = dlclose(object->handle);
  close(object->fd);
  delete object;
  return result == 0 ? 0 : failed("dlclose failed");
}

int moduleGetFunction(void **function, void *module, const char *name) {
  std::string entry = std::string(name) + "__packed";
  *function = dlsym(static_cast<LoadedObject *>(module)->handle, entry.c_str());
  return *function ? 0 : failed("the host code object has no '" + entry + "'");
}

int launchKernel(void *function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                 void **params, void **) {
  reinterpret_cast<void (*)(void **)>(function)(params);
  return 0;
}

int memAlloc(void **pointer, size_t bytes) {
  size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  *pointer = std::aligned_alloc(64, rounded);
  return *pointer ? 0 : failed("out of host memory (" + std::to_string(bytes) + " bytes)");
}
int memFree(void *pointer) {
  std::free(pointer);
  return 0;
}
int memcpyBytes(void *dst, const void *src, size_t bytes) {
  std::memcpy(dst, src, bytes);
  return 0;
}
int synchronize() { return 0; }

using Clock = std::chrono::steady_clock;
int eventCreate(void **event, unsigned) {
  *event = new Clock::time_point();
  return 0;
}
int eventRecord(void *event, void *) {
  *static_cast<Clock::time_point *>(event) = Clock::now();
  return 0;
}
int eventSynchronize(void *) { return 0; }
int eventElapsedTime(float *ms, void *start, void *end) {
  *ms = std::chrono::duration<float, std::milli>(*static_cast<Clock::time_point *>(end) -
                                                 *static_cast<Clock::time_point *>(start))
            .count();
  return 0;
}
int eventDestroy(void *event) {
  delete static_cast<Clock::time_point *>(event);
  return 0;
}

} // namespace

const Device::Api *wavetile::hostApi() {
  static const Device::Api api = [] {
    Device::Api a;
    a.backend = Backend::Host;
    a.init = init;
    a.deviceCount = deviceCount;
    a.moduleLoadData = moduleLoadData;
    a.moduleUnload = moduleUnload;
    a.moduleGetFunction = moduleGetFunction;
    a.launchKernel = launchKernel;
    a.memAlloc = memAlloc;
    a.memFree = memFree;
    a.memcpyHtoD = memcpyBytes;
    a.memcpyDtoH = memcpyBytes;
    a.synchronize = synchronize;
    a.eventCreate = eventCreate;
    a.eventRecord = eventRecord;
    a.eventSynchronize = eventSynchronize;
    a.eventElapsedTime = eventElapsedTime;
    a.eventDestroy = eventDestroy;
    a.describeError = describeError;
    return a;
  }();
  return &api;
}
