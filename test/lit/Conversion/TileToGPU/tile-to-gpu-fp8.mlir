// convert-tile-to-gpu of fp8 conversions: on sm_90 a saturating, round-to-nearest-even f32
// conversion to an OCP fp8 format is one cvt.rn.satfinite per pair of registers (the first
// operand fills the high byte, so the pair is passed odd register first), each pair a 16-bit
// register and the registers reinterpreted as bytes together (no per-byte extracts); other
// formats and modes (and CDNA) expand to integer arithmetic.
// Widening OCP fp8 takes nvvm.convert.f8x2.to.f16x2 on a pair of bytes, then f16 to the
// target; fnuz expands (CDNA's pair conversions: tile-to-gpu-fp8-cdna.mlir).
// RUN: %wavetile-opt %s -convert-tile-to-gpu=target=sm_90 -canonicalize -cse | FileCheck %s --check-prefix=SM90

#l = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>

// SM90-LABEL: gpu.func @to_e4m3
// SM90:         %[[LO:.*]] = nvvm.convert.f32x2.to.f8x2 %[[R:.*]]#1, %[[R]]#0 {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// SM90:         %[[HI:.*]] = nvvm.convert.f32x2.to.f8x2 %[[R]]#3, %[[R]]#2 {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// SM90:         %[[PAIRS:.*]] = vector.from_elements %[[LO]], %[[HI]] : vector<2xi16>
// SM90:         vector.bitcast %[[PAIRS]] : vector<2xi16> to vector<4xf8E4M3FN>
// SM90-NOT:     nvvm.convert.f32x2.to.f8x2
func.func @to_e4m3(%p: !tile.ptr<f32>, %o: !tile.ptr<f8E4M3FN>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %offs = tile.arange 0 to 128 : tensor<128xi32, #l>
  %x = tile.load %p[%offs] : !tile.ptr<f32>[tensor<128xi32, #l>] -> tensor<128xf32, #l>
  %q = tile.fp_convert %x {saturate} : tensor<128xf32, #l> -> tensor<128xf8E4M3FN, #l>
  tile.store %q, %o[%offs] : tensor<128xf8E4M3FN, #l>, !tile.ptr<f8E4M3FN>[tensor<128xi32, #l>]
  return
}

// Without saturation (out of range becomes NaN) there is no PTX instruction: expanded.
// SM90-LABEL: gpu.func @to_e4m3_unsaturated
// SM90-NOT:     nvvm.convert.f32x2.to.f8x2
// SM90:         gpu.return
func.func @to_e4m3_unsaturated(%p: !tile.ptr<f32>, %o: !tile.ptr<f8E4M3FN>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %offs = tile.arange 0 to 128 : tensor<128xi32, #l>
  %x = tile.load %p[%offs] : !tile.ptr<f32>[tensor<128xi32, #l>] -> tensor<128xf32, #l>
  %q = tile.fp_convert %x : tensor<128xf32, #l> -> tensor<128xf8E4M3FN, #l>
  tile.store %q, %o[%offs] : tensor<128xf8E4M3FN, #l>, !tile.ptr<f8E4M3FN>[tensor<128xi32, #l>]
  return
}

// SM90-LABEL: gpu.func @from_e4m3
// SM90:         %[[B0:.*]] = vector.from_elements %{{.*}}, %{{.*}} : vector<2xi8>
// SM90:         %[[H0:.*]] = nvvm.convert.f8x2.to.f16x2 %[[B0]] : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// SM90:         vector.extract %[[H0]][0] : f16 from vector<2xf16>
// SM90:         arith.extf %{{.*}} : f16 to f32
// SM90:         nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// SM90-NOT:     nvvm.convert.f8x2.to.f16x2
func.func @from_e4m3(%p: !tile.ptr<f8E4M3FN>, %o: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %offs = tile.arange 0 to 128 : tensor<128xi32, #l>
  %x = tile.load %p[%offs] : !tile.ptr<f8E4M3FN>[tensor<128xi32, #l>] -> tensor<128xf8E4M3FN, #l>
  %y = tile.fp_convert %x : tensor<128xf8E4M3FN, #l> -> tensor<128xf32, #l>
  tile.store %y, %o[%offs] : tensor<128xf32, #l>, !tile.ptr<f32>[tensor<128xi32, #l>]
  return
}

// To bf16: f16 to f32, then rounded once more, exactly (fp8 values are bf16s).
// SM90-LABEL: gpu.func @from_e5m2_to_bf16
// SM90:         nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E5M2) -> vector<2xf16>
// SM90:         arith.truncf %{{.*}} : f32 to bf16
func.func @from_e5m2_to_bf16(%p: !tile.ptr<f8E5M2>, %o: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %offs = tile.arange 0 to 128 : tensor<128xi32, #l>
  %x = tile.load %p[%offs] : !tile.ptr<f8E5M2>[tensor<128xi32, #l>] -> tensor<128xf8E5M2, #l>
  %y = tile.fp_convert %x : tensor<128xf8E5M2, #l> -> tensor<128xbf16, #l>
  tile.store %y, %o[%offs] : tensor<128xbf16, #l>, !tile.ptr<bf16>[tensor<128xi32, #l>]
  return
}

// fnuz: no instruction on sm_90.
// SM90-LABEL: gpu.func @from_fnuz
// SM90-NOT:     nvvm.convert.f8x2.to.f16x2
// SM90:         gpu.return
func.func @from_fnuz(%p: !tile.ptr<f8E4M3FNUZ>, %q: !tile.ptr<f8E5M2FNUZ>, %o: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %offs = tile.arange 0 to 128 : tensor<128xi32, #l>
  %x = tile.load %p[%offs] : !tile.ptr<f8E4M3FNUZ>[tensor<128xi32, #l>] -> tensor<128xf8E4M3FNUZ, #l>
  %y = tile.load %q[%offs] : !tile.ptr<f8E5M2FNUZ>[tensor<128xi32, #l>] -> tensor<128xf8E5M2FNUZ, #l>
  %a = tile.fp_convert %x : tensor<128xf8E4M3FNUZ, #l> -> tensor<128xf32, #l>
  %b = tile.fp_convert %y : tensor<128xf8E5M2FNUZ, #l> -> tensor<128xf32, #l>
  %s = arith.addf %a, %b : tensor<128xf32, #l>
  tile.store %s, %o[%offs] : tensor<128xf32, #l>, !tile.ptr<f32>[tensor<128xi32, #l>]
  return
}
