// convert-tile-to-gpu of fp8 conversions: on sm_90 a saturating, round-to-nearest-even f32
// conversion to an OCP fp8 format is one cvt.rn.satfinite per pair of registers (the first
// operand fills the high byte, so the pair is passed odd register first), each pair a 16-bit
// register and the registers reinterpreted as bytes together (no per-byte extracts); other
// formats and modes (and CDNA) expand to integer arithmetic.
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
