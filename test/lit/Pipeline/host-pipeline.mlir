// --wavetile-host-pipeline lowers a kernel that uses every kind of tile op all the way to the
// LLVM dialect: no tile, scf, cf, tensor, memref, arith, math or func ops remain.
// RUN: %wavetile-opt %s --wavetile-host-pipeline | FileCheck %s
// RUN: %wavetile-opt %s --wavetile-host-pipeline | FileCheck %s --check-prefix=OPS
// RUN: %wavetile-opt %s --wavetile-host-pipeline | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR

// CHECK-NOT:   tile.
// CHECK-NOT:   scf.
// CHECK-NOT:   cf.
// CHECK-NOT:   tensor.
// CHECK-NOT:   memref.
// CHECK-NOT:   arith.
// CHECK-NOT:   math.
// CHECK-NOT:   func.func
// CHECK-NOT:   unrealized_conversion_cast
// CHECK:       llvm.func @kernel(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32)
// CHECK-NOT:   tile.
// CHECK-NOT:   scf.
// CHECK-NOT:   cf.
// CHECK-NOT:   tensor.
// CHECK-NOT:   memref.
// CHECK-NOT:   arith.
// CHECK-NOT:   math.
// CHECK-NOT:   func.func
// CHECK-NOT:   unrealized_conversion_cast
// CHECK:       llvm.func @kernel__grid(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32)
// CHECK:         llvm.call @kernel(
// CHECK-NOT:   tile.
// CHECK-NOT:   scf.
// CHECK-NOT:   cf.
// CHECK-NOT:   tensor.
// CHECK-NOT:   memref.
// CHECK-NOT:   arith.
// CHECK-NOT:   math.
// CHECK-NOT:   func.func
// CHECK-NOT:   unrealized_conversion_cast

// What the tile ops became: an atomicrmw helper, intrinsics for math, heap buffers for tiles
// and shared memory.
// OPS:         llvm.func internal @__tile_atomic_add_f32
// OPS:           llvm.atomicrmw fadd
// OPS-LABEL:   llvm.func @kernel(
// OPS:           llvm.call @malloc
// OPS:           llvm.fmul
// OPS:           llvm.intr.exp
// OPS:           llvm.call @__tile_atomic_add_f32
// OPS:           llvm.intr.roundeven
// OPS:           llvm.call @free
// OPS-LABEL:   llvm.func @kernel__grid(
// OPS:           llvm.call @kernel(

// The result translates to LLVM IR.
// IR: define void @kernel(ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, i32 {{.*}}, i32 {{.*}}, i32 {{.*}}, i32 {{.*}}, i32 {{.*}}, i32 {{.*}}, i32 {{.*}})
// IR: define void @kernel__grid(

#blk = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerBlock = [2, 2], order = [1, 0]>
module attributes {tile.warp_size = 32 : i32} {
  func.func @kernel(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %q: !tile.ptr<f8E4M3FN>, %k: i32)
      attributes {tile.kernel, tile.num_warps = 4 : i32} {
    %pid = tile.program_id 0
    %r = tile.arange 0 to 16 : tensor<16xi32>
    %r2 = tile.expand_dims %r axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
    %c2 = tile.expand_dims %r axis = 0 : tensor<16xi32> -> tensor<1x16xi32>
    %rows = tile.broadcast %r2 : tensor<16x1xi32> -> tensor<16x16xi32>
    %cols = tile.broadcast %c2 : tensor<1x16xi32> -> tensor<16x16xi32>
    %c16 = arith.constant 16 : i32
    %s16 = tile.splat %c16 : i32 -> tensor<16x16xi32>
    %rs = arith.muli %rows, %s16 : tensor<16x16xi32>
    %offs0 = arith.addi %rs, %cols : tensor<16x16xi32>
    %offs = tile.convert_layout %offs0 : tensor<16x16xi32> -> tensor<16x16xi32, #blk>
    %zero = arith.constant 0.0 : f32
    %acc0 = tile.splat %zero : f32 -> tensor<16x16xf32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %acc = scf.for %i = %c0 to %k step %c1 iter_args(%acc1 = %acc0) -> (tensor<16x16xf32>) : i32 {
      %ks = tile.splat %k : i32 -> tensor<16x16xi32, #blk>
      %m = arith.cmpi slt, %offs, %ks : tensor<16x16xi32, #blk>
      %x = tile.load %a[%offs] mask %m : !tile.ptr<bf16>[tensor<16x16xi32, #blk>], tensor<16x16xi1, #blk> -> tensor<16x16xbf16>
      %buf = tile.make_buffer %b, %k : !tile.ptr<bf16> -> !tile.buffer<bf16>
      %y = tile.buffer_load %buf[%offs] : !tile.buffer<bf16>[tensor<16x16xi32, #blk>] -> tensor<16x16xbf16>
      %sh = tile.shared_alloc : !tile.shared<16x16xbf16>
      tile.shared_store %y, %sh : tensor<16x16xbf16>, !tile.shared<16x16xbf16>
      tile.barrier
      %yt = tile.shared_load %sh : !tile.shared<16x16xbf16> -> tensor<16x16xbf16>
      %t = tile.trans %yt [1, 0] : tensor<16x16xbf16> -> tensor<16x16xbf16>
      %d = tile.dot %x, %t, %acc1 : tensor<16x16xbf16>, tensor<16x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
      scf.yield %d : tensor<16x16xf32>
    }
    %rowmax = tile.reduce max %acc axis = 1 : tensor<16x16xf32> -> tensor<16xf32>
    %e = math.exp %rowmax : tensor<16xf32>
    %sum = tile.reduce sum %e axis = 0 : tensor<16xf32> -> f32
    %cs = tile.scan sum %e axis = 0 : tensor<16xf32> -> tensor<16xf32>
    %old = tile.atomic_add %cs, %c[%r] : tensor<16xf32>, !tile.ptr<f32>[tensor<16xi32>] -> tensor<16xf32>
    %f8 = tile.fp_convert %old {saturate} : tensor<16xf32> -> tensor<16xf8E4M3FN>
    tile.store %f8, %q[%r] : tensor<16xf8E4M3FN>, !tile.ptr<f8E4M3FN>[tensor<16xi32>]
    %flat = tile.reshape %acc : tensor<16x16xf32> -> tensor<256xf32>
    %o256 = tile.arange 0 to 256 : tensor<256xi32>
    tile.store %flat, %c[%o256] : tensor<256xf32>, !tile.ptr<f32>[tensor<256xi32>]
    return
  }
}
