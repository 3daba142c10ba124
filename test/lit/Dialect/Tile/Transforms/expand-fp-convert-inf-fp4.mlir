// +-Inf to f4E2M1FN (no Inf in the format) saturates to +-6.0 and never computes poison.
// RUN: %wavetile-opt %s -tile-expand-fp-convert -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @inf_to_e2m1
// CHECK-NOT:     arith.fptoui
// CHECK:         return %c7_i4, %c-1_i4 : i4, i4
func.func @inf_to_e2m1() -> (i4, i4) {
  %inf = arith.constant 0x7F800000 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = tile.fp_convert %inf : f32 -> f4E2M1FN
  %1 = tile.fp_convert %ninf : f32 -> f4E2M1FN
  %2 = arith.bitcast %0 : f4E2M1FN to i4
  %3 = arith.bitcast %1 : f4E2M1FN to i4
  return %2, %3 : i4, i4
}
