// tile-assign-layouts: coalesced defaults, forward propagation, slices for reductions, index
// arithmetic built in the layout its memory op wants, conversions where a user needs another
// layout, and the errors.
// RUN: %wavetile-opt %s -split-input-file -tile-assign-layouts=warp-size=64 -verify-diagnostics | FileCheck %s

// 2048 bf16 elements over 4 warps of 64: 8 per thread (128 bits), also for the i32 offsets
// and the i1 mask of the same shape; the reduction of the f32 copy gives a scalar.
// CHECK-DAG:   #[[V8:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [8], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
// CHECK-LABEL: func.func @coalesced
// CHECK-SAME:    tile.warp_size = 64 : i32
// CHECK:         tile.arange 0 to 2048 : tensor<2048xi32, #[[V8]]>
// CHECK:         arith.cmpi slt, {{.*}} : tensor<2048xi32, #[[V8]]>
// CHECK:         tile.load {{.*}} -> tensor<2048xbf16, #[[V8]]>
// CHECK:         arith.extf {{.*}} to tensor<2048xf32, #[[V8]]>
// CHECK:         tile.reduce sum {{.*}} : tensor<2048xf32, #[[V8]]> -> f32
func.func @coalesced(%x: !tile.ptr<bf16>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %r = tile.arange 0 to 2048 : tensor<2048xi32>
  %nn = tile.splat %n : i32 -> tensor<2048xi32>
  %m = arith.cmpi slt, %r, %nn : tensor<2048xi32>
  %v = tile.load %x[%r] mask %m : !tile.ptr<bf16>[tensor<2048xi32>], tensor<2048xi1> -> tensor<2048xbf16>
  %f = arith.extf %v : tensor<2048xbf16> to tensor<2048xf32>
  %s = tile.reduce sum %f axis = 0 : tensor<2048xf32> -> f32
  return
}

// -----

// Loads size the run, not narrower stores: a bf16 row stored as fp8 codes keeps 8 elements a
// thread (each warp-wide load uses whole sectors; the codes go out 8 bytes a thread). A
// narrow load under a wider store keeps the load's 16, and where nothing is loaded the
// narrowest store decides.
// CHECK-DAG:   #[[HALVES:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [8], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
// CHECK-DAG:   #[[BYTES:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [16], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
// CHECK-LABEL: func.func @loads_size_runs
// CHECK:         tile.load {{.*}} -> tensor<4096xbf16, #[[HALVES]]>
// CHECK:         tile.store {{.*}} : tensor<4096xf8E4M3FN, #[[HALVES]]>
// CHECK:         tile.load {{.*}} -> tensor<8192xi8, #[[BYTES]]>
// CHECK:         tile.store {{.*}} : tensor<8192xbf16, #[[BYTES]]>
// CHECK:         tile.store {{.*}} : tensor<16384xi8, #[[BYTES]]>
func.func @loads_size_runs(%x: !tile.ptr<bf16>, %q: !tile.ptr<f8E4M3FN>, %b: !tile.ptr<i8>)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %r = tile.arange 0 to 4096 : tensor<4096xi32>
  %v = tile.load %x[%r] : !tile.ptr<bf16>[tensor<4096xi32>] -> tensor<4096xbf16>
  %c = arith.truncf %v : tensor<4096xbf16> to tensor<4096xf8E4M3FN>
  tile.store %c, %q[%r] : tensor<4096xf8E4M3FN>, !tile.ptr<f8E4M3FN>[tensor<4096xi32>]
  %r8 = tile.arange 0 to 8192 : tensor<8192xi32>
  %i = tile.load %b[%r8] : !tile.ptr<i8>[tensor<8192xi32>] -> tensor<8192xi8>
  %w = arith.sitofp %i : tensor<8192xi8> to tensor<8192xbf16>
  tile.store %w, %x[%r8] : tensor<8192xbf16>, !tile.ptr<bf16>[tensor<8192xi32>]
  %r16 = tile.arange 0 to 16384 : tensor<16384xi32>
  %z = arith.constant 0 : i8
  %zs = tile.splat %z : i8 -> tensor<16384xi8>
  tile.store %zs, %b[%r16] : tensor<16384xi8>, !tile.ptr<i8>[tensor<16384xi32>]
  return
}

// -----

// A tile too small for a vector per thread: one element each, the block pattern replicated.
// A 2-D reduction keeps its result in the slice of the input layout. A store of it takes it
// from there: its offsets are built again in the slice. An elementwise use with a tile of
// the default 1-D layout (not an index computation) converts the slice to it.
// CHECK-DAG:   #[[SMALL:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
// CHECK-DAG:   #[[TWO_D:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 16], warpsPerBlock = [4, 1], order = [1, 0]>
// CHECK-DAG:   #[[ROWS:[a-z_0-9]+]] = #tile.slice<dim = 1, parent = #[[TWO_D]]>
// CHECK-LABEL: func.func @slices
// CHECK:         %[[SUM:.*]] = tile.reduce sum {{.*}} axis = 1 : tensor<16x64xf32, #[[TWO_D]]> -> tensor<16xf32, #[[ROWS]]>
// CHECK:         %[[LOADED:.*]] = tile.load {{.*}} -> tensor<16xf32, #[[SMALL]]>
// CHECK:         %[[CONV:.*]] = tile.convert_layout %[[SUM]] : tensor<16xf32, #[[ROWS]]> -> tensor<16xf32, #[[SMALL]]>
// CHECK:         arith.addf %[[LOADED]], %[[CONV]] : tensor<16xf32, #[[SMALL]]>
// CHECK:         %[[IOTA:.*]] = tile.arange 0 to 16 : tensor<16xi32, #[[ROWS]]>
// CHECK:         tile.store %[[SUM]], {{.*}}[%[[IOTA]]] : tensor<16xf32, #[[ROWS]]>
func.func @slices(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c = arith.constant 1.0 : f32
  %t = tile.splat %c : f32 -> tensor<16x64xf32>
  %s = tile.reduce sum %t axis = 1 : tensor<16x64xf32> -> tensor<16xf32>
  %i = tile.arange 0 to 16 : tensor<16xi32>
  %l = tile.load %p[%i] : !tile.ptr<f32>[tensor<16xi32>] -> tensor<16xf32>
  %a = arith.addf %l, %s : tensor<16xf32>
  tile.store %s, %p[%i] : tensor<16xf32>, !tile.ptr<f32>[tensor<16xi32>]
  tile.store %a, %p[%i] : tensor<16xf32>, !tile.ptr<f32>[tensor<16xi32>]
  return
}

// -----

// Loop-carried tiles keep the layout of their initial value; a pinned layout is kept and
// propagates forward through elementwise users.
// CHECK-DAG:   #[[PINNED:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
// CHECK-DAG:   #[[DEFAULT:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [2], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
// CHECK-LABEL: func.func @carried
// CHECK:         %[[Z:.*]] = tile.splat {{.*}} -> tensor<512xf32, #[[DEFAULT]]>
// CHECK:         scf.for {{.*}} iter_args({{.*}} = %[[Z]]) -> (tensor<512xf32, #[[DEFAULT]]>)
// CHECK:           arith.addf {{.*}} : tensor<512xf32, #[[DEFAULT]]>
// CHECK:         %[[P:.*]] = tile.convert_layout %[[Z]] : tensor<512xf32, #[[DEFAULT]]> -> tensor<512xf32, #[[PINNED]]>
// CHECK:         arith.mulf %[[P]], %[[P]] : tensor<512xf32, #[[PINNED]]>
#pinned = #tile.blocked<sizePerThread = [1], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
func.func @carried(%n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c = arith.constant 0.0 : f32
  %z = tile.splat %c : f32 -> tensor<512xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<512xf32>) : i32 {
    %next = arith.addf %acc, %acc : tensor<512xf32>
    scf.yield %next : tensor<512xf32>
  }
  %p = tile.convert_layout %z : tensor<512xf32> -> tensor<512xf32, #pinned>
  %sq = arith.mulf %p, %p : tensor<512xf32, #pinned>
  return
}

// -----

// A while loop carries its tiles in the layout of their initial value on both sides of the
// condition and after the loop.
// CHECK-DAG:   #[[DEFAULT:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [2], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
// CHECK-LABEL: func.func @while_carried
// CHECK:         %[[Z:.*]] = tile.splat {{.*}} -> tensor<512xf32, #[[DEFAULT]]>
// CHECK:         %[[W:.*]]:2 = scf.while (%[[B:.*]] = %[[Z]], %{{.*}} = %{{.*}}) : (tensor<512xf32, #[[DEFAULT]]>, i32) -> (tensor<512xf32, #[[DEFAULT]]>, i32)
// CHECK:           tile.reduce max %[[B]] axis = 0 : tensor<512xf32, #[[DEFAULT]]> -> f32
// CHECK:           scf.condition(%{{.*}}) %[[B]], %{{.*}} : tensor<512xf32, #[[DEFAULT]]>, i32
// CHECK:         } do {
// CHECK:         ^bb0(%[[A:.*]]: tensor<512xf32, #[[DEFAULT]]>, %{{.*}}: i32):
// CHECK:           %[[D:.*]] = arith.addf %[[A]], %[[A]] : tensor<512xf32, #[[DEFAULT]]>
// CHECK:           scf.yield %[[D]], %{{.*}} : tensor<512xf32, #[[DEFAULT]]>, i32
// CHECK:         tile.reduce sum %[[W]]#0 axis = 0 : tensor<512xf32, #[[DEFAULT]]> -> f32
func.func @while_carried(%limit: f32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c = arith.constant 1.0 : f32
  %z = tile.splat %c : f32 -> tensor<512xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%v = %z, %i = %c0) : (tensor<512xf32>, i32) -> (tensor<512xf32>, i32) {
    %m = tile.reduce max %v axis = 0 : tensor<512xf32> -> f32
    %go = arith.cmpf olt, %m, %limit : f32
    scf.condition(%go) %v, %i : tensor<512xf32>, i32
  } do {
  ^bb0(%a: tensor<512xf32>, %j: i32):
    %d = arith.addf %a, %a : tensor<512xf32>
    %k = arith.addi %j, %c1 : i32
    scf.yield %d, %k : tensor<512xf32>, i32
  }
  %s = tile.reduce sum %r#0 axis = 0 : tensor<512xf32> -> f32
  return
}

// -----

// Index and mask arithmetic (aranges, splats, constants through expand_dims, broadcasts and
// elementwise ops) is built in the layout its memory op wants instead of being converted:
// the K arange feeds A's columns and mask (one copy, sliced from A's layout) and B's rows
// (another copy, sliced from B's layout). No convert_layout remains.
// CHECK-DAG:   #[[LA:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [16, 4], warpsPerBlock = [4, 1], order = [1, 0]>
// CHECK-DAG:   #[[LB:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerBlock = [4, 1], order = [1, 0]>
// CHECK-DAG:   #[[ACOLS:[a-z_0-9]+]] = #tile.slice<dim = 0, parent = #[[LA]]>
// CHECK-DAG:   #[[BROWS:[a-z_0-9]+]] = #tile.slice<dim = 1, parent = #[[LB]]>
// CHECK-LABEL: func.func @index_per_layout
// CHECK-NOT:     tile.convert_layout
// CHECK-DAG:     %[[KA:.*]] = tile.arange 0 to 32 : tensor<32xi32, #[[ACOLS]]>
// CHECK-DAG:     %[[KB:.*]] = tile.arange 0 to 32 : tensor<32xi32, #[[BROWS]]>
// CHECK:         tile.expand_dims %[[KA]] axis = 0 : tensor<32xi32, #[[ACOLS]]> -> tensor<1x32xi32, #[[LA]]>
// CHECK:         arith.cmpi slt, %[[KA]], {{.*}} : tensor<32xi32, #[[ACOLS]]>
// CHECK:         tile.load {{.*}} -> tensor<64x32xbf16, #[[LA]]>
// CHECK:         tile.expand_dims %[[KB]] axis = 1 : tensor<32xi32, #[[BROWS]]> -> tensor<32x1xi32, #[[LB]]>
// CHECK:         tile.load {{.*}} -> tensor<32x64xbf16, #[[LB]]>
// CHECK-NOT:     tile.convert_layout
func.func @index_per_layout(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %ld: i32, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %k = tile.arange 0 to 32 : tensor<32xi32>
  %rows = tile.arange 0 to 64 : tensor<64xi32>
  %lds = tile.splat %ld : i32 -> tensor<64x1xi32>
  %r = tile.expand_dims %rows axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %rs = arith.muli %r, %lds : tensor<64x1xi32>
  %kc = tile.expand_dims %k axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %ra = tile.broadcast %rs : tensor<64x1xi32> -> tensor<64x32xi32>
  %ka = tile.broadcast %kc : tensor<1x32xi32> -> tensor<64x32xi32>
  %oa = arith.addi %ra, %ka : tensor<64x32xi32>
  %nn = tile.splat %n : i32 -> tensor<32xi32>
  %inK = arith.cmpi slt, %k, %nn : tensor<32xi32>
  %mk = tile.expand_dims %inK axis = 0 : tensor<32xi1> -> tensor<1x32xi1>
  %ma = tile.broadcast %mk : tensor<1x32xi1> -> tensor<64x32xi1>
  %ta = tile.load %a[%oa] mask %ma : !tile.ptr<bf16>[tensor<64x32xi32>], tensor<64x32xi1> -> tensor<64x32xbf16>
  %kr = tile.expand_dims %k axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %ldb = tile.splat %ld : i32 -> tensor<32x1xi32>
  %ks = arith.muli %kr, %ldb : tensor<32x1xi32>
  %ob = tile.broadcast %ks : tensor<32x1xi32> -> tensor<32x64xi32>
  %tb = tile.load %b[%ob] : !tile.ptr<bf16>[tensor<32x64xi32>] -> tensor<32x64xbf16>
  tile.store %tb, %b[%ob] : tensor<32x64xbf16>, !tile.ptr<bf16>[tensor<32x64xi32>]
  tile.store %ta, %a[%oa] : tensor<64x32xbf16>, !tile.ptr<bf16>[tensor<64x32xi32>]
  return
}

// -----

// Per-group amaxes: a reshape of the loaded row to [groups, 32] keeps every thread's
// elements (8 per thread: 4 threads per group of 32), the reduction's result is expanded
// back in that layout, and reshaping the broadcast scale to the row needs no conversion.
// CHECK-DAG:   #[[ROW:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [8], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
// CHECK-DAG:   #[[GROUPS:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [16, 4], warpsPerBlock = [4, 1], order = [1, 0]>
// CHECK-DAG:   #[[AMAX:[a-z_0-9]+]] = #tile.slice<dim = 1, parent = #[[GROUPS]]>
// CHECK-LABEL: func.func @groups_in_registers
// CHECK-NOT:     tile.convert_layout
// CHECK:         tile.reshape {{.*}} : tensor<2048xf32, #[[ROW]]> -> tensor<64x32xf32, #[[GROUPS]]>
// CHECK:         tile.reduce max {{.*}} -> tensor<64xf32, #[[AMAX]]>
// CHECK:         tile.expand_dims {{.*}} -> tensor<64x1xf32, #[[GROUPS]]>
// CHECK:         tile.reshape {{.*}} : tensor<64x32xf32, #[[GROUPS]]> -> tensor<2048xf32, #[[ROW]]>
// CHECK-NOT:     tile.convert_layout
func.func @groups_in_registers(%x: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %i = tile.arange 0 to 2048 : tensor<2048xi32>
  %v = tile.load %x[%i] : !tile.ptr<bf16>[tensor<2048xi32>] -> tensor<2048xbf16>
  %f = arith.extf %v : tensor<2048xbf16> to tensor<2048xf32>
  %g = tile.reshape %f : tensor<2048xf32> -> tensor<64x32xf32>
  %m = tile.reduce max %g axis = 1 : tensor<64x32xf32> -> tensor<64xf32>
  %e = tile.expand_dims %m axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %b = tile.broadcast %e : tensor<64x1xf32> -> tensor<64x32xf32>
  %r = tile.reshape %b : tensor<64x32xf32> -> tensor<2048xf32>
  %q = arith.divf %f, %r : tensor<2048xf32>
  %t = arith.truncf %q : tensor<2048xf32> to tensor<2048xbf16>
  tile.store %t, %x[%i] : tensor<2048xbf16>, !tile.ptr<bf16>[tensor<2048xi32>]
  return
}

// -----

// A loaded vector of per-group scales, expanded, broadcast and reshaped to the row, is
// loaded in the slice of the layout that reshapes to the row's in registers; a loaded row
// that is only broadcast (a weight row against rows) loads in the broadcast's layout.
// CHECK-LABEL: func.func @broadcast_sources
// CHECK-NOT:     tile.convert_layout
// CHECK:         %[[X:.*]] = tile.load {{.*}} -> tensor<2048xf32, #[[ROW:[a-z_0-9]+]]>
// CHECK:         tile.load {{.*}} -> tensor<64xf32, #[[SCALES:slice[0-9]*]]>
// CHECK:         tile.expand_dims {{.*}} : tensor<64xf32, #[[SCALES]]> -> tensor<64x1xf32, #[[G:[a-z_0-9]+]]>
// CHECK:         %[[R:.*]] = tile.reshape {{.*}} : tensor<64x32xf32, #[[G]]> -> tensor<2048xf32, #[[ROW]]>
// CHECK:         arith.mulf %[[X]], %[[R]] : tensor<2048xf32, #[[ROW]]>
// CHECK:         tile.load {{.*}} -> tensor<1x32xf32, #[[W:[a-z_0-9]+]]>
// CHECK:         tile.broadcast {{.*}} : tensor<1x32xf32, #[[W]]> -> tensor<16x32xf32, #[[W]]>
// CHECK-NOT:     tile.convert_layout
func.func @broadcast_sources(%x: !tile.ptr<f32>, %s: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %i = tile.arange 0 to 2048 : tensor<2048xi32>
  %v = tile.load %x[%i] : !tile.ptr<f32>[tensor<2048xi32>] -> tensor<2048xf32>
  %j = tile.arange 0 to 64 : tensor<64xi32>
  %scale = tile.load %s[%j] : !tile.ptr<f32>[tensor<64xi32>] -> tensor<64xf32>
  %e = tile.expand_dims %scale axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %b = tile.broadcast %e : tensor<64x1xf32> -> tensor<64x32xf32>
  %r = tile.reshape %b : tensor<64x32xf32> -> tensor<2048xf32>
  %y = arith.mulf %v, %r : tensor<2048xf32>
  tile.store %y, %x[%i] : tensor<2048xf32>, !tile.ptr<f32>[tensor<2048xi32>]
  %c = tile.arange 0 to 32 : tensor<32xi32>
  %c2 = tile.expand_dims %c axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %w = tile.load %s[%c2] : !tile.ptr<f32>[tensor<1x32xi32>] -> tensor<1x32xf32>
  %wb = tile.broadcast %w : tensor<1x32xf32> -> tensor<16x32xf32>
  %rows = tile.arange 0 to 16 : tensor<16xi32>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
  %k32 = arith.constant 32 : i32
  %ks = tile.splat %k32 : i32 -> tensor<16x1xi32>
  %rs = arith.muli %r2, %ks : tensor<16x1xi32>
  %o1 = tile.broadcast %rs : tensor<16x1xi32> -> tensor<16x32xi32>
  %o2 = tile.broadcast %c2 : tensor<1x32xi32> -> tensor<16x32xi32>
  %o = arith.addi %o1, %o2 : tensor<16x32xi32>
  %xt = tile.load %x[%o] : !tile.ptr<f32>[tensor<16x32xi32>] -> tensor<16x32xf32>
  %sum = arith.addf %xt, %wb : tensor<16x32xf32>
  tile.store %sum, %x[%o] : tensor<16x32xf32>, !tile.ptr<f32>[tensor<16x32xi32>]
  return
}

// -----

func.func @not_power_of_two(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  // expected-error @+1 {{GPU targets need power-of-two tile dimensions}}
  %i = tile.arange 0 to 100 : tensor<100xi32>
  return
}

// -----

// expected-error @+1 {{kernel needs a 'tile.num_warps' attribute}}
func.func @no_warps() attributes {tile.kernel} {
  return
}
