// tile-pipeline-loops: a K loop's dot operands, loaded from global memory, are prefetched
// tile.num_stages - 1 iterations ahead through a ring of shared buffers.
// RUN: %wavetile-opt %s -split-input-file -allow-unregistered-dialect -tile-pipeline-loops | FileCheck %s
// RUN: %wavetile-opt %s -split-input-file -allow-unregistered-dialect -tile-pipeline-loops=mode=registers | FileCheck %s --check-prefix=REG
// RUN: %wavetile-opt %s -split-input-file -allow-unregistered-dialect -tile-pipeline-loops=mode=off | FileCheck %s --check-prefix=OFF
// CDNA's by-depth mode: this three-stage loop gets async copies, the same loop with two
// stages gets the register ring.
// RUN: %wavetile-opt %s -split-input-file -allow-unregistered-dialect -tile-pipeline-loops=mode=by-depth | FileCheck %s
// RUN: sed 's/tile.num_stages = 3/tile.num_stages = 2/' %s | %wavetile-opt -split-input-file -allow-unregistered-dialect -tile-pipeline-loops=mode=by-depth | FileCheck %s --check-prefix=REG
// RUN: not %wavetile-opt %s -split-input-file -allow-unregistered-dialect -tile-pipeline-loops=mode=sometimes 2>&1 | FileCheck %s --check-prefix=BADMODE

// Three stages, two loads: a buffer_load (copied from the same view, which keeps its range
// check) and a masked pointer load.
// CHECK-LABEL: func.func @k_loop
// CHECK-SAME:    (%[[A:.*]]: !tile.ptr<bf16>, %[[B:.*]]: !tile.ptr<bf16>, %[[LEN:.*]]: i32, %[[K:.*]]: i32)
// CHECK:         %[[VIEW:.*]] = tile.make_buffer %[[A]], %[[LEN]]
// CHECK:         %[[RA:.*]] = tile.shared_alloc : !tile.shared<3x16x32xbf16>
// CHECK:         %[[RB:.*]] = tile.shared_alloc : !tile.shared<3x32x16xbf16>
// Prologue: iterations 0 and 1 into slots 0 and 1, masked off past K.
// CHECK:         %[[IN0:.*]] = arith.cmpi slt, %{{.*}}, %[[K]] : i32
// CHECK:         %[[M0:.*]] = tile.splat %[[IN0]] : i1 -> tensor<16x32xi1>
// CHECK:         %[[SA0:.*]] = tile.shared_slice %[[RA]][%[[S0:.*]]] : !tile.shared<3x16x32xbf16> -> !tile.shared<16x32xbf16>
// CHECK:         tile.async_copy %[[VIEW]][%{{.*}}], %[[SA0]] mask %[[M0]] : !tile.buffer<bf16>[tensor<16x32xi32>]
// CHECK:         %[[SB0:.*]] = tile.shared_slice %[[RB]][%[[S0]]]
// CHECK:         tile.async_copy %[[B]][%{{.*}}], %[[SB0]] mask
// CHECK:         arith.cmpi slt
// CHECK:         tile.async_copy %[[VIEW]]
// CHECK:         tile.async_copy %[[B]]
// CHECK:         scf.for %[[IV:.*]] = %[[LB:.*]] to %[[K]] step %[[STEP:.*]] iter_args
// CHECK:           %[[ITER:.*]] = arith.divsi %{{.*}}, %[[STEP]] : i32
// CHECK-NEXT:      tile.async_wait pending = 2
// CHECK-NEXT:      tile.barrier
// CHECK:           %[[AHEAD:.*]] = arith.addi %[[ITER]], %{{.*}} : i32
// CHECK:           %[[NEXT:.*]] = arith.remsi %[[AHEAD]], %{{.*}} : i32
// CHECK:           %[[SAN:.*]] = tile.shared_slice %[[RA]][%[[NEXT]]]
// CHECK:           tile.async_copy %[[VIEW]][%{{.*}}], %[[SAN]] mask
// CHECK:           %[[SBN:.*]] = tile.shared_slice %[[RB]][%[[NEXT]]]
// CHECK:           tile.async_copy %[[B]][%{{.*}}], %[[SBN]] mask
// CHECK-NOT:       tile.buffer_load
// CHECK-NOT:       tile.load
// CHECK:           %[[SLOT:.*]] = arith.remsi %[[ITER]], %{{.*}} : i32
// CHECK:           %[[EA:.*]] = tile.shared_slice %[[RA]][%[[SLOT]]]
// CHECK:           %[[TA:.*]] = tile.shared_load %[[EA]] : !tile.shared<16x32xbf16> -> tensor<16x32xbf16>
// CHECK:           %[[EB:.*]] = tile.shared_slice %[[RB]][%[[SLOT]]]
// CHECK:           %[[TB:.*]] = tile.shared_load %[[EB]]
// CHECK:           tile.dot %[[TA]], %[[TB]]
// CHECK:         tile.async_wait pending = 0
// Registers (CDNA): a two-slot ring; iteration 0 is stored before the loop, iteration 1 is
// loaded into registers the loop carries; each iteration reads its slot, multiplies, stores
// the carried tiles into the next slot, loads iteration k+2 and passes one barrier.
// REG-LABEL:   func.func @k_loop
// REG:           %[[RA:.*]] = tile.shared_alloc : !tile.shared<2x16x32xbf16>
// REG:           %[[RB:.*]] = tile.shared_alloc : !tile.shared<2x32x16xbf16>
// REG:           %[[A0:.*]] = tile.buffer_load {{.*}} mask
// REG:           %[[B0:.*]] = tile.load {{.*}} mask
// REG:           tile.shared_store %[[A0]], %{{.*}} : tensor<16x32xbf16>, !tile.shared<16x32xbf16>
// REG:           tile.shared_store %[[B0]]
// REG:           %[[A1:.*]] = tile.buffer_load {{.*}} mask
// REG:           %[[B1:.*]] = tile.load {{.*}} mask
// REG-NEXT:      tile.barrier
// REG-NEXT:      scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[RA1:.*]] = %[[A1]], %[[RB1:.*]] = %[[B1]])
// REG-NOT:         tile.async_copy
// REG:             %[[TA:.*]] = tile.shared_load
// REG:             %[[TB:.*]] = tile.shared_load
// REG:             %[[D:.*]] = tile.dot %[[TA]], %[[TB]]
// REG:             tile.shared_store %[[RA1]]
// REG:             tile.shared_store %[[RB1]]
// REG:             %[[A2:.*]] = tile.buffer_load
// REG:             %[[B2:.*]] = tile.load
// REG-NEXT:        tile.barrier
// REG-NEXT:        scf.yield %[[D]], %[[A2]], %[[B2]]
// BADMODE: tile-pipeline-loops: mode must be async-copies, registers, by-depth or off, got 'sometimes'
// OFF-LABEL:   func.func @k_loop
// OFF-NOT:       tile.async_copy
// OFF:           tile.buffer_load
func.func @k_loop(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %len: i32, %k: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<16x16xf32>
  %view = tile.make_buffer %a, %len : !tile.ptr<bf16> -> !tile.buffer<bf16>
  %rows = tile.arange 0 to 16 : tensor<16xi32>
  %kr = tile.arange 0 to 32 : tensor<32xi32>
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %r = scf.for %k0 = %c0 to %k step %c32 iter_args(%acc = %acc0) -> (tensor<16x16xf32>) : i32 {
    %k0s = tile.splat %k0 : i32 -> tensor<32xi32>
    %ks = arith.addi %k0s, %kr : tensor<32xi32>
    %rr = tile.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
    %rr2 = tile.broadcast %rr : tensor<16x1xi32> -> tensor<16x32xi32>
    %kc = tile.expand_dims %ks axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
    %kc2 = tile.broadcast %kc : tensor<1x32xi32> -> tensor<16x32xi32>
    %offa = arith.addi %rr2, %kc2 : tensor<16x32xi32>
    %ta = tile.buffer_load %view[%offa] : !tile.buffer<bf16>[tensor<16x32xi32>] -> tensor<16x32xbf16>
    %kk = tile.splat %k : i32 -> tensor<32xi32>
    %inK = arith.cmpi slt, %ks, %kk : tensor<32xi32>
    %kr2 = tile.expand_dims %ks axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
    %offb = tile.broadcast %kr2 : tensor<32x1xi32> -> tensor<32x16xi32>
    %mk = tile.expand_dims %inK axis = 1 : tensor<32xi1> -> tensor<32x1xi1>
    %mb = tile.broadcast %mk : tensor<32x1xi1> -> tensor<32x16xi1>
    %tb = tile.load %b[%offb] mask %mb : !tile.ptr<bf16>[tensor<32x16xi32>], tensor<32x16xi1> -> tensor<32x16xbf16>
    %d = tile.dot %ta, %tb, %acc : tensor<16x32xbf16>, tensor<32x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  "test.use"(%r) : (tensor<16x16xf32>) -> ()
  return
}

// -----

// Left as written: no tile.num_stages, a loop that stores, a load with a nonzero or -0
// `other` (async copies fill with zero bits), and a load whose offsets come from a
// loop-carried value.
// CHECK-LABEL: func.func @not_pipelined
// CHECK-NOT:     tile.async_copy
// CHECK-NOT:     tile.shared_alloc
// CHECK-LABEL: func.func @stores
// CHECK-NOT:     tile.async_copy
// CHECK-LABEL: func.func @other
// CHECK-NOT:     tile.async_copy
// CHECK-LABEL: func.func @negative_zero_other
// CHECK-NOT:     tile.async_copy
// CHECK-LABEL: func.func @carried_offsets
// CHECK-NOT:     tile.async_copy
// CHECK:         return
func.func @not_pipelined(%p: !tile.ptr<bf16>, %k: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<16x16xf32>
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %o = tile.arange 0 to 256 : tensor<256xi32>
  %o2 = tile.reshape %o : tensor<256xi32> -> tensor<16x16xi32>
  %r = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %acc0) -> (tensor<16x16xf32>) : i32 {
    %is = tile.splat %i : i32 -> tensor<16x16xi32>
    %off = arith.addi %o2, %is : tensor<16x16xi32>
    %t = tile.load %p[%off] : !tile.ptr<bf16>[tensor<16x16xi32>] -> tensor<16x16xbf16>
    %d = tile.dot %t, %t, %acc : tensor<16x16xbf16>, tensor<16x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  "test.use"(%r) : (tensor<16x16xf32>) -> ()
  return
}

func.func @stores(%p: !tile.ptr<bf16>, %q: !tile.ptr<f32>, %k: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 2 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<16x16xf32>
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %o = tile.arange 0 to 256 : tensor<256xi32>
  %o2 = tile.reshape %o : tensor<256xi32> -> tensor<16x16xi32>
  %r = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %acc0) -> (tensor<16x16xf32>) : i32 {
    %is = tile.splat %i : i32 -> tensor<16x16xi32>
    %off = arith.addi %o2, %is : tensor<16x16xi32>
    %t = tile.load %p[%off] : !tile.ptr<bf16>[tensor<16x16xi32>] -> tensor<16x16xbf16>
    %d = tile.dot %t, %t, %acc : tensor<16x16xbf16>, tensor<16x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    tile.store %d, %q[%off] : tensor<16x16xf32>, !tile.ptr<f32>[tensor<16x16xi32>]
    scf.yield %d : tensor<16x16xf32>
  }
  "test.use"(%r) : (tensor<16x16xf32>) -> ()
  return
}

func.func @other(%p: !tile.ptr<bf16>, %k: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 2 : i32} {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : bf16
  %acc0 = tile.splat %zero : f32 -> tensor<16x16xf32>
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %o = tile.arange 0 to 256 : tensor<256xi32>
  %o2 = tile.reshape %o : tensor<256xi32> -> tensor<16x16xi32>
  %r = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %acc0) -> (tensor<16x16xf32>) : i32 {
    %is = tile.splat %i : i32 -> tensor<16x16xi32>
    %off = arith.addi %o2, %is : tensor<16x16xi32>
    %ks = tile.splat %k : i32 -> tensor<16x16xi32>
    %m = arith.cmpi slt, %off, %ks : tensor<16x16xi32>
    %t = tile.load %p[%off] mask %m other %one : !tile.ptr<bf16>[tensor<16x16xi32>], tensor<16x16xi1> other bf16 -> tensor<16x16xbf16>
    %d = tile.dot %t, %t, %acc : tensor<16x16xbf16>, tensor<16x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  "test.use"(%r) : (tensor<16x16xf32>) -> ()
  return
}

func.func @negative_zero_other(%p: !tile.ptr<bf16>, %k: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 2 : i32} {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant -0.0 : bf16
  %acc0 = tile.splat %zero : f32 -> tensor<16x16xf32>
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %o = tile.arange 0 to 256 : tensor<256xi32>
  %o2 = tile.reshape %o : tensor<256xi32> -> tensor<16x16xi32>
  %r = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %acc0) -> (tensor<16x16xf32>) : i32 {
    %is = tile.splat %i : i32 -> tensor<16x16xi32>
    %off = arith.addi %o2, %is : tensor<16x16xi32>
    %ks = tile.splat %k : i32 -> tensor<16x16xi32>
    %m = arith.cmpi slt, %off, %ks : tensor<16x16xi32>
    %t = tile.load %p[%off] mask %m other %one : !tile.ptr<bf16>[tensor<16x16xi32>], tensor<16x16xi1> other bf16 -> tensor<16x16xbf16>
    %d = tile.dot %t, %t, %acc : tensor<16x16xbf16>, tensor<16x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  "test.use"(%r) : (tensor<16x16xf32>) -> ()
  return
}

func.func @carried_offsets(%p: !tile.ptr<bf16>, %k: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 2 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<16x16xf32>
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %o = tile.arange 0 to 256 : tensor<256xi32>
  %o2 = tile.reshape %o : tensor<256xi32> -> tensor<16x16xi32>
  %step = tile.splat %c16 : i32 -> tensor<16x16xi32>
  %r:2 = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %acc0, %off = %o2) -> (tensor<16x16xf32>, tensor<16x16xi32>) : i32 {
    %t = tile.load %p[%off] : !tile.ptr<bf16>[tensor<16x16xi32>] -> tensor<16x16xbf16>
    %d = tile.dot %t, %t, %acc : tensor<16x16xbf16>, tensor<16x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    %next = arith.addi %off, %step : tensor<16x16xi32>
    scf.yield %d, %next : tensor<16x16xf32>, tensor<16x16xi32>
  }
  "test.use"(%r#0) : (tensor<16x16xf32>) -> ()
  return
}

// -----

// A +0 `other` (what tensor loads fill masked-off elements with) is what async copies
// leave, so the load is prefetched; the register ring re-issues it with the same fill.
// CHECK-LABEL: func.func @zero_other
// CHECK:         tile.async_copy
// CHECK:         scf.for
// CHECK:           tile.async_copy
// CHECK-NOT:       tile.load
// CHECK:           tile.shared_load
// REG-LABEL:   func.func @zero_other
// REG:           %[[Z:.*]] = arith.constant 0.000000e+00 : bf16
// REG-NEXT:      tile.load {{.*}} mask %{{.*}} other %[[Z]]
// REG:           scf.for
// REG:             tile.shared_load
// REG:             %[[Z2:.*]] = arith.constant 0.000000e+00 : bf16
// REG-NEXT:        tile.load {{.*}} mask %{{.*}} other %[[Z2]]
func.func @zero_other(%p: !tile.ptr<bf16>, %k: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<16x16xf32>
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %o = tile.arange 0 to 256 : tensor<256xi32>
  %o2 = tile.reshape %o : tensor<256xi32> -> tensor<16x16xi32>
  %r = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %acc0) -> (tensor<16x16xf32>) : i32 {
    %fill = arith.constant 0.0 : bf16
    %is = tile.splat %i : i32 -> tensor<16x16xi32>
    %off = arith.addi %o2, %is : tensor<16x16xi32>
    %ks = tile.splat %k : i32 -> tensor<16x16xi32>
    %m = arith.cmpi slt, %off, %ks : tensor<16x16xi32>
    %t = tile.load %p[%off] mask %m other %fill : !tile.ptr<bf16>[tensor<16x16xi32>], tensor<16x16xi1> other bf16 -> tensor<16x16xbf16>
    %d = tile.dot %t, %t, %acc : tensor<16x16xbf16>, tensor<16x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  "test.use"(%r) : (tensor<16x16xf32>) -> ()
  return
}

// -----

// Block scales: a load the dot does not read (a column of scales for the block's sum) is
// prefetched through a ring of its own, as the operand is; a loop without a dot is left as
// written.
// CHECK-LABEL: func.func @block_scales
// CHECK-DAG:     tile.shared_alloc : !tile.shared<3x16x16xbf16>
// CHECK-DAG:     tile.shared_alloc : !tile.shared<3x16x1xf32>
// CHECK:         scf.for
// CHECK-COUNT-2:   tile.async_copy
// CHECK-NOT:       tile.load
// CHECK:           %[[T:.*]] = tile.shared_load %{{.*}} : !tile.shared<16x16xbf16> -> tensor<16x16xbf16>
// CHECK:           %[[D:.*]] = tile.dot %[[T]], %[[T]]
// CHECK:           %[[S:.*]] = tile.shared_load %{{.*}} : !tile.shared<16x1xf32> -> tensor<16x1xf32>
// CHECK:           %[[B:.*]] = tile.broadcast %[[S]]
// CHECK:           arith.mulf %[[D]], %[[B]]
// CHECK-LABEL: func.func @no_dot
// CHECK-NOT:     tile.async_copy
// CHECK-NOT:     tile.shared_alloc
// CHECK:         tile.load
func.func @block_scales(%p: !tile.ptr<bf16>, %s: !tile.ptr<f32>, %k: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<16x16xf32>
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %o = tile.arange 0 to 256 : tensor<256xi32>
  %o2 = tile.reshape %o : tensor<256xi32> -> tensor<16x16xi32>
  %rows = tile.arange 0 to 16 : tensor<16xi32>
  %rows2 = tile.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
  %r = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %acc0) -> (tensor<16x16xf32>) : i32 {
    %is = tile.splat %i : i32 -> tensor<16x16xi32>
    %off = arith.addi %o2, %is : tensor<16x16xi32>
    %t = tile.load %p[%off] : !tile.ptr<bf16>[tensor<16x16xi32>] -> tensor<16x16xbf16>
    %d = tile.dot %t, %t, %acc0 : tensor<16x16xbf16>, tensor<16x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    %block = tile.splat %i : i32 -> tensor<16x1xi32>
    %soff = arith.addi %rows2, %block : tensor<16x1xi32>
    %scale = tile.load %s[%soff] : !tile.ptr<f32>[tensor<16x1xi32>] -> tensor<16x1xf32>
    %wide = tile.broadcast %scale : tensor<16x1xf32> -> tensor<16x16xf32>
    %scaled = arith.mulf %d, %wide : tensor<16x16xf32>
    %sum = arith.addf %acc, %scaled : tensor<16x16xf32>
    scf.yield %sum : tensor<16x16xf32>
  }
  "test.use"(%r) : (tensor<16x16xf32>) -> ()
  return
}

func.func @no_dot(%s: !tile.ptr<f32>, %k: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.num_stages = 3 : i32} {
  %zero = arith.constant 0.0 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<16xf32>
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %o = tile.arange 0 to 16 : tensor<16xi32>
  %r = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %acc0) -> (tensor<16xf32>) : i32 {
    %is = tile.splat %i : i32 -> tensor<16xi32>
    %off = arith.addi %o, %is : tensor<16xi32>
    %v = tile.load %s[%off] : !tile.ptr<f32>[tensor<16xi32>] -> tensor<16xf32>
    %sum = arith.addf %acc, %v : tensor<16xf32>
    scf.yield %sum : tensor<16xf32>
  }
  "test.use"(%r) : (tensor<16xf32>) -> ()
  return
}
