// Round-trip of shared-memory ops: shared_alloc/store/load/slice, async_copy, async_wait, barrier.
// RUN: %wavetile-opt %s | %wavetile-opt | FileCheck %s

#swz = #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], padding = 0>
#swz3 = #tile.shared_layout<vec = 4, perPhase = 2, maxPhase = 4, order = [2, 1, 0], padding = 8>
#swz3e = #tile.shared_layout<vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0], padding = 8>

// Shared layouts are printed as aliases at the top of the module.
// CHECK-DAG: #[[SWZ:[a-z_0-9]+]] = #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], padding = 0>
// CHECK-DAG: #[[SWZ3:[a-z_0-9]+]] = #tile.shared_layout<vec = 4, perPhase = 2, maxPhase = 4, order = [2, 1, 0], padding = 8>
// CHECK-DAG: #[[SWZ3E:[a-z_0-9]+]] = #tile.shared_layout<vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0], padding = 8>

// CHECK-LABEL: func.func @shared_round_trip
// CHECK-SAME:    (%[[T:.*]]: tensor<32x64xf16>)
// CHECK:         %[[S:.*]] = tile.shared_alloc : !tile.shared<32x64xf16, #[[SWZ]]>
// CHECK-NEXT:    tile.shared_store %[[T]], %[[S]] : tensor<32x64xf16>, !tile.shared<32x64xf16, #[[SWZ]]>
// CHECK-NEXT:    tile.barrier
// CHECK-NEXT:    %[[L:.*]] = tile.shared_load %[[S]] : !tile.shared<32x64xf16, #[[SWZ]]> -> tensor<32x64xf16>
// CHECK-NEXT:    return %[[L]]
func.func @shared_round_trip(%t: tensor<32x64xf16>) -> tensor<32x64xf16> {
  %s = tile.shared_alloc : !tile.shared<32x64xf16, #swz>
  tile.shared_store %t, %s : tensor<32x64xf16>, !tile.shared<32x64xf16, #swz>
  tile.barrier
  %l = tile.shared_load %s : !tile.shared<32x64xf16, #swz> -> tensor<32x64xf16>
  return %l : tensor<32x64xf16>
}

// Multi-buffering: a 3-D buffer sliced along dimension 0, filled by async copies.
// CHECK-LABEL: func.func @pipelined
// CHECK-SAME:    (%[[P:.*]]: !tile.ptr<bf16>, %[[O:.*]]: tensor<16x32xi32>, %[[M:.*]]: tensor<16x32xi1>, %[[I:.*]]: i32)
// CHECK:         %[[B:.*]] = tile.shared_alloc : !tile.shared<2x16x32xbf16>
// CHECK:         %[[S0:.*]] = tile.shared_slice %[[B]][%[[I]]] : !tile.shared<2x16x32xbf16> -> !tile.shared<16x32xbf16>
// CHECK:         %[[T0:.*]] = tile.async_copy %[[P]][%[[O]]], %[[S0]] : !tile.ptr<bf16>[tensor<16x32xi32>], !tile.shared<16x32xbf16>
// CHECK:         %[[T1:.*]] = tile.async_copy %[[P]][%[[O]]], %[[S0]] mask %[[M]] : !tile.ptr<bf16>[tensor<16x32xi32>], !tile.shared<16x32xbf16>, tensor<16x32xi1>
// CHECK:         tile.async_wait %[[T0]], %[[T1]] pending = 1
// CHECK:         tile.async_wait %[[T1]] pending = 0
// CHECK:         tile.async_wait pending = 0
// CHECK:         tile.shared_load %[[S0]] : !tile.shared<16x32xbf16> -> tensor<16x32xbf16>
func.func @pipelined(%p: !tile.ptr<bf16>, %o: tensor<16x32xi32>, %m: tensor<16x32xi1>, %i: i32) -> tensor<16x32xbf16> {
  %b = tile.shared_alloc : !tile.shared<2x16x32xbf16>
  %s0 = tile.shared_slice %b[%i] : !tile.shared<2x16x32xbf16> -> !tile.shared<16x32xbf16>
  %t0 = tile.async_copy %p[%o], %s0 : !tile.ptr<bf16>[tensor<16x32xi32>], !tile.shared<16x32xbf16>
  %t1 = tile.async_copy %p[%o], %s0 mask %m : !tile.ptr<bf16>[tensor<16x32xi32>], !tile.shared<16x32xbf16>, tensor<16x32xi1>
  tile.async_wait %t0, %t1 pending = 1
  tile.async_wait %t1 pending = 0
  tile.async_wait pending = 0
  %v = tile.shared_load %s0 : !tile.shared<16x32xbf16> -> tensor<16x32xbf16>
  return %v : tensor<16x32xbf16>
}

// A slice's layout is the source's less dimension 0 (which the verifier checks: reading an
// entry through another layout would read the wrong elements).
// CHECK-LABEL: func.func @slice_layouts
// CHECK:         tile.shared_slice %{{.*}}[%{{.*}}] : !tile.shared<4x8x16xi8, #[[SWZ3]]> -> !tile.shared<8x16xi8, #[[SWZ3E]]>
// CHECK:         tile.async_copy %{{.*}}[%{{.*}}], %{{.*}} : !tile.ptr<i8>[tensor<8x16xi64>], !tile.shared<8x16xi8, #[[SWZ3E]]>
func.func @slice_layouts(%b: !tile.shared<4x8x16xi8, #swz3>, %i: i32, %p: !tile.ptr<i8>, %o: tensor<8x16xi64>) {
  %0 = tile.shared_slice %b[%i] : !tile.shared<4x8x16xi8, #swz3> -> !tile.shared<8x16xi8, #swz3e>
  %t = tile.async_copy %p[%o], %0 : !tile.ptr<i8>[tensor<8x16xi64>], !tile.shared<8x16xi8, #swz3e>
  return
}

// shared_slice is Pure and folds away when unused; allocation and barriers stay.
// RUN: %wavetile-opt %s -canonicalize | FileCheck %s --check-prefix=CANON
// CANON-LABEL: func.func @dead_slice
// CANON-NOT:     tile.shared_slice
// CANON:         tile.barrier
// CANON-NOT:     tile.shared_slice
// CANON:         return
func.func @dead_slice(%b: !tile.shared<2x8xf32>, %i: i32) {
  %0 = tile.shared_slice %b[%i] : !tile.shared<2x8xf32> -> !tile.shared<8xf32>
  tile.barrier
  return
}
