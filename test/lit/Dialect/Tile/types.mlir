// Round-trip of the tile dialect types: !tile.ptr, !tile.buffer, !tile.shared, !tile.async_token.
// RUN: %wavetile-opt %s | %wavetile-opt | FileCheck %s

// Shared layouts are printed as aliases at the top of the module.
// CHECK-DAG: #[[SWZ:[a-z_0-9]+]] = #tile.shared_layout<vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0], padding = 0>
// CHECK-DAG: #[[PAD:[a-z_0-9]+]] = #tile.shared_layout<vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1], padding = 4>

// CHECK-LABEL: func.func private @pointers
// CHECK-SAME:    (!tile.ptr<f32>, !tile.ptr<i1>, !tile.ptr<i64>, !tile.ptr<bf16>, !tile.ptr<f8E4M3FNUZ>, !tile.ptr<f4E2M1FN>, !tile.ptr<f8E8M0FNU>, !tile.ptr<f64>)
func.func private @pointers(!tile.ptr<f32>, !tile.ptr<i1>, !tile.ptr<i64>, !tile.ptr<bf16>,
                            !tile.ptr<f8E4M3FNUZ>, !tile.ptr<f4E2M1FN>, !tile.ptr<f8E8M0FNU>, !tile.ptr<f64>)

// CHECK-LABEL: func.func private @buffers
// CHECK-SAME:    (!tile.buffer<f16>, !tile.buffer<i8>, !tile.buffer<f6E2M3FN>) -> !tile.buffer<ui32>
func.func private @buffers(!tile.buffer<f16>, !tile.buffer<i8>, !tile.buffer<f6E2M3FN>) -> !tile.buffer<ui32>

// CHECK-LABEL: func.func private @shared
// CHECK-SAME:    (!tile.shared<64xf32>, !tile.shared<4x64x64xf16>,
// CHECK-SAME:     !tile.shared<64x32xbf16, #[[SWZ]]>,
// CHECK-SAME:     !tile.shared<16x16xi8, #[[PAD]]>)
func.func private @shared(!tile.shared<64xf32>, !tile.shared<4x64x64xf16>,
    !tile.shared<64x32xbf16, #tile.shared_layout<vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0], padding = 0>>,
    !tile.shared<16x16xi8, #tile.shared_layout<vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1], padding = 4>>)

// CHECK-LABEL: func.func private @tokens
// CHECK-SAME:    (!tile.async_token) -> !tile.async_token
func.func private @tokens(!tile.async_token) -> !tile.async_token

// Tile types may appear anywhere a type may, e.g. in scf.for carried values.
// CHECK-LABEL: func.func @in_other_ops
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (!tile.async_token)
func.func @in_other_ops(%p: !tile.ptr<f32>, %t: !tile.async_token, %n: index) -> !tile.async_token {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %t) -> (!tile.async_token) {
    scf.yield %acc : !tile.async_token
  }
  return %r : !tile.async_token
}
