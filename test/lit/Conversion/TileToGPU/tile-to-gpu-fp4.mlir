// convert-tile-to-gpu of fp4 packing: both directions go through scratch between barriers.
// RUN: %wavetile-opt %s -allow-unregistered-dialect -convert-tile-to-gpu=target=gfx942 -canonicalize -cse | FileCheck %s

#l = #tile.blocked<sizePerThread = [2], threadsPerWarp = [64], warpsPerBlock = [1], order = [0]>
#p = #tile.blocked<sizePerThread = [1], threadsPerWarp = [64], warpsPerBlock = [1], order = [0]>

// 128 fp4 values, 2 per thread, become 64 bytes, one per thread: byte i is element 2i in the
// low nibble and element 2i+1 in the high one. Unpacking reads byte i/2 and shifts by 4 when
// i is odd (consecutive barriers fold into one).
// CHECK-LABEL: gpu.func @round_trip
// CHECK:         gpu.barrier
// CHECK:         %[[TWICE:.*]] = arith.muli %{{.*}}, %c2_i32 : i32
// CHECK:         %[[NEXT:.*]] = arith.addi %[[TWICE]], %c1_i32 : i32
// CHECK:         %[[EVEN:.*]] = arith.index_castui %[[TWICE]] : i32 to index
// CHECK:         memref.store %{{.*}}, %[[NIBBLES:.*]][%[[EVEN]]] : memref<128xi4, #gpu.address_space<workgroup>>
// CHECK:         %[[ODD:.*]] = arith.index_castui %[[NEXT]] : i32 to index
// CHECK:         memref.store %{{.*}}, %[[NIBBLES]][%[[ODD]]] : memref<128xi4, #gpu.address_space<workgroup>>
// CHECK-NEXT:    gpu.barrier
// CHECK-NEXT:    %[[H4:.*]] = memref.load %[[NIBBLES]][%[[ODD]]]
// CHECK-NEXT:    %[[H8:.*]] = arith.extui %[[H4]] : i4 to i8
// CHECK-NEXT:    %[[HIGH:.*]] = arith.shli %[[H8]], %c4_i8 : i8
// CHECK-NEXT:    %[[L4:.*]] = memref.load %[[NIBBLES]][%[[EVEN]]]
// CHECK-NEXT:    %[[L8:.*]] = arith.extui %[[L4]] : i4 to i8
// CHECK-NEXT:    %[[BYTE:.*]] = arith.ori %[[L8]], %[[HIGH]] : i8
// CHECK-NEXT:    gpu.barrier
// CHECK:         memref.store %[[BYTE]], %[[BYTES:.*]][%{{.*}}] : memref<64xi8, #gpu.address_space<workgroup>>
// CHECK-NEXT:    gpu.barrier
// CHECK-COUNT-2: arith.shrui {{.*}} : i8
// CHECK:         gpu.barrier
// CHECK:         "test.use"
func.func @round_trip(%x: tensor<128xf4E2M1FN, #l>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %packed = tile.pack_fp4 %x : tensor<128xf4E2M1FN, #l> -> tensor<64xi8, #p>
  %unpacked = tile.unpack_fp4 %packed : tensor<64xi8, #p> -> tensor<128xf4E2M1FN, #l>
  "test.use"(%unpacked) : (tensor<128xf4E2M1FN, #l>) -> ()
  return
}
