// dot on matrix cores: with MMA layouts, each warp issues one atom per (row block, column
// block, K step) — amdgpu.mfma on CDNA, nvvm.mma.sync (bf16 pairs packed in i32) on sm_90 —
// and no shared-memory FMA loop remains.
// RUN: %wavetile-opt %S/../../Dialect/Tile/Transforms/assign-layouts-mma.mlir -allow-unregistered-dialect -tile-assign-layouts="warp-size=64 target=gfx942" -convert-tile-to-gpu=target=gfx942 -canonicalize | FileCheck %s --check-prefix=CDNA3
// RUN: %wavetile-opt %S/../../Dialect/Tile/Transforms/assign-layouts-mma.mlir -allow-unregistered-dialect -tile-assign-layouts="warp-size=32 target=sm_90" -convert-tile-to-gpu=target=sm_90 -canonicalize | FileCheck %s --check-prefix=SM90
// RUN: %wavetile-opt %S/../../Dialect/Tile/Transforms/assign-layouts-mma.mlir -allow-unregistered-dialect -tile-assign-layouts="warp-size=64 target=gfx950" -convert-tile-to-gpu=target=gfx950 -canonicalize | FileCheck %s --check-prefix=CDNA4

// 64x64x32, warps 2x2, 32x32x8 atoms: each warp one 32x32 block, 4 K steps.
// CDNA3-LABEL:   gpu.func @gemm_tile
// CDNA3:         scf.for
// CDNA3-COUNT-4:   amdgpu.mfma 32x32x8 {{.*}} : vector<4xbf16>, vector<4xbf16>, vector<16xf32>
// CDNA3-NOT:       amdgpu.mfma
// CDNA3:           scf.yield
// 64x64x32, warps 2x2, m16n8k16 atoms: each warp 2 row blocks x 4 column blocks, 2 K steps.
// SM90-LABEL:    gpu.func @gemm_tile
// SM90:          scf.for
// The loads' blocked tiles reach the operand layouts through a swizzled stage read by ldmatrix.
// SM90-COUNT-4:    nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>
// SM90-COUNT-4:    nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>
// SM90-COUNT-16:   nvvm.mma.sync A[{{.*}}, {{.*}}, {{.*}}, {{.*}}] B[{{.*}}, {{.*}}] C[{{.*}}, {{.*}}, {{.*}}, {{.*}}] {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// SM90-NOT:        nvvm.mma.sync
// SM90:            scf.yield

// Operands read straight from shared memory with ldmatrix: in each warp's 32x32 block, A's
// 8x8 fragments are rows of the row-major stage (4 x4), B's run down its columns
// (4 x4.trans); no element loads remain.
// SM90-LABEL:    gpu.func @operands_from_shared
// SM90-SAME:       workgroup({{.*}} : memref<8192xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}
// SM90:          scf.for
// SM90-COUNT-4:    nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>
// SM90-COUNT-4:    nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>
// SM90-NOT:        nvvm.ldmatrix
// SM90-NOT:        memref.load
// SM90-COUNT-16:   nvvm.mma.sync
// SM90-NOT:        nvvm.mma.sync
// SM90:            scf.yield
// SM90-LABEL:    gpu.func @stages_through_slices

// Weights stored [N, K] and transposed for the dot: B's k-runs lie along the stage's rows,
// so sm_90 reads B with plain ldmatrix too (8 in all, no .trans) and CDNA3 reads both
// operands with 16-byte LDS loads, each lane's 8-byte fragments of two K steps side by side
// (the dot-operand layouts pair K steps alike for A and B); the transpose itself moves
// nothing (no barrier, no element loads).
// SM90-LABEL:    gpu.func @weights_n_by_k
// SM90:          scf.for
// SM90-COUNT-8:    nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// SM90-NOT:        gpu.barrier
// SM90-NOT:        memref.load
// SM90-COUNT-16:   nvvm.mma.sync
// CDNA3-LABEL:   gpu.func @weights_n_by_k
// CDNA3:         scf.for
// CDNA3-COUNT-4:   vector.load {{.*}} {alignment = 16 : i64} : memref<2048xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CDNA3-NOT:       vector.load
// CDNA3-NOT:       gpu.barrier
// CDNA3-NOT:       memref.load
// CDNA3-COUNT-4:   amdgpu.mfma

// Block-scaled MFMA (gfx950): one amdgpu.scaled_mfma per warp for the 64x64x64 fp8 x fp4 tile
// (warps 2x2, one 32x32x64 atom each), taking this lane's scale byte of A and of B. fp4
// operands are packed into four 32-bit words first (element 0 in the low bits), so no
// vector of i4 reaches LLVM.
// CDNA4-LABEL:   gpu.func @scaled_tile
// CDNA4:         %[[WORDS:.*]] = vector.from_elements {{.*}} : vector<4xi32>
// CDNA4:         %[[B:.*]] = vector.bitcast %[[WORDS]] : vector<4xi32> to vector<32xf4E2M1FN>
// CDNA4:         amdgpu.scaled_mfma 32x32x64 (%{{.*}}[0] * %{{.*}}) * (%{{.*}}[0] * %[[B]]) + %{{.*}} : f8E8M0FNU, vector<32xf8E4M3FN>, f8E8M0FNU, vector<32xf4E2M1FN>, vector<16xf32>
// CDNA4-NOT:     amdgpu.scaled_mfma

// Block scales broadcast from the shared tiles they were read from: each thread loads the rows
// and columns its accumulator registers hold (4 of each per thread), no barrier, no scratch.
// SM90-LABEL:    gpu.func @block_scaled_sum
// SM90-NOT:        gpu.barrier
// SM90:            nvvm.mma.sync
// SM90-COUNT-4:    memref.load %arg2[
// SM90-COUNT-4:    memref.load %arg3[
// SM90-NOT:        gpu.barrier
// SM90:            gpu.return

// Their product first, then one fma: each thread reads its 4 rows' X scales and W's one
// scale once, multiplies per register, and the block's sum is added in the same instruction.
// SM90-LABEL:    gpu.func @block_scaled_fma
// SM90-NOT:        gpu.barrier
// SM90:            nvvm.mma.sync
// SM90-COUNT-4:    memref.load %arg2[
// SM90:            memref.load %arg3[
// SM90-NOT:        memref.load
// SM90:            arith.mulf {{.*}} : vector<4xf32>
// SM90:            math.fma {{.*}} : vector<4xf32>
// SM90-NOT:        gpu.barrier
// SM90:            gpu.return

// int8: s8 quadruples packed in i32, summed in s32 and wrapping (as dp4a and CDNA's MFMA do).
// SM90-LABEL:    gpu.func @int8_tile
// SM90:          scf.for
// SM90-COUNT-16:   nvvm.mma.sync {{.*}}intOverflowBehavior = #nvvm.mma_int_overflow<wrapped>{{.*}}multiplicandAPtxType = #nvvm.mma_type<s8>, multiplicandBPtxType = #nvvm.mma_type<s8>, shape = #nvvm.shape<m = 16, n = 8, k = 32>} : (i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
// SM90-NOT:        nvvm.mma.sync
// SM90:            scf.yield
// CDNA3-LABEL:   gpu.func @int8_tile
// CDNA3-COUNT-4:   amdgpu.mfma 32x32x16 {{.*}} : vector<8xi8>, vector<8xi8>, vector<16xi32>
