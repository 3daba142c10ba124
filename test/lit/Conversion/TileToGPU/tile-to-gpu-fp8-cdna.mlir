// convert-tile-to-gpu of fp8 widening on CDNA: the target's own formats (gfx942: e4m3fnuz and
// e5m2fnuz; gfx950: OCP e4m3fn and e5m2) take rocdl.cvt.pk.f32.fp8/bf8 on the low and high
// half of a dword of four codes (exact); the other formats expand to integer arithmetic.
// RUN: %wavetile-opt %s -convert-tile-to-gpu=target=gfx942 -canonicalize -cse | FileCheck %s --check-prefix=GFX942
// RUN: %wavetile-opt %s -convert-tile-to-gpu=target=gfx950 -canonicalize -cse | FileCheck %s --check-prefix=GFX950

#w = #tile.blocked<sizePerThread = [4], threadsPerWarp = [64], warpsPerBlock = [1], order = [0]>

// GFX942-LABEL: gpu.func @from_fnuz
// GFX942:       %[[W:.*]] = vector.bitcast %{{.*}} : vector<4xi8> to vector<1xi32>
// GFX942:       %[[D:.*]] = vector.extract %[[W]][0] : i32 from vector<1xi32>
// GFX942:       rocdl.cvt.pk.f32.fp8 %[[D]][false] : vector<2xf32>
// GFX942:       rocdl.cvt.pk.f32.fp8 %[[D]][true] : vector<2xf32>
// GFX942:       rocdl.cvt.pk.f32.bf8 %{{.*}}[false] : vector<2xf32>
// GFX942:       rocdl.cvt.pk.f32.bf8 %{{.*}}[true] : vector<2xf32>
// GFX942-NOT:   rocdl.cvt.pk.f32
// GFX950-LABEL: gpu.func @from_fnuz
// GFX950-NOT:   rocdl.cvt.pk.f32
// GFX950:       gpu.return
func.func @from_fnuz(%p: !tile.ptr<f8E4M3FNUZ>, %q: !tile.ptr<f8E5M2FNUZ>, %o: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %offs = tile.arange 0 to 256 : tensor<256xi32, #w>
  %x = tile.load %p[%offs] : !tile.ptr<f8E4M3FNUZ>[tensor<256xi32, #w>] -> tensor<256xf8E4M3FNUZ, #w>
  %y = tile.load %q[%offs] : !tile.ptr<f8E5M2FNUZ>[tensor<256xi32, #w>] -> tensor<256xf8E5M2FNUZ, #w>
  %a = tile.fp_convert %x : tensor<256xf8E4M3FNUZ, #w> -> tensor<256xf32, #w>
  %b = tile.fp_convert %y : tensor<256xf8E5M2FNUZ, #w> -> tensor<256xf32, #w>
  %s = arith.addf %a, %b : tensor<256xf32, #w>
  tile.store %s, %o[%offs] : tensor<256xf32, #w>, !tile.ptr<f32>[tensor<256xi32, #w>]
  return
}

// OCP, to bf16: the f32 rounded once more, exactly (fp8 values are bf16s).
// GFX942-LABEL: gpu.func @from_ocp_to_bf16
// GFX942-NOT:   rocdl.cvt.pk.f32
// GFX942:       gpu.return
// GFX950-LABEL: gpu.func @from_ocp_to_bf16
// GFX950:       rocdl.cvt.pk.f32.fp8 %{{.*}}[false] : vector<2xf32>
// GFX950:       arith.truncf %{{.*}} : f32 to bf16
// GFX950:       rocdl.cvt.pk.f32.fp8 %{{.*}}[true] : vector<2xf32>
// GFX950:       rocdl.cvt.pk.f32.bf8 %{{.*}}[false] : vector<2xf32>
// GFX950:       rocdl.cvt.pk.f32.bf8 %{{.*}}[true] : vector<2xf32>
// GFX950-NOT:   rocdl.cvt.pk.f32
func.func @from_ocp_to_bf16(%p: !tile.ptr<f8E4M3FN>, %q: !tile.ptr<f8E5M2>, %o: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %offs = tile.arange 0 to 256 : tensor<256xi32, #w>
  %x = tile.load %p[%offs] : !tile.ptr<f8E4M3FN>[tensor<256xi32, #w>] -> tensor<256xf8E4M3FN, #w>
  %y = tile.load %q[%offs] : !tile.ptr<f8E5M2>[tensor<256xi32, #w>] -> tensor<256xf8E5M2, #w>
  %a = tile.fp_convert %x : tensor<256xf8E4M3FN, #w> -> tensor<256xbf16, #w>
  %b = tile.fp_convert %y : tensor<256xf8E5M2, #w> -> tensor<256xbf16, #w>
  %s = arith.addf %a, %b : tensor<256xbf16, #w>
  tile.store %s, %o[%offs] : tensor<256xbf16, #w>, !tile.ptr<bf16>[tensor<256xi32, #w>]
  return
}
