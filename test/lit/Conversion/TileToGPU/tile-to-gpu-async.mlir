// convert-tile-to-gpu of shared-memory multi-buffers and asynchronous copies.
// RUN: %wavetile-opt %s -convert-tile-to-gpu=target=sm_90 -canonicalize -cse | FileCheck %s --check-prefix=NV

#l = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerBlock = [1, 1], order = [1, 0]>

// A 4x64 bf16 tile, 8 contiguous elements (16 bytes) per thread: on NVIDIA one cp.async.cg
// of 16 bytes when both addresses are aligned and the group is uniformly masked (the source
// size is 0 when it is masked off, which zero-fills), else 8 single-element copies; then one
// commit group for the op, and async_wait becomes wait_group. The allocation is a view of the
// kernel's one workgroup buffer; entry 1 of the 2-entry buffer starts 256 elements into it. (On AMD the copy completes when issued; see
// Target/examples-amdgpu.test.)
// NV-LABEL: gpu.func @stage
// NV-SAME:    workgroup(%[[SHARED:.*]] : memref<1024xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// NV:         memref.view %[[SHARED]][%{{.*}}][] : memref<1024xi8, #gpu.address_space<workgroup>> to memref<512xbf16, #gpu.address_space<workgroup>>
// NV:         memref.reinterpret_cast {{.*}} to offset: [256], sizes: [256], strides: [1]
// NV:         scf.if
// NV:           %[[SIZE:.*]] = arith.select %{{.*}}, %c16_i32, %c0_i32 : i32
// NV:           nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// NV:         else
// NV-COUNT-8:   memref.store {{.*}} : memref<256xbf16, strided<[1], offset: 256>, #gpu.address_space<workgroup>>
// NV:         nvvm.cp.async.commit.group
// NV-NEXT:    nvvm.cp.async.wait.group 1
// NV-NOT:     nvvm.cp.async
func.func @stage(%a: !tile.ptr<bf16>, %k: i32) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %rows = tile.arange 0 to 4 : tensor<4xi32, #tile.slice<dim = 1, parent = #l>>
  %cols = tile.arange 0 to 64 : tensor<64xi32, #tile.slice<dim = 0, parent = #l>>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<4xi32, #tile.slice<dim = 1, parent = #l>> -> tensor<4x1xi32, #l>
  %c2 = tile.expand_dims %cols axis = 0 : tensor<64xi32, #tile.slice<dim = 0, parent = #l>> -> tensor<1x64xi32, #l>
  %ld = tile.splat %k : i32 -> tensor<4x1xi32, #l>
  %rowStart = arith.muli %r2, %ld : tensor<4x1xi32, #l>
  %rb = tile.broadcast %rowStart : tensor<4x1xi32, #l> -> tensor<4x64xi32, #l>
  %cb = tile.broadcast %c2 : tensor<1x64xi32, #l> -> tensor<4x64xi32, #l>
  %offsets = arith.addi %rb, %cb : tensor<4x64xi32, #l>
  %kk = tile.splat %k : i32 -> tensor<1x64xi32, #l>
  %inK = arith.cmpi slt, %c2, %kk : tensor<1x64xi32, #l>
  %mask = tile.broadcast %inK : tensor<1x64xi1, #l> -> tensor<4x64xi1, #l>
  %stages = tile.shared_alloc : !tile.shared<2x4x64xbf16>
  %one = arith.constant 1 : i32
  %stage = tile.shared_slice %stages[%one] : !tile.shared<2x4x64xbf16> -> !tile.shared<4x64xbf16>
  %token = tile.async_copy %a[%offsets], %stage mask %mask : !tile.ptr<bf16>[tensor<4x64xi32, #l>], !tile.shared<4x64xbf16>, tensor<4x64xi1, #l>
  tile.async_wait pending = 1
  return
}

// From a buffer view: one range check per 16-byte group (its last offset is below the count
// and the run does not wrap) instead of one per element; out-of-range groups fall back to
// element copies, each checked unsigned against the count (AMD: tile-to-gpu-async-amd.mlir).
// NV-LABEL: gpu.func @stage_from_view
// NV:         arith.cmpi ult, %[[LAST:.*]], %arg1 : i32
// NV-NEXT:    arith.cmpi uge, %[[LAST]], %{{.*}} : i32
// NV:         scf.if
// NV:           nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// NV:         else
// NV-COUNT-8:   arith.cmpi ult
// NV:         nvvm.cp.async.commit.group
func.func @stage_from_view(%a: !tile.ptr<bf16>, %len: i32, %k: i32) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %rows = tile.arange 0 to 4 : tensor<4xi32, #tile.slice<dim = 1, parent = #l>>
  %cols = tile.arange 0 to 64 : tensor<64xi32, #tile.slice<dim = 0, parent = #l>>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<4xi32, #tile.slice<dim = 1, parent = #l>> -> tensor<4x1xi32, #l>
  %c2 = tile.expand_dims %cols axis = 0 : tensor<64xi32, #tile.slice<dim = 0, parent = #l>> -> tensor<1x64xi32, #l>
  %ld = tile.splat %k : i32 -> tensor<4x1xi32, #l>
  %rowStart = arith.muli %r2, %ld : tensor<4x1xi32, #l>
  %rb = tile.broadcast %rowStart : tensor<4x1xi32, #l> -> tensor<4x64xi32, #l>
  %cb = tile.broadcast %c2 : tensor<1x64xi32, #l> -> tensor<4x64xi32, #l>
  %offsets = arith.addi %rb, %cb : tensor<4x64xi32, #l>
  %view = tile.make_buffer %a, %len : !tile.ptr<bf16> -> !tile.buffer<bf16>
  %stage = tile.shared_alloc : !tile.shared<4x64xbf16>
  %token = tile.async_copy %view[%offsets], %stage : !tile.buffer<bf16>[tensor<4x64xi32, #l>], !tile.shared<4x64xbf16>
  tile.async_wait pending = 0
  return
}

// With the kernel specialized (the base 16-byte aligned, the row stride and K multiples of
// 8), each 16-byte group is known aligned and masked whole before run time: one cp.async
// per group (4 per thread here), its source size 0 where the group's mask is off, and no
// fallback.
// NV-LABEL: gpu.func @stage_known_aligned
// NV-NOT:     scf.if
// NV-COUNT-4: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// NV-NOT:     scf.if
// NV-NOT:     memref.store
// NV:         nvvm.cp.async.commit.group
func.func @stage_known_aligned(%a: !tile.ptr<bf16> {tile.divisibility = 16 : i64}, %ld: i32 {tile.divisibility = 8 : i64},
                               %k: i32 {tile.divisibility = 8 : i64}) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %rows = tile.arange 0 to 16 : tensor<16xi32, #tile.slice<dim = 1, parent = #l>>
  %cols = tile.arange 0 to 64 : tensor<64xi32, #tile.slice<dim = 0, parent = #l>>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<16xi32, #tile.slice<dim = 1, parent = #l>> -> tensor<16x1xi32, #l>
  %c2 = tile.expand_dims %cols axis = 0 : tensor<64xi32, #tile.slice<dim = 0, parent = #l>> -> tensor<1x64xi32, #l>
  %lds = tile.splat %ld : i32 -> tensor<16x1xi32, #l>
  %rowStart = arith.muli %r2, %lds : tensor<16x1xi32, #l>
  %rb = tile.broadcast %rowStart : tensor<16x1xi32, #l> -> tensor<16x64xi32, #l>
  %cb = tile.broadcast %c2 : tensor<1x64xi32, #l> -> tensor<16x64xi32, #l>
  %offsets = arith.addi %rb, %cb : tensor<16x64xi32, #l>
  %kk = tile.splat %k : i32 -> tensor<1x64xi32, #l>
  %inK = arith.cmpi slt, %c2, %kk : tensor<1x64xi32, #l>
  %mask = tile.broadcast %inK : tensor<1x64xi1, #l> -> tensor<16x64xi1, #l>
  %stage = tile.shared_alloc : !tile.shared<16x64xbf16>
  %token = tile.async_copy %a[%offsets], %stage mask %mask : !tile.ptr<bf16>[tensor<16x64xi32, #l>], !tile.shared<16x64xbf16>, tensor<16x64xi1, #l>
  tile.async_wait pending = 0
  return
}

#col = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerBlock = [1, 1], order = [1, 0]>

// A column of f32 (a block scale per row): one 4-byte element per thread is a cp.async.ca of
// its own, its source size 0 where the row is masked off, instead of a load into registers
// and a shared store that would wait for that load.
// NV-LABEL: gpu.func @stage_scalar_column
// NV-NOT:     scf.if
// NV:         %[[SIZE:.*]] = arith.select %{{.*}}, %c4_i32, %c0_i32 : i32
// NV:         nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache =  ca, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// NV-NOT:     llvm.load
// NV-NOT:     memref.store
// NV:         nvvm.cp.async.commit.group
func.func @stage_scalar_column(%s: !tile.ptr<f32>, %ld: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %rows = tile.arange 0 to 32 : tensor<32xi32, #tile.slice<dim = 1, parent = #col>>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<32xi32, #tile.slice<dim = 1, parent = #col>> -> tensor<32x1xi32, #col>
  %lds = tile.splat %ld : i32 -> tensor<32x1xi32, #col>
  %offsets = arith.muli %r2, %lds : tensor<32x1xi32, #col>
  %ms = tile.splat %m : i32 -> tensor<32x1xi32, #col>
  %mask = arith.cmpi slt, %r2, %ms : tensor<32x1xi32, #col>
  %stage = tile.shared_alloc : !tile.shared<32x1xf32>
  %token = tile.async_copy %s[%offsets], %stage mask %mask : !tile.ptr<f32>[tensor<32x1xi32, #col>], !tile.shared<32x1xf32>, tensor<32x1xi1, #col>
  tile.async_wait pending = 0
  return
}

// From a buffer view the element's own range check joins its mask in the source size.
// NV-LABEL: gpu.func @stage_scalar_column_from_view
// NV:         %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %arg1 : i32
// NV:         %[[ACTIVE:.*]] = arith.andi %[[IN]], %{{.*}} : i1
// NV-NEXT:    %[[SIZE:.*]] = arith.select %[[ACTIVE]], %c4_i32, %c0_i32 : i32
// NV:         nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache =  ca, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
func.func @stage_scalar_column_from_view(%s: !tile.ptr<f32>, %len: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %rows = tile.arange 0 to 32 : tensor<32xi32, #tile.slice<dim = 1, parent = #col>>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<32xi32, #tile.slice<dim = 1, parent = #col>> -> tensor<32x1xi32, #col>
  %ms = tile.splat %m : i32 -> tensor<32x1xi32, #col>
  %mask = arith.cmpi slt, %r2, %ms : tensor<32x1xi32, #col>
  %view = tile.make_buffer %s, %len : !tile.ptr<f32> -> !tile.buffer<f32>
  %stage = tile.shared_alloc : !tile.shared<32x1xf32>
  %token = tile.async_copy %view[%r2], %stage mask %mask : !tile.buffer<f32>[tensor<32x1xi32, #col>], !tile.shared<32x1xf32>, tensor<32x1xi1, #col>
  tile.async_wait pending = 0
  return
}

// One f32 that every lane holds (a 128x128 block's one scale): only lane 0, its owner,
// copies it; a replica's masked-off copy would write zeros over it.
// NV-LABEL: gpu.func @stage_replicated_scalar
// NV:         %[[OWNER:.*]] = arith.cmpi ult, %{{.*}}, %c1_i32 : i32
// NV:         scf.if %[[OWNER]] {
// NV:           nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache =  ca, %c4_i32 : !llvm.ptr<3>, !llvm.ptr<1>, i32
// NV:         }
// NV-NOT:     nvvm.cp.async.shared.global
// NV:         nvvm.cp.async.commit.group
func.func @stage_replicated_scalar(%s: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %offsets = arith.constant dense<0> : tensor<1x1xi32, #col>
  %stage = tile.shared_alloc : !tile.shared<1x1xf32>
  %token = tile.async_copy %s[%offsets], %stage : !tile.ptr<f32>[tensor<1x1xi32, #col>], !tile.shared<1x1xf32>
  tile.async_wait pending = 0
  return
}

#rows4 = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerBlock = [1, 1], order = [1, 0]>

// An 8x4 tile of bytes (e8m0 scales: 4 per row) in a layout of 4 bytes per thread, which a
// warp covers four times over: lanes 0-7 own the rows and copy them, each as one 4-byte
// cp.async; lanes 8-31 repeat them and copy nothing.
// NV-LABEL: gpu.func @stage_replicated_group
// NV:         %[[OWNER:.*]] = arith.cmpi ult, %{{.*}}, %c8_i32 : i32
// NV:         scf.if %[[OWNER]] {
// NV:           scf.if
// NV:             nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache =  ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// NV:           else
// NV-COUNT-4:     memref.store
// NV:         }
// NV-NOT:     nvvm.cp.async.shared.global
// NV:         nvvm.cp.async.commit.group
func.func @stage_replicated_group(%s: !tile.ptr<i8>, %ld: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %rows = tile.arange 0 to 8 : tensor<8xi32, #tile.slice<dim = 1, parent = #rows4>>
  %cols = tile.arange 0 to 4 : tensor<4xi32, #tile.slice<dim = 0, parent = #rows4>>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<8xi32, #tile.slice<dim = 1, parent = #rows4>> -> tensor<8x1xi32, #rows4>
  %c2 = tile.expand_dims %cols axis = 0 : tensor<4xi32, #tile.slice<dim = 0, parent = #rows4>> -> tensor<1x4xi32, #rows4>
  %lds = tile.splat %ld : i32 -> tensor<8x1xi32, #rows4>
  %rowStart = arith.muli %r2, %lds : tensor<8x1xi32, #rows4>
  %rb = tile.broadcast %rowStart : tensor<8x1xi32, #rows4> -> tensor<8x4xi32, #rows4>
  %cb = tile.broadcast %c2 : tensor<1x4xi32, #rows4> -> tensor<8x4xi32, #rows4>
  %offsets = arith.addi %rb, %cb : tensor<8x4xi32, #rows4>
  %ms = tile.splat %m : i32 -> tensor<8x1xi32, #rows4>
  %inM = arith.cmpi slt, %r2, %ms : tensor<8x1xi32, #rows4>
  %mask = tile.broadcast %inM : tensor<8x1xi1, #rows4> -> tensor<8x4xi1, #rows4>
  %stage = tile.shared_alloc : !tile.shared<8x4xi8>
  %token = tile.async_copy %s[%offsets], %stage mask %mask : !tile.ptr<i8>[tensor<8x4xi32, #rows4>], !tile.shared<8x4xi8>, tensor<8x4xi1, #rows4>
  tile.async_wait pending = 0
  return
}
