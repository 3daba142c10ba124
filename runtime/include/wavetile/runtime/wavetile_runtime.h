/*===- wavetile_runtime.h - C API of the Wavetile runtime ------------------===*
 *
 * Load compiled Wavetile kernels (PTX or hsaco plus their manifest) on a CUDA or HIP
 * device and launch them. Functions returning int give 0 on success; on failure (nonzero
 * or null) wt_last_error() says why, for the calling thread.
 *
 *===----------------------------------------------------------------------===*/
#ifndef WAVETILE_RUNTIME_C_H
#define WAVETILE_RUNTIME_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wt_device wt_device;
typedef struct wt_module wt_module;
typedef struct wt_kernel wt_kernel;

enum { WT_BACKEND_ANY = 0, WT_BACKEND_CUDA = 1, WT_BACKEND_HIP = 2, WT_BACKEND_HOST = 3 };
enum { WT_ARG_POINTER = 0, WT_ARG_I32 = 1, WT_ARG_I64 = 2, WT_ARG_F32 = 3, WT_ARG_F64 = 4 };

typedef struct wt_arg {
  int32_t kind; /* WT_ARG_* */
  union {
    void *pointer;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
  } value;
  uint64_t extent_bytes; /* pointers: bytes of the tensor from the pointer on; 0 = unknown */
} wt_arg;

const char *wt_last_error(void);

/* Opens device `ordinal` (WT_BACKEND_ANY: the first GPU, CUDA then HIP; WT_BACKEND_HOST: the
 * CPU, which runs host code objects). */
wt_device *wt_device_open(int backend, int ordinal);
void wt_device_close(wt_device *device);
const char *wt_device_name(const wt_device *device);
/* The Wavetile target ("sm_90", "gfx942"), from the device or WAVETILE_TARGET. */
const char *wt_device_target(const wt_device *device);

/* Loads a code object; `manifest` is its manifest text (see wavetile/runtime/Kernel.h). */
wt_module *wt_module_load(wt_device *device, const void *image, size_t size, const char *manifest);
void wt_module_unload(wt_module *module);
const wt_kernel *wt_module_kernel(const wt_module *module, const char *name);

/* Checks the arguments against the manifest and enqueues the kernel on `stream` (null: the
 * default stream); returns without waiting. */
int wt_kernel_launch(const wt_kernel *kernel, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z, const wt_arg *args,
                     size_t count, void *stream);

void *wt_malloc(wt_device *device, size_t bytes);
int wt_free(wt_device *device, void *pointer);
int wt_copy_to_device(wt_device *device, void *dst, const void *src, size_t bytes);
int wt_copy_to_host(wt_device *device, void *dst, const void *src, size_t bytes);
int wt_synchronize(wt_device *device);

void *wt_event_create(wt_device *device);
int wt_event_record(wt_device *device, void *event, void *stream);
int wt_event_elapsed_ms(wt_device *device, void *start, void *end, float *ms);
int wt_event_destroy(wt_device *device, void *event);

#ifdef __cplusplus
}
#endif

#endif
