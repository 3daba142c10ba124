// convert-tile-to-gpu refuses a kernel whose shared memory exceeds what the target lets a
// kernel use (max-shared-bytes; the GPU pipeline passes the workgroup maximum: 227 KiB on
// sm_90, the LDS per workgroup on CDNA), naming the size and the limit. Past
// max-static-shared-bytes (NVIDIA: 48 KiB) the buffer is dynamic shared memory instead of a
// workgroup attribution, and the kernel records how much each launch must provide.
// RUN: %wavetile-opt %s -split-input-file -verify-diagnostics -convert-tile-to-gpu="target=sm_90 max-shared-bytes=1024"
// RUN: %wavetile-opt %s -split-input-file -convert-tile-to-gpu="target=sm_90 max-shared-bytes=4096 max-static-shared-bytes=1024" | FileCheck %s --check-prefix=DYNAMIC
// RUN: %wavetile-opt %s -split-input-file -convert-tile-to-gpu="target=sm_90 max-shared-bytes=4096 max-static-shared-bytes=2048" | FileCheck %s --check-prefix=STATIC

#a = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>
#b = #tile.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>

// A 512 x f32 layout change stages 2048 bytes.
// DYNAMIC-LABEL: gpu.func @too_big(%{{[^)]*}}: i32) kernel
// DYNAMIC-SAME:    wavetile.dynamic_shared_bytes = 2048 : i64
// DYNAMIC:         gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// STATIC-LABEL:  gpu.func @too_big
// STATIC-SAME:     workgroup(%{{.*}} : memref<2048xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// STATIC-NOT:      gpu.dynamic_shared_memory
// expected-error @+1 {{kernel needs 2048 bytes of shared memory (2048 of them scratch for layout changes, reductions and dots), but sm_90 kernels may use at most 1024; use smaller tiles or fewer stages}}
func.func @too_big(%y: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 32 : i32} {
  %r = tile.arange 0 to 512 : tensor<512xi32, #a>
  %f = arith.sitofp %r : tensor<512xi32, #a> to tensor<512xf32, #a>
  %g = tile.convert_layout %f : tensor<512xf32, #a> -> tensor<512xf32, #b>
  %o = tile.arange 0 to 512 : tensor<512xi32, #b>
  tile.store %g, %y[%o] : tensor<512xf32, #b>, !tile.ptr<f32>[tensor<512xi32, #b>]
  return
}

// -----

#a = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>

// No shared memory at all: fine.
func.func @fits(%y: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 32 : i32} {
  %r = tile.arange 0 to 512 : tensor<512xi32, #a>
  %f = arith.sitofp %r : tensor<512xi32, #a> to tensor<512xf32, #a>
  tile.store %f, %y[%r] : tensor<512xf32, #a>, !tile.ptr<f32>[tensor<512xi32, #a>]
  return
}
