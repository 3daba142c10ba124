// tile-expand-fp-convert computes the right codes: the expansion of constant inputs is
// constant-folded by -canonicalize and the results are returned as integers (bit patterns).
// Expected codes follow the format definitions (round to nearest even unless rtz).
// RUN: %wavetile-opt %s -tile-expand-fp-convert -canonicalize | FileCheck %s

// 1.0 -> 0x38; 448 is the largest finite; 464 ties to even (448); 470 overflows to NaN (0x7F);
// -2^-9 is the smallest subnormal; 2^-10 ties to 0; 1.5 * 2^-10 rounds up; 1.0625 and 1.1875
// tie to even; -0.0 keeps its sign; NaN is 0x7F; -Inf overflows to (negative) NaN.
// CHECK-LABEL: func.func @narrow_e4m3fn
// CHECK-NOT:     tile.fp_convert
// CHECK-NOT:     math.
// CHECK:         return %c56_i8, %c126_i8, %c126_i8, %c127_i8, %c-127_i8, %c0_i8, %c1_i8, %c56_i8, %c58_i8, %c-128_i8, %c127_i8, %c-1_i8 :
func.func @narrow_e4m3fn() -> (i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8) {
  %x0 = arith.constant 1.0 : f32
  %y0 = tile.fp_convert %x0 : f32 -> f8E4M3FN
  %r0 = arith.bitcast %y0 : f8E4M3FN to i8
  %x1 = arith.constant 448.0 : f32
  %y1 = tile.fp_convert %x1 : f32 -> f8E4M3FN
  %r1 = arith.bitcast %y1 : f8E4M3FN to i8
  %x2 = arith.constant 464.0 : f32
  %y2 = tile.fp_convert %x2 : f32 -> f8E4M3FN
  %r2 = arith.bitcast %y2 : f8E4M3FN to i8
  %x3 = arith.constant 470.0 : f32
  %y3 = tile.fp_convert %x3 : f32 -> f8E4M3FN
  %r3 = arith.bitcast %y3 : f8E4M3FN to i8
  %x4 = arith.constant -0.001953125 : f32
  %y4 = tile.fp_convert %x4 : f32 -> f8E4M3FN
  %r4 = arith.bitcast %y4 : f8E4M3FN to i8
  %x5 = arith.constant 0.0009765625 : f32
  %y5 = tile.fp_convert %x5 : f32 -> f8E4M3FN
  %r5 = arith.bitcast %y5 : f8E4M3FN to i8
  %x6 = arith.constant 0.00146484375 : f32
  %y6 = tile.fp_convert %x6 : f32 -> f8E4M3FN
  %r6 = arith.bitcast %y6 : f8E4M3FN to i8
  %x7 = arith.constant 1.0625 : f32
  %y7 = tile.fp_convert %x7 : f32 -> f8E4M3FN
  %r7 = arith.bitcast %y7 : f8E4M3FN to i8
  %x8 = arith.constant 1.1875 : f32
  %y8 = tile.fp_convert %x8 : f32 -> f8E4M3FN
  %r8 = arith.bitcast %y8 : f8E4M3FN to i8
  %x9 = arith.constant -0.0 : f32
  %y9 = tile.fp_convert %x9 : f32 -> f8E4M3FN
  %r9 = arith.bitcast %y9 : f8E4M3FN to i8
  %x10 = arith.constant 0x7FC00000 : f32
  %y10 = tile.fp_convert %x10 : f32 -> f8E4M3FN
  %r10 = arith.bitcast %y10 : f8E4M3FN to i8
  %x11 = arith.constant 0xFF800000 : f32
  %y11 = tile.fp_convert %x11 : f32 -> f8E4M3FN
  %r11 = arith.bitcast %y11 : f8E4M3FN to i8
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11 : i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8
}

// Saturation clamps overflow and Inf to +-448 (0x7E / 0xFE); NaN stays NaN.
// CHECK-LABEL: func.func @narrow_e4m3fn_saturate
// CHECK-NOT:     tile.fp_convert
// CHECK-NOT:     math.
// CHECK:         return %c126_i8, %c126_i8, %c-2_i8, %c127_i8 :
func.func @narrow_e4m3fn_saturate() -> (i8, i8, i8, i8) {
  %x0 = arith.constant 470.0 : f32
  %y0 = tile.fp_convert %x0 {saturate} : f32 -> f8E4M3FN
  %r0 = arith.bitcast %y0 : f8E4M3FN to i8
  %x1 = arith.constant 10000000000.0 : f32
  %y1 = tile.fp_convert %x1 {saturate} : f32 -> f8E4M3FN
  %r1 = arith.bitcast %y1 : f8E4M3FN to i8
  %x2 = arith.constant 0xFF800000 : f32
  %y2 = tile.fp_convert %x2 {saturate} : f32 -> f8E4M3FN
  %r2 = arith.bitcast %y2 : f8E4M3FN to i8
  %x3 = arith.constant 0x7FC00000 : f32
  %y3 = tile.fp_convert %x3 {saturate} : f32 -> f8E4M3FN
  %r3 = arith.bitcast %y3 : f8E4M3FN to i8
  return %r0, %r1, %r2, %r3 : i8, i8, i8, i8
}

// Toward zero: 1.1875 -> 1.125, 447.9 -> 416, -1.99 -> -1.875.
// CHECK-LABEL: func.func @narrow_e4m3fn_rtz
// CHECK-NOT:     tile.fp_convert
// CHECK-NOT:     math.
// CHECK:         return %c57_i8, %c125_i8, %c-65_i8 :
func.func @narrow_e4m3fn_rtz() -> (i8, i8, i8) {
  %x0 = arith.constant 1.1875 : f32
  %y0 = tile.fp_convert %x0 {rounding = #tile<rounding rtz>} : f32 -> f8E4M3FN
  %r0 = arith.bitcast %y0 : f8E4M3FN to i8
  %x1 = arith.constant 447.8999938964844 : f32
  %y1 = tile.fp_convert %x1 {rounding = #tile<rounding rtz>} : f32 -> f8E4M3FN
  %r1 = arith.bitcast %y1 : f8E4M3FN to i8
  %x2 = arith.constant -1.9900000095367432 : f32
  %y2 = tile.fp_convert %x2 {rounding = #tile<rounding rtz>} : f32 -> f8E4M3FN
  %r2 = arith.bitcast %y2 : f8E4M3FN to i8
  return %r0, %r1, %r2 : i8, i8, i8
}

// f8E5M2 has Inf: 57344 is the largest finite; 61440 ties to even, which is Inf (0x7C);
// 2^-17 ties to 0; 1.5 * 2^-17 rounds up to the smallest subnormal.
// CHECK-LABEL: func.func @narrow_e5m2
// CHECK-NOT:     tile.fp_convert
// CHECK-NOT:     math.
// CHECK:         return %c123_i8, %c123_i8, %c124_i8, %c124_i8, %c-4_i8, %c0_i8, %c1_i8 :
func.func @narrow_e5m2() -> (i8, i8, i8, i8, i8, i8, i8) {
  %x0 = arith.constant 57344.0 : f32
  %y0 = tile.fp_convert %x0 : f32 -> f8E5M2
  %r0 = arith.bitcast %y0 : f8E5M2 to i8
  %x1 = arith.constant 61439.0 : f32
  %y1 = tile.fp_convert %x1 : f32 -> f8E5M2
  %r1 = arith.bitcast %y1 : f8E5M2 to i8
  %x2 = arith.constant 61440.0 : f32
  %y2 = tile.fp_convert %x2 : f32 -> f8E5M2
  %r2 = arith.bitcast %y2 : f8E5M2 to i8
  %x3 = arith.constant 0x7F800000 : f32
  %y3 = tile.fp_convert %x3 : f32 -> f8E5M2
  %r3 = arith.bitcast %y3 : f8E5M2 to i8
  %x4 = arith.constant 0xFF800000 : f32
  %y4 = tile.fp_convert %x4 : f32 -> f8E5M2
  %r4 = arith.bitcast %y4 : f8E5M2 to i8
  %x5 = arith.constant 7.62939453125e-06 : f32
  %y5 = tile.fp_convert %x5 : f32 -> f8E5M2
  %r5 = arith.bitcast %y5 : f8E5M2 to i8
  %x6 = arith.constant 1.1444091796875e-05 : f32
  %y6 = tile.fp_convert %x6 : f32 -> f8E5M2
  %r6 = arith.bitcast %y6 : f8E5M2 to i8
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6 : i8, i8, i8, i8, i8, i8, i8
}

// Saturation: Inf and 1e6 become +-57344.
// CHECK-LABEL: func.func @narrow_e5m2_saturate
// CHECK-NOT:     tile.fp_convert
// CHECK-NOT:     math.
// CHECK:         return %c123_i8, %c123_i8, %c-5_i8 :
func.func @narrow_e5m2_saturate() -> (i8, i8, i8) {
  %x0 = arith.constant 0x7F800000 : f32
  %y0 = tile.fp_convert %x0 {saturate} : f32 -> f8E5M2
  %r0 = arith.bitcast %y0 : f8E5M2 to i8
  %x1 = arith.constant 1000000.0 : f32
  %y1 = tile.fp_convert %x1 {saturate} : f32 -> f8E5M2
  %r1 = arith.bitcast %y1 : f8E5M2 to i8
  %x2 = arith.constant -1000000.0 : f32
  %y2 = tile.fp_convert %x2 {saturate} : f32 -> f8E5M2
  %r2 = arith.bitcast %y2 : f8E5M2 to i8
  return %r0, %r1, %r2 : i8, i8, i8
}

// FNUZ: no negative zero (-0.0 -> 0x00); bias 8 (1.0 -> 0x40); overflow is NaN (0x80).
// CHECK-LABEL: func.func @narrow_e4m3fnuz
// CHECK-NOT:     tile.fp_convert
// CHECK-NOT:     math.
// CHECK:         return %c0_i8, %c64_i8, %c-128_i8, %c-127_i8 :
func.func @narrow_e4m3fnuz() -> (i8, i8, i8, i8) {
  %x0 = arith.constant -0.0 : f32
  %y0 = tile.fp_convert %x0 : f32 -> f8E4M3FNUZ
  %r0 = arith.bitcast %y0 : f8E4M3FNUZ to i8
  %x1 = arith.constant 1.0 : f32
  %y1 = tile.fp_convert %x1 : f32 -> f8E4M3FNUZ
  %r1 = arith.bitcast %y1 : f8E4M3FNUZ to i8
  %x2 = arith.constant 300.0 : f32
  %y2 = tile.fp_convert %x2 : f32 -> f8E4M3FNUZ
  %r2 = arith.bitcast %y2 : f8E4M3FNUZ to i8
  %x3 = arith.constant -0.0009765625 : f32
  %y3 = tile.fp_convert %x3 : f32 -> f8E4M3FNUZ
  %r3 = arith.bitcast %y3 : f8E4M3FNUZ to i8
  return %r0, %r1, %r2, %r3 : i8, i8, i8, i8
}

// Saturation: +-240 (0x7F / 0xFF).
// CHECK-LABEL: func.func @narrow_e4m3fnuz_saturate
// CHECK-NOT:     tile.fp_convert
// CHECK-NOT:     math.
// CHECK:         return %c127_i8, %c-1_i8 :
func.func @narrow_e4m3fnuz_saturate() -> (i8, i8) {
  %x0 = arith.constant 300.0 : f32
  %y0 = tile.fp_convert %x0 {saturate} : f32 -> f8E4M3FNUZ
  %r0 = arith.bitcast %y0 : f8E4M3FNUZ to i8
  %x1 = arith.constant -300.0 : f32
  %y1 = tile.fp_convert %x1 {saturate} : f32 -> f8E4M3FNUZ
  %r1 = arith.bitcast %y1 : f8E4M3FNUZ to i8
  return %r0, %r1 : i8, i8
}

// f6E2M3FN has no Inf or NaN: overflow saturates to +-7.5 (0x1F / 0x3F) without the flag.
// CHECK-LABEL: func.func @narrow_e2m3
// CHECK-NOT:     tile.fp_convert
// CHECK-NOT:     math.
// CHECK:         return %c8_i6, %c31_i6, %c31_i6, %c-1_i6, %c0_i6, %c1_i6 :
func.func @narrow_e2m3() -> (i6, i6, i6, i6, i6, i6) {
  %x0 = arith.constant 1.0 : f32
  %y0 = tile.fp_convert %x0 : f32 -> f6E2M3FN
  %r0 = arith.bitcast %y0 : f6E2M3FN to i6
  %x1 = arith.constant 7.5 : f32
  %y1 = tile.fp_convert %x1 : f32 -> f6E2M3FN
  %r1 = arith.bitcast %y1 : f6E2M3FN to i6
  %x2 = arith.constant 8.0 : f32
  %y2 = tile.fp_convert %x2 : f32 -> f6E2M3FN
  %r2 = arith.bitcast %y2 : f6E2M3FN to i6
  %x3 = arith.constant -8.0 : f32
  %y3 = tile.fp_convert %x3 : f32 -> f6E2M3FN
  %r3 = arith.bitcast %y3 : f6E2M3FN to i6
  %x4 = arith.constant 0.0625 : f32
  %y4 = tile.fp_convert %x4 : f32 -> f6E2M3FN
  %r4 = arith.bitcast %y4 : f6E2M3FN to i6
  %x5 = arith.constant 0.09375 : f32
  %y5 = tile.fp_convert %x5 : f32 -> f6E2M3FN
  %r5 = arith.bitcast %y5 : f6E2M3FN to i6
  return %r0, %r1, %r2, %r3, %r4, %r5 : i6, i6, i6, i6, i6, i6
}

// f6E3M2FN: bias 3 (1.0 -> 0x0C), largest finite 28; -0.0625 is the smallest negative subnormal.
// CHECK-LABEL: func.func @narrow_e3m2
// CHECK-NOT:     tile.fp_convert
// CHECK-NOT:     math.
// CHECK:         return %c12_i6, %c31_i6, %c31_i6, %c-31_i6 :
func.func @narrow_e3m2() -> (i6, i6, i6, i6) {
  %x0 = arith.constant 1.0 : f32
  %y0 = tile.fp_convert %x0 : f32 -> f6E3M2FN
  %r0 = arith.bitcast %y0 : f6E3M2FN to i6
  %x1 = arith.constant 28.0 : f32
  %y1 = tile.fp_convert %x1 : f32 -> f6E3M2FN
  %r1 = arith.bitcast %y1 : f6E3M2FN to i6
  %x2 = arith.constant 30.0 : f32
  %y2 = tile.fp_convert %x2 : f32 -> f6E3M2FN
  %r2 = arith.bitcast %y2 : f6E3M2FN to i6
  %x3 = arith.constant -0.0625 : f32
  %y3 = tile.fp_convert %x3 : f32 -> f6E3M2FN
  %r3 = arith.bitcast %y3 : f6E3M2FN to i6
  return %r0, %r1, %r2, %r3 : i6, i6, i6, i6
}

// f4E2M1FN: 5.0 and 0.25 and 0.75 tie to even; 100 saturates to 6.0 (0x7).
// CHECK-LABEL: func.func @narrow_e2m1
// CHECK-NOT:     tile.fp_convert
// CHECK-NOT:     math.
// CHECK:         return %c2_i4, %c7_i4, %c6_i4, %c-7_i4, %c0_i4, %c2_i4, %c7_i4 :
func.func @narrow_e2m1() -> (i4, i4, i4, i4, i4, i4, i4) {
  %x0 = arith.constant 1.0 : f32
  %y0 = tile.fp_convert %x0 : f32 -> f4E2M1FN
  %r0 = arith.bitcast %y0 : f4E2M1FN to i4
  %x1 = arith.constant 6.0 : f32
  %y1 = tile.fp_convert %x1 : f32 -> f4E2M1FN
  %r1 = arith.bitcast %y1 : f4E2M1FN to i4
  %x2 = arith.constant 5.0 : f32
  %y2 = tile.fp_convert %x2 : f32 -> f4E2M1FN
  %r2 = arith.bitcast %y2 : f4E2M1FN to i4
  %x3 = arith.constant -0.5 : f32
  %y3 = tile.fp_convert %x3 : f32 -> f4E2M1FN
  %r3 = arith.bitcast %y3 : f4E2M1FN to i4
  %x4 = arith.constant 0.25 : f32
  %y4 = tile.fp_convert %x4 : f32 -> f4E2M1FN
  %r4 = arith.bitcast %y4 : f4E2M1FN to i4
  %x5 = arith.constant 0.75 : f32
  %y5 = tile.fp_convert %x5 : f32 -> f4E2M1FN
  %r5 = arith.bitcast %y5 : f4E2M1FN to i4
  %x6 = arith.constant 100.0 : f32
  %y6 = tile.fp_convert %x6 : f32 -> f4E2M1FN
  %r6 = arith.bitcast %y6 : f4E2M1FN to i4
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6 : i4, i4, i4, i4, i4, i4, i4
}

// f8E8M0FNU: the nearest power of two, ties up (0.75 -> 1.0); 2^-127 (an f32 subnormal) is code 0;
// 3e38 rounds to 2^128, which overflows to NaN (0xFF); the sign is dropped.
// CHECK-LABEL: func.func @narrow_e8m0
// CHECK-NOT:     tile.fp_convert
// CHECK-NOT:     math.
// CHECK:         return %c127_i8, %c0_i8, %c127_i8, %c126_i8, %c-1_i8, %c-127_i8 :
func.func @narrow_e8m0() -> (i8, i8, i8, i8, i8, i8) {
  %x0 = arith.constant 1.0 : f32
  %y0 = tile.fp_convert %x0 : f32 -> f8E8M0FNU
  %r0 = arith.bitcast %y0 : f8E8M0FNU to i8
  %x1 = arith.constant 0x00400000 : f32
  %y1 = tile.fp_convert %x1 : f32 -> f8E8M0FNU
  %r1 = arith.bitcast %y1 : f8E8M0FNU to i8
  %x2 = arith.constant 0.75 : f32
  %y2 = tile.fp_convert %x2 : f32 -> f8E8M0FNU
  %r2 = arith.bitcast %y2 : f8E8M0FNU to i8
  %x3 = arith.constant 0.699999988079071 : f32
  %y3 = tile.fp_convert %x3 : f32 -> f8E8M0FNU
  %r3 = arith.bitcast %y3 : f8E8M0FNU to i8
  %x4 = arith.constant 3.0000000054977558e+38 : f32
  %y4 = tile.fp_convert %x4 : f32 -> f8E8M0FNU
  %r4 = arith.bitcast %y4 : f8E8M0FNU to i8
  %x5 = arith.constant -4.0 : f32
  %y5 = tile.fp_convert %x5 : f32 -> f8E8M0FNU
  %r5 = arith.bitcast %y5 : f8E8M0FNU to i8
  return %r0, %r1, %r2, %r3, %r4, %r5 : i8, i8, i8, i8, i8, i8
}

// Toward zero: 0.99 -> 0.5, 3e38 -> 2^127 (0xFE).
// CHECK-LABEL: func.func @narrow_e8m0_rtz_saturate
// CHECK-NOT:     tile.fp_convert
// CHECK-NOT:     math.
// CHECK:         return %c126_i8, %c-2_i8 :
func.func @narrow_e8m0_rtz_saturate() -> (i8, i8) {
  %x0 = arith.constant 0.9900000095367432 : f32
  %y0 = tile.fp_convert %x0 {rounding = #tile<rounding rtz>, saturate} : f32 -> f8E8M0FNU
  %r0 = arith.bitcast %y0 : f8E8M0FNU to i8
  %x1 = arith.constant 3.0000000054977558e+38 : f32
  %y1 = tile.fp_convert %x1 {rounding = #tile<rounding rtz>, saturate} : f32 -> f8E8M0FNU
  %r1 = arith.bitcast %y1 : f8E8M0FNU to i8
  return %r0, %r1 : i8, i8
}

// 1.0, the smallest subnormal 2^-16, -Inf, NaN, and -3 * 2^-16.
// CHECK-LABEL: func.func @widen_e5m2
// CHECK-NOT:     tile.fp_convert
// CHECK:         return %c1065353216_i32, %c931135488_i32, %c-8388608_i32, %c2143289344_i32, %c-1203765248_i32 :
func.func @widen_e5m2() -> (i32, i32, i32, i32, i32) {
  %x0 = arith.constant 0x3C : f8E5M2
  %y0 = tile.fp_convert %x0 : f8E5M2 -> f32
  %r0 = arith.bitcast %y0 : f32 to i32
  %x1 = arith.constant 0x1 : f8E5M2
  %y1 = tile.fp_convert %x1 : f8E5M2 -> f32
  %r1 = arith.bitcast %y1 : f32 to i32
  %x2 = arith.constant 0xFC : f8E5M2
  %y2 = tile.fp_convert %x2 : f8E5M2 -> f32
  %r2 = arith.bitcast %y2 : f32 to i32
  %x3 = arith.constant 0x7F : f8E5M2
  %y3 = tile.fp_convert %x3 : f8E5M2 -> f32
  %r3 = arith.bitcast %y3 : f32 to i32
  %x4 = arith.constant 0x83 : f8E5M2
  %y4 = tile.fp_convert %x4 : f8E5M2 -> f32
  %r4 = arith.bitcast %y4 : f32 to i32
  return %r0, %r1, %r2, %r3, %r4 : i32, i32, i32, i32, i32
}

// 448, -0.0, NaN, and 2^-9.
// CHECK-LABEL: func.func @widen_e4m3fn
// CHECK-NOT:     tile.fp_convert
// CHECK:         return %c1138753536_i32, %c-2147483648_i32, %c2143289344_i32, %c989855744_i32 :
func.func @widen_e4m3fn() -> (i32, i32, i32, i32) {
  %x0 = arith.constant 0x7E : f8E4M3FN
  %y0 = tile.fp_convert %x0 : f8E4M3FN -> f32
  %r0 = arith.bitcast %y0 : f32 to i32
  %x1 = arith.constant 0x80 : f8E4M3FN
  %y1 = tile.fp_convert %x1 : f8E4M3FN -> f32
  %r1 = arith.bitcast %y1 : f32 to i32
  %x2 = arith.constant 0x7F : f8E4M3FN
  %y2 = tile.fp_convert %x2 : f8E4M3FN -> f32
  %r2 = arith.bitcast %y2 : f32 to i32
  %x3 = arith.constant 0x1 : f8E4M3FN
  %y3 = tile.fp_convert %x3 : f8E4M3FN -> f32
  %r3 = arith.bitcast %y3 : f32 to i32
  return %r0, %r1, %r2, %r3 : i32, i32, i32, i32
}

// FNUZ: 0x80 is NaN; bias 8.
// CHECK-LABEL: func.func @widen_e4m3fnuz
// CHECK-NOT:     tile.fp_convert
// CHECK:         return %c2143289344_i32, %c1065353216_i32, %c-1082130432_i32 :
func.func @widen_e4m3fnuz() -> (i32, i32, i32) {
  %x0 = arith.constant 0x80 : f8E4M3FNUZ
  %y0 = tile.fp_convert %x0 : f8E4M3FNUZ -> f32
  %r0 = arith.bitcast %y0 : f32 to i32
  %x1 = arith.constant 0x40 : f8E4M3FNUZ
  %y1 = tile.fp_convert %x1 : f8E4M3FNUZ -> f32
  %r1 = arith.bitcast %y1 : f32 to i32
  %x2 = arith.constant 0xC0 : f8E4M3FNUZ
  %y2 = tile.fp_convert %x2 : f8E4M3FNUZ -> f32
  %r2 = arith.bitcast %y2 : f32 to i32
  return %r0, %r1, %r2 : i32, i32, i32
}

// -6.0, 0.5 and -0.0 as bf16.
// CHECK-LABEL: func.func @widen_e2m1_bf16
// CHECK-NOT:     tile.fp_convert
// CHECK:         return %c-16192_i16, %c16128_i16, %c-32768_i16 :
func.func @widen_e2m1_bf16() -> (i16, i16, i16) {
  %x0 = arith.constant 0xF : f4E2M1FN
  %y0 = tile.fp_convert %x0 : f4E2M1FN -> bf16
  %r0 = arith.bitcast %y0 : bf16 to i16
  %x1 = arith.constant 0x1 : f4E2M1FN
  %y1 = tile.fp_convert %x1 : f4E2M1FN -> bf16
  %r1 = arith.bitcast %y1 : bf16 to i16
  %x2 = arith.constant 0x8 : f4E2M1FN
  %y2 = tile.fp_convert %x2 : f4E2M1FN -> bf16
  %r2 = arith.bitcast %y2 : bf16 to i16
  return %r0, %r1, %r2 : i16, i16, i16
}

// 28.0 and -0.0625 as f16.
// CHECK-LABEL: func.func @widen_e3m2_f16
// CHECK-NOT:     tile.fp_convert
// CHECK:         return %c20224_i16, %c-21504_i16 :
func.func @widen_e3m2_f16() -> (i16, i16) {
  %x0 = arith.constant 0x1F : f6E3M2FN
  %y0 = tile.fp_convert %x0 : f6E3M2FN -> f16
  %r0 = arith.bitcast %y0 : f16 to i16
  %x1 = arith.constant 0x21 : f6E3M2FN
  %y1 = tile.fp_convert %x1 : f6E3M2FN -> f16
  %r1 = arith.bitcast %y1 : f16 to i16
  return %r0, %r1 : i16, i16
}

// Code 0 is 2^-127 (f32 subnormal 0x00400000), 127 is 1.0, 254 is 2^127, 255 is NaN.
// CHECK-LABEL: func.func @widen_e8m0
// CHECK-NOT:     tile.fp_convert
// CHECK:         return %c4194304_i32, %c1065353216_i32, %c2130706432_i32, %c2143289344_i32 :
func.func @widen_e8m0() -> (i32, i32, i32, i32) {
  %x0 = arith.constant 0x0 : f8E8M0FNU
  %y0 = tile.fp_convert %x0 : f8E8M0FNU -> f32
  %r0 = arith.bitcast %y0 : f32 to i32
  %x1 = arith.constant 0x7F : f8E8M0FNU
  %y1 = tile.fp_convert %x1 : f8E8M0FNU -> f32
  %r1 = arith.bitcast %y1 : f32 to i32
  %x2 = arith.constant 0xFE : f8E8M0FNU
  %y2 = tile.fp_convert %x2 : f8E8M0FNU -> f32
  %r2 = arith.bitcast %y2 : f32 to i32
  %x3 = arith.constant 0xFF : f8E8M0FNU
  %y3 = tile.fp_convert %x3 : f8E8M0FNU -> f32
  %r3 = arith.bitcast %y3 : f32 to i32
  return %r0, %r1, %r2, %r3 : i32, i32, i32, i32
}
