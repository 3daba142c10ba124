// Round-trip of low-precision format ops: tile.fp_convert (rounding, saturate, scalar and tile),
// tile.pack_fp4, tile.unpack_fp4 and tile.lookup_nibbles.
// RUN: %wavetile-opt %s | %wavetile-opt | FileCheck %s

// The default rounding (rtne) is elided when printed; rtz and saturate are kept.
// CHECK-LABEL: func.func @narrowing
// CHECK-SAME:    (%[[X:.*]]: f32, %[[H:.*]]: f16, %[[T:.*]]: tensor<4x8xbf16>)
// CHECK:         tile.fp_convert %[[X]] : f32 -> f8E4M3FN
// CHECK-NEXT:    tile.fp_convert %[[X]] : f32 -> f8E5M2
// CHECK-NEXT:    tile.fp_convert %[[X]] {rounding = #tile<rounding rtz>, saturate} : f32 -> f8E4M3FN
// CHECK-NEXT:    tile.fp_convert %[[H]] {saturate} : f16 -> f8E4M3FNUZ
// CHECK-NEXT:    tile.fp_convert %[[H]] {rounding = #tile<rounding rtz>} : f16 -> f8E5M2FNUZ
// CHECK-NEXT:    tile.fp_convert %[[T]] : tensor<4x8xbf16> -> tensor<4x8xf4E2M1FN>
// CHECK-NEXT:    tile.fp_convert %[[T]] {saturate} : tensor<4x8xbf16> -> tensor<4x8xf6E2M3FN>
// CHECK-NEXT:    tile.fp_convert %[[T]] : tensor<4x8xbf16> -> tensor<4x8xf6E3M2FN>
// CHECK-NEXT:    tile.fp_convert %[[X]] : f32 -> f8E8M0FNU
func.func @narrowing(%x: f32, %h: f16, %t: tensor<4x8xbf16>) {
  %0 = tile.fp_convert %x : f32 -> f8E4M3FN
  %1 = tile.fp_convert %x {rounding = #tile<rounding rtne>} : f32 -> f8E5M2
  %2 = tile.fp_convert %x {rounding = #tile<rounding rtz>, saturate} : f32 -> f8E4M3FN
  %3 = tile.fp_convert %h {saturate} : f16 -> f8E4M3FNUZ
  %4 = tile.fp_convert %h {rounding = #tile<rounding rtz>} : f16 -> f8E5M2FNUZ
  %5 = tile.fp_convert %t : tensor<4x8xbf16> -> tensor<4x8xf4E2M1FN>
  %6 = tile.fp_convert %t {saturate} : tensor<4x8xbf16> -> tensor<4x8xf6E2M3FN>
  %7 = tile.fp_convert %t : tensor<4x8xbf16> -> tensor<4x8xf6E3M2FN>
  %8 = tile.fp_convert %x : f32 -> f8E8M0FNU
  return
}

// CHECK-LABEL: func.func @widening
// CHECK:         tile.fp_convert %{{.*}} : tensor<16xf8E5M2> -> tensor<16xf32>
// CHECK-NEXT:    tile.fp_convert %{{.*}} : tensor<16xf4E2M1FN> -> tensor<16xbf16>
// CHECK-NEXT:    tile.fp_convert %{{.*}} : f8E8M0FNU -> f32
// CHECK-NEXT:    tile.fp_convert %{{.*}} : f6E3M2FN -> f16
func.func @widening(%a: tensor<16xf8E5M2>, %b: tensor<16xf4E2M1FN>, %c: f8E8M0FNU, %d: f6E3M2FN) {
  %0 = tile.fp_convert %a : tensor<16xf8E5M2> -> tensor<16xf32>
  %1 = tile.fp_convert %b : tensor<16xf4E2M1FN> -> tensor<16xbf16>
  %2 = tile.fp_convert %c : f8E8M0FNU -> f32
  %3 = tile.fp_convert %d : f6E3M2FN -> f16
  return
}

// Packing pairs along the last dimension halves it; unpacking doubles it.
// CHECK-LABEL: func.func @fp4_packing
// CHECK-SAME:    (%[[F:.*]]: tensor<4x32xf4E2M1FN>, %[[B:.*]]: tensor<2xi8>)
// CHECK:         %[[P:.*]] = tile.pack_fp4 %[[F]] : tensor<4x32xf4E2M1FN> -> tensor<4x16xi8>
// CHECK-NEXT:    tile.unpack_fp4 %[[P]] : tensor<4x16xi8> -> tensor<4x32xf4E2M1FN>
// CHECK-NEXT:    tile.unpack_fp4 %[[B]] : tensor<2xi8> -> tensor<4xf4E2M1FN>
func.func @fp4_packing(%f: tensor<4x32xf4E2M1FN>, %b: tensor<2xi8>) {
  %0 = tile.pack_fp4 %f : tensor<4x32xf4E2M1FN> -> tensor<4x16xi8>
  %1 = tile.unpack_fp4 %0 : tensor<4x16xi8> -> tensor<4x32xf4E2M1FN>
  %2 = tile.unpack_fp4 %b : tensor<2xi8> -> tensor<4xf4E2M1FN>
  return
}

// Each byte's two nibbles looked up in a 16-entry table: same shape, i16.
// CHECK-LABEL: func.func @nibble_lookup
// CHECK:         tile.lookup_nibbles %{{.*}} table [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12] : tensor<4x16xi8> -> tensor<4x16xi16>
func.func @nibble_lookup(%b: tensor<4x16xi8>) {
  %0 = tile.lookup_nibbles %b table [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12] : tensor<4x16xi8> -> tensor<4x16xi16>
  return
}
