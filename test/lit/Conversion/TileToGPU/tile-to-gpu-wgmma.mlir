// convert-tile-to-gpu of tile.shared_dot on sm_90a: wgmma.mma_async reading both operands
// through matrix descriptors (start address / 16, leading byte offset 1, 8-row stride / 16,
// swizzle mode: 1 for 128-byte rows, 2 for 64-byte rows), between wgmma.fence and a commit and
// wait, one instruction per K step and row block of each warpgroup. fp8 products start from zero
// (scale-d 0) and are added to the accumulator in f32, unless it is zero. Buffers wgmma reads
// start 1024-byte aligned. Landed async copies need no proxy fence (as in Triton's pipelines);
// stores from registers into a buffer wgmma reads are fenced for the async proxy.
// RUN: %wavetile-opt %s -tile-assign-layouts="warp-size=32 target=sm_90a" -convert-tile-to-gpu=target=sm_90a -canonicalize -cse | FileCheck %s
// RUN: not %wavetile-opt %s -tile-assign-layouts="warp-size=32 target=sm_90a" -convert-tile-to-gpu=target=sm_90 2>&1 | FileCheck %s --check-prefix=SM90

#rows128 = #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], padding = 0>
#rows64 = #tile.shared_layout<vec = 16, perPhase = 2, maxPhase = 4, order = [1, 0], padding = 0>

// CHECK-LABEL: gpu.func @bf16
// CHECK-SAME:    workgroup(%{{.*}} : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64})
// CHECK-DAG:     %[[FIELDS:.*]] = arith.constant 4611686293305360384 : i64
// CHECK:         nvvm.cp.async.shared.global {{.*}}, 16, cache =  cg
// CHECK:         nvvm.cp.async.wait.group 0
// CHECK-NOT:     nvvm.fence.proxy
// CHECK:         arith.ori %{{.*}}, %[[FIELDS]] : i64
// CHECK:         arith.ori %{{.*}}, %[[FIELDS]] : i64
// CHECK:         nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT:     nvvm.wgmma.mma_async
// CHECK:         nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:    nvvm.wgmma.wait.group.sync.aligned 0
// SM90:          error: tile.shared_dot needs wgmma (target sm_90a), not sm_90
func.func @bf16(%x: !tile.ptr<bf16>, %w: !tile.ptr<bf16>, %out: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %a = tile.shared_alloc : !tile.shared<128x64xbf16, #rows128>
  %b = tile.shared_alloc : !tile.shared<64x64xbf16, #rows128>
  %z = arith.constant 0 : i32
  // Each row's 64 columns are contiguous: 16-byte cp.async groups.
  %cols = tile.arange 0 to 64 : tensor<64xi32>
  %c2 = tile.expand_dims %cols axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %oa = tile.broadcast %c2 : tensor<1x64xi32> -> tensor<128x64xi32>
  %ob = tile.broadcast %c2 : tensor<1x64xi32> -> tensor<64x64xi32>
  %ca = tile.async_copy %x[%oa], %a : !tile.ptr<bf16>[tensor<128x64xi32>], !tile.shared<128x64xbf16, #rows128>
  %cb = tile.async_copy %w[%ob], %b : !tile.ptr<bf16>[tensor<64x64xi32>], !tile.shared<64x64xbf16, #rows128>
  tile.async_wait %ca, %cb pending = 0
  tile.barrier
  %acc = arith.constant dense<0.0> : tensor<128x64xf32>
  %d = tile.shared_dot %a, %b, %acc : !tile.shared<128x64xbf16, #rows128>, !tile.shared<64x64xbf16, #rows128>, tensor<128x64xf32> -> tensor<128x64xf32>
  %o = tile.splat %z : i32 -> tensor<128x64xi32>
  tile.store %d, %out[%o] : tensor<128x64xf32>, !tile.ptr<f32>[tensor<128x64xi32>]
  return
}

// CHECK-LABEL: gpu.func @fp8
// CHECK-DAG:     %[[FIELDS8:.*]] = arith.constant -9223371899415756800 : i64
// CHECK:         arith.ori %{{.*}}, %[[FIELDS8]] : i64
// CHECK:         nvvm.wgmma.fence.aligned
// CHECK-NEXT:    nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e5m2>, <one>, <col>]
// CHECK:         nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e5m2>, <one>, <col>]
// CHECK-NEXT:    nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:    nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: arith.addf
func.func @fp8(%x: !tile.ptr<f8E4M3FN>, %w: !tile.ptr<f8E5M2>, %out: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %a = tile.shared_alloc : !tile.shared<64x64xf8E4M3FN, #rows64>
  %b = tile.shared_alloc : !tile.shared<128x64xf8E5M2, #rows64>
  %z = arith.constant 0 : i32
  %oa = tile.splat %z : i32 -> tensor<64x64xi32>
  %ob = tile.splat %z : i32 -> tensor<128x64xi32>
  %ca = tile.async_copy %x[%oa], %a : !tile.ptr<f8E4M3FN>[tensor<64x64xi32>], !tile.shared<64x64xf8E4M3FN, #rows64>
  %cb = tile.async_copy %w[%ob], %b : !tile.ptr<f8E5M2>[tensor<128x64xi32>], !tile.shared<128x64xf8E5M2, #rows64>
  tile.async_wait %ca, %cb pending = 0
  tile.barrier
  %o = tile.splat %z : i32 -> tensor<64x128xi32>
  %acc = tile.load %out[%o] : !tile.ptr<f32>[tensor<64x128xi32>] -> tensor<64x128xf32>
  %d = tile.shared_dot %a, %b, %acc : !tile.shared<64x64xf8E4M3FN, #rows64>, !tile.shared<128x64xf8E5M2, #rows64>, tensor<64x128xf32> -> tensor<64x128xf32>
  tile.store %d, %out[%o] : tensor<64x128xf32>, !tile.ptr<f32>[tensor<64x128xi32>]
  return
}

// A block-scaled step's sum: fp8 from a zero accumulator is the wgmma result itself.
// CHECK-LABEL: gpu.func @fp8_from_zero
// CHECK:         nvvm.wgmma.mma_async {{.*}} D[<f32>, <zero>]
// CHECK:         nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT:     arith.addf
// CHECK:         gpu.return
func.func @fp8_from_zero(%x: !tile.ptr<f8E4M3FN>, %w: !tile.ptr<f8E4M3FN>, %out: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %a = tile.shared_alloc : !tile.shared<64x64xf8E4M3FN, #rows64>
  %b = tile.shared_alloc : !tile.shared<64x64xf8E4M3FN, #rows64>
  %z = arith.constant 0 : i32
  %o = tile.splat %z : i32 -> tensor<64x64xi32>
  %ca = tile.async_copy %x[%o], %a : !tile.ptr<f8E4M3FN>[tensor<64x64xi32>], !tile.shared<64x64xf8E4M3FN, #rows64>
  %cb = tile.async_copy %w[%o], %b : !tile.ptr<f8E4M3FN>[tensor<64x64xi32>], !tile.shared<64x64xf8E4M3FN, #rows64>
  tile.async_wait %ca, %cb pending = 0
  tile.barrier
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.shared_dot %a, %b, %zero : !tile.shared<64x64xf8E4M3FN, #rows64>, !tile.shared<64x64xf8E4M3FN, #rows64>, tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %d, %out[%o] : tensor<64x64xf32>, !tile.ptr<f32>[tensor<64x64xi32>]
  return
}

// int8 sums exactly in s32: accumulated in place (scale-d 1 from the first step).
// CHECK-LABEL: gpu.func @int8
// CHECK:         nvvm.wgmma.fence.aligned
// CHECK-COUNT-2: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 32>, D[<s32>, <one>], A[<s8>, <one>, <row>], B[<s8>, <one>, <col>]
// CHECK-NEXT:    nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:    nvvm.wgmma.wait.group.sync.aligned 0
func.func @int8(%x: !tile.ptr<i8>, %w: !tile.ptr<i8>, %out: !tile.ptr<i32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %a = tile.shared_alloc : !tile.shared<64x64xi8, #rows64>
  %b = tile.shared_alloc : !tile.shared<64x64xi8, #rows64>
  %z = arith.constant 0 : i32
  %o = tile.splat %z : i32 -> tensor<64x64xi32>
  %ca = tile.async_copy %x[%o], %a : !tile.ptr<i8>[tensor<64x64xi32>], !tile.shared<64x64xi8, #rows64>
  %cb = tile.async_copy %w[%o], %b : !tile.ptr<i8>[tensor<64x64xi32>], !tile.shared<64x64xi8, #rows64>
  tile.async_wait %ca, %cb pending = 0
  tile.barrier
  %acc = arith.constant dense<0> : tensor<64x64xi32>
  %d = tile.shared_dot %a, %b, %acc : !tile.shared<64x64xi8, #rows64>, !tile.shared<64x64xi8, #rows64>, tensor<64x64xi32> -> tensor<64x64xi32>
  tile.store %d, %out[%o] : tensor<64x64xi32>, !tile.ptr<i32>[tensor<64x64xi32>]
  return
}

// An operand stored from registers, and one copied element by element (its offsets are not
// contiguous): each thread fences both kinds of stores, once each, before the barrier.
// CHECK-LABEL: gpu.func @stored
// CHECK:         vector.store
// CHECK:         nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NOT:     nvvm.fence.proxy
// CHECK:         memref.store
// CHECK-NOT:     nvvm.fence.proxy
// CHECK:         nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:    nvvm.cp.async.commit.group
// CHECK-NEXT:    nvvm.cp.async.wait.group 0
// CHECK-NEXT:    gpu.barrier
// CHECK:         nvvm.wgmma.fence.aligned
func.func @stored(%px: !tile.ptr<bf16>, %w: !tile.ptr<bf16>, %out: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %a = tile.shared_alloc : !tile.shared<64x64xbf16, #rows128>
  %b = tile.shared_alloc : !tile.shared<64x64xbf16, #rows128>
  %z = arith.constant 0 : i32
  %ob = tile.splat %z : i32 -> tensor<64x64xi32>
  %x = tile.load %px[%ob] : !tile.ptr<bf16>[tensor<64x64xi32>] -> tensor<64x64xbf16>
  tile.shared_store %x, %a : tensor<64x64xbf16>, !tile.shared<64x64xbf16, #rows128>
  %cb = tile.async_copy %w[%ob], %b : !tile.ptr<bf16>[tensor<64x64xi32>], !tile.shared<64x64xbf16, #rows128>
  tile.async_wait %cb pending = 0
  tile.barrier
  %acc = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.shared_dot %a, %b, %acc : !tile.shared<64x64xbf16, #rows128>, !tile.shared<64x64xbf16, #rows128>, tensor<64x64xf32> -> tensor<64x64xf32>
  %o = tile.splat %z : i32 -> tensor<64x64xi32>
  tile.store %d, %out[%o] : tensor<64x64xf32>, !tile.ptr<f32>[tensor<64x64xi32>]
  return
}
