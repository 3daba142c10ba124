// convert-tile-to-gpu of an f32 sum of products whose multiply may be contracted (fastmath
// `contract`, as dsl::sumOfProducts sets): a thread's products are summed as a chain of fused
// multiply-adds, in the order of the plain sum, before the butterfly across lanes. Products
// without the flag, or in another type, stay products and adds. (CDNA: tile-to-gpu.mlir.)
// RUN: %wavetile-opt %s -allow-unregistered-dialect -convert-tile-to-gpu=target=sm_90a -canonicalize -cse | FileCheck %s --check-prefix=NV

#four = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>

// NV-LABEL: gpu.func @squares
// NV:         %[[X:.*]]:4 = scf.if
// NV:         %[[SQUARES:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<4xf32>
// NV-NEXT:    %[[FIRST:.*]] = vector.extract %[[SQUARES]][0] : f32 from vector<4xf32>
// NV-NEXT:    %[[ACC1:.*]] = math.fma %[[X]]#1, %[[X]]#1, %[[FIRST]] : f32
// NV-NEXT:    %[[ACC2:.*]] = math.fma %[[X]]#2, %[[X]]#2, %[[ACC1]] : f32
// NV-NEXT:    %[[ACC3:.*]] = math.fma %[[X]]#3, %[[X]]#3, %[[ACC2]] : f32
// NV-NEXT:    gpu.shuffle xor %[[ACC3]]
// NV-NOT:     math.fma
// NV-LABEL: gpu.func @uncontracted
// NV-NOT:     math.fma
// NV:         arith.addf
// NV-LABEL: gpu.func @half_products
// NV-NOT:     math.fma
func.func @squares(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %i = tile.arange 0 to 128 : tensor<128xi32, #four>
  %x = tile.load %p[%i] : !tile.ptr<f32>[tensor<128xi32, #four>] -> tensor<128xf32, #four>
  %sq = arith.mulf %x, %x fastmath<contract> : tensor<128xf32, #four>
  %sum = tile.reduce sum %sq axis = 0 : tensor<128xf32, #four> -> f32
  "test.use"(%sum) : (f32) -> ()
  return
}
func.func @uncontracted(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %i = tile.arange 0 to 128 : tensor<128xi32, #four>
  %x = tile.load %p[%i] : !tile.ptr<f32>[tensor<128xi32, #four>] -> tensor<128xf32, #four>
  %sq = arith.mulf %x, %x : tensor<128xf32, #four>
  %sum = tile.reduce sum %sq axis = 0 : tensor<128xf32, #four> -> f32
  "test.use"(%sum) : (f32) -> ()
  return
}
func.func @half_products(%p: !tile.ptr<f16>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %i = tile.arange 0 to 128 : tensor<128xi32, #four>
  %x = tile.load %p[%i] : !tile.ptr<f16>[tensor<128xi32, #four>] -> tensor<128xf16, #four>
  %sq = arith.mulf %x, %x fastmath<contract> : tensor<128xf16, #four>
  %sum = tile.reduce sum %sq axis = 0 : tensor<128xf16, #four> -> f16
  "test.use"(%sum) : (f16) -> ()
  return
}
