// tile.atomic_add and tile.fence, as a split-K GEMM tile counts its splits' arrivals: the
// one element is added once, by its owner (thread 0), which hands the previous value to
// every thread through the scratch between two barriers; the scratch is sized by the
// atomic's result. Fences are at device scope: "agent" on AMD (CDNA3's XCDs do not share
// an L2), "device" on NVIDIA (fence.acq_rel.gpu).
// RUN: %wavetile-opt %s -tile-assign-layouts="warp-size=64 target=gfx942" -convert-tile-to-gpu=target=gfx942 -canonicalize -cse | FileCheck %s --check-prefixes=CHECK,AMD
// RUN: %wavetile-opt %s -tile-assign-layouts="warp-size=32 target=sm_90" -convert-tile-to-gpu=target=sm_90 -canonicalize -cse | FileCheck %s --check-prefixes=CHECK,NV

// CHECK-LABEL: gpu.func @arrive
// CHECK-SAME:    workgroup(%[[SCRATCH:.*]] : memref<16xi8, #gpu.address_space<workgroup>>
// AMD:           llvm.fence syncscope("agent") release
// NV:            llvm.fence syncscope("device") release
// CHECK:         %[[OWNER:.*]] = arith.cmpi ult, %{{.*}}, %c1_i32 : i32
// CHECK:         %[[OLD:.*]] = scf.if %[[OWNER]] -> (i32) {
// CHECK-NEXT:      llvm.atomicrmw add %arg0, %c1_i32 monotonic : !llvm.ptr<1>, i32
// CHECK:         gpu.barrier
// CHECK:         scf.if %[[OWNER]] {
// CHECK-NEXT:      memref.store %[[OLD]]
// CHECK:         gpu.barrier
// CHECK:         %[[SEEN:.*]] = memref.load
// AMD:           llvm.fence syncscope("agent") acquire
// NV:            llvm.fence syncscope("device") acquire
// CHECK:         llvm.store %[[SEEN]], %arg1
func.func @arrive(%counters: !tile.ptr<i32>, %out: !tile.ptr<i32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %i = tile.arange 0 to 1 : tensor<1xi32>
  %one = arith.constant dense<1> : tensor<1xi32>
  tile.fence release
  %old = tile.atomic_add %one, %counters[%i] : tensor<1xi32>, !tile.ptr<i32>[tensor<1xi32>] -> tensor<1xi32>
  tile.fence acquire
  tile.store %old, %out[%i] : tensor<1xi32>, !tile.ptr<i32>[tensor<1xi32>]
  return
}
