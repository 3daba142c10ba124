// convert-tile-to-gpu of fp8 conversions on CDNA. Widening: the target's own formats (gfx942:
// e4m3fnuz and e5m2fnuz; gfx950: OCP e4m3fn and e5m2) take rocdl.cvt.pk.f32.fp8/bf8 on the
// low and high half of a dword of four codes (exact). Saturating narrowing of f32 to them:
// each value clamped to the largest finite one (NaN kept: gfx950's minimum and maximum keep
// it, gfx942 takes a median of three and puts NaN back), then rocdl.cvt.pk.fp8/bf8.f32 into
// the low, then the high half of one dword. The other formats, and narrowing without
// saturation, expand to integer arithmetic.
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

#w2 = #tile.blocked<sizePerThread = [2], threadsPerWarp = [64], warpsPerBlock = [1], order = [0]>

// GFX942-LABEL: gpu.func @to_fnuz
// GFX942-DAG:   %[[LOW:.*]] = arith.constant -2.400000e+02 : f32
// GFX942-DAG:   %[[HIGH:.*]] = arith.constant 2.400000e+02 : f32
// GFX942-DAG:   %[[ZERO:.*]] = arith.constant 0 : i32
// GFX942-DAG:   %[[BF8LOW:.*]] = arith.constant -5.734400e+04 : f32
// GFX942:       %[[M0:.*]] = arith.maxnumf %[[X0:.*]], %[[LOW]] : f32
// GFX942:       %[[R0:.*]] = arith.minnumf %[[M0]], %[[HIGH]] : f32
// GFX942:       %[[N0:.*]] = arith.cmpf uno, %[[X0]], %[[X0]] : f32
// GFX942:       %[[C0:.*]] = arith.select %[[N0]], %[[X0]], %[[R0]] : f32
// GFX942:       %[[C1:.*]] = arith.select
// GFX942:       %[[HALF:.*]] = rocdl.cvt.pk.fp8.f32 %[[C0]], %[[C1]] -> %[[ZERO]][false] : i32
// GFX942:       %[[WORD:.*]] = rocdl.cvt.pk.fp8.f32 %{{.*}}, %{{.*}} -> %[[HALF]][true] : i32
// GFX942:       %[[V:.*]] = vector.broadcast %[[WORD]] : i32 to vector<1xi32>
// GFX942:       vector.bitcast %[[V]] : vector<1xi32> to vector<4xf8E4M3FNUZ>
// A lone pair a thread: one conversion into the low half, two of the four bytes kept.
// GFX942:       arith.maxnumf %{{.*}}, %[[BF8LOW]] : f32
// GFX942:       rocdl.cvt.pk.bf8.f32 %{{.*}}, %{{.*}} -> %[[ZERO]][false] : i32
// GFX942-NOT:   rocdl.cvt.pk
// GFX942:       gpu.return
// GFX950-LABEL: gpu.func @to_fnuz
// GFX950-NOT:   rocdl.cvt.pk
// GFX950:       gpu.return
func.func @to_fnuz(%p: !tile.ptr<f32>, %o: !tile.ptr<f8E4M3FNUZ>, %q: !tile.ptr<f8E5M2FNUZ>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %offs = tile.arange 0 to 256 : tensor<256xi32, #w>
  %x = tile.load %p[%offs] : !tile.ptr<f32>[tensor<256xi32, #w>] -> tensor<256xf32, #w>
  %a = tile.fp_convert %x {saturate} : tensor<256xf32, #w> -> tensor<256xf8E4M3FNUZ, #w>
  tile.store %a, %o[%offs] : tensor<256xf8E4M3FNUZ, #w>, !tile.ptr<f8E4M3FNUZ>[tensor<256xi32, #w>]
  %offs2 = tile.arange 0 to 128 : tensor<128xi32, #w2>
  %y = tile.load %p[%offs2] : !tile.ptr<f32>[tensor<128xi32, #w2>] -> tensor<128xf32, #w2>
  %b = tile.fp_convert %y {saturate} : tensor<128xf32, #w2> -> tensor<128xf8E5M2FNUZ, #w2>
  tile.store %b, %q[%offs2] : tensor<128xf8E5M2FNUZ, #w2>, !tile.ptr<f8E5M2FNUZ>[tensor<128xi32, #w2>]
  return
}

// OCP: gfx950's own, saturating (448) or not (expanded: overflow there is NaN, not the
// largest finite value).
// GFX942-LABEL: gpu.func @to_ocp
// GFX942-NOT:   rocdl.cvt.pk
// GFX942:       gpu.return
// GFX950-LABEL: gpu.func @to_ocp
// GFX950:       arith.constant 4.480000e+02 : f32
// GFX950:       arith.maximumf
// GFX950:       arith.minimumf
// GFX950:       rocdl.cvt.pk.fp8.f32 %{{.*}}, %{{.*}} -> %{{.*}}[false] : i32
// GFX950:       rocdl.cvt.pk.fp8.f32 %{{.*}}, %{{.*}} -> %{{.*}}[true] : i32
// GFX950-NOT:   rocdl.cvt.pk
// GFX950:       gpu.return
func.func @to_ocp(%p: !tile.ptr<f32>, %o: !tile.ptr<f8E4M3FN>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %offs = tile.arange 0 to 256 : tensor<256xi32, #w>
  %x = tile.load %p[%offs] : !tile.ptr<f32>[tensor<256xi32, #w>] -> tensor<256xf32, #w>
  %a = tile.fp_convert %x {saturate} : tensor<256xf32, #w> -> tensor<256xf8E4M3FN, #w>
  %b = tile.fp_convert %x : tensor<256xf32, #w> -> tensor<256xf8E4M3FN, #w>
  %offs2 = arith.addi %offs, %offs : tensor<256xi32, #w>
  tile.store %a, %o[%offs] : tensor<256xf8E4M3FN, #w>, !tile.ptr<f8E4M3FN>[tensor<256xi32, #w>]
  tile.store %b, %o[%offs2] : tensor<256xf8E4M3FN, #w>, !tile.ptr<f8E4M3FN>[tensor<256xi32, #w>]
  return
}
