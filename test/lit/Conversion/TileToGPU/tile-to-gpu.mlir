// convert-tile-to-gpu: kernels become gpu.funcs of per-thread vectors; vector memory access
// with a per-element fallback; reductions through shuffles and cross-warp shared memory;
// owner masks for replicated elements; layout changes in registers or through shared memory.
// RUN: %wavetile-opt %s -split-input-file -allow-unregistered-dialect -convert-tile-to-gpu=target=gfx942 -canonicalize -cse -verify-diagnostics | FileCheck %s

#l = #tile.blocked<sizePerThread = [4], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>

// 1024 elements, 4 per thread: 16-byte loads and stores when the group is aligned and active,
// element by element otherwise. The reduction crosses 64 lanes and 4 warps (4 partials in 16
// bytes of shared memory): lane distances 1 and 2 by DPP quad_perm swaps, 4 and 8 by
// row_half_mirror / row_mirror (the lower lane bits are combined by then, so lane ^ 7 and
// lane ^ 15 hold what lane ^ 4 and lane ^ 8 do), 16 and 32 by xor shuffles. Grid sizes are
// the three trailing arguments. Across warps, lane i reads warp (i mod 4)'s partial and the
// quad swaps combine the four.
// CHECK:       gpu.module @wavetile
// CHECK-LABEL: gpu.func @copy
// CHECK-SAME:    (%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32, %[[GY:.*]]: i32, %{{.*}}: i32)
// CHECK-SAME:    workgroup(%[[SCRATCH:.*]] : memref<16xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-SAME:    kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK:         %[[BLOCK:.*]] = gpu.block_id x
// CHECK:         %[[PID:.*]] = arith.index_castui %[[BLOCK]] : index to i32
// CHECK:         scf.if
// CHECK:           llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK:         else
// CHECK-COUNT-4:   llvm.load {{.*}} : !llvm.ptr<1> -> f32
// CHECK:       amdgpu.dpp %[[P0:.*]] %[[P0]] quad_perm([1 : i32, 0 : i32, 3 : i32, 2 : i32]) : f32
// CHECK:       amdgpu.dpp %[[P1:.*]] %[[P1]] quad_perm([2 : i32, 3 : i32, 0 : i32, 1 : i32]) : f32
// CHECK:       amdgpu.dpp %[[P2:.*]] %[[P2]] row_half_mirror : f32
// CHECK:       amdgpu.dpp %[[P3:.*]] %[[P3]] row_mirror : f32
// CHECK:       gpu.shuffle  xor %{{.*}}, %c16_i32, %c64_i32 : f32
// CHECK:       gpu.shuffle  xor %{{.*}}, %c32_i32, %c64_i32 : f32
// CHECK:         gpu.barrier
// CHECK:         memref.view %[[SCRATCH]]
// CHECK:         gpu.barrier
// CHECK:         %[[W:.*]] = memref.load
// CHECK:         amdgpu.dpp %[[W]] %[[W]] quad_perm([1 : i32, 0 : i32, 3 : i32, 2 : i32]) : f32
// CHECK:         amdgpu.dpp %[[W2:.*]] %[[W2]] quad_perm([2 : i32, 3 : i32, 0 : i32, 1 : i32]) : f32
// CHECK:         llvm.store {{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK:         "test.use"(%[[PID]], %[[GY]], %{{.*}})
func.func @copy(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 64 : i32} {
  %pid = tile.program_id 0
  %r = tile.arange 0 to 1024 : tensor<1024xi32, #l>
  %v = tile.load %x[%r] : !tile.ptr<f32>[tensor<1024xi32, #l>] -> tensor<1024xf32, #l>
  %s = tile.reduce sum %v axis = 0 : tensor<1024xf32, #l> -> f32
  tile.store %v, %y[%r] : tensor<1024xf32, #l>, !tile.ptr<f32>[tensor<1024xi32, #l>]
  %count = tile.num_programs 1
  "test.use"(%pid, %count, %s) : (i32, i32, f32) -> ()
  return
}

// -----

// Across warps when the lanes along the axis are not the lowest lane bits: 4 lanes of stride
// 16 hold each column, so both the in-warp butterfly and the cross-warp one (lane i reads
// warp (i / 16 mod 4)'s partial) are xor shuffles over lane distances 16 and 32.
#t = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 16], warpsPerBlock = [4, 1], order = [1, 0]>
// CHECK-LABEL: gpu.func @columns
// CHECK-COUNT-4: gpu.shuffle  xor %{{.*}}, %c16_i32, %c64_i32 : f32
// CHECK-COUNT-4: gpu.shuffle  xor %{{.*}}, %c32_i32, %c64_i32 : f32
// CHECK:         gpu.barrier
// CHECK-COUNT-4: memref.store
// CHECK:         gpu.barrier
// CHECK-COUNT-4: memref.load %{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:    gpu.shuffle  xor %{{.*}}, %c16_i32, %c64_i32 : f32
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    gpu.shuffle  xor %{{.*}}, %c32_i32, %c64_i32 : f32
func.func @columns(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 64 : i32} {
  %r = tile.arange 0 to 64 : tensor<64xi32, #tile.slice<dim = 0, parent = #t>>
  %c = tile.expand_dims %r axis = 0 : tensor<64xi32, #tile.slice<dim = 0, parent = #t>> -> tensor<1x64xi32, #t>
  %b = tile.broadcast %c : tensor<1x64xi32, #t> -> tensor<16x64xi32, #t>
  %v = tile.load %x[%b] : !tile.ptr<f32>[tensor<16x64xi32, #t>] -> tensor<16x64xf32, #t>
  %s = tile.reduce sum %v axis = 0 : tensor<16x64xf32, #t> -> tensor<64xf32, #tile.slice<dim = 0, parent = #t>>
  tile.store %s, %y[%r] : tensor<64xf32, #tile.slice<dim = 0, parent = #t>>, !tile.ptr<f32>[tensor<64xi32, #tile.slice<dim = 0, parent = #t>>]
  return
}

// -----

// Fewer lanes along the axis (one) than warps (four): every thread reads the four warps'
// partials and combines them in order.
#one = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 64], warpsPerBlock = [4, 1], order = [1, 0]>
// CHECK-LABEL: gpu.func @rows
// CHECK-NOT:     gpu.shuffle
// CHECK:         gpu.barrier
// CHECK:         memref.store
// CHECK:         gpu.barrier
// CHECK-COUNT-4: memref.load
// CHECK-NOT:     gpu.shuffle
func.func @rows(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 64 : i32} {
  %r = tile.arange 0 to 64 : tensor<64xi32, #tile.slice<dim = 0, parent = #one>>
  %c = tile.expand_dims %r axis = 0 : tensor<64xi32, #tile.slice<dim = 0, parent = #one>> -> tensor<1x64xi32, #one>
  %b = tile.broadcast %c : tensor<1x64xi32, #one> -> tensor<4x64xi32, #one>
  %v = tile.load %x[%b] : !tile.ptr<f32>[tensor<4x64xi32, #one>] -> tensor<4x64xf32, #one>
  %s = tile.reduce max %v axis = 0 : tensor<4x64xf32, #one> -> tensor<64xf32, #tile.slice<dim = 0, parent = #one>>
  tile.store %s, %y[%r] : tensor<64xf32, #tile.slice<dim = 0, parent = #one>>, !tile.ptr<f32>[tensor<64xi32, #tile.slice<dim = 0, parent = #one>>]
  return
}

// -----

// 64 elements over 256 threads: each element is held by 4 threads, and only its owner
// (unwrapped coordinate below 64) stores it.
#rep = #tile.blocked<sizePerThread = [1], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
// CHECK-LABEL: gpu.func @replicated
// CHECK-NOT:     workgroup
// CHECK:         %[[OWNER:.*]] = arith.cmpi ult, %{{.*}}, %c64_i32 : i32
// CHECK:         scf.if %[[OWNER]]
// CHECK:           llvm.store
func.func @replicated(%y: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 64 : i32} {
  %r = tile.arange 0 to 64 : tensor<64xi32, #rep>
  %c = arith.constant 1.0 : f32
  %v = tile.splat %c : f32 -> tensor<64xf32, #rep>
  tile.store %v, %y[%r] : tensor<64xf32, #rep>, !tile.ptr<f32>[tensor<64xi32, #rep>]
  return
}

// -----

// A real layout change goes through shared memory between barriers; expand_dims and
// broadcast whose layouts already give every thread what it needs stay in registers.
#a = #tile.blocked<sizePerThread = [4], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
#b = #tile.blocked<sizePerThread = [2], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
#rows = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [64, 1], warpsPerBlock = [4, 1], order = [1, 0]>
#rows1 = #tile.slice<dim = 1, parent = #rows>
// CHECK-LABEL: gpu.func @movement
// CHECK-SAME:    workgroup(%[[BUF:.*]] : memref<2048xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK:         gpu.barrier
// CHECK:         %[[VIEW:.*]] = memref.view %[[BUF]][%{{.*}}][] : memref<2048xi8, #gpu.address_space<workgroup>> to memref<512xf32, #gpu.address_space<workgroup>>
// CHECK:         vector.store %{{.*}}, %[[VIEW]][%{{.*}}] {alignment = 16 : i64} : {{.*}}, vector<4xf32>
// CHECK-NOT:     memref.store
// CHECK:         gpu.barrier
// CHECK:         vector.load %[[VIEW]][%{{.*}}] {alignment = 8 : i64} : {{.*}}, vector<2xf32>
// CHECK-NOT:     memref.load
// CHECK-NOT:     gpu.barrier
// CHECK-NOT:     memref.view
// CHECK:         gpu.return
func.func @movement(%y: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 64 : i32} {
  %r = tile.arange 0 to 512 : tensor<512xi32, #a>
  %f = arith.sitofp %r : tensor<512xi32, #a> to tensor<512xf32, #a>
  %g = tile.convert_layout %f : tensor<512xf32, #a> -> tensor<512xf32, #b>
  %i = tile.arange 0 to 256 : tensor<256xi32, #rows1>
  %e = tile.expand_dims %i axis = 1 : tensor<256xi32, #rows1> -> tensor<256x1xi32, #rows>
  %w = tile.broadcast %e : tensor<256x1xi32, #rows> -> tensor<256x4xi32, #rows>
  "test.use"(%g, %w) : (tensor<512xf32, #b>, tensor<256x4xi32, #rows>) -> ()
  return
}

// -----

func.func @no_layout(%y: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 64 : i32} {
  // expected-error @+1 {{has a tile without a blocked, slice, mma or dot-operand layout that fits it}}
  %r = tile.arange 0 to 64 : tensor<64xi32>
  return
}

// -----

#w32 = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>
// expected-error @+1 {{kernel laid out for 32-thread warps cannot run on gfx942 (64-thread warps)}}
func.func @wrong_warp(%y: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 32 : i32} {
  %r = tile.arange 0 to 128 : tensor<128xi32, #w32>
  return
}

// -----

// A kernel argument without a per-thread form (a tile with no layout) is an error, not a crash.
// expected-error @+1 {{GPU kernel argument 0 has type 'tensor<64xf32>', which has no per-thread form; kernels take pointers, buffer views, scalars and laid-out tiles}}
func.func @tile_argument(%t: tensor<64xf32>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  return
}

// -----

// Masks are computed lane by lane (i1 vectors would be packed into integers by backends):
// a compare of a 4-register tile becomes four scalar compares, no vector compare.
#lanes = #tile.blocked<sizePerThread = [4], threadsPerWarp = [64], warpsPerBlock = [1], order = [0]>
// CHECK-LABEL: gpu.func @masks_lane_by_lane
// CHECK-COUNT-4: arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK-NOT:     arith.cmpi {{.*}} : vector<4xi32>
func.func @masks_lane_by_lane(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %i = tile.arange 0 to 256 : tensor<256xi32, #lanes>
  %nn = tile.splat %n : i32 -> tensor<256xi32, #lanes>
  %m = arith.cmpi slt, %i, %nn : tensor<256xi32, #lanes>
  %c = arith.constant dense<1.0> : tensor<256xf32, #lanes>
  tile.store %c, %p[%i] mask %m : tensor<256xf32, #lanes>, !tile.ptr<f32>[tensor<256xi32, #lanes>], tensor<256xi1, #lanes>
  return
}

// -----

// Words taken apart into their 16-bit halves (each word broadcast over a pair, shifted by 0 and
// 16, truncated) are the words reinterpreted: one vector.bitcast, no shifts or truncations.
// With the pair dimension fastest in registers (@halves_in_order) the halves are already in
// order; with it slowest (@halves_permuted) a register permutation follows.
#pairs = #tile.blocked<sizePerThread = [2, 2], threadsPerWarp = [64, 1], warpsPerBlock = [1, 1], order = [1, 0]>
#pairs_t = #tile.blocked<sizePerThread = [2, 2], threadsPerWarp = [64, 1], warpsPerBlock = [1, 1], order = [0, 1]>
#words = #tile.slice<dim = 1, parent = #pairs>
#words_t = #tile.slice<dim = 1, parent = #pairs_t>
#halves = #tile.slice<dim = 0, parent = #pairs>
#halves_t = #tile.slice<dim = 0, parent = #pairs_t>
// CHECK-LABEL: gpu.func @halves_in_order
// CHECK:         %[[LOADED:.*]]:2 = scf.if
// CHECK:         %[[WORDS:.*]] = vector.from_elements %[[LOADED]]#0, %[[LOADED]]#1 : vector<2xi32>
// CHECK-NEXT:    %[[HALVES:.*]] = vector.bitcast %[[WORDS]] : vector<2xi32> to vector<4xi16>
// CHECK-NEXT:    arith.bitcast %[[HALVES]] : vector<4xi16> to vector<4xbf16>
// CHECK-NOT:     arith.shrsi
// CHECK-LABEL: gpu.func @halves_permuted
// CHECK:         %[[LOADED:.*]]:2 = scf.if
// CHECK:         %[[WORDS:.*]] = vector.from_elements %[[LOADED]]#0, %[[LOADED]]#1 : vector<2xi32>
// CHECK-NEXT:    %[[HALVES:.*]] = vector.bitcast %[[WORDS]] : vector<2xi32> to vector<4xi16>
// CHECK-NEXT:    vector.shuffle %[[HALVES]], %[[HALVES]] [0, 2, 1, 3] : vector<4xi16>, vector<4xi16>
// CHECK-NOT:     arith.shrui
func.func @halves_in_order(%p: !tile.ptr<i32>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %i = tile.arange 0 to 128 : tensor<128xi32, #words>
  %w = tile.load %p[%i] : !tile.ptr<i32>[tensor<128xi32, #words>] -> tensor<128xi32, #words>
  %e = tile.expand_dims %w axis = 1 : tensor<128xi32, #words> -> tensor<128x1xi32, #pairs>
  %b = tile.broadcast %e : tensor<128x1xi32, #pairs> -> tensor<128x2xi32, #pairs>
  %h = tile.arange 0 to 2 : tensor<2xi32, #halves>
  %sixteen = arith.constant dense<16> : tensor<2xi32, #halves>
  %bits = arith.muli %h, %sixteen : tensor<2xi32, #halves>
  %se = tile.expand_dims %bits axis = 0 : tensor<2xi32, #halves> -> tensor<1x2xi32, #pairs>
  %s = tile.broadcast %se : tensor<1x2xi32, #pairs> -> tensor<128x2xi32, #pairs>
  %shifted = arith.shrsi %b, %s : tensor<128x2xi32, #pairs>
  %t = arith.trunci %shifted : tensor<128x2xi32, #pairs> to tensor<128x2xi16, #pairs>
  %f = arith.bitcast %t : tensor<128x2xi16, #pairs> to tensor<128x2xbf16, #pairs>
  "test.use"(%f) : (tensor<128x2xbf16, #pairs>) -> ()
  return
}
func.func @halves_permuted(%p: !tile.ptr<i32>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %i = tile.arange 0 to 128 : tensor<128xi32, #words_t>
  %w = tile.load %p[%i] : !tile.ptr<i32>[tensor<128xi32, #words_t>] -> tensor<128xi32, #words_t>
  %e = tile.expand_dims %w axis = 1 : tensor<128xi32, #words_t> -> tensor<128x1xi32, #pairs_t>
  %b = tile.broadcast %e : tensor<128x1xi32, #pairs_t> -> tensor<128x2xi32, #pairs_t>
  %h = tile.arange 0 to 2 : tensor<2xi32, #halves_t>
  %sixteen = arith.constant dense<16> : tensor<2xi32, #halves_t>
  %bits = arith.muli %h, %sixteen : tensor<2xi32, #halves_t>
  %se = tile.expand_dims %bits axis = 0 : tensor<2xi32, #halves_t> -> tensor<1x2xi32, #pairs_t>
  %s = tile.broadcast %se : tensor<1x2xi32, #pairs_t> -> tensor<128x2xi32, #pairs_t>
  %shifted = arith.shrui %b, %s : tensor<128x2xi32, #pairs_t>
  %t = arith.trunci %shifted : tensor<128x2xi32, #pairs_t> to tensor<128x2xi16, #pairs_t>
  "test.use"(%t) : (tensor<128x2xi16, #pairs_t>) -> ()
  return
}

// -----

// bf16 widens with arith.extf on CDNA (LLVM's AMDGPU lowering shifts and masks itself); NVIDIA
// widens from 32-bit words (tile-to-gpu-bf16.mlir).
#eight_bf16 = #tile.blocked<sizePerThread = [8], threadsPerWarp = [64], warpsPerBlock = [1], order = [0]>
// CHECK-LABEL: gpu.func @bf16_widened
// CHECK:         arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK-NOT:     arith.andi
func.func @bf16_widened(%p: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %i = tile.arange 0 to 512 : tensor<512xi32, #eight_bf16>
  %x = tile.load %p[%i] : !tile.ptr<bf16>[tensor<512xi32, #eight_bf16>] -> tensor<512xbf16, #eight_bf16>
  %f = arith.extf %x : tensor<512xbf16, #eight_bf16> to tensor<512xf32, #eight_bf16>
  "test.use"(%f) : (tensor<512xf32, #eight_bf16>) -> ()
  return
}

// -----

// A contractible f32 sum of products is a chain of FMAs on CDNA too (v_fmac_f32; the NVIDIA
// cases: tile-to-gpu-float-products.mlir).
#sq = #tile.blocked<sizePerThread = [4], threadsPerWarp = [64], warpsPerBlock = [1], order = [0]>
// CHECK-LABEL: gpu.func @sum_of_squares
// CHECK:         arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : vector<4xf32>
// CHECK-COUNT-3: math.fma
func.func @sum_of_squares(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %i = tile.arange 0 to 256 : tensor<256xi32, #sq>
  %x = tile.load %p[%i] : !tile.ptr<f32>[tensor<256xi32, #sq>] -> tensor<256xf32, #sq>
  %sq = arith.mulf %x, %x fastmath<contract> : tensor<256xf32, #sq>
  %sum = tile.reduce sum %sq axis = 0 : tensor<256xf32, #sq> -> f32
  "test.use"(%sum) : (f32) -> ()
  return
}
