// convert-tile-to-gpu widens bf16 to f32 from 32-bit words on NVIDIA: a word's low element
// shifted up, its high element masked (bf16 is an f32's top half). An odd count of elements
// a thread keeps arith.extf, and so does CDNA (tile-to-gpu.mlir). A widened sum rounded back
// is first narrowed to the bf16 (f16) sum.
// RUN: %wavetile-opt %s -split-input-file -allow-unregistered-dialect -convert-tile-to-gpu=target=sm_90 -canonicalize -cse | FileCheck %s

#eight = #tile.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>
// CHECK-LABEL: gpu.func @widened_from_words
// CHECK-DAG:     %[[SIXTEEN:.*]] = arith.constant dense<16> : vector<4xi32>
// CHECK-DAG:     %[[TOP:.*]] = arith.constant dense<-65536> : vector<4xi32>
// CHECK:         %[[WORDS:.*]] = vector.bitcast %{{.*}} : vector<8xbf16> to vector<4xi32>
// CHECK-NEXT:    %[[LOW:.*]] = arith.shli %[[WORDS]], %[[SIXTEEN]] : vector<4xi32>
// CHECK-NEXT:    %[[HIGH:.*]] = arith.andi %[[WORDS]], %[[TOP]] : vector<4xi32>
// CHECK:         %[[BITS:.*]] = vector.interleave %[[LOW]], %[[HIGH]] : vector<4xi32> -> vector<8xi32>
// CHECK:         arith.bitcast %[[BITS]] : vector<8xi32> to vector<8xf32>
// CHECK-NOT:     arith.extf
func.func @widened_from_words(%p: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %i = tile.arange 0 to 256 : tensor<256xi32, #eight>
  %x = tile.load %p[%i] : !tile.ptr<bf16>[tensor<256xi32, #eight>] -> tensor<256xbf16, #eight>
  %f = arith.extf %x : tensor<256xbf16, #eight> to tensor<256xf32, #eight>
  "test.use"(%f) : (tensor<256xf32, #eight>) -> ()
  return
}

// -----

#one = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>
// CHECK-LABEL: gpu.func @one_element
// CHECK:         arith.extf %{{.*}} : vector<1xbf16> to vector<1xf32>
func.func @one_element(%p: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %i = tile.arange 0 to 32 : tensor<32xi32, #one>
  %x = tile.load %p[%i] : !tile.ptr<bf16>[tensor<32xi32, #one>] -> tensor<32xbf16, #one>
  %f = arith.extf %x : tensor<32xbf16, #one> to tensor<32xf32, #one>
  "test.use"(%f) : (tensor<32xf32, #one>) -> ()
  return
}

// -----

// Lanes exchange 32-bit words: a bf16 reduced across lanes travels zero-extended in one.
#lanes = #tile.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>
// CHECK-LABEL: gpu.func @bf16_across_lanes
// CHECK:         %[[BITS:.*]] = arith.bitcast %{{.*}} : bf16 to i16
// CHECK-NEXT:    %[[WORD:.*]] = arith.extui %[[BITS]] : i16 to i32
// CHECK-NEXT:    %[[MOVED:.*]], %{{.*}} = gpu.shuffle  xor %[[WORD]], %c1_i32, %c32_i32 : i32
// CHECK-NEXT:    %[[BACK:.*]] = arith.trunci %[[MOVED]] : i32 to i16
// CHECK-NEXT:    %[[PARTNER:.*]] = arith.bitcast %[[BACK]] : i16 to bf16
// CHECK-NEXT:    arith.maximumf %{{.*}}, %[[PARTNER]] : bf16
// CHECK-COUNT-4: gpu.shuffle  xor %{{.*}} : i32
// CHECK-NOT:     gpu.shuffle
func.func @bf16_across_lanes(%p: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %i = tile.arange 0 to 64 : tensor<64xi32, #lanes>
  %x = tile.load %p[%i] : !tile.ptr<bf16>[tensor<64xi32, #lanes>] -> tensor<64xbf16, #lanes>
  %m = tile.reduce max %x axis = 0 : tensor<64xbf16, #lanes> -> bf16
  "test.use"(%m) : (bf16) -> ()
  return
}

// -----

// A sum of two widened bf16 (f16) rounded back is the bf16 (f16) sum: f32 holds more than
// twice their significands, so rounding twice gives the same value as once.
#pairs = #tile.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>
// CHECK-LABEL: gpu.func @rounded_sums_narrowed
// CHECK:         %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<8xbf16>
// CHECK:         %[[DIFFERENCE:.*]] = arith.subf %{{.*}}, %{{.*}} : vector<8xf16>
// CHECK-NOT:     arith.truncf
// CHECK:         "test.use"
func.func @rounded_sums_narrowed(%p: !tile.ptr<bf16>, %q: !tile.ptr<f16>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %i = tile.arange 0 to 256 : tensor<256xi32, #pairs>
  %a = tile.load %p[%i] : !tile.ptr<bf16>[tensor<256xi32, #pairs>] -> tensor<256xbf16, #pairs>
  %b = tile.load %p[%i] : !tile.ptr<bf16>[tensor<256xi32, #pairs>] -> tensor<256xbf16, #pairs>
  %wa = arith.extf %a : tensor<256xbf16, #pairs> to tensor<256xf32, #pairs>
  %wb = arith.extf %b : tensor<256xbf16, #pairs> to tensor<256xf32, #pairs>
  %s = arith.addf %wa, %wb : tensor<256xf32, #pairs>
  %rs = arith.truncf %s : tensor<256xf32, #pairs> to tensor<256xbf16, #pairs>
  %c = tile.load %q[%i] : !tile.ptr<f16>[tensor<256xi32, #pairs>] -> tensor<256xf16, #pairs>
  %d = tile.load %q[%i] : !tile.ptr<f16>[tensor<256xi32, #pairs>] -> tensor<256xf16, #pairs>
  %wc = arith.extf %c : tensor<256xf16, #pairs> to tensor<256xf32, #pairs>
  %wd = arith.extf %d : tensor<256xf16, #pairs> to tensor<256xf32, #pairs>
  %t = arith.subf %wc, %wd : tensor<256xf32, #pairs>
  %rt = arith.truncf %t : tensor<256xf32, #pairs> to tensor<256xf16, #pairs>
  "test.use"(%rs, %rt) : (tensor<256xbf16, #pairs>, tensor<256xf16, #pairs>) -> ()
  return
}

// -----

// A kernel marked tile.wide_rounded_sums keeps them in f32.
#marked = #tile.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>
// CHECK-LABEL: gpu.func @rounded_sums_kept_by_kernel
// CHECK:         arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK-NOT:     arith.addf %{{.*}} : vector<8xbf16>
func.func @rounded_sums_kept_by_kernel(%p: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32, tile.wide_rounded_sums} {
  %i = tile.arange 0 to 256 : tensor<256xi32, #marked>
  %a = tile.load %p[%i] : !tile.ptr<bf16>[tensor<256xi32, #marked>] -> tensor<256xbf16, #marked>
  %b = tile.load %p[%i] : !tile.ptr<bf16>[tensor<256xi32, #marked>] -> tensor<256xbf16, #marked>
  %wa = arith.extf %a : tensor<256xbf16, #marked> to tensor<256xf32, #marked>
  %wb = arith.extf %b : tensor<256xbf16, #marked> to tensor<256xf32, #marked>
  %s = arith.addf %wa, %wb : tensor<256xf32, #marked>
  %rs = arith.truncf %s : tensor<256xf32, #marked> to tensor<256xbf16, #marked>
  "test.use"(%rs) : (tensor<256xbf16, #marked>) -> ()
  return
}

// -----

// Kept wide: a sum used unrounded too, a product, and an operand not widened from the
// result's type (f16 into bf16).
#kept = #tile.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>
// CHECK-LABEL: gpu.func @rounded_sums_kept
// CHECK:         arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-NOT:     arith.addf %{{.*}} : vector<8xbf16>
func.func @rounded_sums_kept(%p: !tile.ptr<bf16>, %q: !tile.ptr<f16>) attributes {tile.kernel, tile.num_warps = 1 : i32, tile.warp_size = 32 : i32} {
  %i = tile.arange 0 to 256 : tensor<256xi32, #kept>
  %a = tile.load %p[%i] : !tile.ptr<bf16>[tensor<256xi32, #kept>] -> tensor<256xbf16, #kept>
  %c = tile.load %q[%i] : !tile.ptr<f16>[tensor<256xi32, #kept>] -> tensor<256xf16, #kept>
  %wa = arith.extf %a : tensor<256xbf16, #kept> to tensor<256xf32, #kept>
  %wc = arith.extf %c : tensor<256xf16, #kept> to tensor<256xf32, #kept>
  %s = arith.addf %wa, %wa : tensor<256xf32, #kept>
  %rs = arith.truncf %s : tensor<256xf32, #kept> to tensor<256xbf16, #kept>
  %m = arith.mulf %wa, %wa : tensor<256xf32, #kept>
  %rm = arith.truncf %m : tensor<256xf32, #kept> to tensor<256xbf16, #kept>
  %x = arith.addf %wa, %wc : tensor<256xf32, #kept>
  %rx = arith.truncf %x : tensor<256xf32, #kept> to tensor<256xbf16, #kept>
  "test.use"(%s, %rs, %rm, %rx) : (tensor<256xf32, #kept>, tensor<256xbf16, #kept>, tensor<256xbf16, #kept>, tensor<256xbf16, #kept>) -> ()
  return
}
