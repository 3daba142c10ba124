// Verifier errors of tile.dot, tile.scaled_dot and tile.shared_dot: shapes, element types, scales,
// pinned atoms, shared layouts.
// RUN: %wavetile-opt %s -split-input-file -verify-diagnostics

func.func @dot_rank(%a: tensor<4x8x2xf16>, %b: tensor<8x4xf16>, %c: tensor<4x4xf32>) {
  // expected-error @+1 {{'tile.dot' op operands must be 2-D tiles}}
  %0 = tile.dot %a, %b, %c : tensor<4x8x2xf16>, tensor<8x4xf16>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @dot_acc_rank(%a: tensor<4x8xf16>, %b: tensor<8x4xf16>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'tile.dot' op operands must be 2-D tiles}}
  %0 = tile.dot %a, %b, %c : tensor<4x8xf16>, tensor<8x4xf16>, tensor<16xf32> -> tensor<16xf32>
  return
}

// -----

func.func @dot_k(%a: tensor<4x8xf16>, %b: tensor<16x4xf16>, %c: tensor<4x4xf32>) {
  // expected-error @+1 {{'tile.dot' op a is 4x8 but b has 16 rows; the K dimensions must agree}}
  %0 = tile.dot %a, %b, %c : tensor<4x8xf16>, tensor<16x4xf16>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @dot_acc_shape(%a: tensor<4x8xf16>, %b: tensor<8x2xf16>, %c: tensor<4x4xf32>) {
  // expected-error @+1 {{'tile.dot' op accumulator must be 4x2, got 4x4}}
  %0 = tile.dot %a, %b, %c : tensor<4x8xf16>, tensor<8x2xf16>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @dot_result_shape(%a: tensor<4x8xf16>, %b: tensor<8x4xf16>, %c: tensor<4x4xf32>) {
  // expected-error @+1 {{'tile.dot' op result must have the accumulator's type}}
  %0 = tile.dot %a, %b, %c : tensor<4x8xf16>, tensor<8x4xf16>, tensor<4x4xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @dot_result_element(%a: tensor<4x8xf16>, %b: tensor<8x4xf16>, %c: tensor<4x4xf32>) {
  // expected-error @+1 {{'tile.dot' op result must have the accumulator's type}}
  %0 = tile.dot %a, %b, %c : tensor<4x8xf16>, tensor<8x4xf16>, tensor<4x4xf32> -> tensor<4x4xf16>
  return
}

// -----

func.func @dot_mixed_kinds(%a: tensor<4x8xf16>, %b: tensor<8x4xi8>, %c: tensor<4x4xf32>) {
  // expected-error @+1 {{'tile.dot' op operands must both be floats or both be i8, got 'f16' and 'i8'}}
  %0 = tile.dot %a, %b, %c : tensor<4x8xf16>, tensor<8x4xi8>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @dot_f64(%a: tensor<4x8xf64>, %b: tensor<8x4xf64>, %c: tensor<4x4xf32>) {
  // expected-error @+1 {{'tile.dot' op operands must both be floats or both be i8, got 'f64' and 'f64'}}
  %0 = tile.dot %a, %b, %c : tensor<4x8xf64>, tensor<8x4xf64>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @dot_i32(%a: tensor<4x8xi32>, %b: tensor<8x4xi32>, %c: tensor<4x4xi32>) {
  // expected-error @+1 {{'tile.dot' op operands must both be floats or both be i8, got 'i32' and 'i32'}}
  %0 = tile.dot %a, %b, %c : tensor<4x8xi32>, tensor<8x4xi32>, tensor<4x4xi32> -> tensor<4x4xi32>
  return
}

// -----

func.func @dot_float_acc(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>, %c: tensor<4x4xbf16>) {
  // expected-error @+1 {{'tile.dot' op float operands accumulate in f32, got 'bf16'}}
  %0 = tile.dot %a, %b, %c : tensor<4x8xbf16>, tensor<8x4xbf16>, tensor<4x4xbf16> -> tensor<4x4xbf16>
  return
}

// -----

func.func @dot_int_acc(%a: tensor<4x8xi8>, %b: tensor<8x4xi8>, %c: tensor<4x4xf32>) {
  // expected-error @+1 {{'tile.dot' op i8 operands accumulate in i32, got 'f32'}}
  %0 = tile.dot %a, %b, %c : tensor<4x8xi8>, tensor<8x4xi8>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @dot_unknown_atom(%a: tensor<16x16xbf16>, %b: tensor<16x8xbf16>, %c: tensor<16x8xf32>) {
  // The mma.sync atoms name both multiplicand types.
  // expected-error @+1 {{'tile.dot' op pins unknown atom 'sm_90.mma_m16n8k16_f32_bf16'}}
  %0 = tile.dot %a, %b, %c {atom = "sm_90.mma_m16n8k16_f32_bf16"} : tensor<16x16xbf16>, tensor<16x8xbf16>, tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @dot_atom_types(%a: tensor<32x8xf16>, %b: tensor<8x32xf16>, %c: tensor<32x32xf32>) {
  // expected-error @+1 {{'tile.dot' op atom 'gfx942.mfma_f32_32x32x8_bf16' computes 'bf16' x 'bf16' -> 'f32', but the operands are 'f16' x 'f16' -> 'f32'}}
  %0 = tile.dot %a, %b, %c {atom = "gfx942.mfma_f32_32x32x8_bf16"} : tensor<32x8xf16>, tensor<8x32xf16>, tensor<32x32xf32> -> tensor<32x32xf32>
  return
}

// -----

// gfx942 multiplies the FNUZ fp8 formats, not the OCP ones.
func.func @dot_atom_fp8_flavour(%a: tensor<32x16xf8E4M3FN>, %b: tensor<16x32xf8E4M3FN>, %c: tensor<32x32xf32>) {
  // expected-error @+1 {{'tile.dot' op atom 'gfx942.mfma_f32_32x32x16_fp8_fp8' computes 'f8E4M3FNUZ' x 'f8E4M3FNUZ' -> 'f32', but the operands are 'f8E4M3FN' x 'f8E4M3FN' -> 'f32'}}
  %0 = tile.dot %a, %b, %c {atom = "gfx942.mfma_f32_32x32x16_fp8_fp8"} : tensor<32x16xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<32x32xf32> -> tensor<32x32xf32>
  return
}

// -----

func.func @dot_scaled_atom(%a: tensor<32x64xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %c: tensor<32x32xf32>) {
  // expected-error @+1 {{'tile.dot' op atom 'gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp8' is a scaled instruction and cannot implement this op}}
  %0 = tile.dot %a, %b, %c {atom = "gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp8"} : tensor<32x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>, tensor<32x32xf32> -> tensor<32x32xf32>
  return
}

// -----

func.func @dot_atom_not_string(%a: tensor<4x8xf16>, %b: tensor<8x4xf16>, %c: tensor<4x4xf32>) {
  // expected-error @+1 {{'tile.dot' op attribute 'atom' failed to satisfy constraint: string attribute}}
  %0 = tile.dot %a, %b, %c {atom = 3 : i32} : tensor<4x8xf16>, tensor<8x4xf16>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @scaled_rank(%a: tensor<32xf8E4M3FN>, %as: tensor<1xf8E8M0FNU>, %b: tensor<32x4xf8E4M3FN>, %bs: tensor<1x4xf8E8M0FNU>, %c: tensor<1x4xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op operands must be 2-D tiles}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<32xf8E4M3FN>, tensor<1xf8E8M0FNU>, tensor<32x4xf8E4M3FN>, tensor<1x4xf8E8M0FNU>, tensor<1x4xf32> -> tensor<1x4xf32>
  return
}

// -----

func.func @scaled_k(%a: tensor<8x32xf8E4M3FN>, %as: tensor<8x1xf8E8M0FNU>, %b: tensor<64x4xf8E4M3FN>, %bs: tensor<1x4xf8E8M0FNU>, %c: tensor<8x4xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op a is 8x32 but b has 64 rows; the K dimensions must agree}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<8x32xf8E4M3FN>, tensor<8x1xf8E8M0FNU>, tensor<64x4xf8E4M3FN>, tensor<1x4xf8E8M0FNU>, tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @scaled_acc_shape(%a: tensor<8x32xf8E4M3FN>, %as: tensor<8x1xf8E8M0FNU>, %b: tensor<32x4xf8E4M3FN>, %bs: tensor<1x4xf8E8M0FNU>, %c: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op accumulator must be 8x4, got 4x8}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<8x32xf8E4M3FN>, tensor<8x1xf8E8M0FNU>, tensor<32x4xf8E4M3FN>, tensor<1x4xf8E8M0FNU>, tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @scaled_result(%a: tensor<8x32xf8E4M3FN>, %as: tensor<8x1xf8E8M0FNU>, %b: tensor<32x4xf8E4M3FN>, %bs: tensor<1x4xf8E8M0FNU>, %c: tensor<8x4xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op result must have the accumulator's type}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<8x32xf8E4M3FN>, tensor<8x1xf8E8M0FNU>, tensor<32x4xf8E4M3FN>, tensor<1x4xf8E8M0FNU>, tensor<8x4xf32> -> tensor<8x4xf16>
  return
}

// -----

func.func @scaled_not_mx(%a: tensor<8x32xbf16>, %as: tensor<8x1xf8E8M0FNU>, %b: tensor<32x4xf8E4M3FN>, %bs: tensor<1x4xf8E8M0FNU>, %c: tensor<8x4xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op operands must be MX formats (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN), got 'bf16' and 'f8E4M3FN'}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<8x32xbf16>, tensor<8x1xf8E8M0FNU>, tensor<32x4xf8E4M3FN>, tensor<1x4xf8E8M0FNU>, tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

// The FNUZ fp8 formats are not MX formats.
func.func @scaled_fnuz(%a: tensor<8x32xf8E4M3FN>, %as: tensor<8x1xf8E8M0FNU>, %b: tensor<32x4xf8E5M2FNUZ>, %bs: tensor<1x4xf8E8M0FNU>, %c: tensor<8x4xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op operands must be MX formats (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN), got 'f8E4M3FN' and 'f8E5M2FNUZ'}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<8x32xf8E4M3FN>, tensor<8x1xf8E8M0FNU>, tensor<32x4xf8E5M2FNUZ>, tensor<1x4xf8E8M0FNU>, tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @scaled_acc_type(%a: tensor<8x32xf8E4M3FN>, %as: tensor<8x1xf8E8M0FNU>, %b: tensor<32x4xf8E4M3FN>, %bs: tensor<1x4xf8E8M0FNU>, %c: tensor<8x4xf16>) {
  // expected-error @+1 {{'tile.scaled_dot' op accumulates in f32}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<8x32xf8E4M3FN>, tensor<8x1xf8E8M0FNU>, tensor<32x4xf8E4M3FN>, tensor<1x4xf8E8M0FNU>, tensor<8x4xf16> -> tensor<8x4xf16>
  return
}

// -----

func.func @scaled_k_not_multiple_of_32(%a: tensor<8x48xf8E4M3FN>, %as: tensor<8x1xf8E8M0FNU>, %b: tensor<48x4xf8E4M3FN>, %bs: tensor<1x4xf8E8M0FNU>, %c: tensor<8x4xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op K (48) must be a multiple of the 32-element scale block}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<8x48xf8E4M3FN>, tensor<8x1xf8E8M0FNU>, tensor<48x4xf8E4M3FN>, tensor<1x4xf8E8M0FNU>, tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @scaled_scale_type(%a: tensor<8x32xf8E4M3FN>, %as: tensor<8x1xi8>, %b: tensor<32x4xf8E4M3FN>, %bs: tensor<1x4xf8E8M0FNU>, %c: tensor<8x4xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op scales must be f8E8M0FNU}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<8x32xf8E4M3FN>, tensor<8x1xi8>, tensor<32x4xf8E4M3FN>, tensor<1x4xf8E8M0FNU>, tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @scaled_b_scale_type(%a: tensor<8x32xf8E4M3FN>, %as: tensor<8x1xf8E8M0FNU>, %b: tensor<32x4xf8E4M3FN>, %bs: tensor<1x4xf32>, %c: tensor<8x4xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op scales must be f8E8M0FNU}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<8x32xf8E4M3FN>, tensor<8x1xf8E8M0FNU>, tensor<32x4xf8E4M3FN>, tensor<1x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @scaled_a_scale_shape(%a: tensor<8x64xf8E4M3FN>, %as: tensor<8x1xf8E8M0FNU>, %b: tensor<64x4xf8E4M3FN>, %bs: tensor<2x4xf8E8M0FNU>, %c: tensor<8x4xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op a scale must be 8x2, got 8x1}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<8x64xf8E4M3FN>, tensor<8x1xf8E8M0FNU>, tensor<64x4xf8E4M3FN>, tensor<2x4xf8E8M0FNU>, tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @scaled_b_scale_shape(%a: tensor<8x64xf8E4M3FN>, %as: tensor<8x2xf8E8M0FNU>, %b: tensor<64x4xf8E4M3FN>, %bs: tensor<4x2xf8E8M0FNU>, %c: tensor<8x4xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op b scale must be 2x4, got 4x2}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<8x64xf8E4M3FN>, tensor<8x2xf8E8M0FNU>, tensor<64x4xf8E4M3FN>, tensor<4x2xf8E8M0FNU>, tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @scaled_unknown_atom(%a: tensor<32x64xf8E4M3FN>, %as: tensor<32x2xf8E8M0FNU>, %b: tensor<64x32xf8E4M3FN>, %bs: tensor<2x32xf8E8M0FNU>, %c: tensor<32x32xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op pins unknown atom 'gfx942.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp8'}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c {atom = "gfx942.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp8"} : tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>, tensor<64x32xf8E4M3FN>, tensor<2x32xf8E8M0FNU>, tensor<32x32xf32> -> tensor<32x32xf32>
  return
}

// -----

func.func @scaled_unscaled_atom(%a: tensor<32x64xf8E4M3FN>, %as: tensor<32x2xf8E8M0FNU>, %b: tensor<64x32xf8E4M3FN>, %bs: tensor<2x32xf8E8M0FNU>, %c: tensor<32x32xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op atom 'gfx950.mfma_f32_32x32x16_fp8_fp8' is an unscaled instruction and cannot implement this op}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c {atom = "gfx950.mfma_f32_32x32x16_fp8_fp8"} : tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>, tensor<64x32xf8E4M3FN>, tensor<2x32xf8E8M0FNU>, tensor<32x32xf32> -> tensor<32x32xf32>
  return
}

// -----

func.func @scaled_atom_types(%a: tensor<32x64xf8E4M3FN>, %as: tensor<32x2xf8E8M0FNU>, %b: tensor<64x32xf8E4M3FN>, %bs: tensor<2x32xf8E8M0FNU>, %c: tensor<32x32xf32>) {
  // expected-error @+1 {{'tile.scaled_dot' op atom 'gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp4' computes 'f8E4M3FN' x 'f4E2M1FN' -> 'f32', but the operands are 'f8E4M3FN' x 'f8E4M3FN' -> 'f32'}}
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c {atom = "gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp4"} : tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>, tensor<64x32xf8E4M3FN>, tensor<2x32xf8E8M0FNU>, tensor<32x32xf32> -> tensor<32x32xf32>
  return
}

// -----

func.func @shared_dot_unswizzled(%c: tensor<64x64xf32>) {
  %a = tile.shared_alloc : !tile.shared<64x64xbf16>
  %b = tile.shared_alloc : !tile.shared<64x64xbf16, #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], padding = 0>>
  // expected-error @+1 {{'tile.shared_dot' op operand '!tile.shared<64x64xbf16>' must have the swizzled layout}}
  %0 = tile.shared_dot %a, %b, %c : !tile.shared<64x64xbf16>, !tile.shared<64x64xbf16, #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], padding = 0>>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @shared_dot_wide_rows(%c: tensor<64x64xf32>) {
  %a = tile.shared_alloc : !tile.shared<64x128xbf16>
  %b = tile.shared_alloc : !tile.shared<64x128xbf16>
  // expected-error @+1 {{'tile.shared_dot' op operands must both be bf16, both f16, both i8, or f8E4M3FN/f8E5M2, in K rows of 32, 64 or 128 bytes; got 'bf16' and 'bf16' with K = 128}}
  %0 = tile.shared_dot %a, %b, %c : !tile.shared<64x128xbf16>, !tile.shared<64x128xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}
