// tile-assign-layouts with a target: dots take the largest matrix instruction whose tile and
// warp split divide theirs; A and B convert to dot-operand layouts (or are read from shared
// memory in them), and the accumulator is created in the MMA layout so the loop carries it
// in matrix-core registers.
// RUN: %wavetile-opt %s -allow-unregistered-dialect -tile-assign-layouts="warp-size=64 target=gfx942" | FileCheck %s --check-prefix=CDNA3
// RUN: %wavetile-opt %s -allow-unregistered-dialect -tile-assign-layouts="warp-size=64 target=gfx950" | FileCheck %s --check-prefix=CDNA4
// RUN: %wavetile-opt %s -allow-unregistered-dialect -tile-assign-layouts="warp-size=32 target=sm_90" | FileCheck %s --check-prefix=SM90
// RUN: %wavetile-opt %s -allow-unregistered-dialect -tile-assign-layouts="warp-size=64" | FileCheck %s --check-prefix=NOTARGET

// 64x64x32 with 4 warps: 32x32 atoms split 2x2 on CDNA (gfx950 has the K=16 one), m16n8k16
// atoms 2x2 on sm_90 too (4x1 would divide as well, but then every warp reads all of B:
// 16 + 64 operand rows/columns per warp instead of 32 + 32).
// CDNA3-DAG: #[[MMA:[a-z_0-9]+]] = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [2, 2]>
// CDNA3-DAG: #[[SWZ64B:[a-z_0-9]+]] = #tile.shared_layout<vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0], padding = 0>
// CDNA3-DAG: #[[SWZ128B:[a-z_0-9]+]] = #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], padding = 0>
// CDNA3-DAG: #[[SWZ64B3:[a-z_0-9]+]] = #tile.shared_layout<vec = 8, perPhase = 2, maxPhase = 4, order = [2, 1, 0], padding = 0>
// CDNA4-DAG: #[[MMA:[a-z_0-9]+]] = #tile.mma<atom = "gfx950.mfma_f32_32x32x16_bf16", warpsPerBlock = [2, 2]>
// CDNA4-DAG: #[[SMMA:[a-z_0-9]+]] = #tile.mma<atom = "gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp4", warpsPerBlock = [2, 2]>
// CDNA4-DAG: #[[SOP0:[a-z_0-9]+]] = #tile.dot_operand<operand = 0, parent = #[[SMMA]]>
// CDNA4-DAG: #[[SOP1:[a-z_0-9]+]] = #tile.dot_operand<operand = 1, parent = #[[SMMA]]>
// CDNA4-DAG: #[[SOP2:[a-z_0-9]+]] = #tile.dot_operand<operand = 2, parent = #[[SMMA]]>
// CDNA4-DAG: #[[SOP3:[a-z_0-9]+]] = #tile.dot_operand<operand = 3, parent = #[[SMMA]]>
// SM90-DAG:  #[[MMA:[a-z_0-9]+]] = #tile.mma<atom = "sm_90.mma_m16n8k16_f32_bf16_bf16", warpsPerBlock = [2, 2]>
// SM90-DAG:  #[[I8MMA:[a-z_0-9]+]] = #tile.mma<atom = "sm_90.mma_m16n8k32_s32_s8_s8", warpsPerBlock = [2, 2]>
// CDNA3-DAG: #[[I8MMA:[a-z_0-9]+]] = #tile.mma<atom = "gfx942.mfma_i32_32x32x16_i8", warpsPerBlock = [2, 2]>
// CDNA3-DAG: #[[A:[a-z_0-9]+]] = #tile.dot_operand<operand = 0, parent = #[[MMA]]>
// CDNA3-DAG: #[[B:[a-z_0-9]+]] = #tile.dot_operand<operand = 1, parent = #[[MMA]]>
// CDNA3-DAG: #[[BT:[a-z_0-9]+]] = #tile.dot_operand<operand = 1, parent = #[[MMA]], transposed = true>
// SM90-DAG:  #[[SMBT:[a-z_0-9]+]] = #tile.dot_operand<operand = 1, parent = #{{.*}}, transposed = true>
// SM90-DAG:  #[[MXMMA:[a-z_0-9]+]] = #tile.mma<atom = "sm_90.mma_m16n8k16_f32_bf16_bf16", warpsPerBlock = [1, 4]>
// SM90-DAG:  #[[WBYTES:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 1, 2], threadsPerWarp = [8, 4, 1], warpsPerBlock = [4, 1, 1], order = [2, 1, 0]>
// SM90-DAG:  #[[MXA:[a-z_0-9]+]] = #tile.dot_operand<operand = 0, parent = #[[MXMMA]]>
// SM90-DAG:  #[[MXBT:[a-z_0-9]+]] = #tile.dot_operand<operand = 1, parent = #[[MXMMA]], transposed = true>
// SM90-DAG:  #[[MXB:[a-z_0-9]+]] = #tile.dot_operand<operand = 1, parent = #[[MXMMA]]>
// SM90-DAG:  #[[RUN4:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerBlock = [4, 1], order = [1, 0]>
// CDNA3-DAG: #[[RUN1:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [16, 4], warpsPerBlock = [4, 1], order = [1, 0]>
// CDNA3-LABEL: func.func @gemm_tile
// CDNA3:         %[[ZERO:.*]] = tile.splat {{.*}} -> tensor<64x64xf32, #[[MMA]]>
// CDNA3:         scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (tensor<64x64xf32, #[[MMA]]>)
// CDNA3:           %[[OPA:.*]] = tile.convert_layout {{.*}} -> tensor<64x32xbf16, #[[A]]>
// CDNA3:           %[[OPB:.*]] = tile.convert_layout {{.*}} -> tensor<32x64xbf16, #[[B]]>
// CDNA3:           tile.dot %[[OPA]], %[[OPB]], %[[ACC]] : {{.*}} -> tensor<64x64xf32, #[[MMA]]>
// CDNA3:         tile.convert_layout {{.*}} : tensor<64x64xf32, #[[MMA]]> -> tensor<64x64xf32, #{{blocked[0-9]*}}>
// CDNA4: tile.dot {{.*}} -> tensor<64x64xf32, #[[MMA]]>
// SM90:  tile.dot {{.*}} -> tensor<64x64xf32, #[[MMA]]>
// NOTARGET-NOT: #tile.mma
func.func @gemm_tile(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %k: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<64x64xf32>
  %ia = tile.arange 0 to 2048 : tensor<2048xi32>
  %oa = tile.reshape %ia : tensor<2048xi32> -> tensor<64x32xi32>
  %ob = tile.reshape %ia : tensor<2048xi32> -> tensor<32x64xi32>
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %r = scf.for %i = %c0 to %k step %c32 iter_args(%acc = %acc0) -> (tensor<64x64xf32>) : i32 {
    %ta = tile.load %a[%oa] : !tile.ptr<bf16>[tensor<64x32xi32>] -> tensor<64x32xbf16>
    %tb = tile.load %b[%ob] : !tile.ptr<bf16>[tensor<32x64xi32>] -> tensor<32x64xbf16>
    %d = tile.dot %ta, %tb, %acc : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %ic = tile.arange 0 to 4096 : tensor<4096xi32>
  %oc = tile.reshape %ic : tensor<4096xi32> -> tensor<64x64xi32>
  tile.store %r, %c[%oc] : tensor<64x64xf32>, !tile.ptr<f32>[tensor<64x64xi32>]
  return
}

// Operands read from shared memory only by the dot are read straight into the operand
// layouts: no convert_layout between the shared loads and the dot.
// Buffers that only stage dot operands are swizzled so that 16-byte reads of 8 rows at one
// column hit distinct bank groups: 64-byte rows pair up (SWZ64B: perPhase 2, 4 phases),
// 128-byte rows each get a phase of their own (SWZ128B).
// CDNA3-LABEL: func.func @operands_from_shared
// CDNA3-NOT:     tile.convert_layout
// CDNA3:         tile.shared_alloc : !tile.shared<64x32xbf16, #[[SWZ64B]]>
// CDNA3:         tile.shared_alloc : !tile.shared<32x64xbf16, #[[SWZ128B]]>
// CDNA3:         tile.shared_load {{.*}} -> tensor<64x32xbf16, #[[A]]>
// CDNA3-NEXT:    tile.shared_load {{.*}} -> tensor<32x64xbf16, #[[B]]>
// CDNA3-NEXT:    tile.dot
// CDNA3-SAME:      -> tensor<64x64xf32, #[[MMA]]>
func.func @operands_from_shared(%k: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<64x64xf32>
  %sa = tile.shared_alloc : !tile.shared<64x32xbf16>
  %sb = tile.shared_alloc : !tile.shared<32x64xbf16>
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %r = scf.for %i = %c0 to %k step %c32 iter_args(%acc = %acc0) -> (tensor<64x64xf32>) : i32 {
    %ta = tile.shared_load %sa : !tile.shared<64x32xbf16> -> tensor<64x32xbf16>
    %tb = tile.shared_load %sb : !tile.shared<32x64xbf16> -> tensor<32x64xbf16>
    %d = tile.dot %ta, %tb, %acc : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  "test.use"(%r) : (tensor<64x64xf32>) -> ()
  return
}

// Multi-buffered stages are swizzled through their slices (the stage index stays the
// slowest dimension); a buffer also read into a blocked layout keeps its plain layout.
// CDNA3-LABEL: func.func @stages_through_slices
// CDNA3:         %[[SA:.*]] = tile.shared_alloc : !tile.shared<2x64x32xbf16, #[[SWZ64B3]]>
// CDNA3:         %[[SB:.*]] = tile.shared_alloc : !tile.shared<32x64xbf16>
// CDNA3:         tile.shared_slice %[[SA]][%{{.*}}] : !tile.shared<2x64x32xbf16, #[[SWZ64B3]]> -> !tile.shared<64x32xbf16, #[[SWZ64B]]>
func.func @stages_through_slices(%k: i32, %stage: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc = tile.splat %zero : f32 -> tensor<64x64xf32>
  %sa = tile.shared_alloc : !tile.shared<2x64x32xbf16>
  %sb = tile.shared_alloc : !tile.shared<32x64xbf16>
  %entry = tile.shared_slice %sa[%stage] : !tile.shared<2x64x32xbf16> -> !tile.shared<64x32xbf16>
  %ta = tile.shared_load %entry : !tile.shared<64x32xbf16> -> tensor<64x32xbf16>
  %tb = tile.shared_load %sb : !tile.shared<32x64xbf16> -> tensor<32x64xbf16>
  %d = tile.dot %ta, %tb, %acc : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %plain = tile.shared_load %sb : !tile.shared<32x64xbf16> -> tensor<32x64xbf16>
  "test.use"(%d, %plain) : (tensor<64x64xf32>, tensor<32x64xbf16>) -> ()
  return
}

// Weights stored [N, K] (K contiguous) and transposed for the dot: the shared load reads
// straight into the transposed B operand layout, and the transpose yields the B operand
// layout without a conversion. Their stage is swizzled like any operand stage.
// CDNA3-LABEL: func.func @weights_n_by_k
// CDNA3:         tile.shared_alloc : !tile.shared<64x32xbf16, #[[SWZ64B]]>
// CDNA3:         %[[W:.*]] = tile.shared_load {{.*}} -> tensor<64x32xbf16, #[[BT]]>
// CDNA3-NEXT:    %[[TB:.*]] = tile.trans %[[W]] {{.*}} -> tensor<32x64xbf16, #[[B]]>
// CDNA3-NOT:     tile.convert_layout
// CDNA3:         tile.dot %{{.*}}, %[[TB]]
// SM90-LABEL:  func.func @weights_n_by_k
// SM90:          tile.shared_load {{.*}} -> tensor<64x32xbf16, #[[SMBT]]>
// SM90-NOT:      tile.convert_layout
func.func @weights_n_by_k(%k: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<64x64xf32>
  %sa = tile.shared_alloc : !tile.shared<64x32xbf16>
  %sw = tile.shared_alloc : !tile.shared<64x32xbf16>
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %r = scf.for %i = %c0 to %k step %c32 iter_args(%acc = %acc0) -> (tensor<64x64xf32>) : i32 {
    %ta = tile.shared_load %sa : !tile.shared<64x32xbf16> -> tensor<64x32xbf16>
    %tw = tile.shared_load %sw : !tile.shared<64x32xbf16> -> tensor<64x32xbf16>
    %tb = tile.trans %tw [1, 0] : tensor<64x32xbf16> -> tensor<32x64xbf16>
    %d = tile.dot %ta, %tb, %acc : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  "test.use"(%r) : (tensor<64x64xf32>) -> ()
  return
}

// A scaled dot takes gfx950's block-scaled MFMA (fp8 x fp4, 32x32x64, warps 2x2): A, B and
// both scale tiles get the atom's operand layouts (dot-operand indices 0-3). gfx942 has no
// block-scaled MFMA, so there the scaled dot keeps blocked layouts (the FMA path).
// CDNA4-LABEL: func.func @scaled_tile
// CDNA4:         tile.convert_layout {{.*}} -> tensor<64x64xf8E4M3FN, #[[SOP0]]>
// CDNA4:         tile.convert_layout {{.*}} -> tensor<64x64xf4E2M1FN, #[[SOP1]]>
// CDNA4:         tile.convert_layout {{.*}} -> tensor<64x2xf8E8M0FNU, #[[SOP2]]>
// CDNA4:         tile.convert_layout {{.*}} -> tensor<2x64xf8E8M0FNU, #[[SOP3]]>
// CDNA4:         tile.scaled_dot {{.*}} -> tensor<64x64xf32, #[[SMMA]]>
// CDNA3-LABEL: func.func @scaled_tile
// CDNA3-NOT:     #tile.mma
// CDNA3:         tile.scaled_dot {{.*}} -> tensor<64x64xf32, #{{blocked[0-9]*}}>
func.func @scaled_tile(%pa: !tile.ptr<f8E4M3FN>, %pas: !tile.ptr<f8E8M0FNU>, %pb: !tile.ptr<f4E2M1FN>,
                       %pbs: !tile.ptr<f8E8M0FNU>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %r = tile.arange 0 to 4096 : tensor<4096xi32>
  %o = tile.reshape %r : tensor<4096xi32> -> tensor<64x64xi32>
  %a = tile.load %pa[%o] : !tile.ptr<f8E4M3FN>[tensor<64x64xi32>] -> tensor<64x64xf8E4M3FN>
  %b = tile.load %pb[%o] : !tile.ptr<f4E2M1FN>[tensor<64x64xi32>] -> tensor<64x64xf4E2M1FN>
  %rs = tile.arange 0 to 128 : tensor<128xi32>
  %osa = tile.reshape %rs : tensor<128xi32> -> tensor<64x2xi32>
  %osb = tile.reshape %rs : tensor<128xi32> -> tensor<2x64xi32>
  %as = tile.load %pas[%osa] : !tile.ptr<f8E8M0FNU>[tensor<64x2xi32>] -> tensor<64x2xf8E8M0FNU>
  %bs = tile.load %pbs[%osb] : !tile.ptr<f8E8M0FNU>[tensor<2x64xi32>] -> tensor<2x64xf8E8M0FNU>
  %zero = arith.constant 0.0 : f32
  %acc = tile.splat %zero : f32 -> tensor<64x64xf32>
  %d = tile.scaled_dot %a scale %as, %b scale %bs, %acc : tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<64x64xf4E2M1FN>, tensor<2x64xf8E8M0FNU>, tensor<64x64xf32> -> tensor<64x64xf32>
  "test.use"(%d) : (tensor<64x64xf32>) -> ()
  return
}

// MXFP4 operands decoded in registers (gemm_a4w4 off gfx950): each byte broadcast over its
// two codes and each e8m0 scale over its 32 of K, reshaped to the operand's shape, decoded
// elementwise. Decoding costs more than moving: of the 32x64 tile's warp splits the dot takes
// [1, 4] (fewest reads alone would tie it with [2, 2]), where each warp holds its own columns
// of W. W [N, K] (the transposed B) is decoded in place: its bytes and scales are read from
// shared memory in slices of blocked layouts that reshape to the operand layout in registers,
// a byte's two codes in adjacent registers as the operand's K pairs are. X (A), which all 4
// warps share, is decoded once in a layout spread over the warps and converted to the operand
// layout through shared memory.
// SM90-LABEL:  func.func @mx_operands_decoded_in_place
// SM90-NOT:      tile.convert_layout
// SM90:          tile.reshape {{.*}} -> tensor<32x32xi32, #[[XSPREAD:blocked[0-9]*]]>
// SM90:          tile.reshape {{.*}} -> tensor<32x32xf32, #[[XSPREAD]]>
// SM90:          %[[X:.*]] = arith.truncf {{.*}} to tensor<32x32xbf16, #[[XSPREAD]]>
// SM90-NOT:      tile.convert_layout
// SM90:          tile.broadcast {{.*}} -> tensor<64x16x2xi32, #[[WBYTES]]>
// SM90:          tile.reshape {{.*}} -> tensor<64x32xi32, #[[MXBT]]>
// SM90:          tile.reshape {{.*}} -> tensor<64x32xf32, #[[MXBT]]>
// SM90:          tile.trans {{.*}} -> tensor<32x64xbf16, #[[MXB]]>
// SM90:          %[[XA:.*]] = tile.convert_layout %[[X]] : tensor<32x32xbf16, #[[XSPREAD]]> -> tensor<32x32xbf16, #[[MXA]]>
// SM90-NOT:      tile.convert_layout
// SM90:          tile.dot %[[XA]]
func.func @mx_operands_decoded_in_place(%sx: !tile.shared<32x16xi8>, %ssx: !tile.shared<32x1xi8>, %sw: !tile.shared<64x16xi8>, %ssw: !tile.shared<64x1xi8>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc = tile.splat %zero : f32 -> tensor<32x64xf32>
  %c4 = arith.constant 4 : i32
  %c15 = arith.constant 15 : i32
  %c23 = arith.constant 23 : i32
  %nibbles = tile.arange 0 to 2 : tensor<2xi32>
  %four = tile.splat %c4 : i32 -> tensor<2xi32>
  %bits = arith.muli %nibbles, %four : tensor<2xi32>
  %bits2 = tile.expand_dims %bits axis = 0 : tensor<2xi32> -> tensor<1x2xi32>
  %shift = tile.expand_dims %bits2 axis = 0 : tensor<1x2xi32> -> tensor<1x1x2xi32>
  %xb = tile.shared_load %sx : !tile.shared<32x16xi8> -> tensor<32x16xi8>
  %xi = arith.extui %xb : tensor<32x16xi8> to tensor<32x16xi32>
  %xe = tile.expand_dims %xi axis = 2 : tensor<32x16xi32> -> tensor<32x16x1xi32>
  %xbb = tile.broadcast %xe : tensor<32x16x1xi32> -> tensor<32x16x2xi32>
  %xshift = tile.broadcast %shift : tensor<1x1x2xi32> -> tensor<32x16x2xi32>
  %xsh = arith.shrui %xbb, %xshift : tensor<32x16x2xi32>
  %xmask = tile.splat %c15 : i32 -> tensor<32x16x2xi32>
  %xn = arith.andi %xsh, %xmask : tensor<32x16x2xi32>
  %xcodes = tile.reshape %xn : tensor<32x16x2xi32> -> tensor<32x32xi32>
  %xf = arith.sitofp %xcodes : tensor<32x32xi32> to tensor<32x32xf32>
  %xsb = tile.shared_load %ssx : !tile.shared<32x1xi8> -> tensor<32x1xi8>
  %xsi = arith.extui %xsb : tensor<32x1xi8> to tensor<32x1xi32>
  %xs23 = tile.splat %c23 : i32 -> tensor<32x1xi32>
  %xsbits = arith.shli %xsi, %xs23 : tensor<32x1xi32>
  %xsf = arith.bitcast %xsbits : tensor<32x1xi32> to tensor<32x1xf32>
  %xse = tile.expand_dims %xsf axis = 2 : tensor<32x1xf32> -> tensor<32x1x1xf32>
  %xsbb = tile.broadcast %xse : tensor<32x1x1xf32> -> tensor<32x1x32xf32>
  %xscale = tile.reshape %xsbb : tensor<32x1x32xf32> -> tensor<32x32xf32>
  %xv = arith.mulf %xf, %xscale : tensor<32x32xf32>
  %xd = arith.truncf %xv : tensor<32x32xf32> to tensor<32x32xbf16>
  %wb = tile.shared_load %sw : !tile.shared<64x16xi8> -> tensor<64x16xi8>
  %wi = arith.extui %wb : tensor<64x16xi8> to tensor<64x16xi32>
  %we = tile.expand_dims %wi axis = 2 : tensor<64x16xi32> -> tensor<64x16x1xi32>
  %wbb = tile.broadcast %we : tensor<64x16x1xi32> -> tensor<64x16x2xi32>
  %wshift = tile.broadcast %shift : tensor<1x1x2xi32> -> tensor<64x16x2xi32>
  %wsh = arith.shrui %wbb, %wshift : tensor<64x16x2xi32>
  %wmask = tile.splat %c15 : i32 -> tensor<64x16x2xi32>
  %wn = arith.andi %wsh, %wmask : tensor<64x16x2xi32>
  %wcodes = tile.reshape %wn : tensor<64x16x2xi32> -> tensor<64x32xi32>
  %wf = arith.sitofp %wcodes : tensor<64x32xi32> to tensor<64x32xf32>
  %wsb = tile.shared_load %ssw : !tile.shared<64x1xi8> -> tensor<64x1xi8>
  %wsi = arith.extui %wsb : tensor<64x1xi8> to tensor<64x1xi32>
  %ws23 = tile.splat %c23 : i32 -> tensor<64x1xi32>
  %wsbits = arith.shli %wsi, %ws23 : tensor<64x1xi32>
  %wsf = arith.bitcast %wsbits : tensor<64x1xi32> to tensor<64x1xf32>
  %wse = tile.expand_dims %wsf axis = 2 : tensor<64x1xf32> -> tensor<64x1x1xf32>
  %wsbb = tile.broadcast %wse : tensor<64x1x1xf32> -> tensor<64x1x32xf32>
  %wscale = tile.reshape %wsbb : tensor<64x1x32xf32> -> tensor<64x32xf32>
  %wv = arith.mulf %wf, %wscale : tensor<64x32xf32>
  %wd = arith.truncf %wv : tensor<64x32xf32> to tensor<64x32xbf16>
  %wt = tile.trans %wd [1, 0] : tensor<64x32xbf16> -> tensor<32x64xbf16>
  %r = tile.dot %xd, %wt, %acc : tensor<32x32xbf16>, tensor<32x64xbf16>, tensor<32x64xf32> -> tensor<32x64xf32>
  "test.use"(%r) : (tensor<32x64xf32>) -> ()
  return
}

// Block scales (gemm_a8w8_blockscale): a column of X's scales and a row of W's, read from
// the pipeline's ring, are broadcast straight into the accumulator's layout to scale the
// block's sum; nothing changes layout through shared memory.
// SM90-LABEL:  func.func @block_scaled_sum
// SM90-NOT:      tile.convert_layout
// SM90:          %[[SUM:.*]] = tile.dot {{.*}} -> tensor<16x32xf32, #[[MXMMA]]>
// SM90:          %[[XS:.*]] = tile.shared_load %{{.*}} -> tensor<16x1xf32, #{{blocked[0-9]*}}>
// SM90:          %[[XW:.*]] = tile.broadcast %[[XS]] : {{.*}} -> tensor<16x32xf32, #[[MXMMA]]>
// SM90:          %[[P:.*]] = arith.mulf %[[SUM]], %[[XW]] : tensor<16x32xf32, #[[MXMMA]]>
// SM90:          %[[WS:.*]] = tile.shared_load %{{.*}} -> tensor<1x32xf32, #{{blocked[0-9]*}}>
// SM90:          %[[WW:.*]] = tile.broadcast %[[WS]] : {{.*}} -> tensor<16x32xf32, #[[MXMMA]]>
// SM90:          arith.mulf %[[P]], %[[WW]] : tensor<16x32xf32, #[[MXMMA]]>
// SM90-NOT:      tile.convert_layout
func.func @block_scaled_sum(%sx: !tile.shared<16x16xbf16>, %sw: !tile.shared<16x32xbf16>, %ssx: !tile.shared<16x1xf32>, %ssw: !tile.shared<1x32xf32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc = tile.splat %zero : f32 -> tensor<16x32xf32>
  %x = tile.shared_load %sx : !tile.shared<16x16xbf16> -> tensor<16x16xbf16>
  %w = tile.shared_load %sw : !tile.shared<16x32xbf16> -> tensor<16x32xbf16>
  %sum = tile.dot %x, %w, %acc : tensor<16x16xbf16>, tensor<16x32xbf16>, tensor<16x32xf32> -> tensor<16x32xf32>
  %xs = tile.shared_load %ssx : !tile.shared<16x1xf32> -> tensor<16x1xf32>
  %xw = tile.broadcast %xs : tensor<16x1xf32> -> tensor<16x32xf32>
  %p = arith.mulf %sum, %xw : tensor<16x32xf32>
  %ws = tile.shared_load %ssw : !tile.shared<1x32xf32> -> tensor<1x32xf32>
  %ww = tile.broadcast %ws : tensor<1x32xf32> -> tensor<16x32xf32>
  %r = arith.mulf %p, %ww : tensor<16x32xf32>
  "test.use"(%r) : (tensor<16x32xf32>) -> ()
  return
}

// The same scales multiplied with each other before one fma into the block's sum (the
// kernel's form, with W's one scale per tile): each broadcast still reaches the
// accumulator's layout, through the product, so the scales' product is formed per register.
// SM90-LABEL:  func.func @block_scaled_fma
// SM90-NOT:      tile.convert_layout
// SM90:          %[[SUM:.*]] = tile.dot {{.*}} -> tensor<16x32xf32, #[[MXMMA]]>
// SM90:          %[[XW:.*]] = tile.broadcast %{{.*}} : {{.*}} -> tensor<16x32xf32, #[[MXMMA]]>
// SM90:          %[[WW:.*]] = tile.broadcast %{{.*}} : {{.*}} -> tensor<16x32xf32, #[[MXMMA]]>
// SM90:          %[[S:.*]] = arith.mulf %[[XW]], %[[WW]] : tensor<16x32xf32, #[[MXMMA]]>
// SM90:          math.fma %[[SUM]], %[[S]], %{{.*}} : tensor<16x32xf32, #[[MXMMA]]>
// SM90-NOT:      tile.convert_layout
func.func @block_scaled_fma(%sx: !tile.shared<16x16xbf16>, %sw: !tile.shared<16x32xbf16>, %ssx: !tile.shared<16x1xf32>, %ssw: !tile.shared<1x1xf32>, %t: f32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc = tile.splat %zero : f32 -> tensor<16x32xf32>
  %x = tile.shared_load %sx : !tile.shared<16x16xbf16> -> tensor<16x16xbf16>
  %w = tile.shared_load %sw : !tile.shared<16x32xbf16> -> tensor<16x32xbf16>
  %sum = tile.dot %x, %w, %acc : tensor<16x16xbf16>, tensor<16x32xbf16>, tensor<16x32xf32> -> tensor<16x32xf32>
  %xs = tile.shared_load %ssx : !tile.shared<16x1xf32> -> tensor<16x1xf32>
  %xw = tile.broadcast %xs : tensor<16x1xf32> -> tensor<16x32xf32>
  %ws = tile.shared_load %ssw : !tile.shared<1x1xf32> -> tensor<1x1xf32>
  %ww = tile.broadcast %ws : tensor<1x1xf32> -> tensor<16x32xf32>
  %s = arith.mulf %xw, %ww : tensor<16x32xf32>
  %total = tile.splat %t : f32 -> tensor<16x32xf32>
  %r = math.fma %sum, %s, %total : tensor<16x32xf32>
  "test.use"(%r) : (tensor<16x32xf32>) -> ()
  return
}

// cp.async moves 4, 8 or 16 bytes: on NVIDIA a copied tile gives each thread at least a
// 4-byte run even where the block then covers the tile twice (64x4 e8m0 scales, 128
// threads); CDNA (and no target) keep one element per thread.
// SM90-LABEL: func.func @stage_byte_scales
// SM90:         tile.async_copy {{.*}} : !tile.ptr<i8>[tensor<64x4xi32, #[[RUN4]]>], !tile.shared<64x4xi8>
// CDNA3-LABEL: func.func @stage_byte_scales
// CDNA3:        tile.async_copy {{.*}} : !tile.ptr<i8>[tensor<64x4xi32, #[[RUN1]]>], !tile.shared<64x4xi8>
func.func @stage_byte_scales(%s: !tile.ptr<i8>, %ld: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %rows = tile.arange 0 to 64 : tensor<64xi32>
  %cols = tile.arange 0 to 4 : tensor<4xi32>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %c2 = tile.expand_dims %cols axis = 0 : tensor<4xi32> -> tensor<1x4xi32>
  %lds = tile.splat %ld : i32 -> tensor<64x1xi32>
  %rowStart = arith.muli %r2, %lds : tensor<64x1xi32>
  %rb = tile.broadcast %rowStart : tensor<64x1xi32> -> tensor<64x4xi32>
  %cb = tile.broadcast %c2 : tensor<1x4xi32> -> tensor<64x4xi32>
  %offsets = arith.addi %rb, %cb : tensor<64x4xi32>
  %stage = tile.shared_alloc : !tile.shared<64x4xi8>
  %token = tile.async_copy %s[%offsets], %stage : !tile.ptr<i8>[tensor<64x4xi32>], !tile.shared<64x4xi8>
  tile.async_wait pending = 0
  return
}

// int8: exact s32 sums on i8 matrix instructions (CDNA's i8 MFMA, sm_90's m16n8k32 s8).
// CDNA3-LABEL: func.func @int8_tile
// CDNA3:         tile.dot {{.*}} -> tensor<64x64xi32, #[[I8MMA]]>
// SM90-LABEL:  func.func @int8_tile
// SM90:          tile.dot {{.*}} -> tensor<64x64xi32, #[[I8MMA]]>
func.func @int8_tile(%a: !tile.ptr<i8>, %b: !tile.ptr<i8>, %c: !tile.ptr<i32>, %k: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %zero = arith.constant 0 : i32
  %acc0 = tile.splat %zero : i32 -> tensor<64x64xi32>
  %ia = tile.arange 0 to 4096 : tensor<4096xi32>
  %oa = tile.reshape %ia : tensor<4096xi32> -> tensor<64x64xi32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = scf.for %i = %c0 to %k step %c64 iter_args(%acc = %acc0) -> (tensor<64x64xi32>) : i32 {
    %ta = tile.load %a[%oa] : !tile.ptr<i8>[tensor<64x64xi32>] -> tensor<64x64xi8>
    %tb = tile.load %b[%oa] : !tile.ptr<i8>[tensor<64x64xi32>] -> tensor<64x64xi8>
    %d = tile.dot %ta, %tb, %acc : tensor<64x64xi8>, tensor<64x64xi8>, tensor<64x64xi32> -> tensor<64x64xi32>
    scf.yield %d : tensor<64x64xi32>
  }
  tile.store %r, %c[%oa] : tensor<64x64xi32>, !tile.ptr<i32>[tensor<64x64xi32>]
  return
}
