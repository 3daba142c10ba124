// tile.prefetch: on NVIDIA each thread of the program prefetches 128-byte lines into L2 (line
// t for thread t), in a loop while lines outnumber threads and behind a guard while threads
// outnumber lines; CDNA has no L2 prefetch instruction, so the op is dropped there.
// RUN: %wavetile-opt %s -tile-assign-layouts="warp-size=32 target=sm_90" -convert-tile-to-gpu=target=sm_90 -canonicalize -cse | FileCheck %s --check-prefix=NV
// RUN: %wavetile-opt %s -tile-assign-layouts="warp-size=64 target=gfx942" -convert-tile-to-gpu=target=gfx942 -canonicalize -cse | FileCheck %s --check-prefix=AMD

// NV-LABEL: gpu.func @vectors
// NV-SAME:    known_block_size = array<i32: 128, 1, 1>
// 32768 bytes, 256 lines, 128 threads: two per thread.
// NV:         %[[THREAD:.*]] = arith.addi
// NV:         scf.for %[[LINE:.*]] = %[[THREAD]] to %c256_i32 step %c128_i32 : i32 {
// NV-NEXT:      %[[BYTE:.*]] = arith.muli %[[LINE]], %c128_i32 : i32
// NV-NEXT:      %[[OFFSET:.*]] = arith.extui %[[BYTE]] : i32 to i64
// NV-NEXT:      %[[ADDRESS:.*]] = llvm.getelementptr %arg0[%[[OFFSET]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// NV-NEXT:      nvvm.prefetch level = L2, %[[ADDRESS]] : !llvm.ptr<1>
// NV-NEXT:    }
// 16384 bytes: one line per thread, unguarded.
// NV:         %[[FIRST:.*]] = arith.muli %[[THREAD]], %c128_i32 : i32
// NV-NEXT:    %[[FIRST64:.*]] = arith.extui %[[FIRST]] : i32 to i64
// NV-NEXT:    %[[ADDRESS:.*]] = llvm.getelementptr %arg1[%[[FIRST64]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// NV-NEXT:    nvvm.prefetch level = L2, %[[ADDRESS]] : !llvm.ptr<1>
// 1000 bytes: 8 lines, the first 8 threads.
// NV-NEXT:    %[[SOME:.*]] = arith.cmpi ult, %[[THREAD]], %c8_i32 : i32
// NV-NEXT:    scf.if %[[SOME]] {
// NV-NEXT:      %[[ADDRESS:.*]] = llvm.getelementptr %arg2[%[[FIRST64]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// NV-NEXT:      nvvm.prefetch level = L2, %[[ADDRESS]] : !llvm.ptr<1>
// NV-NEXT:    }
// NV-NEXT:    gpu.return

// AMD-LABEL: gpu.func @vectors
// AMD-NEXT:    gpu.return
func.func @vectors(%w: !tile.ptr<bf16>, %bias: !tile.ptr<f32>, %bytes: !tile.ptr<i8>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  tile.prefetch %w, 32768 : !tile.ptr<bf16>
  tile.prefetch %bias, 16384 : !tile.ptr<f32>
  tile.prefetch %bytes, 1000 : !tile.ptr<i8>
  return
}
