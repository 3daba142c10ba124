// Rounding toward zero never leaves the finite range (IEEE 754 7.4): finite values past the
// largest finite number become it, whatever their size.
// RUN: %wavetile-opt %s -tile-expand-fp-convert -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @rtz_overflow
// CHECK:         return %c126_i8, %c126_i8, %c123_i8, %c123_i8 :
func.func @rtz_overflow() -> (i8, i8, i8, i8) {
  %a = arith.constant 470.0 : f32
  %b = arith.constant 1000.0 : f32
  %c = arith.constant 60000.0 : f32
  %d = arith.constant 70000.0 : f32
  %0 = tile.fp_convert %a {rounding = #tile<rounding rtz>} : f32 -> f8E4M3FN
  %1 = tile.fp_convert %b {rounding = #tile<rounding rtz>} : f32 -> f8E4M3FN
  %2 = tile.fp_convert %c {rounding = #tile<rounding rtz>} : f32 -> f8E5M2
  %3 = tile.fp_convert %d {rounding = #tile<rounding rtz>} : f32 -> f8E5M2
  %4 = arith.bitcast %0 : f8E4M3FN to i8
  %5 = arith.bitcast %1 : f8E4M3FN to i8
  %6 = arith.bitcast %2 : f8E5M2 to i8
  %7 = arith.bitcast %3 : f8E5M2 to i8
  return %4, %5, %6, %7 : i8, i8, i8, i8
}
