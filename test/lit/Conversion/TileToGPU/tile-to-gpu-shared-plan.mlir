// convert-tile-to-gpu places shared allocations in the kernel's one workgroup buffer past
// the scratch of the layout changes made while they are live, not past the largest scratch
// of the kernel: a larger layout change after an allocation's last use reuses its bytes,
// after waiting for every async copy and a barrier.
// RUN: %wavetile-opt %s -convert-tile-to-gpu="target=sm_90 max-shared-bytes=4096" | FileCheck %s

#a = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>
#b = #tile.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>

// The buffer (1 KiB) is live across a 128 x f32 layout change (512 bytes of scratch), so it
// starts at byte 512; the 512 x f32 change after its last read (2 KiB of scratch) overlaps
// it. The kernel needs 2 KiB, where the largest scratch followed by the buffer is 3 KiB.
// CHECK-LABEL: gpu.func @scratch_over_a_dead_buffer
// CHECK-SAME:    workgroup(%[[WG:[^ ]*]] : memref<2048xi8, #gpu.address_space<workgroup>>
// CHECK:         memref.view %[[WG]][%c512][] {{.*}} to memref<256xf32
// CHECK:         memref.view %[[WG]][%c0][] {{.*}} to memref<128xf32
// CHECK:         nvvm.cp.async.wait.group 0
// CHECK-NEXT:    gpu.barrier
// CHECK:         memref.view %[[WG]][%c0][] {{.*}} to memref<512xf32
func.func @scratch_over_a_dead_buffer(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 32 : i32} {
  %buf = tile.shared_alloc : !tile.shared<256xf32>
  %i = tile.arange 0 to 256 : tensor<256xi32, #b>
  %v = tile.load %x[%i] : !tile.ptr<f32>[tensor<256xi32, #b>] -> tensor<256xf32, #b>
  tile.shared_store %v, %buf : tensor<256xf32, #b>, !tile.shared<256xf32>
  %s = tile.arange 0 to 128 : tensor<128xi32, #a>
  %sf = arith.sitofp %s : tensor<128xi32, #a> to tensor<128xf32, #a>
  %sc = tile.convert_layout %sf : tensor<128xf32, #a> -> tensor<128xf32, #b>
  %so = tile.arange 0 to 128 : tensor<128xi32, #b>
  tile.store %sc, %y[%so] : tensor<128xf32, #b>, !tile.ptr<f32>[tensor<128xi32, #b>]
  %w = tile.shared_load %buf : !tile.shared<256xf32> -> tensor<256xf32, #b>
  tile.store %w, %y[%i] : tensor<256xf32, #b>, !tile.ptr<f32>[tensor<256xi32, #b>]
  %r = tile.arange 0 to 512 : tensor<512xi32, #a>
  %f = arith.sitofp %r : tensor<512xi32, #a> to tensor<512xf32, #a>
  %c = tile.convert_layout %f : tensor<512xf32, #a> -> tensor<512xf32, #b>
  %o = tile.arange 0 to 512 : tensor<512xi32, #b>
  tile.store %c, %y[%o] : tensor<512xf32, #b>, !tile.ptr<f32>[tensor<512xi32, #b>]
  return
}

// A buffer made inside a loop has no op in its block before the larger layout change after
// the loop to hold the fence, so it stays clear of all scratch: it starts at byte 2048.
// CHECK-LABEL: gpu.func @buffer_in_a_loop
// CHECK-SAME:    workgroup(%[[WG:[^ ]*]] : memref<3072xi8, #gpu.address_space<workgroup>>
// CHECK:         memref.view %[[WG]][%c2048][] {{.*}} to memref<256xf32
// CHECK:         scf.for
func.func @buffer_in_a_loop(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %n: index) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 32 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i = tile.arange 0 to 256 : tensor<256xi32, #b>
  scf.for %it = %c0 to %n step %c1 {
    %buf = tile.shared_alloc : !tile.shared<256xf32>
    %v = tile.load %x[%i] : !tile.ptr<f32>[tensor<256xi32, #b>] -> tensor<256xf32, #b>
    tile.shared_store %v, %buf : tensor<256xf32, #b>, !tile.shared<256xf32>
    %s = tile.arange 0 to 128 : tensor<128xi32, #a>
    %sf = arith.sitofp %s : tensor<128xi32, #a> to tensor<128xf32, #a>
    %sc = tile.convert_layout %sf : tensor<128xf32, #a> -> tensor<128xf32, #b>
    %so = tile.arange 0 to 128 : tensor<128xi32, #b>
    tile.store %sc, %y[%so] : tensor<128xf32, #b>, !tile.ptr<f32>[tensor<128xi32, #b>]
    %w = tile.shared_load %buf : !tile.shared<256xf32> -> tensor<256xf32, #b>
    tile.store %w, %y[%i] : tensor<256xf32, #b>, !tile.ptr<f32>[tensor<256xi32, #b>]
  }
  %r = tile.arange 0 to 512 : tensor<512xi32, #a>
  %f = arith.sitofp %r : tensor<512xi32, #a> to tensor<512xf32, #a>
  %c = tile.convert_layout %f : tensor<512xf32, #a> -> tensor<512xf32, #b>
  %o = tile.arange 0 to 512 : tensor<512xi32, #b>
  tile.store %c, %y[%o] : tensor<512xf32, #b>, !tile.ptr<f32>[tensor<512xi32, #b>]
  return
}
