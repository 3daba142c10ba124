// A block-scaled 64x64x64 tile (fp8 A x fp4 B with e8m0 scales per 32 K) compiled to code
// objects: on gfx950 one v_mfma_scale_f32_32x32x64_f8f6f4 per warp and no private memory
// (fp4 operands are packed into words before the instruction); gfx942 has no block-scaled
// MFMA and computes the tile with FMAs.
// RUN: %wavetile compile %s --target gfx950 -o %t.gfx950.hsaco
// RUN: %wavetile inspect %t.gfx950.hsaco | FileCheck %s --check-prefix=CDNA4
// RUN: %wavetile compile %s --target gfx942 -o %t.gfx942.hsaco
// RUN: %wavetile inspect %t.gfx942.hsaco | FileCheck %s --check-prefix=CDNA3
// CDNA4: private_segment_fixed_size=0 vgpr_spill_count=0 sgpr_spill_count=0
// CDNA4: v_mfma_scale_f32_32x32x64_f8f6f4=1
// CDNA3: private_segment_fixed_size=0 vgpr_spill_count=0 sgpr_spill_count=0
// CDNA3-NOT: v_mfma
func.func @scaled_gemm(%a: !tile.ptr<f8E4M3FN>, %as: !tile.ptr<f8E8M0FNU>, %b: !tile.ptr<f4E2M1FN>, %bs: !tile.ptr<f8E8M0FNU>, %c: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %ra = tile.arange 0 to 4096 : tensor<4096xi32>
  %oa = tile.reshape %ra : tensor<4096xi32> -> tensor<64x64xi32>
  %ta = tile.load %a[%oa] : !tile.ptr<f8E4M3FN>[tensor<64x64xi32>] -> tensor<64x64xf8E4M3FN>
  %tb = tile.load %b[%oa] : !tile.ptr<f4E2M1FN>[tensor<64x64xi32>] -> tensor<64x64xf4E2M1FN>
  %rs = tile.arange 0 to 128 : tensor<128xi32>
  %osa = tile.reshape %rs : tensor<128xi32> -> tensor<64x2xi32>
  %osb = tile.reshape %rs : tensor<128xi32> -> tensor<2x64xi32>
  %tas = tile.load %as[%osa] : !tile.ptr<f8E8M0FNU>[tensor<64x2xi32>] -> tensor<64x2xf8E8M0FNU>
  %tbs = tile.load %bs[%osb] : !tile.ptr<f8E8M0FNU>[tensor<2x64xi32>] -> tensor<2x64xf8E8M0FNU>
  %zero = arith.constant 0.0 : f32
  %acc = tile.splat %zero : f32 -> tensor<64x64xf32>
  %d = tile.scaled_dot %ta scale %tas, %tb scale %tbs, %acc : tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<64x64xf4E2M1FN>, tensor<2x64xf8E8M0FNU>, tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %d, %c[%oa] : tensor<64x64xf32>, !tile.ptr<f32>[tensor<64x64xi32>]
  return
}
