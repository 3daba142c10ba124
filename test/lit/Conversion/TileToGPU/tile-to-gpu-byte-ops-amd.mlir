// convert-tile-to-gpu of byte-level integer work on CDNA: an i32 sum of sign-extended byte
// products as v_dot4_i32_i8 (llvm.amdgcn.sdot4, no clamp: the sum wraps, as dp4a's does),
// four bytes packed into an i32 per operand, byte 0 lowest.
// RUN: %wavetile-opt %s -allow-unregistered-dialect -convert-tile-to-gpu=target=gfx942 -canonicalize -cse | FileCheck %s

// Eight bytes a lane along the summed axis: two dot4, the second accumulating the first, then
// the reduction across the lanes. A product of other operands stays products and adds.
#eight = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [1, 64], warpsPerBlock = [1, 1], order = [1, 0]>
#row = #tile.slice<dim = 1, parent = #eight>
// CHECK-LABEL: gpu.func @byte_products
// CHECK:         %[[A0:.*]] = vector.bitcast %{{.*}} : vector<4xi8> to vector<1xi32>
// CHECK:         %[[FIRST:.*]] = llvm.call_intrinsic "llvm.amdgcn.sdot4"(%{{.*}}, %{{.*}}, %c0_i32, %false) : (i32, i32, i32, i1) -> i32
// CHECK:         llvm.call_intrinsic "llvm.amdgcn.sdot4"(%{{.*}}, %{{.*}}, %[[FIRST]], %false) : (i32, i32, i32, i1) -> i32
// CHECK-NOT:     llvm.amdgcn.sdot4
// CHECK-LABEL: gpu.func @wide_products
// CHECK-NOT:     llvm.amdgcn.sdot4
func.func @byte_products(%p: !tile.ptr<i8>, %q: !tile.ptr<i8>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %r = tile.arange 0 to 512 : tensor<512xi32, #tile.slice<dim = 0, parent = #eight>>
  %e = tile.expand_dims %r axis = 0 : tensor<512xi32, #tile.slice<dim = 0, parent = #eight>> -> tensor<1x512xi32, #eight>
  %a = tile.load %p[%e] : !tile.ptr<i8>[tensor<1x512xi32, #eight>] -> tensor<1x512xi8, #eight>
  %b = tile.load %q[%e] : !tile.ptr<i8>[tensor<1x512xi32, #eight>] -> tensor<1x512xi8, #eight>
  %aw = arith.extsi %a : tensor<1x512xi8, #eight> to tensor<1x512xi32, #eight>
  %bw = arith.extsi %b : tensor<1x512xi8, #eight> to tensor<1x512xi32, #eight>
  %prod = arith.muli %aw, %bw : tensor<1x512xi32, #eight>
  %sum = tile.reduce sum %prod axis = 1 : tensor<1x512xi32, #eight> -> tensor<1xi32, #row>
  "test.use"(%sum) : (tensor<1xi32, #row>) -> ()
  return
}
func.func @wide_products(%p: !tile.ptr<i16>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 64 : i32} {
  %r = tile.arange 0 to 512 : tensor<512xi32, #tile.slice<dim = 0, parent = #eight>>
  %e = tile.expand_dims %r axis = 0 : tensor<512xi32, #tile.slice<dim = 0, parent = #eight>> -> tensor<1x512xi32, #eight>
  %a = tile.load %p[%e] : !tile.ptr<i16>[tensor<1x512xi32, #eight>] -> tensor<1x512xi16, #eight>
  %aw = arith.extsi %a : tensor<1x512xi16, #eight> to tensor<1x512xi32, #eight>
  %prod = arith.muli %aw, %aw : tensor<1x512xi32, #eight>
  %sum = tile.reduce sum %prod axis = 1 : tensor<1x512xi32, #eight> -> tensor<1xi32, #row>
  "test.use"(%sum) : (tensor<1xi32, #row>) -> ()
  return
}
