// Verifier and parser errors of layout attributes (blocked, slice, mma, dot_operand, linear,
// shared_layout), of tiles they do not fit, and of the kernel attributes and the kernel-level
// check that every layout agrees with tile.num_warps / tile.warp_size.
// RUN: %wavetile-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// #tile.blocked
//===----------------------------------------------------------------------===//

// expected-error @+1 {{blocked layout: sizePerThread, threadsPerWarp, warpsPerBlock and order must all have the same length}}
func.func private @blocked_lengths(tensor<64x64xf32, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [32], warpsPerBlock = [1, 1], order = [1, 0]>>)

// -----

// expected-error @+1 {{blocked layout: sizes must be positive}}
func.func private @blocked_zero_size(tensor<64xf32, #tile.blocked<sizePerThread = [0], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>>)

// -----

// expected-error @+1 {{blocked layout: sizes must be positive}}
func.func private @blocked_zero_warps(tensor<64xf32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [0], order = [0]>>)

// -----

// expected-error @+1 {{blocked layout: order must be a permutation of 0..1}}
func.func private @blocked_order_repeat(tensor<64x64xf32, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerBlock = [1, 1], order = [1, 1]>>)

// -----

// expected-error @+1 {{blocked layout: order must be a permutation of 0..1}}
func.func private @blocked_order_range(tensor<64x64xf32, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerBlock = [1, 1], order = [2, 0]>>)

// -----

// expected-error @+1 {{blocked layout: threadsPerWarp multiply to 16, but a warp has 32 (NVIDIA) or 64 (CDNA) threads}}
func.func private @blocked_warp_size(tensor<64x64xf32, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 4], warpsPerBlock = [1, 1], order = [1, 0]>>)

// -----

// expected-error @+1 {{blocked layout: warps per block must be a power of two}}
func.func private @blocked_warps_pow2(tensor<64x64xf32, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerBlock = [3, 1], order = [1, 0]>>)

// -----

// An empty layout cannot be written: the parser wants at least one integer per list.
// expected-error @+2 {{expected integer value}}
// expected-error @+1 {{failed to parse Tile_BlockedLayoutAttr parameter 'sizePerThread'}}
func.func private @blocked_empty(tensor<64xf32, #tile.blocked<sizePerThread = [], threadsPerWarp = [], warpsPerBlock = [], order = []>>)

// -----

// expected-error @+1 {{blocked layout of rank 1 does not match a tile of rank 2}}
func.func private @blocked_rank(tensor<64x64xf32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>>)

// -----

// 1 x 32 x 4 = 128 elements of dimension 0: neither a divisor nor a multiple of 96.
// expected-error @+1 {{blocked layout covers 128 elements of dimension 0, which neither divides nor is divided by the tile's 96}}
func.func private @blocked_coverage(tensor<96xf32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>>)

// -----

func.func @blocked_coverage_on_result() {
  // expected-error @+1 {{blocked layout covers 8 elements of dimension 1, which neither divides nor is divided by the tile's 12}}
  %0 = tile.arange 0 to 12 : tensor<12xi32, #tile.slice<dim = 0, parent = #tile.blocked<sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerBlock = [1, 1], order = [1, 0]>>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// #tile.slice
//===----------------------------------------------------------------------===//

// expected-error @+1 {{slice dim 3 exceeds the tile rank 1}}
func.func private @slice_dim(tensor<64xf32, #tile.slice<dim = 3, parent = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerBlock = [1, 1], order = [1, 0]>>>)

// -----

// The parent sees the tile with the sliced dimension restored: rank 3 for a rank-2 parent.
// expected-error @+1 {{blocked layout of rank 2 does not match a tile of rank 3}}
func.func private @slice_parent_rank(tensor<4x8xf32, #tile.slice<dim = 0, parent = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerBlock = [1, 1], order = [1, 0]>>>)

// -----

// expected-error @+1 {{mma accumulator layout needs a tile that is a multiple of 32x32, got 48x32}}
func.func private @slice_of_mma_uncovered(tensor<48xf32, #tile.slice<dim = 1, parent = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [1, 1]>>>)

// -----

// A slice needs a distributed parent; a shared layout is not one.
// expected-error @+2 {{invalid kind of attribute specified}}
// expected-error @+1 {{failed to parse Tile_SliceLayoutAttr parameter 'parent' which is to be a `::wavetile::tile::DistributedLayoutAttr`}}
func.func private @slice_shared_parent(tensor<64xf32, #tile.slice<dim = 0, parent = #tile.shared_layout<vec = 1, perPhase = 1, maxPhase = 1, order = [0], padding = 0>>>)

// -----

//===----------------------------------------------------------------------===//
// #tile.mma and #tile.dot_operand
//===----------------------------------------------------------------------===//

// expected-error @+1 {{unknown atom 'gfx942.mfma_f32_32x32x8_f64' (not in the atom table)}}
func.func private @mma_unknown_atom(tensor<32x32xf32, #tile.mma<atom = "gfx942.mfma_f32_32x32x8_f64", warpsPerBlock = [1, 1]>>)

// -----

// expected-error @+1 {{mma layout: warpsPerBlock must have 2 entries}}
func.func private @mma_warps_rank(tensor<32x32xf32, #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [1, 1, 1]>>)

// -----

// expected-error @+1 {{mma layout: warps per block must be a positive power of two}}
func.func private @mma_zero_warps(tensor<32x32xf32, #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [0, 4]>>)

// -----

// expected-error @+1 {{mma layout: warps per block must be a positive power of two}}
func.func private @mma_warps_pow2(tensor<32x32xf32, #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [3, 1]>>)

// -----

// expected-error @+1 {{mma accumulator layouts apply to 2-D tiles, got rank 3}}
func.func private @mma_rank(tensor<2x32x32xf32, #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [1, 1]>>)

// -----

// expected-error @+1 {{mma accumulator layout needs a tile that is a multiple of 16x8, got 16x4}}
func.func private @mma_not_multiple(tensor<16x4xf32, #tile.mma<atom = "sm_90.mma_m16n8k16_f32_f16_f16", warpsPerBlock = [1, 1]>>)

// -----

// expected-error @+1 {{dot operand index must be 0 (A), 1 (B), 2 (A's scales) or 3 (B's scales), got 4}}
func.func private @dot_operand_index(tensor<32x8xbf16, #tile.dot_operand<operand = 4, parent = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [1, 1]>>>)

// -----

// expected-error @+1 {{dot operand 2 (block scales) needs a block-scaled atom, got 'gfx942.mfma_f32_32x32x8_bf16'}}
func.func private @scales_without_scaled_atom(tensor<32x2xf8E8M0FNU, #tile.dot_operand<operand = 2, parent = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [1, 1]>>>)

// -----

// expected-error @+1 {{scales of dot operand B layout needs a tile that is a multiple of 2x32, got 1x32}}
func.func private @scales_shape(tensor<1x32xf8E8M0FNU, #tile.dot_operand<operand = 3, parent = #tile.mma<atom = "gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp8", warpsPerBlock = [1, 1]>>>)

// -----

// expected-error @+1 {{dot operand A layout needs a tile that is a multiple of 32x8, got 32x4}}
func.func private @dot_operand_a_shape(tensor<32x4xbf16, #tile.dot_operand<operand = 0, parent = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [1, 1]>>>)

// -----

// expected-error @+1 {{dot operand B layout needs a tile that is a multiple of 8x32, got 32x8}}
func.func private @dot_operand_b_shape(tensor<32x8xbf16, #tile.dot_operand<operand = 1, parent = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [1, 1]>>>)

// -----

// expected-error @+1 {{dot operand B layouts apply to 2-D tiles, got rank 1}}
func.func private @dot_operand_rank(tensor<32xbf16, #tile.dot_operand<operand = 1, parent = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [1, 1]>>>)

// -----

// expected-error @+2 {{invalid kind of attribute specified}}
// expected-error @+1 {{failed to parse Tile_DotOperandLayoutAttr parameter 'parent' which is to be a `MmaLayoutAttr`}}
func.func private @dot_operand_blocked_parent(tensor<32x8xbf16, #tile.dot_operand<operand = 0, parent = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerBlock = [1, 1], order = [1, 0]>>>)

// -----

//===----------------------------------------------------------------------===//
// #tile.linear
//===----------------------------------------------------------------------===//

// expected-error @+1 {{invalid linear layout "(4,32,2):(1,4,128": parseLayout: expected ',' or ')' at position 17, found end of input}}
func.func private @linear_syntax(tensor<256xf32, #tile.linear<"(4,32,2):(1,4,128">>)

// -----

// expected-error @+1 {{invalid linear layout "(4,32,2):(1,4)": parseLayout: shape (4,32,2) and stride (1,4) are not congruent}}
func.func private @linear_not_congruent(tensor<256xf32, #tile.linear<"(4,32,2):(1,4)">>)

// -----

// expected-error @+1 {{invalid linear layout "(4,32):(1,4)": expected 3 top-level modes (values, lanes, warps), got 2}}
func.func private @linear_two_modes(tensor<128xf32, #tile.linear<"(4,32):(1,4)">>)

// -----

// expected-error @+1 {{linear layout lane mode has 16 entries, but a warp has 32 or 64 threads}}
func.func private @linear_lanes(tensor<128xf32, #tile.linear<"(4,16,2):(1,4,64)">>)

// -----

// expected-error @+1 {{linear layout maps to element 128, outside a tile of 128 elements}}
func.func private @linear_outside(tensor<128xf32, #tile.linear<"(4,32,2):(1,4,128)">>)

// -----

// expected-error @+1 {{linear layout does not cover the tile: element 4 is held by no thread}}
func.func private @linear_not_covering(tensor<256xf32, #tile.linear<"(4,32,2):(1,8,0)">>)

// -----

//===----------------------------------------------------------------------===//
// #tile.shared_layout
//===----------------------------------------------------------------------===//

// expected-error @+1 {{shared layout: vec, perPhase and maxPhase must be powers of two}}
func.func private @shared_vec(!tile.shared<64x64xf16, #tile.shared_layout<vec = 3, perPhase = 1, maxPhase = 8, order = [1, 0], padding = 0>>)

// -----

// expected-error @+1 {{shared layout: vec, perPhase and maxPhase must be powers of two}}
func.func private @shared_per_phase(!tile.shared<64x64xf16, #tile.shared_layout<vec = 8, perPhase = 0, maxPhase = 8, order = [1, 0], padding = 0>>)

// -----

// expected-error @+1 {{shared layout: vec, perPhase and maxPhase must be powers of two}}
func.func private @shared_max_phase(!tile.shared<64x64xf16, #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 6, order = [1, 0], padding = 0>>)

// -----

// expected-error @+1 {{shared layout: order must be a permutation}}
func.func private @shared_order(!tile.shared<64x64xf16, #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 0], padding = 0>>)

// -----

//===----------------------------------------------------------------------===//
// Kernel attributes.
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'tile.num_warps' must be a positive integer}}
func.func @num_warps_zero() attributes {tile.kernel, tile.num_warps = 0 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.num_stages' must be a positive integer}}
func.func @num_stages_zero() attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 0 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.num_warps' must be a positive integer}}
func.func @num_warps_string() attributes {tile.kernel, tile.num_warps = "four"} {
  return
}

// -----

// expected-error @+1 {{'tile.warp_size' must be a positive integer}}
func.func @warp_size_negative() attributes {tile.kernel, tile.warp_size = -32 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.warp_size' must be 32 or 64}}
func.func @warp_size_48() attributes {tile.kernel, tile.warp_size = 48 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.warp_size' must be 32 or 64}}
module attributes {tile.warp_size = 16 : i32} {
}

// -----

// expected-error @+1 {{'tile.params' must be a dictionary of integer parameters}}
func.func @params_not_integers() attributes {tile.kernel, tile.params = {BLOCK = 128 : i32, NAME = "x"}} {
  return
}

// -----

// expected-error @+1 {{'tile.wide_rounded_sums' must be a unit attribute}}
func.func @wide_rounded_sums_valued() attributes {tile.kernel, tile.wide_rounded_sums = 1 : i32} {
  return
}

// -----

// expected-error @+1 {{unknown tile dialect attribute 'tile.num_threads'}}
func.func @unknown_attribute() attributes {tile.kernel, tile.num_threads = 128 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.kernel' applies to func.func only}}
module attributes {tile.kernel} {
}

// -----

// expected-error @+1 {{a tile kernel returns no values; write results through pointers}}
func.func @kernel_with_result() -> i32 attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  return %c0 : i32
}

// -----

func.func @num_warps_mismatch() attributes {tile.kernel, tile.num_warps = 4 : i32} {
  // expected-error @+1 {{'tile.arange' op uses a layout for 8 warps in a kernel of 4 warps}}
  %0 = tile.arange 0 to 256 : tensor<256xi32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [8], order = [0]>>
  return
}

// -----

// Slices count the warps of their parent.
func.func @num_warps_mismatch_slice(%v: tensor<32x32xf32>) attributes {tile.kernel, tile.num_warps = 2 : i32} {
  // expected-error @+1 {{'tile.reduce' op uses a layout for 4 warps in a kernel of 2 warps}}
  %0 = tile.reduce sum %v axis = 1 : tensor<32x32xf32> -> tensor<32xf32, #tile.slice<dim = 1, parent = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerBlock = [4, 1], order = [1, 0]>>>
  return
}

// -----

func.func @mma_warps_mismatch(%x: tensor<64x64xf32>) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  // expected-error @+1 {{'tile.convert_layout' op uses a layout for 4 warps in a kernel of 8 warps}}
  %0 = tile.convert_layout %x : tensor<64x64xf32> -> tensor<64x64xf32, #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [2, 2]>>
  return
}

// -----

func.func @linear_warps_mismatch() attributes {tile.kernel, tile.num_warps = 4 : i32} {
  // expected-error @+1 {{'tile.arange' op uses a layout for 2 warps in a kernel of 4 warps}}
  %0 = tile.arange 0 to 256 : tensor<256xi32, #tile.linear<"(4,32,2):(1,4,128)">>
  return
}

// -----

func.func @warp_size_mismatch() attributes {tile.kernel, tile.warp_size = 32 : i32} {
  // expected-error @+1 {{'tile.arange' op uses a layout for 64-thread warps, but the kernel's warps have 32 threads}}
  %0 = tile.arange 0 to 256 : tensor<256xi32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>>
  return
}

// -----

// An MFMA atom runs on 64-thread waves.
func.func @mfma_in_32_thread_kernel(%x: tensor<32x32xf32>) attributes {tile.kernel, tile.warp_size = 32 : i32} {
  // expected-error @+1 {{'tile.convert_layout' op uses a layout for 64-thread warps, but the kernel's warps have 32 threads}}
  %0 = tile.convert_layout %x : tensor<32x32xf32> -> tensor<32x32xf32, #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [1, 1]>>
  return
}

// -----

// The kernel's warp size comes from its module when the kernel has none.
module attributes {tile.warp_size = 64 : i32} {
  func.func @module_warp_size() attributes {tile.kernel} {
    // expected-error @+1 {{'tile.arange' op uses a layout for 32-thread warps, but the kernel's warps have 64 threads}}
    %0 = tile.arange 0 to 256 : tensor<256xi32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>>
    return
  }
}

// -----

// The kernel's own attribute wins over the module's.
module attributes {tile.warp_size = 32 : i32} {
  func.func @kernel_overrides_module() attributes {tile.kernel, tile.warp_size = 64 : i32} {
    // expected-error @+1 {{'tile.arange' op uses a layout for 32-thread warps, but the kernel's warps have 64 threads}}
    %0 = tile.arange 0 to 256 : tensor<256xi32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>>
    return
  }
}

// -----

// Kernel arguments are checked too (they used to be skipped: only op results were).
// expected-error @+1 {{'func.func' op uses a layout for 8 warps in a kernel of 4 warps}}
func.func @argument_layout(%x: tensor<256xf32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [8], order = [0]>>)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  return
}

// -----

// ... and so are the block arguments of nested regions.
#b32 = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>
func.func @region_argument(%x: tensor<4xi32, #b32>) attributes {tile.kernel, tile.warp_size = 64 : i32} {
  // expected-error @+1 {{'scf.execute_region' op uses a layout for 32-thread warps, but the kernel's warps have 64 threads}}
  scf.execute_region {
    cf.br ^bb1(%x : tensor<4xi32, #b32>)
  ^bb1(%u: tensor<4xi32, #b32>):
    scf.yield
  }
  return
}
