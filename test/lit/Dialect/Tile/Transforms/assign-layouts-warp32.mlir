// tile-assign-layouts for 32-thread warps (NVIDIA): the same 128 bits per thread, and the
// kernel records its warp size.
// RUN: %wavetile-opt %s -tile-assign-layouts=warp-size=32 | FileCheck %s

// CHECK-DAG:   #[[W8:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>
// CHECK-LABEL: func.func @coalesced
// CHECK-SAME:    tile.warp_size = 32 : i32
// CHECK:         tile.load {{.*}} -> tensor<1024xbf16, #[[W8]]>
func.func @coalesced(%x: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %r = tile.arange 0 to 1024 : tensor<1024xi32>
  %v = tile.load %x[%r] : !tile.ptr<bf16>[tensor<1024xi32>] -> tensor<1024xbf16>
  return
}
