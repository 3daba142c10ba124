// convert-tile-to-gpu of asynchronous copies on CDNA (64-lane layouts; the NVIDIA cases are
// in tile-to-gpu-async.mlir): through registers, and with load-to-LDS instructions.
// RUN: %wavetile-opt %s -convert-tile-to-gpu="target=gfx942 direct-to-lds=false" -canonicalize -cse | FileCheck %s --check-prefix=AMD
// RUN: %wavetile-opt %s -convert-tile-to-gpu=target=gfx942 -canonicalize -cse | FileCheck %s --check-prefix=CDNA3
// RUN: %wavetile-opt %s -convert-tile-to-gpu=target=gfx950 -canonicalize -cse | FileCheck %s --check-prefix=CDNA4

#w64 = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerBlock = [1, 1], order = [1, 0]>
#swz = #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], padding = 0>
#swz3 = #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 8, order = [2, 1, 0], padding = 0>
#pad = #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 1, order = [1, 0], padding = 8>

// From a buffer view on CDNA, a group of 8 bf16 that is in range (checked once for the group)
// and aligned is one 128-bit raw buffer load (as 32-bit words) through the view's resource and one 128-bit LDS
// store, complete when issued; otherwise 8 element buffer loads, which read 0 out of range.
// AMD-LABEL: gpu.func @stage_from_view
// AMD:         scf.if
// AMD:           %[[WORDS:.*]] = rocdl.raw.ptr.buffer.load {{.*}} : vector<4xi32>
// AMD-NEXT:      %[[GROUP:.*]] = llvm.bitcast %[[WORDS]] : vector<4xi32> to vector<8xbf16>
// AMD-NEXT:      llvm.store %[[GROUP]], {{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// AMD:         else
// AMD-COUNT-8:   rocdl.raw.ptr.buffer.load {{.*}} : bf16
// AMD-NOT:     nvvm.cp.async
// AMD-NOT:     load.lds
//
// With load-to-LDS instructions, lane i of a wave writes slot i of one contiguous LDS run.
// CDNA4 moves 16 bytes per lane: each lane's own group is its slot, so no lane exchanges
// offsets; the wave issues the instruction when every lane's group is in range and aligned
// (a lane out of range reads zeros through an offset past the resource), else it copies its
// slot element by element. async_wait counts the instructions still in flight (vmcnt).
// CDNA4-LABEL: gpu.func @stage_from_view
// CDNA4-NOT:     rocdl.ds_bpermute
// CDNA4:         %[[ANY:.*]] = rocdl.ballot %{{.*}} : i64
// CDNA4:         %[[ALL:.*]] = arith.cmpi eq, %[[ANY]], %c0_i64
// CDNA4:         scf.if %[[ALL]] {
// CDNA4:           %[[OFFSET:.*]] = arith.select %{{.*}}, %{{.*}}, %c-2147483648_i32 : i32
// CDNA4-NEXT:      rocdl.raw.ptr.buffer.load.lds %{{.*}}, %{{.*}}, %c16_i32, %[[OFFSET]], %c0_i32, %c0_i32, %c0_i32
// CDNA4-NEXT:    } else {
// CDNA4-COUNT-8:   rocdl.raw.ptr.buffer.load {{.*}} : bf16
// CDNA4:         amdgpu.memory_counter_wait load(0)
// CDNA3 moves one dword per lane: a group of 8 bf16 takes four instructions, and the lane
// writing slot i holds part i % 4 of lane i / 4's group, whose offset comes over ds_bpermute.
// CDNA3-LABEL: gpu.func @stage_from_view
// CDNA3-COUNT-4: rocdl.raw.ptr.buffer.load.lds %{{.*}}, %{{.*}}, %c4_i32,
// CDNA3-NOT:     rocdl.raw.ptr.buffer.load.lds
// CDNA3:         amdgpu.memory_counter_wait load(0)
// CDNA3:         gpu.return
func.func @stage_from_view(%a: !tile.ptr<bf16>, %len: i32, %k: i32) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %rows = tile.arange 0 to 8 : tensor<8xi32, #tile.slice<dim = 1, parent = #w64>>
  %cols = tile.arange 0 to 64 : tensor<64xi32, #tile.slice<dim = 0, parent = #w64>>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<8xi32, #tile.slice<dim = 1, parent = #w64>> -> tensor<8x1xi32, #w64>
  %c2 = tile.expand_dims %cols axis = 0 : tensor<64xi32, #tile.slice<dim = 0, parent = #w64>> -> tensor<1x64xi32, #w64>
  %ld = tile.splat %k : i32 -> tensor<8x1xi32, #w64>
  %rowStart = arith.muli %r2, %ld : tensor<8x1xi32, #w64>
  %rb = tile.broadcast %rowStart : tensor<8x1xi32, #w64> -> tensor<8x64xi32, #w64>
  %cb = tile.broadcast %c2 : tensor<1x64xi32, #w64> -> tensor<8x64xi32, #w64>
  %offsets = arith.addi %rb, %cb : tensor<8x64xi32, #w64>
  %view = tile.make_buffer %a, %len : !tile.ptr<bf16> -> !tile.buffer<bf16>
  %stage = tile.shared_alloc : !tile.shared<8x64xbf16>
  %token = tile.async_copy %view[%offsets], %stage : !tile.buffer<bf16>[tensor<8x64xi32, #w64>], !tile.shared<8x64xbf16>
  tile.async_wait pending = 0
  return
}

// Under the XOR swizzle the slot a lane writes belongs to another lane's group (that of the
// same row whose column group is the lane's XOR the row's phase), on both targets.
// CDNA4-LABEL: gpu.func @stage_swizzled
// CDNA4:         arith.xori %{{.*}}, %{{.*}} : i32
// CDNA4:         rocdl.ds_bpermute
// CDNA4:         rocdl.raw.ptr.buffer.load.lds {{.*}}, %c16_i32,
// CDNA4-NOT:     rocdl.raw.ptr.buffer.load.lds
// CDNA4:         gpu.return
// CDNA3-LABEL: gpu.func @stage_swizzled
// CDNA3:         rocdl.ds_bpermute
// CDNA3:         rocdl.raw.ptr.buffer.load.lds %{{.*}}, %{{.*}}, %c4_i32,
// CDNA3:         rocdl.ds_bpermute
// CDNA3:         rocdl.raw.ptr.buffer.load.lds %{{.*}}, %{{.*}}, %c4_i32,
// CDNA3:         rocdl.ds_bpermute
// CDNA3:         rocdl.raw.ptr.buffer.load.lds %{{.*}}, %{{.*}}, %c4_i32,
// CDNA3:         rocdl.ds_bpermute
// CDNA3:         rocdl.raw.ptr.buffer.load.lds %{{.*}}, %{{.*}}, %c4_i32,
// CDNA3-NOT:     rocdl.raw.ptr.buffer.load.lds
func.func @stage_swizzled(%a: !tile.ptr<bf16>, %len: i32, %k: i32) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %rows = tile.arange 0 to 8 : tensor<8xi32, #tile.slice<dim = 1, parent = #w64>>
  %cols = tile.arange 0 to 64 : tensor<64xi32, #tile.slice<dim = 0, parent = #w64>>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<8xi32, #tile.slice<dim = 1, parent = #w64>> -> tensor<8x1xi32, #w64>
  %c2 = tile.expand_dims %cols axis = 0 : tensor<64xi32, #tile.slice<dim = 0, parent = #w64>> -> tensor<1x64xi32, #w64>
  %ld = tile.splat %k : i32 -> tensor<8x1xi32, #w64>
  %rowStart = arith.muli %r2, %ld : tensor<8x1xi32, #w64>
  %rb = tile.broadcast %rowStart : tensor<8x1xi32, #w64> -> tensor<8x64xi32, #w64>
  %cb = tile.broadcast %c2 : tensor<1x64xi32, #w64> -> tensor<8x64xi32, #w64>
  %offsets = arith.addi %rb, %cb : tensor<8x64xi32, #w64>
  %view = tile.make_buffer %a, %len : !tile.ptr<bf16> -> !tile.buffer<bf16>
  %stage = tile.shared_alloc : !tile.shared<8x64xbf16, #swz>
  %token = tile.async_copy %view[%offsets], %stage : !tile.buffer<bf16>[tensor<8x64xi32, #w64>], !tile.shared<8x64xbf16, #swz>
  tile.async_wait pending = 0
  return
}

// Through a pointer a masked-off lane cannot write zeros with the instruction, so a wave
// with any lane not fully active copies element by element. The barrier that publishes the
// copy is the hardware one after this wave's LDS accesses: a workgroup fence would also wait
// for every load-to-LDS in flight.
// CDNA4-LABEL: gpu.func @stage_from_pointer
// CDNA4:         rocdl.ds_bpermute
// CDNA4:         rocdl.ballot
// CDNA4:         scf.if
// CDNA4-NEXT:      rocdl.global.load.lds %{{.*}}, %{{.*}}, 16, 0, 0
// CDNA4:         amdgpu.memory_counter_wait load(1)
// CDNA4-NEXT:    llvm.fence syncscope("singlethread") release
// CDNA4-NEXT:    amdgpu.memory_counter_wait ds(0)
// CDNA4-NEXT:    rocdl.s.barrier
// CDNA4-NEXT:    llvm.fence syncscope("singlethread") acquire
// CDNA4-NOT:     gpu.barrier
// AMD-LABEL: gpu.func @stage_from_pointer
// AMD:         gpu.barrier
func.func @stage_from_pointer(%a: !tile.ptr<bf16>, %m: i32, %k: i32) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %rows = tile.arange 0 to 8 : tensor<8xi32, #tile.slice<dim = 1, parent = #w64>>
  %cols = tile.arange 0 to 64 : tensor<64xi32, #tile.slice<dim = 0, parent = #w64>>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<8xi32, #tile.slice<dim = 1, parent = #w64>> -> tensor<8x1xi32, #w64>
  %c2 = tile.expand_dims %cols axis = 0 : tensor<64xi32, #tile.slice<dim = 0, parent = #w64>> -> tensor<1x64xi32, #w64>
  %ld = tile.splat %k : i32 -> tensor<8x1xi32, #w64>
  %rowStart = arith.muli %r2, %ld : tensor<8x1xi32, #w64>
  %rb = tile.broadcast %rowStart : tensor<8x1xi32, #w64> -> tensor<8x64xi32, #w64>
  %cb = tile.broadcast %c2 : tensor<1x64xi32, #w64> -> tensor<8x64xi32, #w64>
  %offsets = arith.addi %rb, %cb : tensor<8x64xi32, #w64>
  %ms = tile.splat %m : i32 -> tensor<8x1xi32, #w64>
  %inRows = arith.cmpi slt, %r2, %ms : tensor<8x1xi32, #w64>
  %mask = tile.broadcast %inRows : tensor<8x1xi1, #w64> -> tensor<8x64xi1, #w64>
  %stages = tile.shared_alloc : !tile.shared<2x8x64xbf16, #swz3>
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %first = tile.shared_slice %stages[%zero] : !tile.shared<2x8x64xbf16, #swz3> -> !tile.shared<8x64xbf16, #swz>
  %second = tile.shared_slice %stages[%one] : !tile.shared<2x8x64xbf16, #swz3> -> !tile.shared<8x64xbf16, #swz>
  %t0 = tile.async_copy %a[%offsets], %first mask %mask : !tile.ptr<bf16>[tensor<8x64xi32, #w64>], !tile.shared<8x64xbf16, #swz>, tensor<8x64xi1, #w64>
  %t1 = tile.async_copy %a[%offsets], %second mask %mask : !tile.ptr<bf16>[tensor<8x64xi32, #w64>], !tile.shared<8x64xbf16, #swz>, tensor<8x64xi1, #w64>
  tile.async_wait pending = 1
  tile.barrier
  return
}

// Padding breaks a wave's run into rows: such a copy goes through registers.
// CDNA4-LABEL: gpu.func @stage_padded
// CDNA4-NOT:     load.lds
// CDNA4:         llvm.store {{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CDNA4-NOT:     load.lds
// CDNA4:         gpu.return
func.func @stage_padded(%a: !tile.ptr<bf16>, %len: i32) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %rows = tile.arange 0 to 8 : tensor<8xi32, #tile.slice<dim = 1, parent = #w64>>
  %cols = tile.arange 0 to 64 : tensor<64xi32, #tile.slice<dim = 0, parent = #w64>>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<8xi32, #tile.slice<dim = 1, parent = #w64>> -> tensor<8x1xi32, #w64>
  %c2 = tile.expand_dims %cols axis = 0 : tensor<64xi32, #tile.slice<dim = 0, parent = #w64>> -> tensor<1x64xi32, #w64>
  %c64 = arith.constant dense<64> : tensor<8x1xi32, #w64>
  %rowStart = arith.muli %r2, %c64 : tensor<8x1xi32, #w64>
  %rb = tile.broadcast %rowStart : tensor<8x1xi32, #w64> -> tensor<8x64xi32, #w64>
  %cb = tile.broadcast %c2 : tensor<1x64xi32, #w64> -> tensor<8x64xi32, #w64>
  %offsets = arith.addi %rb, %cb : tensor<8x64xi32, #w64>
  %view = tile.make_buffer %a, %len : !tile.ptr<bf16> -> !tile.buffer<bf16>
  %stage = tile.shared_alloc : !tile.shared<8x64xbf16, #pad>
  %token = tile.async_copy %view[%offsets], %stage : !tile.buffer<bf16>[tensor<8x64xi32, #w64>], !tile.shared<8x64xbf16, #pad>
  tile.async_wait pending = 0
  return
}

// A view standing for a pointer's 2 GiB promise, the kernel specialized (base 16-byte
// aligned, row stride and K multiples of 8): every lane's run is known aligned and masked
// whole before run time. CDNA4 issues one load-to-LDS per run, a masked-off lane reading
// through an offset past the resource (zeros), with no wave-wide check and no fallback;
// through registers (direct-to-lds=false) each group is one buffer load (zeros where
// masked off) and one LDS store, unconditionally.
// CDNA4-LABEL: gpu.func @stage_known_aligned
// CDNA4-NOT:     rocdl.ballot
// CDNA4-NOT:     scf.if
// CDNA4:         %[[OFFSET:.*]] = arith.select %{{.*}}, %{{.*}}, %c-2147483648_i32 : i32
// CDNA4-NEXT:    rocdl.raw.ptr.buffer.load.lds %{{.*}}, %{{.*}}, %c16_i32, %[[OFFSET]], %c0_i32, %c0_i32, %c0_i32
// CDNA4-NOT:     scf.if
// CDNA4-NOT:     rocdl.raw.ptr.buffer.load {{.*}} : bf16
// CDNA4:         gpu.return
// CDNA3 (4 bytes per lane, four instructions per group) keeps the wave's check: without the
// branches the backend holds every instruction's LDS address in an SGPR of its own.
// CDNA3-LABEL: gpu.func @stage_known_aligned
// CDNA3-COUNT-4: rocdl.ballot
// CDNA3:         gpu.return
// AMD-LABEL: gpu.func @stage_known_aligned
// AMD-NOT:     scf.if
// AMD:         %[[OFFSET:.*]] = arith.select %{{.*}}, %{{.*}}, %c-2147483648_i32 : i32
// AMD-NEXT:    %[[WORDS:.*]] = rocdl.raw.ptr.buffer.load {{.*}}, %[[OFFSET]], {{.*}} : vector<4xi32>
// AMD:         llvm.store %{{.*}}, {{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// AMD-NOT:     scf.if
// AMD:         gpu.return
func.func @stage_known_aligned(%a: !tile.ptr<bf16> {tile.divisibility = 16 : i64}, %len: i32,
                               %ld: i32 {tile.divisibility = 8 : i64}, %k: i32 {tile.divisibility = 8 : i64})
    attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %rows = tile.arange 0 to 8 : tensor<8xi32, #tile.slice<dim = 1, parent = #w64>>
  %cols = tile.arange 0 to 64 : tensor<64xi32, #tile.slice<dim = 0, parent = #w64>>
  %r2 = tile.expand_dims %rows axis = 1 : tensor<8xi32, #tile.slice<dim = 1, parent = #w64>> -> tensor<8x1xi32, #w64>
  %c2 = tile.expand_dims %cols axis = 0 : tensor<64xi32, #tile.slice<dim = 0, parent = #w64>> -> tensor<1x64xi32, #w64>
  %lds = tile.splat %ld : i32 -> tensor<8x1xi32, #w64>
  %rowStart = arith.muli %r2, %lds : tensor<8x1xi32, #w64>
  %rb = tile.broadcast %rowStart : tensor<8x1xi32, #w64> -> tensor<8x64xi32, #w64>
  %cb = tile.broadcast %c2 : tensor<1x64xi32, #w64> -> tensor<8x64xi32, #w64>
  %offsets = arith.addi %rb, %cb : tensor<8x64xi32, #w64>
  %kk = tile.splat %k : i32 -> tensor<1x64xi32, #w64>
  %inK = arith.cmpi slt, %c2, %kk : tensor<1x64xi32, #w64>
  %mask = tile.broadcast %inK : tensor<1x64xi1, #w64> -> tensor<8x64xi1, #w64>
  %view = tile.make_buffer %a, %len {tile.within_2gib} : !tile.ptr<bf16> -> !tile.buffer<bf16>
  %stage = tile.shared_alloc : !tile.shared<8x64xbf16>
  %token = tile.async_copy %view[%offsets], %stage mask %mask : !tile.buffer<bf16>[tensor<8x64xi32, #w64>], !tile.shared<8x64xbf16>, tensor<8x64xi1, #w64>
  tile.async_wait pending = 0
  return
}
