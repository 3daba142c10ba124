// wavetile-gpu-pipeline: a tile kernel leaves as a vendor kernel in the LLVM dialect, with no
// tile, gpu, scf, vector or memref ops and no device-library calls left.
// RUN: %wavetile-opt %s -pass-pipeline='builtin.module(wavetile-gpu-pipeline{target=gfx950})' | FileCheck %s --check-prefix=AMD
// RUN: %wavetile-opt %s -pass-pipeline='builtin.module(wavetile-gpu-pipeline{target=sm_90})' | FileCheck %s --check-prefix=NV

// AMD:     gpu.module @wavetile
// AMD:       llvm.func @scale({{.*}}) attributes {{{.*}}rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 256, 1, 1>
// AMD-NOT:   {{(tile|gpu|scf|vector|memref)\.[a-z_]+}}
// AMD-NOT:   llvm.func @__
// NV:      gpu.module @wavetile
// NV:        llvm.func @scale({{.*}}) attributes {{{.*}}nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>
// NV-NOT:    {{(tile|gpu|scf|vector|memref)\.[a-z_]+}}
// NV-NOT:    llvm.func @__
func.func @scale(%x: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %pid = tile.program_id 0
  %c1024 = arith.constant 1024 : i32
  %base = arith.muli %pid, %c1024 : i32
  %r = tile.arange 0 to 1024 : tensor<1024xi32>
  %b = tile.splat %base : i32 -> tensor<1024xi32>
  %o = arith.addi %b, %r : tensor<1024xi32>
  %nn = tile.splat %n : i32 -> tensor<1024xi32>
  %m = arith.cmpi slt, %o, %nn : tensor<1024xi32>
  %v = tile.load %x[%o] mask %m : !tile.ptr<f32>[tensor<1024xi32>], tensor<1024xi1> -> tensor<1024xf32>
  %e = math.exp %v : tensor<1024xf32>
  %s = tile.reduce max %e axis = 0 : tensor<1024xf32> -> f32
  %ss = tile.splat %s : f32 -> tensor<1024xf32>
  %q = arith.divf %e, %ss : tensor<1024xf32>
  tile.store %q, %x[%o] mask %m : tensor<1024xf32>, !tile.ptr<f32>[tensor<1024xi32>], tensor<1024xi1>
  return
}
