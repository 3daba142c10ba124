// wgmma atoms are issued by a warpgroup of four 32-thread warps: their MMA layouts fit
// kernels with 32-thread warps, and warpsPerBlock counts warpgroups.
// RUN: %wavetile-opt %s | FileCheck %s

// CHECK-DAG: #[[ACC:[a-z_0-9]+]] = #tile.mma<atom = "sm_90a.wgmma_m64n128k16_f32_f16_f16", warpsPerBlock = [1, 1]>

// CHECK-LABEL: func.func @wgmma_accumulator
// CHECK:         tile.convert_layout {{.*}} -> tensor<64x128xf32, #[[ACC]]>
func.func @wgmma_accumulator(%x: tensor<64x128xf32>) attributes {tile.kernel, tile.warp_size = 32 : i32} {
  %0 = tile.convert_layout %x : tensor<64x128xf32> -> tensor<64x128xf32, #tile.mma<atom = "sm_90a.wgmma_m64n128k16_f32_f16_f16", warpsPerBlock = [1, 1]>>
  return
}
