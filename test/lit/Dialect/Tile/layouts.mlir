// Round-trip of distributed layouts (blocked, slice, mma, dot_operand, linear), the shared
// layout, and the kernel attributes tile.kernel / tile.num_warps / tile.warp_size with layouts
// that agree with them.
// RUN: %wavetile-opt %s | %wavetile-opt | FileCheck %s

// Every layout is printed once, as an alias at the top of the module; capture each one checked below.
// CHECK-DAG: #[[B1D:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>
// CHECK-DAG: #[[B2D:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerBlock = [2, 2], order = [1, 0]>
// CHECK-DAG: #[[B3D:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 1, 4], threadsPerWarp = [1, 4, 8], warpsPerBlock = [2, 1, 1], order = [2, 0, 1]>
// CHECK-DAG: #[[BPAR:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 16], warpsPerBlock = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[BPAR3:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 1, 1], threadsPerWarp = [2, 4, 8], warpsPerBlock = [1, 1, 4], order = [2, 1, 0]>
// CHECK-DAG: #[[BNV:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerBlock = [2, 2], order = [1, 0]>
// CHECK-DAG: #[[MMA_SL:[a-z_0-9]+]] = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_f16", warpsPerBlock = [1, 4]>
// CHECK-DAG: #[[ACC:[a-z_0-9]+]] = #tile.mma<atom = "gfx942.mfma_f32_16x16x16_bf16", warpsPerBlock = [2, 2]>
// CHECK-DAG: #[[MMA_CDNA3:[a-z_0-9]+]] = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [1, 1]>
// CHECK-DAG: #[[MMA_CDNA4:[a-z_0-9]+]] = #tile.mma<atom = "gfx950.mfma_f32_16x16x32_bf16", warpsPerBlock = [4, 2]>
// CHECK-DAG: #[[MMA_SM90:[a-z_0-9]+]] = #tile.mma<atom = "sm_90.mma_m16n8k16_f32_f16_f16", warpsPerBlock = [2, 2]>
// CHECK-DAG: #[[MMA_NV:[a-z_0-9]+]] = #tile.mma<atom = "sm_90.mma_m16n8k16_f32_bf16_bf16", warpsPerBlock = [4, 1]>
// CHECK-DAG: #[[MMA_K:[a-z_0-9]+]] = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_f16", warpsPerBlock = [2, 1]>
// CHECK-DAG: #[[OPA_ACC:[a-z_0-9]+]] = #tile.dot_operand<operand = 0, parent = #[[ACC]]>
// CHECK-DAG: #[[OPA_SM90:[a-z_0-9]+]] = #tile.dot_operand<operand = 0, parent = #[[MMA_SM90]]>
// CHECK-DAG: #[[OPB_SM90:[a-z_0-9]+]] = #tile.dot_operand<operand = 1, parent = #[[MMA_SM90]]>
// CHECK-DAG: #[[ROWS:[a-z_0-9]+]] = #tile.slice<dim = 1, parent = #[[BPAR]]>
// CHECK-DAG: #[[COLS:[a-z_0-9]+]] = #tile.slice<dim = 0, parent = #[[BPAR]]>
// CHECK-DAG: #[[SL2:[a-z_0-9]+]] = #tile.slice<dim = 2, parent = #[[BPAR3]]>
// CHECK-DAG: #[[SL2_0:[a-z_0-9]+]] = #tile.slice<dim = 0, parent = #[[SL2]]>
// CHECK-DAG: #[[SL_MMA:[a-z_0-9]+]] = #tile.slice<dim = 0, parent = #[[MMA_SL]]>
// CHECK-DAG: #[[ACC_ROWS:[a-z_0-9]+]] = #tile.slice<dim = 1, parent = #[[ACC]]>
// CHECK-DAG: #[[ACC_COLS:[a-z_0-9]+]] = #tile.slice<dim = 0, parent = #[[ACC]]>
// CHECK-DAG: #[[OPA_ROWS:[a-z_0-9]+]] = #tile.slice<dim = 1, parent = #[[OPA_ACC]]>
// CHECK-DAG: #[[NV_ROWS:[a-z_0-9]+]] = #tile.slice<dim = 1, parent = #[[BNV]]>
// CHECK-DAG: #[[LIN0:[a-z_0-9]+]] = #tile.linear<"(4,32,2):(1,4,128)">
// CHECK-DAG: #[[LIN1:[a-z_0-9]+]] = #tile.linear<"((2,2),(8,8),1):((1,16),(2,32),0)">
// CHECK-DAG: #[[LIN2:[a-z_0-9]+]] = #tile.linear<"(4, 32, (2, 2)) : (1, 4, (0, 0))">
// CHECK-DAG: #[[LIN_K:[a-z_0-9]+]] = #tile.linear<"(4,64,2):(1,4,256)">
// CHECK-DAG: #[[SW:[a-z_0-9]+]] = #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], padding = 0>
// CHECK-DAG: #[[PAD:[a-z_0-9]+]] = #tile.shared_layout<vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1], padding = 8>
// CHECK-DAG: #[[SWPAD:[a-z_0-9]+]] = #tile.shared_layout<vec = 4, perPhase = 2, maxPhase = 4, order = [2, 1, 0], padding = 4>

// Blocked layouts of rank 1-3, for 32- and 64-thread warps. A tile dimension may be a multiple
// of what the layout covers (the pattern repeats) or divide it (threads hold replicas).
// CHECK-LABEL: func.func private @blocked
// CHECK-SAME:    tensor<1024xf32, #[[B1D]]>
// CHECK-SAME:    tensor<16xf32, #[[B1D]]>
// CHECK-SAME:    tensor<64x64xf16, #[[B2D]]>
// CHECK-SAME:    tensor<2x32x32xi8, #[[B3D]]>
func.func private @blocked(
    tensor<1024xf32, #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>>,
    tensor<16xf32, #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>>,
    tensor<64x64xf16, #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerBlock = [2, 2], order = [1, 0]>>,
    tensor<2x32x32xi8, #tile.blocked<sizePerThread = [1, 1, 4], threadsPerWarp = [1, 4, 8], warpsPerBlock = [2, 1, 1], order = [2, 0, 1]>>)

// Slices of a blocked parent (rows and columns), of a slice, and of an MMA layout.
// CHECK-LABEL: func.func private @slices
// CHECK-SAME:    tensor<64xf32, #[[ROWS]]>
// CHECK-SAME:    tensor<64xf32, #[[COLS]]>
// CHECK-SAME:    tensor<8xi32, #[[SL2_0]]>
// CHECK-SAME:    tensor<32xf32, #[[SL_MMA]]>
func.func private @slices(
    tensor<64xf32, #tile.slice<dim = 1, parent = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 16], warpsPerBlock = [4, 1], order = [1, 0]>>>,
    tensor<64xf32, #tile.slice<dim = 0, parent = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 16], warpsPerBlock = [4, 1], order = [1, 0]>>>,
    tensor<8xi32, #tile.slice<dim = 0, parent = #tile.slice<dim = 2, parent = #tile.blocked<sizePerThread = [1, 1, 1], threadsPerWarp = [2, 4, 8], warpsPerBlock = [1, 1, 4], order = [2, 1, 0]>>>>,
    tensor<32xf32, #tile.slice<dim = 0, parent = #tile.mma<atom = "gfx942.mfma_f32_32x32x8_f16", warpsPerBlock = [1, 4]>>>)

// Reducing an MMA accumulator gives a slice of the MMA layout. (The slice check used to
// restore the dropped dimension at size 1, which no MMA layout accepts.)
#acc = #tile.mma<atom = "gfx942.mfma_f32_16x16x16_bf16", warpsPerBlock = [2, 2]>
// CHECK-LABEL: func.func @reduce_mma_accumulator
// CHECK:         tile.reduce max %{{.*}} axis = 1 : tensor<64x32xf32, #[[ACC]]> -> tensor<64xf32, #[[ACC_ROWS]]>
// CHECK:         tile.reduce sum %{{.*}} axis = 0 : tensor<64x32xf32, #[[ACC]]> -> tensor<32xf32, #[[ACC_COLS]]>
// CHECK:         tensor<16xbf16, #[[OPA_ROWS]]>
func.func @reduce_mma_accumulator(%c: tensor<64x32xf32, #acc>, %a: tensor<16x16xbf16, #tile.dot_operand<operand = 0, parent = #acc>>)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 64 : i32} {
  %0 = tile.reduce max %c axis = 1 : tensor<64x32xf32, #acc> -> tensor<64xf32, #tile.slice<dim = 1, parent = #acc>>
  %1 = tile.reduce sum %c axis = 0 : tensor<64x32xf32, #acc> -> tensor<32xf32, #tile.slice<dim = 0, parent = #acc>>
  %2 = tile.reduce sum %a axis = 1 : tensor<16x16xbf16, #tile.dot_operand<operand = 0, parent = #acc>> -> tensor<16xbf16, #tile.slice<dim = 1, parent = #tile.dot_operand<operand = 0, parent = #acc>>>
  return
}

// MMA accumulator layouts and the operand layouts derived from them.
// CHECK-LABEL: func.func private @mma
// CHECK-SAME:    tensor<32x32xf32, #[[MMA_CDNA3]]>
// CHECK-SAME:    tensor<128x64xf32, #[[MMA_CDNA4]]>
// CHECK-SAME:    tensor<32x16xf32, #[[MMA_SM90]]>
// CHECK-SAME:    tensor<32x16xf16, #[[OPA_SM90]]>
// CHECK-SAME:    tensor<16x16xf16, #[[OPB_SM90]]>
func.func private @mma(
    tensor<32x32xf32, #tile.mma<atom = "gfx942.mfma_f32_32x32x8_bf16", warpsPerBlock = [1, 1]>>,
    tensor<128x64xf32, #tile.mma<atom = "gfx950.mfma_f32_16x16x32_bf16", warpsPerBlock = [4, 2]>>,
    tensor<32x16xf32, #tile.mma<atom = "sm_90.mma_m16n8k16_f32_f16_f16", warpsPerBlock = [2, 2]>>,
    tensor<32x16xf16, #tile.dot_operand<operand = 0, parent = #tile.mma<atom = "sm_90.mma_m16n8k16_f32_f16_f16", warpsPerBlock = [2, 2]>>>,
    tensor<16x16xf16, #tile.dot_operand<operand = 1, parent = #tile.mma<atom = "sm_90.mma_m16n8k16_f32_f16_f16", warpsPerBlock = [2, 2]>>>)

// Linear layouts: (values, lanes, warps) modes onto row-major element indices; warps may
// replicate (stride 0). The map string is kept verbatim, whitespace included.
// CHECK-LABEL: func.func private @linear
// CHECK-SAME:    tensor<256xf32, #[[LIN0]]>
// CHECK-SAME:    tensor<16x16xf32, #[[LIN1]]>
// CHECK-SAME:    tensor<128xf32, #[[LIN2]]>
func.func private @linear(
    tensor<256xf32, #tile.linear<"(4,32,2):(1,4,128)">>,
    tensor<16x16xf32, #tile.linear<"((2,2),(8,8),1):((1,16),(2,32),0)">>,
    tensor<128xf32, #tile.linear<"(4, 32, (2, 2)) : (1, 4, (0, 0))">>)

// Shared layouts: swizzled, padded, and both.
// CHECK-LABEL: func.func private @shared_layouts
// CHECK-SAME:    !tile.shared<64x64xf16, #[[SW]]>
// CHECK-SAME:    !tile.shared<64x64xf16, #[[PAD]]>
// CHECK-SAME:    !tile.shared<2x32x64xbf16, #[[SWPAD]]>
func.func private @shared_layouts(
    !tile.shared<64x64xf16, #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], padding = 0>>,
    !tile.shared<64x64xf16, #tile.shared_layout<vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1], padding = 8>>,
    !tile.shared<2x32x64xbf16, #tile.shared_layout<vec = 4, perPhase = 2, maxPhase = 4, order = [2, 1, 0], padding = 4>>)

//===----------------------------------------------------------------------===//
// Kernels whose layouts agree with tile.num_warps and tile.warp_size.
//===----------------------------------------------------------------------===//

#b4 = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>
#b2d = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerBlock = [2, 2], order = [1, 0]>
#rows = #tile.slice<dim = 1, parent = #b2d>

// The warp size may come from the enclosing module.
// CHECK-LABEL: module attributes {tile.warp_size = 32 : i32}
// CHECK:         func.func @nvidia_kernel(%{{.*}}: !tile.ptr<f32>, %{{.*}}: tensor<32x32xf32, #[[BNV]]>) attributes {tile.kernel, tile.num_warps = 4 : i32}
// CHECK:           tile.arange 0 to 512 : tensor<512xi32, #[[B1D]]>
// CHECK:           tile.reduce sum {{.*}} -> tensor<32xf32, #[[NV_ROWS]]>
// CHECK:           scf.for
// CHECK:           tile.dot {{.*}} -> tensor<32x16xf32, #[[MMA_NV]]>
module attributes {tile.warp_size = 32 : i32} {
  func.func @nvidia_kernel(%p: !tile.ptr<f32>, %t: tensor<32x32xf32, #b2d>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
    %0 = tile.arange 0 to 512 : tensor<512xi32, #b4>
    %1 = tile.reduce sum %t axis = 1 : tensor<32x32xf32, #b2d> -> tensor<32xf32, #rows>
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %t) -> (tensor<32x32xf32, #b2d>) {
      %s = arith.addf %acc, %t : tensor<32x32xf32, #b2d>
      scf.yield %s : tensor<32x32xf32, #b2d>
    }
    %a = arith.constant dense<1.0> : tensor<32x16xbf16>
    %b = arith.constant dense<1.0> : tensor<16x16xbf16>
    %c = arith.constant dense<0.0> : tensor<32x16xf32>
    %3 = tile.dot %a, %b, %c : tensor<32x16xbf16>, tensor<16x16xbf16>, tensor<32x16xf32> -> tensor<32x16xf32, #tile.mma<atom = "sm_90.mma_m16n8k16_f32_bf16_bf16", warpsPerBlock = [4, 1]>>
    return
  }
}

// A CDNA kernel: 64-thread warps on the kernel itself; MFMA and linear layouts.
// CHECK-LABEL: func.func @cdna_kernel
// CHECK-SAME:    attributes {tile.kernel, tile.num_warps = 2 : i32, tile.warp_size = 64 : i32}
// CHECK:         tile.convert_layout {{.*}} -> tensor<64x32xf32, #[[MMA_K]]>
// CHECK:         tile.arange 0 to 512 : tensor<512xi32, #[[LIN_K]]>
func.func @cdna_kernel(%x: tensor<64x32xf32>) attributes {tile.kernel, tile.num_warps = 2 : i32, tile.warp_size = 64 : i32} {
  %0 = tile.convert_layout %x : tensor<64x32xf32> -> tensor<64x32xf32, #tile.mma<atom = "gfx942.mfma_f32_32x32x8_f16", warpsPerBlock = [2, 1]>>
  %1 = tile.arange 0 to 512 : tensor<512xi32, #tile.linear<"(4,64,2):(1,4,256)">>
  return
}

// Without tile.num_warps / tile.warp_size a kernel accepts any layout, and layouts need no kernel.
// CHECK-LABEL: func.func @unconstrained_kernel
// CHECK-SAME:    attributes {tile.kernel}
func.func @unconstrained_kernel() attributes {tile.kernel} {
  %0 = tile.arange 0 to 128 : tensor<128xi32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [64], warpsPerBlock = [8], order = [0]>>
  %1 = tile.arange 0 to 128 : tensor<128xi32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>>
  return
}

// tile.num_warps and tile.warp_size are checked attributes on their own, too.
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-SAME:    attributes {tile.num_warps = 8 : i32, tile.warp_size = 32 : i32}
func.func @not_a_kernel() attributes {tile.num_warps = 8 : i32, tile.warp_size = 32 : i32} {
  %0 = tile.arange 0 to 128 : tensor<128xi32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [64], warpsPerBlock = [1], order = [0]>>
  return
}

// tile.params records the integer parameters a kernel was specialized with.
// CHECK-LABEL: func.func @specialized
// CHECK-SAME:    attributes {tile.kernel, tile.params = {BLOCK = 128 : i32, STAGES = 2 : i64}}
func.func @specialized() attributes {tile.kernel, tile.params = {BLOCK = 128 : i32, STAGES = 2 : i64}} {
  return
}
