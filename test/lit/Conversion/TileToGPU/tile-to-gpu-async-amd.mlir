// convert-tile-to-gpu of asynchronous copies on CDNA (64-lane layouts; the NVIDIA cases are
// in tile-to-gpu-async.mlir).
// RUN: %wavetile-opt %s -convert-tile-to-gpu=target=gfx942 -canonicalize -cse | FileCheck %s --check-prefix=AMD

#w64 = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerBlock = [1, 1], order = [1, 0]>

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
