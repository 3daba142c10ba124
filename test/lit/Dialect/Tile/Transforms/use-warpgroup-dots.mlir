// tile-use-warpgroup-dots: a dot of a shared load (A, M x K) and the transpose of another
// (B stored N x K) becomes a tile.shared_dot of the buffers when wgmma computes it, and the
// buffers take the swizzle of their row width (128-byte rows: 8 phases of one row; 64-byte
// rows: 4 phases of 2 rows). Everything else is left alone.
// RUN: %wavetile-opt %s -tile-use-warpgroup-dots | FileCheck %s

// CHECK-DAG: #[[ROWS128:.*]] = #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 8, order = [2, 1, 0], padding = 0>
// CHECK-DAG: #[[ROWS64:.*]] = #tile.shared_layout<vec = 16, perPhase = 2, maxPhase = 4, order = [1, 0], padding = 0>

// CHECK-LABEL: func.func @ring
// CHECK:         %[[A:.*]] = tile.shared_alloc : !tile.shared<3x128x64xbf16, #[[ROWS128]]>
// CHECK:         %[[B:.*]] = tile.shared_alloc : !tile.shared<3x256x64xbf16, #[[ROWS128]]>
// CHECK:         scf.for
// CHECK:           %[[SA:.*]] = tile.shared_slice %[[A]]
// CHECK:           %[[SB:.*]] = tile.shared_slice %[[B]]
// CHECK-NEXT:      %[[D:.*]] = tile.shared_dot %[[SA]], %[[SB]], %{{.*}} : !tile.shared<128x64xbf16, {{.*}}>, !tile.shared<256x64xbf16, {{.*}}>, tensor<128x256xf32> -> tensor<128x256xf32>
// CHECK-NEXT:      scf.yield %[[D]]
func.func @ring(%k: i32, %out: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %a = tile.shared_alloc : !tile.shared<3x128x64xbf16>
  %b = tile.shared_alloc : !tile.shared<3x256x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %zero) -> (tensor<128x256xf32>) : i32 {
    %sa = tile.shared_slice %a[%i] : !tile.shared<3x128x64xbf16> -> !tile.shared<128x64xbf16>
    %sb = tile.shared_slice %b[%i] : !tile.shared<3x256x64xbf16> -> !tile.shared<256x64xbf16>
    %x = tile.shared_load %sa : !tile.shared<128x64xbf16> -> tensor<128x64xbf16>
    %w = tile.shared_load %sb : !tile.shared<256x64xbf16> -> tensor<256x64xbf16>
    %wt = tile.trans %w [1, 0] : tensor<256x64xbf16> -> tensor<64x256xbf16>
    %d = tile.dot %x, %wt, %acc : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %c0o = arith.constant 0 : i32
  %o = tile.splat %c0o : i32 -> tensor<128x256xi32>
  tile.store %r, %out[%o] : tensor<128x256xf32>, !tile.ptr<f32>[tensor<128x256xi32>]
  return
}

// int8, summed in i32; 64-byte rows.
// CHECK-LABEL: func.func @int8
// CHECK:         tile.shared_alloc : !tile.shared<64x64xi8, #[[ROWS64]]>
// CHECK:         tile.shared_alloc : !tile.shared<64x64xi8, #[[ROWS64]]>
// CHECK:         tile.shared_dot {{.*}} -> tensor<64x64xi32>
func.func @int8(%out: !tile.ptr<i32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %a = tile.shared_alloc : !tile.shared<64x64xi8>
  %b = tile.shared_alloc : !tile.shared<64x64xi8>
  %x = tile.shared_load %a : !tile.shared<64x64xi8> -> tensor<64x64xi8>
  %w = tile.shared_load %b : !tile.shared<64x64xi8> -> tensor<64x64xi8>
  %wt = tile.trans %w [1, 0] : tensor<64x64xi8> -> tensor<64x64xi8>
  %acc = arith.constant dense<0> : tensor<64x64xi32>
  %d = tile.dot %x, %wt, %acc : tensor<64x64xi8>, tensor<64x64xi8>, tensor<64x64xi32> -> tensor<64x64xi32>
  %z = arith.constant 0 : i32
  %o = tile.splat %z : i32 -> tensor<64x64xi32>
  tile.store %d, %out[%o] : tensor<64x64xi32>, !tile.ptr<i32>[tensor<64x64xi32>]
  return
}

// fp8 in any pairing; 64-byte rows.
// CHECK-LABEL: func.func @fp8
// CHECK:         tile.shared_alloc : !tile.shared<64x64xf8E4M3FN, #[[ROWS64]]>
// CHECK:         tile.shared_alloc : !tile.shared<64x64xf8E5M2, #[[ROWS64]]>
// CHECK:         tile.shared_dot
func.func @fp8(%out: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %a = tile.shared_alloc : !tile.shared<64x64xf8E4M3FN>
  %b = tile.shared_alloc : !tile.shared<64x64xf8E5M2>
  %x = tile.shared_load %a : !tile.shared<64x64xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
  %w = tile.shared_load %b : !tile.shared<64x64xf8E5M2> -> tensor<64x64xf8E5M2>
  %wt = tile.trans %w [1, 0] : tensor<64x64xf8E5M2> -> tensor<64x64xf8E5M2>
  %acc = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %x, %wt, %acc : tensor<64x64xf8E4M3FN>, tensor<64x64xf8E5M2>, tensor<64x64xf32> -> tensor<64x64xf32>
  %z = arith.constant 0 : i32
  %o = tile.splat %z : i32 -> tensor<64x64xi32>
  tile.store %d, %out[%o] : tensor<64x64xf32>, !tile.ptr<f32>[tensor<64x64xi32>]
  return
}

// Left as dots: B stored K x N (not transposed), too few warps for a warpgroup, M not a
// multiple of 64 per warpgroup, 256-byte rows (wider than a swizzle atom), a pinned atom,
// and a buffer that is also read for something else.
// CHECK-LABEL: func.func @unchanged
// CHECK-NOT:     tile.shared_dot
// CHECK-NOT:     #shared
// CHECK:         return
func.func @unchanged(%out: !tile.ptr<f32>, %bout: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %acc = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc32 = arith.constant dense<0.0> : tensor<32x64xf32>
  %a = tile.shared_alloc : !tile.shared<64x64xbf16>
  %b = tile.shared_alloc : !tile.shared<64x64xbf16>
  %x = tile.shared_load %a : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %w = tile.shared_load %b : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %d0 = tile.dot %x, %w, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>

  %a32 = tile.shared_alloc : !tile.shared<32x64xbf16>
  %b32 = tile.shared_alloc : !tile.shared<64x64xbf16>
  %x32 = tile.shared_load %a32 : !tile.shared<32x64xbf16> -> tensor<32x64xbf16>
  %w32 = tile.shared_load %b32 : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %wt32 = tile.trans %w32 [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
  %d1 = tile.dot %x32, %wt32, %acc32 : tensor<32x64xbf16>, tensor<64x64xbf16>, tensor<32x64xf32> -> tensor<32x64xf32>

  %aw = tile.shared_alloc : !tile.shared<64x128xbf16>
  %bw = tile.shared_alloc : !tile.shared<64x128xbf16>
  %xw = tile.shared_load %aw : !tile.shared<64x128xbf16> -> tensor<64x128xbf16>
  %ww = tile.shared_load %bw : !tile.shared<64x128xbf16> -> tensor<64x128xbf16>
  %wtw = tile.trans %ww [1, 0] : tensor<64x128xbf16> -> tensor<128x64xbf16>
  %d2 = tile.dot %xw, %wtw, %acc : tensor<64x128xbf16>, tensor<128x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>

  %ap = tile.shared_alloc : !tile.shared<64x64xbf16>
  %bp = tile.shared_alloc : !tile.shared<64x64xbf16>
  %xp = tile.shared_load %ap : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %wp = tile.shared_load %bp : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %wtp = tile.trans %wp [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
  %d4 = tile.dot %xp, %wtp, %acc {atom = "sm_90.mma_m16n8k16_f32_bf16_bf16"} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>

  %ae = tile.shared_alloc : !tile.shared<64x64xbf16>
  %be = tile.shared_alloc : !tile.shared<64x64xbf16>
  %xe = tile.shared_load %ae : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %we = tile.shared_load %be : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %wte = tile.trans %we [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
  %d5 = tile.dot %xe, %wte, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %again = tile.shared_load %ae : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %z = arith.constant 0 : i32
  %o = tile.splat %z : i32 -> tensor<64x64xi32>
  %o32 = tile.splat %z : i32 -> tensor<32x64xi32>
  tile.store %d0, %out[%o] : tensor<64x64xf32>, !tile.ptr<f32>[tensor<64x64xi32>]
  tile.store %d1, %out[%o32] : tensor<32x64xf32>, !tile.ptr<f32>[tensor<32x64xi32>]
  tile.store %d2, %out[%o] : tensor<64x64xf32>, !tile.ptr<f32>[tensor<64x64xi32>]
  tile.store %d4, %out[%o] : tensor<64x64xf32>, !tile.ptr<f32>[tensor<64x64xi32>]
  tile.store %d5, %out[%o] : tensor<64x64xf32>, !tile.ptr<f32>[tensor<64x64xi32>]
  tile.store %again, %bout[%o] : tensor<64x64xbf16>, !tile.ptr<bf16>[tensor<64x64xi32>]
  return
}

// CHECK-LABEL: func.func @two_warps
// CHECK-NOT:     tile.shared_dot
// CHECK:         tile.dot
func.func @two_warps(%out: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 2 : i32} {
  %a = tile.shared_alloc : !tile.shared<64x64xbf16>
  %b = tile.shared_alloc : !tile.shared<64x64xbf16>
  %x = tile.shared_load %a : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %w = tile.shared_load %b : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %wt = tile.trans %w [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
  %acc = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %x, %wt, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %z = arith.constant 0 : i32
  %o = tile.splat %z : i32 -> tensor<64x64xi32>
  tile.store %d, %out[%o] : tensor<64x64xf32>, !tile.ptr<f32>[tensor<64x64xi32>]
  return
}

// Two dots reading one A buffer (through two loads) with their own B buffers: both convert.
// CHECK-LABEL: func.func @shared_a
// CHECK-COUNT-2: tile.shared_dot
// CHECK-NOT:     tile.dot
func.func @shared_a(%out: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %a = tile.shared_alloc : !tile.shared<64x64xbf16>
  %b = tile.shared_alloc : !tile.shared<64x64xbf16>
  %c = tile.shared_alloc : !tile.shared<64x64xbf16>
  %acc = arith.constant dense<0.0> : tensor<64x64xf32>
  %x = tile.shared_load %a : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %w = tile.shared_load %b : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %wt = tile.trans %w [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
  %d = tile.dot %x, %wt, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %x2 = tile.shared_load %a : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %v = tile.shared_load %c : !tile.shared<64x64xbf16> -> tensor<64x64xbf16>
  %vt = tile.trans %v [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
  %e = tile.dot %x2, %vt, %d : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %z = arith.constant 0 : i32
  %o = tile.splat %z : i32 -> tensor<64x64xi32>
  tile.store %e, %out[%o] : tensor<64x64xf32>, !tile.ptr<f32>[tensor<64x64xi32>]
  return
}
