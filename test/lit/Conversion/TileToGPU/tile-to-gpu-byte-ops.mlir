// convert-tile-to-gpu of byte-level integer work on NVIDIA: tile.lookup_nibbles as byte
// permutes, and an i32 sum of sign-extended byte products as dp4a. (AMD targets look bytes up
// one by one; their byte products: tile-to-gpu-byte-ops-amd.mlir.)
// RUN: %wavetile-opt %s -allow-unregistered-dialect -convert-tile-to-gpu=target=sm_90a -canonicalize -cse | FileCheck %s --check-prefix=NV

#bytes = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>

// Four bytes a thread: one 32-bit selector word, its masks computed once (0x77777777 keeps
// each nibble's index bits, its high bits shifted down pick the half: 0x44444444 over
// 0x32103210), then for each byte pair (prmt reads a selector's low 16 bits: the second pair
// shifted down) three prmt: the table's halves indexed, then the half picked. Two bytes a
// thread: one pair, its selector widened from 16 bits.
// NV-LABEL: gpu.func @lookup
// NV:         %[[WORDS:.*]] = vector.bitcast %{{.*}} : vector<4xi8> to vector<1xi32>
// NV-NEXT:    %[[WORD:.*]] = vector.extract %[[WORDS]][0] : i32 from vector<1xi32>
// NV-NEXT:    %[[INDEX:.*]] = arith.andi %[[WORD]], %c2004318071_i32 : i32
// NV-NEXT:    %[[DOWN:.*]] = arith.shrui %[[WORD]], %c1_i32 : i32
// NV-NEXT:    %[[HALF:.*]] = arith.andi %[[DOWN]], %c1145324612_i32 : i32
// NV-NEXT:    %[[PICK:.*]] = arith.ori %[[HALF]], %c839922192_i32 : i32
// NV-NEXT:    %[[LOW:.*]] = nvvm.prmt <default> %[[INDEX]], %c50462976_i32, %c201852420_i32 : i32
// NV-NEXT:    %[[HIGH:.*]] = nvvm.prmt <default> %[[INDEX]], %c-33620224_i32, %c-185009412_i32 : i32
// NV-NEXT:    %[[FIRST:.*]] = nvvm.prmt <default> %[[PICK]], %[[LOW]], %[[HIGH]] : i32
// NV-NEXT:    %[[INDEX2:.*]] = arith.shrui %[[INDEX]], %c16_i32 : i32
// NV-NEXT:    %[[PICK2:.*]] = arith.shrui %[[PICK]], %c16_i32 : i32
// NV-NEXT:    %[[LOW2:.*]] = nvvm.prmt <default> %[[INDEX2]], %c50462976_i32, %c201852420_i32 : i32
// NV-NEXT:    %[[HIGH2:.*]] = nvvm.prmt <default> %[[INDEX2]], %c-33620224_i32, %c-185009412_i32 : i32
// NV-NEXT:    %[[SECOND:.*]] = nvvm.prmt <default> %[[PICK2]], %[[LOW2]], %[[HIGH2]] : i32
// NV-NEXT:    %[[BOTH:.*]] = vector.from_elements %[[FIRST]], %[[SECOND]] : vector<2xi32>
// NV-NEXT:    vector.bitcast %[[BOTH]] : vector<2xi32> to vector<4xi16>
// NV-LABEL: gpu.func @lookup_pair
// NV:         %[[PAIR:.*]] = vector.bitcast %{{.*}} : vector<2xi8> to vector<1xi16>
// NV-NEXT:    %[[BITS:.*]] = vector.extract %[[PAIR]][0] : i16 from vector<1xi16>
// NV-NEXT:    arith.extui %[[BITS]] : i16 to i32
// NV-COUNT-3: nvvm.prmt
// NV-NOT:     nvvm.prmt
// NV:         vector.bitcast %{{.*}} : vector<1xi32> to vector<2xi16>
func.func @lookup(%p: !tile.ptr<i8>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %i = tile.arange 0 to 128 : tensor<128xi32, #bytes>
  %b = tile.load %p[%i] : !tile.ptr<i8>[tensor<128xi32, #bytes>] -> tensor<128xi8, #bytes>
  %v = tile.lookup_nibbles %b table [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12] : tensor<128xi8, #bytes> -> tensor<128xi16, #bytes>
  "test.use"(%v) : (tensor<128xi16, #bytes>) -> ()
  return
}

#two = #tile.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>
func.func @lookup_pair(%p: !tile.ptr<i8>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %i = tile.arange 0 to 64 : tensor<64xi32, #two>
  %b = tile.load %p[%i] : !tile.ptr<i8>[tensor<64xi32, #two>] -> tensor<64xi8, #two>
  %v = tile.lookup_nibbles %b table [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12] : tensor<64xi8, #two> -> tensor<64xi16, #two>
  "test.use"(%v) : (tensor<64xi16, #two>) -> ()
  return
}

// Eight bytes a thread along the summed axis: two dp4a, the second accumulating the first,
// then the butterfly over the lanes. A product of other operands stays products and adds.
#eight = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerBlock = [1, 1], order = [1, 0]>
#row = #tile.slice<dim = 1, parent = #eight>
// NV-LABEL: gpu.func @byte_products
// NV:         %[[FIRST:.*]] = nvvm.dot.accumulate.4way %{{.*}} <signed>, %{{.*}} <signed>, %c0_i32 : vector<4xi8>, vector<4xi8>
// NV:         nvvm.dot.accumulate.4way %{{.*}} <signed>, %{{.*}} <signed>, %[[FIRST]] : vector<4xi8>, vector<4xi8>
// NV-NEXT:    gpu.shuffle xor
// NV-NOT:     nvvm.dot.accumulate.4way
// NV-LABEL: gpu.func @wide_products
// NV-NOT:     nvvm.dot.accumulate.4way
func.func @byte_products(%p: !tile.ptr<i8>, %q: !tile.ptr<i8>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %r = tile.arange 0 to 256 : tensor<256xi32, #tile.slice<dim = 0, parent = #eight>>
  %e = tile.expand_dims %r axis = 0 : tensor<256xi32, #tile.slice<dim = 0, parent = #eight>> -> tensor<1x256xi32, #eight>
  %a = tile.load %p[%e] : !tile.ptr<i8>[tensor<1x256xi32, #eight>] -> tensor<1x256xi8, #eight>
  %b = tile.load %q[%e] : !tile.ptr<i8>[tensor<1x256xi32, #eight>] -> tensor<1x256xi8, #eight>
  %aw = arith.extsi %a : tensor<1x256xi8, #eight> to tensor<1x256xi32, #eight>
  %bw = arith.extsi %b : tensor<1x256xi8, #eight> to tensor<1x256xi32, #eight>
  %prod = arith.muli %aw, %bw : tensor<1x256xi32, #eight>
  %sum = tile.reduce sum %prod axis = 1 : tensor<1x256xi32, #eight> -> tensor<1xi32, #row>
  "test.use"(%sum) : (tensor<1xi32, #row>) -> ()
  return
}
func.func @wide_products(%p: !tile.ptr<i16>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %r = tile.arange 0 to 256 : tensor<256xi32, #tile.slice<dim = 0, parent = #eight>>
  %e = tile.expand_dims %r axis = 0 : tensor<256xi32, #tile.slice<dim = 0, parent = #eight>> -> tensor<1x256xi32, #eight>
  %a = tile.load %p[%e] : !tile.ptr<i16>[tensor<1x256xi32, #eight>] -> tensor<1x256xi16, #eight>
  %aw = arith.extsi %a : tensor<1x256xi16, #eight> to tensor<1x256xi32, #eight>
  %prod = arith.muli %aw, %aw : tensor<1x256xi32, #eight>
  %sum = tile.reduce sum %prod axis = 1 : tensor<1x256xi32, #eight> -> tensor<1xi32, #row>
  "test.use"(%sum) : (tensor<1xi32, #row>) -> ()
  return
}
