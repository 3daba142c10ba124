// Round-trip of global-memory ops: tile.load, tile.store, tile.atomic_add with and without
// mask / other, i32 and i64 offsets, tiles with layouts.
// RUN: %wavetile-opt %s | %wavetile-opt | FileCheck %s

#blk = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>

// CHECK-LABEL: func.func @load
// CHECK-SAME:    (%[[P:.*]]: !tile.ptr<f32>, %[[O:.*]]: tensor<128xi32>, %[[M:.*]]: tensor<128xi1>, %[[S:.*]]: f32, %[[T:.*]]: tensor<128xf32>)
// CHECK:         tile.load %[[P]][%[[O]]] : !tile.ptr<f32>[tensor<128xi32>] -> tensor<128xf32>
// CHECK:         tile.load %[[P]][%[[O]]] mask %[[M]] : !tile.ptr<f32>[tensor<128xi32>], tensor<128xi1> -> tensor<128xf32>
// CHECK:         tile.load %[[P]][%[[O]]] mask %[[M]] other %[[S]] : !tile.ptr<f32>[tensor<128xi32>], tensor<128xi1> other f32 -> tensor<128xf32>
// CHECK:         tile.load %[[P]][%[[O]]] mask %[[M]] other %[[T]] : !tile.ptr<f32>[tensor<128xi32>], tensor<128xi1> other tensor<128xf32> -> tensor<128xf32>
func.func @load(%p: !tile.ptr<f32>, %o: tensor<128xi32>, %m: tensor<128xi1>, %s: f32, %t: tensor<128xf32>) {
  %0 = tile.load %p[%o] : !tile.ptr<f32>[tensor<128xi32>] -> tensor<128xf32>
  %1 = tile.load %p[%o] mask %m : !tile.ptr<f32>[tensor<128xi32>], tensor<128xi1> -> tensor<128xf32>
  %2 = tile.load %p[%o] mask %m other %s : !tile.ptr<f32>[tensor<128xi32>], tensor<128xi1> other f32 -> tensor<128xf32>
  %3 = tile.load %p[%o] mask %m other %t : !tile.ptr<f32>[tensor<128xi32>], tensor<128xi1> other tensor<128xf32> -> tensor<128xf32>
  return
}

// Offsets may be i64; shapes are compared without layouts, so operands and the result may
// carry different (or no) layouts.
// CHECK-LABEL: func.func @load_i64_offsets_2d
// CHECK:         tile.load %{{.*}}[%{{.*}}] mask %{{.*}} : !tile.ptr<bf16>[tensor<16x32xi64>], tensor<16x32xi1> -> tensor<16x32xbf16>
// CHECK:         tile.load %{{.*}}[%{{.*}}] : !tile.ptr<i8>[tensor<128xi32, #{{.*}}>] -> tensor<128xi8>
func.func @load_i64_offsets_2d(%p: !tile.ptr<bf16>, %o: tensor<16x32xi64>, %m: tensor<16x32xi1>,
                               %q: !tile.ptr<i8>, %lo: tensor<128xi32, #blk>) {
  %0 = tile.load %p[%o] mask %m : !tile.ptr<bf16>[tensor<16x32xi64>], tensor<16x32xi1> -> tensor<16x32xbf16>
  %1 = tile.load %q[%lo] : !tile.ptr<i8>[tensor<128xi32, #blk>] -> tensor<128xi8>
  return
}

// CHECK-LABEL: func.func @store
// CHECK-SAME:    (%[[P:.*]]: !tile.ptr<f16>, %[[O:.*]]: tensor<64xi32>, %[[M:.*]]: tensor<64xi1>, %[[V:.*]]: tensor<64xf16>)
// CHECK:         tile.store %[[V]], %[[P]][%[[O]]] : tensor<64xf16>, !tile.ptr<f16>[tensor<64xi32>]
// CHECK-NEXT:    tile.store %[[V]], %[[P]][%[[O]]] mask %[[M]] : tensor<64xf16>, !tile.ptr<f16>[tensor<64xi32>], tensor<64xi1>
func.func @store(%p: !tile.ptr<f16>, %o: tensor<64xi32>, %m: tensor<64xi1>, %v: tensor<64xf16>) {
  tile.store %v, %p[%o] : tensor<64xf16>, !tile.ptr<f16>[tensor<64xi32>]
  tile.store %v, %p[%o] mask %m : tensor<64xf16>, !tile.ptr<f16>[tensor<64xi32>], tensor<64xi1>
  return
}

// CHECK-LABEL: func.func @atomic_add
// CHECK-SAME:    (%[[P:.*]]: !tile.ptr<f32>, %[[Q:.*]]: !tile.ptr<i32>, %[[O:.*]]: tensor<4x8xi64>, %[[M:.*]]: tensor<4x8xi1>, %[[F:.*]]: tensor<4x8xf32>, %[[I:.*]]: tensor<4x8xi32>)
// CHECK:         tile.atomic_add %[[F]], %[[P]][%[[O]]] : tensor<4x8xf32>, !tile.ptr<f32>[tensor<4x8xi64>] -> tensor<4x8xf32>
// CHECK:         tile.atomic_add %[[I]], %[[Q]][%[[O]]] mask %[[M]] : tensor<4x8xi32>, !tile.ptr<i32>[tensor<4x8xi64>], tensor<4x8xi1> -> tensor<4x8xi32>
func.func @atomic_add(%p: !tile.ptr<f32>, %q: !tile.ptr<i32>, %o: tensor<4x8xi64>, %m: tensor<4x8xi1>,
                      %f: tensor<4x8xf32>, %i: tensor<4x8xi32>) {
  %0 = tile.atomic_add %f, %p[%o] : tensor<4x8xf32>, !tile.ptr<f32>[tensor<4x8xi64>] -> tensor<4x8xf32>
  %1 = tile.atomic_add %i, %q[%o] mask %m : tensor<4x8xi32>, !tile.ptr<i32>[tensor<4x8xi64>], tensor<4x8xi1> -> tensor<4x8xi32>
  return
}

// An unused load only reads, so it is dead code; an atomic add writes and stays.
// RUN: %wavetile-opt %s -canonicalize | FileCheck %s --check-prefix=CANON
// CANON-LABEL: func.func @effects_kept
// CANON-NOT:     tile.load
// CANON:         tile.atomic_add
// CANON-NOT:     tile.load
func.func @effects_kept(%p: !tile.ptr<f32>, %o: tensor<8xi32>, %v: tensor<8xf32>) {
  %0 = tile.load %p[%o] : !tile.ptr<f32>[tensor<8xi32>] -> tensor<8xf32>
  %1 = tile.atomic_add %v, %p[%o] : tensor<8xf32>, !tile.ptr<f32>[tensor<8xi32>] -> tensor<8xf32>
  return
}
