// tile-assign-layouts for 32-thread warps (NVIDIA): the same 128 bits per thread, and the
// kernel records its warp size.
// RUN: %wavetile-opt %s -split-input-file -tile-assign-layouts=warp-size=32 | FileCheck %s

// CHECK-DAG:   #[[W8:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>
// CHECK-LABEL: func.func @coalesced
// CHECK-SAME:    tile.warp_size = 32 : i32
// CHECK:         tile.load {{.*}} -> tensor<1024xbf16, #[[W8]]>
func.func @coalesced(%x: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %r = tile.arange 0 to 1024 : tensor<1024xi32>
  %v = tile.load %x[%r] : !tile.ptr<bf16>[tensor<1024xi32>] -> tensor<1024xbf16>
  return
}

// -----

// A sum over the last dimension with a row for each warp (the skinny GEMM's [rows, columns, K]
// products, K unpacked from bytes of two codes) stays within warps: warps split the 32
// columns, 16 lanes split K in runs of 32 codes (16 loaded bytes). W's bytes load 16 per
// thread; X's row is loaded and unpacked by every warp in the layout it is broadcast in;
// nothing converts, and the loop carries the sum in the reduction's layout.
// CHECK-DAG:   #[[SUM:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 1, 32], threadsPerWarp = [1, 2, 16], warpsPerBlock = [1, 4, 1], order = [2, 1, 0]>
// CHECK-DAG:   #[[BYTES:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 16, 2], threadsPerWarp = [2, 16, 1], warpsPerBlock = [4, 1, 1], order = [2, 1, 0]>
// CHECK-DAG:   #[[CODES:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 32], threadsPerWarp = [2, 16], warpsPerBlock = [4, 1], order = [1, 0]>
// CHECK-DAG:   #[[COLUMNS:[a-z_0-9]+]] = #tile.slice<dim = 2, parent = #[[SUM]]>
// CHECK-DAG:   #[[LOADED:[a-z_0-9]+]] = #tile.slice<dim = 2, parent = #[[BYTES]]>
// CHECK-LABEL: func.func @row_sums
// CHECK:         %[[ZERO:.*]] = tile.splat {{.*}} -> tensor<1x32xf32, #[[COLUMNS]]>
// CHECK:         scf.for {{.*}} iter_args({{.*}} = %[[ZERO]]) -> (tensor<1x32xf32, #[[COLUMNS]]>)
// CHECK-NOT:       convert_layout
// CHECK:           tile.load {{.*}} -> tensor<1x256xi8, #[[LOADED]]>
// CHECK-NOT:       convert_layout
// CHECK:           tile.load {{.*}} -> tensor<32x256xi8, #[[LOADED]]>
// CHECK-NOT:       convert_layout
// CHECK:           tile.reshape {{.*}} -> tensor<1x512xi32, #[[CODES]]>
// CHECK-NOT:       convert_layout
// CHECK:           tile.reshape {{.*}} -> tensor<32x512xi32, #[[CODES]]>
// CHECK-NOT:       convert_layout
// CHECK:           tile.reduce sum {{.*}} : tensor<1x32x512xf32, #[[SUM]]> -> tensor<1x32xf32, #[[COLUMNS]]>
// CHECK-NOT:       convert_layout
// CHECK:           scf.yield
func.func @row_sums(%x: !tile.ptr<i8>, %w: !tile.ptr<i8>, %out: !tile.ptr<f32>, %k: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c256 = arith.constant 256 : i32
  %zero = arith.constant 0.0 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<1x32xf32>
  %bytes = tile.arange 0 to 256 : tensor<256xi32>
  %cols = tile.arange 0 to 32 : tensor<32xi32>
  %r = scf.for %i = %c0 to %k step %c256 iter_args(%acc = %acc0) -> (tensor<1x32xf32>) : i32 {
    %start = tile.splat %i : i32 -> tensor<256xi32>
    %at = arith.addi %start, %bytes : tensor<256xi32>
    %at2 = tile.expand_dims %at axis = 0 : tensor<256xi32> -> tensor<1x256xi32>
    %xb = tile.load %x[%at2] : !tile.ptr<i8>[tensor<1x256xi32>] -> tensor<1x256xi8>
    %col2 = tile.expand_dims %cols axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
    %stride = tile.splat %k : i32 -> tensor<32x1xi32>
    %rowat = arith.muli %col2, %stride : tensor<32x1xi32>
    %rowat2 = tile.broadcast %rowat : tensor<32x1xi32> -> tensor<32x256xi32>
    %at3 = tile.broadcast %at2 : tensor<1x256xi32> -> tensor<32x256xi32>
    %wat = arith.addi %rowat2, %at3 : tensor<32x256xi32>
    %wb = tile.load %w[%wat] : !tile.ptr<i8>[tensor<32x256xi32>] -> tensor<32x256xi8>
    %shift = tile.arange 0 to 2 : tensor<2xi32>
    %four = arith.constant dense<4> : tensor<2xi32>
    %shifts = arith.muli %shift, %four : tensor<2xi32>
    %shifts2 = tile.expand_dims %shifts axis = 0 : tensor<2xi32> -> tensor<1x2xi32>
    %shifts3 = tile.expand_dims %shifts2 axis = 0 : tensor<1x2xi32> -> tensor<1x1x2xi32>
    %xshift = tile.broadcast %shifts3 : tensor<1x1x2xi32> -> tensor<1x256x2xi32>
    %wshift = tile.broadcast %shifts3 : tensor<1x1x2xi32> -> tensor<32x256x2xi32>
    %xi = arith.extsi %xb : tensor<1x256xi8> to tensor<1x256xi32>
    %xi3 = tile.expand_dims %xi axis = 2 : tensor<1x256xi32> -> tensor<1x256x1xi32>
    %xi4 = tile.broadcast %xi3 : tensor<1x256x1xi32> -> tensor<1x256x2xi32>
    %xn = arith.shrsi %xi4, %xshift : tensor<1x256x2xi32>
    %xc = tile.reshape %xn : tensor<1x256x2xi32> -> tensor<1x512xi32>
    %xf = arith.sitofp %xc : tensor<1x512xi32> to tensor<1x512xf32>
    %wi = arith.extsi %wb : tensor<32x256xi8> to tensor<32x256xi32>
    %wi3 = tile.expand_dims %wi axis = 2 : tensor<32x256xi32> -> tensor<32x256x1xi32>
    %wi4 = tile.broadcast %wi3 : tensor<32x256x1xi32> -> tensor<32x256x2xi32>
    %wn = arith.shrsi %wi4, %wshift : tensor<32x256x2xi32>
    %wc = tile.reshape %wn : tensor<32x256x2xi32> -> tensor<32x512xi32>
    %wf = arith.sitofp %wc : tensor<32x512xi32> to tensor<32x512xf32>
    %xe = tile.expand_dims %xf axis = 1 : tensor<1x512xf32> -> tensor<1x1x512xf32>
    %xe2 = tile.broadcast %xe : tensor<1x1x512xf32> -> tensor<1x32x512xf32>
    %we = tile.expand_dims %wf axis = 0 : tensor<32x512xf32> -> tensor<1x32x512xf32>
    %p = arith.mulf %xe2, %we : tensor<1x32x512xf32>
    %s = tile.reduce sum %p axis = 2 : tensor<1x32x512xf32> -> tensor<1x32xf32>
    %n = arith.addf %acc, %s : tensor<1x32xf32>
    scf.yield %n : tensor<1x32xf32>
  }
  %o = tile.expand_dims %cols axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  tile.store %r, %out[%o] : tensor<1x32xf32>, !tile.ptr<f32>[tensor<1x32xi32>]
  return
}

// -----

// Scale groups (the integer skinny GEMM): codes decoded in byte pairs and regrouped by one
// reshape into [columns, groups, 32], byte products summed over the 32, the sums scaled per
// group. The 32 codes of a group (16 loaded bytes) stay in one thread: the reshape's source
// runs are found through it, both operands are decoded in the sum's layout, and the scales
// load in the sums' layout, which the loop carries: nothing converts.
// CHECK-DAG:   #[[GROUPS:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 1, 32], threadsPerWarp = [2, 16, 1], warpsPerBlock = [4, 1, 1], order = [2, 1, 0]>
// CHECK-DAG:   #[[PAIRS:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 16, 2], threadsPerWarp = [2, 16, 1], warpsPerBlock = [4, 1, 1], order = [2, 1, 0]>
// CHECK-DAG:   #[[SUMS:[a-z_0-9]+]] = #tile.slice<dim = 2, parent = #[[GROUPS]]>
// CHECK-DAG:   #[[BYTES:[a-z_0-9]+]] = #tile.slice<dim = 2, parent = #[[PAIRS]]>
// CHECK-LABEL: func.func @group_sums
// CHECK:         scf.for {{.*}} -> (tensor<32x16xf32, #[[SUMS]]>)
// CHECK-NOT:       convert_layout
// CHECK:           tile.load {{.*}} -> tensor<1x256xi8, #[[BYTES]]>
// CHECK-NOT:       convert_layout
// CHECK:           tile.load {{.*}} -> tensor<32x256xi8, #[[BYTES]]>
// CHECK-NOT:       convert_layout
// CHECK:           tile.load {{.*}} -> tensor<32x16xf32, #[[SUMS]]>
// CHECK-NOT:       convert_layout
// CHECK:           tile.reshape {{.*}} : tensor<32x256x2xi8, #[[PAIRS]]> -> tensor<32x16x32xi8, #[[GROUPS]]>
// CHECK-NOT:       convert_layout
// CHECK:           tile.reduce sum {{.*}} : tensor<32x16x32xi32, #[[GROUPS]]> -> tensor<32x16xi32, #[[SUMS]]>
// CHECK-NOT:       convert_layout
// CHECK:           scf.yield
func.func @group_sums(%x: !tile.ptr<i8>, %w: !tile.ptr<i8>, %ws: !tile.ptr<f32>, %out: !tile.ptr<f32>, %k: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c256 = arith.constant 256 : i32
  %zero = arith.constant 0.0 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<32x16xf32>
  %bytes = tile.arange 0 to 256 : tensor<256xi32>
  %cols = tile.arange 0 to 32 : tensor<32xi32>
  %groups = tile.arange 0 to 16 : tensor<16xi32>
  %r = scf.for %i = %c0 to %k step %c256 iter_args(%acc = %acc0) -> (tensor<32x16xf32>) : i32 {
    %start = tile.splat %i : i32 -> tensor<256xi32>
    %at = arith.addi %start, %bytes : tensor<256xi32>
    %at2 = tile.expand_dims %at axis = 0 : tensor<256xi32> -> tensor<1x256xi32>
    %xb = tile.load %x[%at2] : !tile.ptr<i8>[tensor<1x256xi32>] -> tensor<1x256xi8>
    %col2 = tile.expand_dims %cols axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
    %stride = tile.splat %k : i32 -> tensor<32x1xi32>
    %rowat = arith.muli %col2, %stride : tensor<32x1xi32>
    %rowat2 = tile.broadcast %rowat : tensor<32x1xi32> -> tensor<32x256xi32>
    %at3 = tile.broadcast %at2 : tensor<1x256xi32> -> tensor<32x256xi32>
    %wat = arith.addi %rowat2, %at3 : tensor<32x256xi32>
    %wb = tile.load %w[%wat] : !tile.ptr<i8>[tensor<32x256xi32>] -> tensor<32x256xi8>
    %g2 = tile.expand_dims %groups axis = 0 : tensor<16xi32> -> tensor<1x16xi32>
    %g3 = tile.broadcast %g2 : tensor<1x16xi32> -> tensor<32x16xi32>
    %sat = arith.addi %g3, %g3 : tensor<32x16xi32>
    %scale = tile.load %ws[%sat] : !tile.ptr<f32>[tensor<32x16xi32>] -> tensor<32x16xf32>
    %shift = tile.arange 0 to 2 : tensor<2xi32>
    %eight = arith.constant dense<8> : tensor<2xi32>
    %shifts = arith.muli %shift, %eight : tensor<2xi32>
    %shifts16 = arith.trunci %shifts : tensor<2xi32> to tensor<2xi16>
    %shifts2 = tile.expand_dims %shifts16 axis = 0 : tensor<2xi16> -> tensor<1x2xi16>
    %shifts3 = tile.expand_dims %shifts2 axis = 0 : tensor<1x2xi16> -> tensor<1x1x2xi16>
    %xshift = tile.broadcast %shifts3 : tensor<1x1x2xi16> -> tensor<1x256x2xi16>
    %wshift = tile.broadcast %shifts3 : tensor<1x1x2xi16> -> tensor<32x256x2xi16>
    %xv = tile.lookup_nibbles %xb table [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12] : tensor<1x256xi8> -> tensor<1x256xi16>
    %xv3 = tile.expand_dims %xv axis = 2 : tensor<1x256xi16> -> tensor<1x256x1xi16>
    %xv4 = tile.broadcast %xv3 : tensor<1x256x1xi16> -> tensor<1x256x2xi16>
    %xn = arith.shrsi %xv4, %xshift : tensor<1x256x2xi16>
    %xc = arith.trunci %xn : tensor<1x256x2xi16> to tensor<1x256x2xi8>
    %xg = tile.reshape %xc : tensor<1x256x2xi8> -> tensor<1x16x32xi8>
    %xg2 = tile.broadcast %xg : tensor<1x16x32xi8> -> tensor<32x16x32xi8>
    %wv = tile.lookup_nibbles %wb table [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12] : tensor<32x256xi8> -> tensor<32x256xi16>
    %wv3 = tile.expand_dims %wv axis = 2 : tensor<32x256xi16> -> tensor<32x256x1xi16>
    %wv4 = tile.broadcast %wv3 : tensor<32x256x1xi16> -> tensor<32x256x2xi16>
    %wn = arith.shrsi %wv4, %wshift : tensor<32x256x2xi16>
    %wc = arith.trunci %wn : tensor<32x256x2xi16> to tensor<32x256x2xi8>
    %wg = tile.reshape %wc : tensor<32x256x2xi8> -> tensor<32x16x32xi8>
    %xi = arith.extsi %xg2 : tensor<32x16x32xi8> to tensor<32x16x32xi32>
    %wi = arith.extsi %wg : tensor<32x16x32xi8> to tensor<32x16x32xi32>
    %p = arith.muli %xi, %wi : tensor<32x16x32xi32>
    %s = tile.reduce sum %p axis = 2 : tensor<32x16x32xi32> -> tensor<32x16xi32>
    %sf = arith.sitofp %s : tensor<32x16xi32> to tensor<32x16xf32>
    %scaled = arith.mulf %sf, %scale : tensor<32x16xf32>
    %n = arith.addf %acc, %scaled : tensor<32x16xf32>
    scf.yield %n : tensor<32x16xf32>
  }
  %ca = tile.expand_dims %cols axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %cb = tile.broadcast %ca : tensor<32x1xi32> -> tensor<32x16xi32>
  tile.store %r, %out[%cb] : tensor<32x16xf32>, !tile.ptr<f32>[tensor<32x16xi32>]
  return
}

// -----

// Pairs split off a loaded run (GPT-J RoPE's even and odd elements) are no scale groups: the
// sums over them leave what they are combined with (cos) in its own blocked layout.
// CHECK-DAG:   #[[COS:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerBlock = [2, 1], order = [1, 0]>
// CHECK-LABEL: func.func @pairs
// CHECK:         tile.load {{.*}} -> tensor<1x32xf32, #[[COS]]>
func.func @pairs(%x: !tile.ptr<bf16>, %cos: !tile.ptr<f32>, %out: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 2 : i32} {
  %rows = tile.arange 0 to 16 : tensor<16xi32>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
  %c64 = arith.constant dense<64> : tensor<16x1xi32>
  %rat = arith.muli %r2, %c64 : tensor<16x1xi32>
  %ratb = tile.broadcast %rat : tensor<16x1xi32> -> tensor<16x64xi32>
  %cols = tile.arange 0 to 64 : tensor<64xi32>
  %c2 = tile.expand_dims %cols axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %cb = tile.broadcast %c2 : tensor<1x64xi32> -> tensor<16x64xi32>
  %at = arith.addi %ratb, %cb : tensor<16x64xi32>
  %v = tile.load %x[%at] : !tile.ptr<bf16>[tensor<16x64xi32>] -> tensor<16x64xbf16>
  %f = arith.extf %v : tensor<16x64xbf16> to tensor<16x64xf32>
  %p = tile.reshape %f : tensor<16x64xf32> -> tensor<16x32x2xf32>
  %which = tile.arange 0 to 2 : tensor<2xi32>
  %w2 = tile.expand_dims %which axis = 0 : tensor<2xi32> -> tensor<1x2xi32>
  %w3 = tile.expand_dims %w2 axis = 0 : tensor<1x2xi32> -> tensor<1x1x2xi32>
  %zero = arith.constant dense<0> : tensor<1x1x2xi32>
  %even = arith.cmpi eq, %w3, %zero : tensor<1x1x2xi32>
  %evenb = tile.broadcast %even : tensor<1x1x2xi1> -> tensor<16x32x2xi1>
  %fz = arith.constant dense<0.0> : tensor<16x32x2xf32>
  %sel = arith.select %evenb, %p, %fz : tensor<16x32x2xi1>, tensor<16x32x2xf32>
  %e = tile.reduce sum %sel axis = 2 : tensor<16x32x2xf32> -> tensor<16x32xf32>
  %h = tile.arange 0 to 32 : tensor<32xi32>
  %h2 = tile.expand_dims %h axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %c = tile.load %cos[%h2] : !tile.ptr<f32>[tensor<1x32xi32>] -> tensor<1x32xf32>
  %cb2 = tile.broadcast %c : tensor<1x32xf32> -> tensor<16x32xf32>
  %y = arith.mulf %e, %cb2 : tensor<16x32xf32>
  %y3 = tile.expand_dims %y axis = 2 : tensor<16x32xf32> -> tensor<16x32x1xf32>
  %yb = tile.broadcast %y3 : tensor<16x32x1xf32> -> tensor<16x32x2xf32>
  %yo = tile.reshape %yb : tensor<16x32x2xf32> -> tensor<16x64xf32>
  tile.store %yo, %out[%at] : tensor<16x64xf32>, !tile.ptr<f32>[tensor<16x64xi32>]
  return
}

// -----

// Rows of at most four 16-byte vectors stay whole in a thread when every lane can have one
// (MXFP4 groups of 32 bf16 in 64 threads): the reduction needs no lane exchanges.
// CHECK-DAG:   #[[WHOLE:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 32], threadsPerWarp = [32, 1], warpsPerBlock = [2, 1], order = [1, 0]>
// CHECK-LABEL: func.func @whole_groups
// CHECK:         tile.load {{.*}} -> tensor<64x32xbf16, #[[WHOLE]]>
// CHECK:         tile.reduce max {{.*}} : tensor<64x32xbf16, #[[WHOLE]]>
func.func @whole_groups(%x: !tile.ptr<bf16>, %out: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 2 : i32} {
  %g = tile.arange 0 to 64 : tensor<64xi32>
  %g2 = tile.expand_dims %g axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %c32 = arith.constant dense<32> : tensor<64x1xi32>
  %base = arith.muli %g2, %c32 : tensor<64x1xi32>
  %baseb = tile.broadcast %base : tensor<64x1xi32> -> tensor<64x32xi32>
  %j = tile.arange 0 to 32 : tensor<32xi32>
  %j2 = tile.expand_dims %j axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %jb = tile.broadcast %j2 : tensor<1x32xi32> -> tensor<64x32xi32>
  %at = arith.addi %baseb, %jb : tensor<64x32xi32>
  %v = tile.load %x[%at] : !tile.ptr<bf16>[tensor<64x32xi32>] -> tensor<64x32xbf16>
  %m = tile.reduce max %v axis = 1 : tensor<64x32xbf16> -> tensor<64xbf16>
  tile.store %m, %out[%g] : tensor<64xbf16>, !tile.ptr<bf16>[tensor<64xi32>]
  return
}

// -----

// Longer rows (64 bf16, eight vectors) keep runs of one vector a lane.
// CHECK-DAG:   #[[RUNS:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerBlock = [2, 1], order = [1, 0]>
// CHECK-LABEL: func.func @long_rows
// CHECK:         tile.reduce max {{.*}} : tensor<64x64xbf16, #[[RUNS]]>
func.func @long_rows(%x: !tile.ptr<bf16>, %out: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 2 : i32} {
  %g = tile.arange 0 to 64 : tensor<64xi32>
  %g2 = tile.expand_dims %g axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %c64 = arith.constant dense<64> : tensor<64x1xi32>
  %base = arith.muli %g2, %c64 : tensor<64x1xi32>
  %baseb = tile.broadcast %base : tensor<64x1xi32> -> tensor<64x64xi32>
  %j = tile.arange 0 to 64 : tensor<64xi32>
  %j2 = tile.expand_dims %j axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %jb = tile.broadcast %j2 : tensor<1x64xi32> -> tensor<64x64xi32>
  %at = arith.addi %baseb, %jb : tensor<64x64xi32>
  %v = tile.load %x[%at] : !tile.ptr<bf16>[tensor<64x64xi32>] -> tensor<64x64xbf16>
  %m = tile.reduce max %v axis = 1 : tensor<64x64xbf16> -> tensor<64xbf16>
  tile.store %m, %out[%g] : tensor<64xbf16>, !tile.ptr<bf16>[tensor<64xi32>]
  return
}
