// Verifier and parser errors of tile.fp_convert, tile.pack_fp4, tile.unpack_fp4 and
// tile.lookup_nibbles.
// RUN: %wavetile-opt %s -split-input-file -verify-diagnostics

func.func @wide_to_wide(%x: f32) {
  // expected-error @+1 {{'tile.fp_convert' op converts between f32/f16/bf16 and an 8/6/4-bit float format, not 'f32' to 'f16'}}
  %0 = tile.fp_convert %x : f32 -> f16
  return
}

// -----

func.func @narrow_to_narrow(%x: tensor<4xf8E4M3FN>) {
  // expected-error @+1 {{'tile.fp_convert' op converts between f32/f16/bf16 and an 8/6/4-bit float format, not 'f8E4M3FN' to 'f8E5M2'}}
  %0 = tile.fp_convert %x : tensor<4xf8E4M3FN> -> tensor<4xf8E5M2>
  return
}

// -----

func.func @from_f64(%x: f64) {
  // expected-error @+1 {{'tile.fp_convert' op converts between f32/f16/bf16 and an 8/6/4-bit float format, not 'f64' to 'f8E4M3FN'}}
  %0 = tile.fp_convert %x : f64 -> f8E4M3FN
  return
}

// -----

func.func @from_integer(%x: i8) {
  // expected-error @+1 {{'tile.fp_convert' op converts between f32/f16/bf16 and an 8/6/4-bit float format, not 'i8' to 'f32'}}
  %0 = tile.fp_convert %x : i8 -> f32
  return
}

// -----

// f8E4M3 (IEEE-style, with infinities) is not one of the supported narrow formats.
func.func @unsupported_narrow(%x: f32) {
  // expected-error @+1 {{'tile.fp_convert' op converts between f32/f16/bf16 and an 8/6/4-bit float format, not 'f32' to 'f8E4M3'}}
  %0 = tile.fp_convert %x : f32 -> f8E4M3
  return
}

// -----

func.func @widening_saturate(%x: f8E5M2) {
  // expected-error @+1 {{'tile.fp_convert' op 'saturate' applies only to narrowing conversions}}
  %0 = tile.fp_convert %x {saturate} : f8E5M2 -> f32
  return
}

// -----

// Shape agreement (and scalar/tile agreement) is enforced by SameOperandsAndResultShape.
func.func @scalar_to_tile(%x: f32) {
  // expected-error @+1 {{'tile.fp_convert' op requires the same shape for all operands and results}}
  %0 = tile.fp_convert %x : f32 -> tensor<1xf8E4M3FN>
  return
}

// -----

func.func @tile_to_scalar(%x: tensor<1xf32>) {
  // expected-error @+1 {{'tile.fp_convert' op requires the same shape for all operands and results}}
  %0 = tile.fp_convert %x : tensor<1xf32> -> f8E4M3FN
  return
}

// -----

func.func @shape_mismatch(%x: tensor<2xf32>) {
  // expected-error @+1 {{'tile.fp_convert' op requires the same shape for all operands and results}}
  %0 = tile.fp_convert %x : tensor<2xf32> -> tensor<4xf8E4M3FN>
  return
}

// -----

func.func @unknown_rounding(%x: f32) {
  // expected-error @+2 {{expected ::wavetile::tile::RoundingMode to be one of: rtne, rtz}}
  // expected-error @+1 {{failed to parse Tile_RoundingModeAttr parameter}}
  %0 = tile.fp_convert %x {rounding = #tile<rounding rtu>} : f32 -> f8E4M3FN
  return
}

// -----

func.func @pack_odd(%x: tensor<4x3xf4E2M1FN>) {
  // expected-error @+1 {{'tile.pack_fp4' op the last dimension must be even to pack pairs}}
  %0 = tile.pack_fp4 %x : tensor<4x3xf4E2M1FN> -> tensor<4x1xi8>
  return
}

// -----

func.func @pack_rank0(%x: tensor<f4E2M1FN>) {
  // expected-error @+1 {{'tile.pack_fp4' op the last dimension must be even to pack pairs}}
  %0 = tile.pack_fp4 %x : tensor<f4E2M1FN> -> tensor<i8>
  return
}

// -----

func.func @pack_result_shape(%x: tensor<4x8xf4E2M1FN>) {
  // expected-error @+1 {{'tile.pack_fp4' op result must be 4x4}}
  %0 = tile.pack_fp4 %x : tensor<4x8xf4E2M1FN> -> tensor<2x8xi8>
  return
}

// -----

func.func @pack_wrong_source(%x: tensor<8xf8E4M3FN>) {
  // expected-error @+1 {{'tile.pack_fp4' op operand #0 must be statically shaped tensor of f4E2M1FN type values, but got 'tensor<8xf8E4M3FN>'}}
  %0 = tile.pack_fp4 %x : tensor<8xf8E4M3FN> -> tensor<4xi8>
  return
}

// -----

func.func @pack_wrong_result(%x: tensor<8xf4E2M1FN>) {
  // expected-error @+1 {{'tile.pack_fp4' op result #0 must be statically shaped tensor of 8-bit signless integer values, but got 'tensor<4xui8>'}}
  %0 = tile.pack_fp4 %x : tensor<8xf4E2M1FN> -> tensor<4xui8>
  return
}

// -----

func.func @unpack_rank0(%x: tensor<i8>) {
  // expected-error @+1 {{'tile.unpack_fp4' op source must have rank >= 1}}
  %0 = tile.unpack_fp4 %x : tensor<i8> -> tensor<f4E2M1FN>
  return
}

// -----

func.func @unpack_result_shape(%x: tensor<4x8xi8>) {
  // expected-error @+1 {{'tile.unpack_fp4' op result must be 4x16}}
  %0 = tile.unpack_fp4 %x : tensor<4x8xi8> -> tensor<8x8xf4E2M1FN>
  return
}

// -----

func.func @unpack_wrong_source(%x: tensor<8xi4>) {
  // expected-error @+1 {{'tile.unpack_fp4' op operand #0 must be statically shaped tensor of 8-bit signless integer values, but got 'tensor<8xi4>'}}
  %0 = tile.unpack_fp4 %x : tensor<8xi4> -> tensor<16xf4E2M1FN>
  return
}

// -----

func.func @lookup_short_table(%x: tensor<8xi8>) {
  // expected-error @+1 {{'tile.lookup_nibbles' op table must have 16 entries, got 15}}
  %0 = tile.lookup_nibbles %x table [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8] : tensor<8xi8> -> tensor<8xi16>
  return
}

// -----

func.func @lookup_wrong_shape(%x: tensor<8xi8>) {
  // expected-error @+1 {{'tile.lookup_nibbles' op all non-scalar operands/results must have the same shape and base type}}
  %0 = tile.lookup_nibbles %x table [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12] : tensor<8xi8> -> tensor<4xi16>
  return
}
