// convert-tile-to-gpu of maxima of absolute values (amax) on CDNA. gfx942 has no
// NaN-propagating float maximum (a compare and a select per step): maxima of f32 with clear
// sign bits (absolute values, non-negative constants, loops carrying them) become integer
// maxima of their bits, NaN included. gfx950's maximum instructions propagate NaN, so it
// keeps the float maximum, as gfx942 does where a sign bit may be set.
// RUN: %wavetile-opt %s -convert-tile-to-gpu=target=gfx942 -canonicalize -cse | FileCheck %s --check-prefix=GFX942
// RUN: %wavetile-opt %s -convert-tile-to-gpu=target=gfx950 -canonicalize -cse | FileCheck %s --check-prefix=GFX950

#w = #tile.blocked<sizePerThread = [4], threadsPerWarp = [64], warpsPerBlock = [2], order = [0]>

// In the thread, across lanes and across warps.
// GFX942-LABEL: gpu.func @row_amax
// GFX942-NOT:   arith.maximumf
// GFX942:       arith.maxsi %{{.*}}, %{{.*}} : i32
// GFX942:       gpu.shuffle
// GFX942:       arith.maxsi %{{.*}}, %{{.*}} : i32
// GFX942-NOT:   arith.maximumf
// GFX942:       gpu.return
// GFX950-LABEL: gpu.func @row_amax
// GFX950-NOT:   arith.maxsi
// GFX950:       arith.maximumf
// GFX950-NOT:   arith.maxsi
// GFX950:       gpu.return
func.func @row_amax(%p: !tile.ptr<bf16>, %o: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 2 : i32, tile.warp_size = 64 : i32} {
  %offs = tile.arange 0 to 512 : tensor<512xi32, #w>
  %x = tile.load %p[%offs] : !tile.ptr<bf16>[tensor<512xi32, #w>] -> tensor<512xbf16, #w>
  %y = arith.extf %x : tensor<512xbf16, #w> to tensor<512xf32, #w>
  %a = math.absf %y : tensor<512xf32, #w>
  %m = tile.reduce max %a axis = 0 : tensor<512xf32, #w> -> f32
  %c0 = arith.constant 0 : i32
  %one = tile.splat %m : f32 -> tensor<512xf32, #w>
  tile.store %one, %o[%offs] : tensor<512xf32, #w>, !tile.ptr<f32>[tensor<512xi32, #w>]
  return
}

// A loop carrying the elementwise amax from zeros, then reduced.
// GFX942-LABEL: gpu.func @loop_amax
// GFX942-NOT:   arith.maximumf
// GFX942:       scf.for
// GFX942:       arith.maxsi %{{.*}}, %{{.*}} : vector<4xi32>
// GFX942:       scf.yield
// GFX942-NOT:   arith.maximumf
// GFX942:       gpu.return
// GFX950-LABEL: gpu.func @loop_amax
// GFX950:       arith.maximumf %{{.*}}, %{{.*}} : vector<4xf32>
func.func @loop_amax(%p: !tile.ptr<f32>, %o: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 2 : i32, tile.warp_size = 64 : i32} {
  %offs = tile.arange 0 to 512 : tensor<512xi32, #w>
  %zero = arith.constant dense<0.0> : tensor<512xf32, #w>
  %c0 = arith.constant 0 : i32
  %c512 = arith.constant 512 : i32
  %acc = scf.for %i = %c0 to %n step %c512 iter_args(%a = %zero) -> (tensor<512xf32, #w>) : i32 {
    %base = tile.splat %i : i32 -> tensor<512xi32, #w>
    %at = arith.addi %base, %offs : tensor<512xi32, #w>
    %x = tile.load %p[%at] : !tile.ptr<f32>[tensor<512xi32, #w>] -> tensor<512xf32, #w>
    %ax = math.absf %x : tensor<512xf32, #w>
    %next = arith.maximumf %a, %ax : tensor<512xf32, #w>
    scf.yield %next : tensor<512xf32, #w>
  }
  %m = tile.reduce max %acc axis = 0 : tensor<512xf32, #w> -> f32
  %one = tile.splat %m : f32 -> tensor<512xf32, #w>
  tile.store %one, %o[%offs] : tensor<512xf32, #w>, !tile.ptr<f32>[tensor<512xi32, #w>]
  return
}

// Signed values, or a loop starting from -1: float maxima.
// GFX942-LABEL: gpu.func @signed_max
// GFX942-NOT:   arith.maxsi
// GFX942:       arith.maximumf %{{.*}}, %{{.*}} : vector<4xf32>
// GFX942-NOT:   arith.maxsi
// GFX942:       gpu.return
func.func @signed_max(%p: !tile.ptr<f32>, %o: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 2 : i32, tile.warp_size = 64 : i32} {
  %offs = tile.arange 0 to 512 : tensor<512xi32, #w>
  %init = arith.constant dense<-1.0> : tensor<512xf32, #w>
  %c0 = arith.constant 0 : i32
  %c512 = arith.constant 512 : i32
  %acc = scf.for %i = %c0 to %n step %c512 iter_args(%a = %init) -> (tensor<512xf32, #w>) : i32 {
    %base = tile.splat %i : i32 -> tensor<512xi32, #w>
    %at = arith.addi %base, %offs : tensor<512xi32, #w>
    %x = tile.load %p[%at] : !tile.ptr<f32>[tensor<512xi32, #w>] -> tensor<512xf32, #w>
    %ax = math.absf %x : tensor<512xf32, #w>
    %next = arith.maximumf %a, %ax : tensor<512xf32, #w>
    scf.yield %next : tensor<512xf32, #w>
  }
  %x = tile.load %p[%offs] : !tile.ptr<f32>[tensor<512xi32, #w>] -> tensor<512xf32, #w>
  %m = tile.reduce max %x axis = 0 : tensor<512xf32, #w> -> f32
  %one = tile.splat %m : f32 -> tensor<512xf32, #w>
  %both = arith.addf %one, %acc : tensor<512xf32, #w>
  tile.store %both, %o[%offs] : tensor<512xf32, #w>, !tile.ptr<f32>[tensor<512xi32, #w>]
  return
}
