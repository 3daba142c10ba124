// Round-trip of tile.dot and tile.scaled_dot, unpinned and pinned to atom-table instructions,
// on plain tiles and on MMA / dot-operand layouts.
// RUN: %wavetile-opt %s | %wavetile-opt | FileCheck %s

// The layouts of @dot_layouts, printed as aliases at the top of the module; the MMA parent of
// a dot-operand layout refers to the MMA layout's alias.
// CHECK-DAG: #[[MMA:[a-z_0-9]+]] = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [2, 2]>
// CHECK-DAG: #[[OPA:[a-z_0-9]+]] = #tile.dot_operand<operand = 0, parent = #[[MMA]]>
// CHECK-DAG: #[[OPB:[a-z_0-9]+]] = #tile.dot_operand<operand = 1, parent = #[[MMA]]>

// CHECK-LABEL: func.func @dot_float
// CHECK-SAME:    (%[[A:.*]]: tensor<32x16xbf16>, %[[B:.*]]: tensor<16x64xbf16>, %[[C:.*]]: tensor<32x64xf32>)
// CHECK:         tile.dot %[[A]], %[[B]], %[[C]] : tensor<32x16xbf16>, tensor<16x64xbf16>, tensor<32x64xf32> -> tensor<32x64xf32>
func.func @dot_float(%a: tensor<32x16xbf16>, %b: tensor<16x64xbf16>, %c: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %0 = tile.dot %a, %b, %c : tensor<32x16xbf16>, tensor<16x64xbf16>, tensor<32x64xf32> -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}

// Any floats up to 32 bits may be mixed, f32 included; i8 accumulates in i32.
// CHECK-LABEL: func.func @dot_mixed
// CHECK:         tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x2xf8E5M2>, tensor<4x2xf32> -> tensor<4x2xf32>
// CHECK:         tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
// CHECK:         tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi8>, tensor<8x2xi8>, tensor<4x2xi32> -> tensor<4x2xi32>
func.func @dot_mixed(%a: tensor<4x8xf16>, %b: tensor<8x2xf8E5M2>, %c: tensor<4x2xf32>,
                     %fa: tensor<4x8xf32>, %fb: tensor<8x2xf32>,
                     %ia: tensor<4x8xi8>, %ib: tensor<8x2xi8>, %ic: tensor<4x2xi32>) {
  %0 = tile.dot %a, %b, %c : tensor<4x8xf16>, tensor<8x2xf8E5M2>, tensor<4x2xf32> -> tensor<4x2xf32>
  %1 = tile.dot %fa, %fb, %c : tensor<4x8xf32>, tensor<8x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %2 = tile.dot %ia, %ib, %ic : tensor<4x8xi8>, tensor<8x2xi8>, tensor<4x2xi32> -> tensor<4x2xi32>
  return
}

// Pinned atoms, one per instruction family: CDNA3 MFMA (bf16, FNUZ fp8, i8), CDNA4 MFMA,
// mma.sync and wgmma.
// CHECK-LABEL: func.func @dot_pinned
// CHECK:         tile.dot {{.*}} {atom = "gfx942.mfma_f32_32x32x8_bf16"} : tensor<32x8xbf16>, tensor<8x32xbf16>, tensor<32x32xf32> -> tensor<32x32xf32>
// CHECK:         tile.dot {{.*}} {atom = "gfx942.mfma_f32_16x16x32_fp8_bf8"} : tensor<16x32xf8E4M3FNUZ>, tensor<32x16xf8E5M2FNUZ>, tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK:         tile.dot {{.*}} {atom = "gfx942.mfma_i32_32x32x16_i8"} : tensor<32x16xi8>, tensor<16x32xi8>, tensor<32x32xi32> -> tensor<32x32xi32>
// CHECK:         tile.dot {{.*}} {atom = "gfx950.mfma_f32_16x16x32_f16"} : tensor<16x32xf16>, tensor<32x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK:         tile.dot {{.*}} {atom = "gfx950.mfma_f32_32x32x16_fp8_fp8"} : tensor<32x16xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<32x32xf32> -> tensor<32x32xf32>
// CHECK:         tile.dot {{.*}} {atom = "sm_90.mma_m16n8k16_f32_bf16_bf16"} : tensor<16x16xbf16>, tensor<16x8xbf16>, tensor<16x8xf32> -> tensor<16x8xf32>
// CHECK:         tile.dot {{.*}} {atom = "sm_90.mma_m16n8k32_f32_e4m3_e5m2"} : tensor<16x32xf8E4M3FN>, tensor<32x8xf8E5M2>, tensor<16x8xf32> -> tensor<16x8xf32>
// CHECK:         tile.dot {{.*}} {atom = "sm_90a.wgmma_m64n128k16_f32_f16_f16"} : tensor<64x16xf16>, tensor<16x128xf16>, tensor<64x128xf32> -> tensor<64x128xf32>
func.func @dot_pinned(
    %bf_a: tensor<32x8xbf16>, %bf_b: tensor<8x32xbf16>, %c32: tensor<32x32xf32>,
    %fnuz_a: tensor<16x32xf8E4M3FNUZ>, %fnuz_b: tensor<32x16xf8E5M2FNUZ>, %c16: tensor<16x16xf32>,
    %i_a: tensor<32x16xi8>, %i_b: tensor<16x32xi8>, %i_c: tensor<32x32xi32>,
    %h_a: tensor<16x32xf16>, %h_b: tensor<32x16xf16>,
    %ocp_a: tensor<32x16xf8E4M3FN>, %ocp_b: tensor<16x32xf8E4M3FN>,
    %s_a: tensor<16x16xbf16>, %s_b: tensor<16x8xbf16>, %s_c: tensor<16x8xf32>,
    %e_a: tensor<16x32xf8E4M3FN>, %e_b: tensor<32x8xf8E5M2>,
    %w_a: tensor<64x16xf16>, %w_b: tensor<16x128xf16>, %w_c: tensor<64x128xf32>) {
  %0 = tile.dot %bf_a, %bf_b, %c32 {atom = "gfx942.mfma_f32_32x32x8_bf16"} : tensor<32x8xbf16>, tensor<8x32xbf16>, tensor<32x32xf32> -> tensor<32x32xf32>
  %1 = tile.dot %fnuz_a, %fnuz_b, %c16 {atom = "gfx942.mfma_f32_16x16x32_fp8_bf8"} : tensor<16x32xf8E4M3FNUZ>, tensor<32x16xf8E5M2FNUZ>, tensor<16x16xf32> -> tensor<16x16xf32>
  %2 = tile.dot %i_a, %i_b, %i_c {atom = "gfx942.mfma_i32_32x32x16_i8"} : tensor<32x16xi8>, tensor<16x32xi8>, tensor<32x32xi32> -> tensor<32x32xi32>
  %3 = tile.dot %h_a, %h_b, %c16 {atom = "gfx950.mfma_f32_16x16x32_f16"} : tensor<16x32xf16>, tensor<32x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  %4 = tile.dot %ocp_a, %ocp_b, %c32 {atom = "gfx950.mfma_f32_32x32x16_fp8_fp8"} : tensor<32x16xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<32x32xf32> -> tensor<32x32xf32>
  %5 = tile.dot %s_a, %s_b, %s_c {atom = "sm_90.mma_m16n8k16_f32_bf16_bf16"} : tensor<16x16xbf16>, tensor<16x8xbf16>, tensor<16x8xf32> -> tensor<16x8xf32>
  %6 = tile.dot %e_a, %e_b, %s_c {atom = "sm_90.mma_m16n8k32_f32_e4m3_e5m2"} : tensor<16x32xf8E4M3FN>, tensor<32x8xf8E5M2>, tensor<16x8xf32> -> tensor<16x8xf32>
  %7 = tile.dot %w_a, %w_b, %w_c {atom = "sm_90a.wgmma_m64n128k16_f32_f16_f16"} : tensor<64x16xf16>, tensor<16x128xf16>, tensor<64x128xf32> -> tensor<64x128xf32>
  return
}

// Operands in dot-operand layouts of an MMA accumulator layout.
#mma = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [2, 2]>
#opA = #tile.dot_operand<operand = 0, parent = #mma>
#opB = #tile.dot_operand<operand = 1, parent = #mma>
// CHECK-LABEL: func.func @dot_layouts
// CHECK:         tile.dot %{{.*}}, %{{.*}}, %{{.*}} {atom = "gfx942.mfma_f32_32x32x8_bf16"} :
// CHECK-SAME:      tensor<64x16xbf16, #[[OPA]]>,
// CHECK-SAME:      tensor<16x64xbf16, #[[OPB]]>,
// CHECK-SAME:      tensor<64x64xf32, #[[MMA]]>
// CHECK-SAME:      -> tensor<64x64xf32, #[[MMA]]>
func.func @dot_layouts(%a: tensor<64x16xbf16, #opA>, %b: tensor<16x64xbf16, #opB>, %c: tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma> {
  %0 = tile.dot %a, %b, %c {atom = "gfx942.mfma_f32_32x32x8_bf16"} : tensor<64x16xbf16, #opA>, tensor<16x64xbf16, #opB>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
  return %0 : tensor<64x64xf32, #mma>
}

// Scaled dots: every MX element format, one f8E8M0FNU scale per 32 K elements.
// CHECK-LABEL: func.func @scaled_dot
// CHECK-SAME:    (%[[A:[^:]*]]: tensor<32x64xf8E4M3FN>, %[[AS:[^:]*]]: tensor<32x2xf8E8M0FNU>, %[[B:[^:]*]]: tensor<64x32xf4E2M1FN>, %[[BS:[^:]*]]: tensor<2x32xf8E8M0FNU>, %[[C:[^:]*]]: tensor<32x32xf32>
// CHECK:         tile.scaled_dot %[[A]] scale %[[AS]], %[[B]] scale %[[BS]], %[[C]] : tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>, tensor<64x32xf4E2M1FN>, tensor<2x32xf8E8M0FNU>, tensor<32x32xf32> -> tensor<32x32xf32>
// CHECK:         tile.scaled_dot %[[A]] scale %[[AS]], %[[B]] scale %[[BS]], %[[C]] {atom = "gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp4"} :
// CHECK:         tile.scaled_dot {{.*}} {atom = "gfx950.mfma_scale_f32_16x16x128_f8f6f4.bf6_fp6"} : tensor<16x128xf6E3M2FN>, tensor<16x4xf8E8M0FNU>, tensor<128x16xf6E2M3FN>, tensor<4x16xf8E8M0FNU>, tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK:         tile.scaled_dot {{.*}} : tensor<8x32xf8E5M2>, tensor<8x1xf8E8M0FNU>, tensor<32x4xf8E5M2>, tensor<1x4xf8E8M0FNU>, tensor<8x4xf32> -> tensor<8x4xf32>
func.func @scaled_dot(%a: tensor<32x64xf8E4M3FN>, %as: tensor<32x2xf8E8M0FNU>,
                      %b: tensor<64x32xf4E2M1FN>, %bs: tensor<2x32xf8E8M0FNU>, %c: tensor<32x32xf32>,
                      %a6: tensor<16x128xf6E3M2FN>, %as6: tensor<16x4xf8E8M0FNU>,
                      %b6: tensor<128x16xf6E2M3FN>, %bs6: tensor<4x16xf8E8M0FNU>, %c6: tensor<16x16xf32>,
                      %a5: tensor<8x32xf8E5M2>, %as5: tensor<8x1xf8E8M0FNU>,
                      %b5: tensor<32x4xf8E5M2>, %bs5: tensor<1x4xf8E8M0FNU>, %c5: tensor<8x4xf32>) {
  %0 = tile.scaled_dot %a scale %as, %b scale %bs, %c : tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>, tensor<64x32xf4E2M1FN>, tensor<2x32xf8E8M0FNU>, tensor<32x32xf32> -> tensor<32x32xf32>
  %1 = tile.scaled_dot %a scale %as, %b scale %bs, %c {atom = "gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp4"} : tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>, tensor<64x32xf4E2M1FN>, tensor<2x32xf8E8M0FNU>, tensor<32x32xf32> -> tensor<32x32xf32>
  %2 = tile.scaled_dot %a6 scale %as6, %b6 scale %bs6, %c6 {atom = "gfx950.mfma_scale_f32_16x16x128_f8f6f4.bf6_fp6"} : tensor<16x128xf6E3M2FN>, tensor<16x4xf8E8M0FNU>, tensor<128x16xf6E2M3FN>, tensor<4x16xf8E8M0FNU>, tensor<16x16xf32> -> tensor<16x16xf32>
  %3 = tile.scaled_dot %a5 scale %as5, %b5 scale %bs5, %c5 : tensor<8x32xf8E5M2>, tensor<8x1xf8E8M0FNU>, tensor<32x4xf8E5M2>, tensor<1x4xf8E8M0FNU>, tensor<8x4xf32> -> tensor<8x4xf32>
  return
}
