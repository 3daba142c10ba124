// tile-expand-fp-convert: the integer/f32 arithmetic that replaces tile.fp_convert, for
// narrowing (rounding, saturation, sign, NaN/Inf codes) and widening, on scalars and tiles.
// RUN: %wavetile-opt %s -tile-expand-fp-convert | FileCheck %s

// The layout of @narrow_e5m2_bf16_layout, printed as an alias at the top of the module.
// CHECK-DAG: #[[BLK:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>

// f32 -> f8E4M3FN (m = 3, emin = -6, largest finite code 0x7E, no Inf, NaN 0x7F), rtne.
// CHECK-LABEL: func.func @narrow_e4m3_rtne
// CHECK-SAME:    (%[[X:.*]]: f32) -> f8E4M3FN
// CHECK-NOT:     tile.fp_convert
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK:         %[[SIGN:.*]] = arith.shrui %[[BITS]], %{{.*}} : i32
// CHECK:         %[[ABS:.*]] = arith.andi %[[BITS]], %c2147483647_i32 : i32
// CHECK:         %[[NAN:.*]] = arith.cmpi ugt, %[[ABS]], %c2139095040_i32 : i32
// CHECK:         %[[EXPF:.*]] = arith.shrui %[[ABS]], %c23_i32 : i32
// CHECK:         %[[EMIN:.*]] = arith.constant -6 : i32
// CHECK:         %[[UNB:.*]] = arith.subi %[[EXPF]], %c127_i32 : i32
// CHECK:         %[[ELOW:.*]] = arith.maxsi %[[UNB]], %[[EMIN]] : i32
// CHECK:         %[[EMAX:.*]] = arith.constant 9 : i32
// CHECK:         %[[E:.*]] = arith.minsi %[[ELOW]], %[[EMAX]] : i32
// CHECK:         %[[ABSX:.*]] = arith.bitcast %[[ABS]] : i32 to f32
// CHECK:         %[[SCALED:.*]] = arith.mulf %[[ABSX]], %{{.*}} : f32
// CHECK:         %[[ROUNDED:.*]] = math.roundeven %[[SCALED]] : f32
// CHECK:         %[[CLAMPED:.*]] = arith.minnumf %[[ROUNDED]], %{{.*}} : f32
// CHECK:         %[[Q:.*]] = arith.fptoui %[[CLAMPED]] : f32 to i32
// CHECK:         %[[CODE:.*]] = arith.addi %{{.*}}, %[[Q]] : i32
// CHECK:         %[[MAXC:.*]] = arith.constant 126 : i32
// CHECK:         %[[OVER:.*]] = arith.cmpi ugt, %[[CODE]], %[[MAXC]] : i32
// CHECK:         %[[NANC:.*]] = arith.constant 127 : i32
// CHECK:         %[[SAT:.*]] = arith.select %[[OVER]], %[[NANC]], %[[CODE]] : i32
// CHECK:         %[[SBIT:.*]] = arith.shli %[[SIGN]], %c7_i32 : i32
// CHECK:         %[[SIGNED:.*]] = arith.ori %[[SAT]], %[[SBIT]] : i32
// CHECK:         %[[FINAL:.*]] = arith.select %[[NAN]], %{{.*}}, %[[SIGNED]] : i32
// CHECK:         %[[NARROW:.*]] = arith.trunci %[[FINAL]] : i32 to i8
// CHECK:         %[[R:.*]] = arith.bitcast %[[NARROW]] : i8 to f8E4M3FN
// CHECK:         return %[[R]] : f8E4M3FN
func.func @narrow_e4m3_rtne(%x: f32) -> f8E4M3FN {
  %0 = tile.fp_convert %x : f32 -> f8E4M3FN
  return %0 : f8E4M3FN
}

// The same on a tile, toward zero and saturating: floor instead of roundeven, and overflow
// takes the largest finite code 0x7E instead of NaN.
// CHECK-LABEL: func.func @narrow_e4m3_rtz_saturate_tile
// CHECK:         arith.bitcast %{{.*}} : tensor<8xf32> to tensor<8xi32>
// CHECK:         arith.constant dense<-6> : tensor<8xi32>
// CHECK-NOT:     math.roundeven
// CHECK:         math.floor %{{.*}} : tensor<8xf32>
// CHECK:         %[[MAXC:.*]] = arith.constant dense<126> : tensor<8xi32>
// CHECK:         %[[OVER:.*]] = arith.cmpi ugt, %{{.*}}, %[[MAXC]] : tensor<8xi32>
// CHECK:         %[[SATC:.*]] = arith.constant dense<126> : tensor<8xi32>
// CHECK:         arith.select %[[OVER]], %[[SATC]], %{{.*}} : tensor<8xi1>, tensor<8xi32>
// CHECK:         arith.trunci %{{.*}} : tensor<8xi32> to tensor<8xi8>
// CHECK:         arith.bitcast %{{.*}} : tensor<8xi8> to tensor<8xf8E4M3FN>
func.func @narrow_e4m3_rtz_saturate_tile(%x: tensor<8xf32>) -> tensor<8xf8E4M3FN> {
  %0 = tile.fp_convert %x {rounding = #tile<rounding rtz>, saturate} : tensor<8xf32> -> tensor<8xf8E4M3FN>
  return %0 : tensor<8xf8E4M3FN>
}

// f8E5M2 has Inf: overflow becomes 0x7C; a bf16 source is first extended to f32. The tile's
// layout is kept on every intermediate tile.
// CHECK-LABEL: func.func @narrow_e5m2_bf16_layout
// CHECK:         arith.extf %{{.*}} : tensor<128xbf16, #[[BLK]]> to tensor<128xf32, #[[BLK]]>
// CHECK:         arith.constant dense<-14> : tensor<128xi32, #[[BLK]]>
// CHECK:         %[[OVER:.*]] = arith.cmpi ugt, %{{.*}}, %cst_{{[0-9]+}} : tensor<128xi32, #[[BLK]]>
// CHECK:         %[[INF:.*]] = arith.constant dense<124> : tensor<128xi32, #[[BLK]]>
// CHECK:         arith.select %[[OVER]], %[[INF]], %{{.*}}
// CHECK:         arith.bitcast %{{.*}} to tensor<128xf8E5M2, #[[BLK]]>
#blk = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>
func.func @narrow_e5m2_bf16_layout(%x: tensor<128xbf16, #blk>) -> tensor<128xf8E5M2, #blk> {
  %0 = tile.fp_convert %x : tensor<128xbf16, #blk> -> tensor<128xf8E5M2, #blk>
  return %0 : tensor<128xf8E5M2, #blk>
}

// FNUZ formats have no negative zero: a zero code drops the sign; NaN and overflow are 0x80.
// CHECK-LABEL: func.func @narrow_fnuz
// CHECK:         arith.extf %{{.*}} : f16 to f32
// CHECK:         %[[OVER:.*]] = arith.cmpi ugt, %{{.*}}, %c127_i32{{.*}} : i32
// CHECK:         %[[CODE:.*]] = arith.select %[[OVER]], %c128_i32, %{{.*}} : i32
// CHECK:         %[[SIGNED:.*]] = arith.ori %[[CODE]], %{{.*}} : i32
// CHECK:         %[[ZERO:.*]] = arith.cmpi eq, %[[CODE]], %c0_i32 : i32
// CHECK:         arith.select %[[ZERO]], %[[CODE]], %[[SIGNED]] : i32
// CHECK:         arith.bitcast %{{.*}} : i8 to f8E4M3FNUZ
func.func @narrow_fnuz(%x: f16) -> f8E4M3FNUZ {
  %0 = tile.fp_convert %x : f16 -> f8E4M3FNUZ
  return %0 : f8E4M3FNUZ
}

// f8E8M0FNU has neither sign nor mantissa: the code is the f32 exponent field, plus one when
// rtne rounds up; 0xFF is NaN.
// CHECK-LABEL: func.func @narrow_e8m0
// CHECK:         %[[EXPF:.*]] = arith.shrui %{{.*}}, %c23_i32 : i32
// CHECK:         %[[UP:.*]] = arith.cmpi uge, %{{.*}}, %{{.*}} : i32
// CHECK:         %[[UPI:.*]] = arith.extui %[[UP]] : i1 to i32
// CHECK:         %[[CODE:.*]] = arith.addi %[[EXPF]], %[[UPI]] : i32
// CHECK:         arith.cmpi ugt, %[[CODE]], %c254_i32 : i32
// CHECK-NOT:     arith.ori
// CHECK:         arith.bitcast %{{.*}} : i8 to f8E8M0FNU
func.func @narrow_e8m0(%x: f32) -> f8E8M0FNU {
  %0 = tile.fp_convert %x : f32 -> f8E8M0FNU
  return %0 : f8E8M0FNU
}

// f8E5M2 -> f32: significand * 2^(max(e, 1) - 17), then sign, Inf (0x7C) and NaN (> 0x7C).
// CHECK-LABEL: func.func @widen_e5m2
// CHECK-SAME:    (%[[X:.*]]: f8E5M2) -> f32
// CHECK:         %[[I8:.*]] = arith.bitcast %[[X]] : f8E5M2 to i8
// CHECK:         %[[C:.*]] = arith.extui %[[I8]] : i8 to i32
// CHECK:         %[[MAG:.*]] = arith.andi %[[C]], %c127_i32 : i32
// CHECK:         %[[EXPF:.*]] = arith.shrui %[[MAG]], %c2_i32 : i32
// CHECK:         %[[FRAC:.*]] = arith.andi %[[MAG]], %c3_i32 : i32
// CHECK:         %[[NORMAL:.*]] = arith.cmpi ne, %[[EXPF]], %c0_i32 : i32
// CHECK:         %[[IMPL:.*]] = arith.addi %[[FRAC]], %c4_i32 : i32
// CHECK:         %[[SIG:.*]] = arith.select %[[NORMAL]], %[[IMPL]], %[[FRAC]] : i32
// CHECK:         %[[BIAS:.*]] = arith.constant -17 : i32
// CHECK:         %[[EMAX:.*]] = arith.maxui %[[EXPF]], %c1_i32 : i32
// CHECK:         arith.addi %[[EMAX]], %[[BIAS]] : i32
// CHECK:         %[[SIGF:.*]] = arith.uitofp %[[SIG]] : i32 to f32
// CHECK:         %[[VAL:.*]] = arith.mulf %[[SIGF]], %{{.*}} : f32
// CHECK:         %[[NEG:.*]] = arith.negf %[[VAL]] : f32
// CHECK:         %[[SIGNED:.*]] = arith.select %{{.*}}, %[[NEG]], %[[VAL]] : f32
// CHECK:         %[[ISINF:.*]] = arith.cmpi eq, %[[MAG]], %c124_i32 : i32
// CHECK:         arith.constant 0x7F800000 : f32
// CHECK:         %[[WITHINF:.*]] = arith.select %[[ISINF]], %{{.*}}, %[[SIGNED]] : f32
// CHECK:         %[[ISNAN:.*]] = arith.cmpi ugt, %[[MAG]], %c124_i32{{.*}} : i32
// CHECK:         %[[QNAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK:         %[[R:.*]] = arith.select %[[ISNAN]], %[[QNAN]], %[[WITHINF]] : f32
// CHECK:         return %[[R]] : f32
func.func @widen_e5m2(%x: f8E5M2) -> f32 {
  %0 = tile.fp_convert %x : f8E5M2 -> f32
  return %0 : f32
}

// f4E2M1FN -> bf16 on a tile: no Inf or NaN to decode; the f32 value is truncated to bf16.
// CHECK-LABEL: func.func @widen_e2m1_to_bf16
// CHECK:         arith.bitcast %{{.*}} : tensor<4xf4E2M1FN> to tensor<4xi4>
// CHECK:         arith.extui %{{.*}} : tensor<4xi4> to tensor<4xi32>
// CHECK:         arith.constant dense<7> : tensor<4xi32>
// CHECK:         arith.uitofp %{{.*}} : tensor<4xi32> to tensor<4xf32>
// CHECK:         arith.negf
// CHECK-NOT:     0x7F800000
// CHECK-NOT:     0x7FC00000
// CHECK:         %[[R:.*]] = arith.truncf %{{.*}} : tensor<4xf32> to tensor<4xbf16>
// CHECK:         return %[[R]] : tensor<4xbf16>
func.func @widen_e2m1_to_bf16(%x: tensor<4xf4E2M1FN>) -> tensor<4xbf16> {
  %0 = tile.fp_convert %x : tensor<4xf4E2M1FN> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// f8E8M0FNU -> f32: the code shifted into the f32 exponent field; code 0 is 2^-127 (an f32
// subnormal, 0x00400000) and 0xFF is NaN.
// CHECK-LABEL: func.func @widen_e8m0
// CHECK:         %[[C:.*]] = arith.extui %{{.*}} : i8 to i32
// CHECK:         %[[SH:.*]] = arith.shli %[[C]], %c23_i32 : i32
// CHECK:         %[[POW:.*]] = arith.bitcast %[[SH]] : i32 to f32
// CHECK:         %[[TINY:.*]] = arith.bitcast %c4194304_i32 : i32 to f32
// CHECK:         %[[ISZERO:.*]] = arith.cmpi eq, %[[C]], %c0_i32 : i32
// CHECK:         %[[V:.*]] = arith.select %[[ISZERO]], %[[TINY]], %[[POW]] : f32
// CHECK-NOT:     arith.negf
// CHECK:         arith.cmpi ugt, %{{.*}}, %c254_i32 : i32
// CHECK:         arith.select %{{.*}}, %cst, %[[V]] : f32
func.func @widen_e8m0(%x: f8E8M0FNU) -> f32 {
  %0 = tile.fp_convert %x : f8E8M0FNU -> f32
  return %0 : f32
}

// Only tile.fp_convert is rewritten; the pass runs on any op (here a nested function body).
// CHECK-LABEL: func.func @other_ops_untouched
// CHECK:         %[[S:.*]] = tile.splat %{{.*}} : f32 -> tensor<4xf32>
// CHECK:         tile.pack_fp4 %{{.*}} : tensor<4xf4E2M1FN> -> tensor<2xi8>
// CHECK-NOT:     tile.fp_convert
func.func @other_ops_untouched(%x: f32, %f: tensor<4xf4E2M1FN>) -> tensor<2xi8> {
  %0 = tile.splat %x : f32 -> tensor<4xf32>
  %1 = tile.pack_fp4 %f : tensor<4xf4E2M1FN> -> tensor<2xi8>
  %2 = tile.fp_convert %0 : tensor<4xf32> -> tensor<4xf4E2M1FN>
  return %1 : tensor<2xi8>
}
