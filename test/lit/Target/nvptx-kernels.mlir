// Hand-written gpu.modules in the LLVM dialect + NVVM, compiled in-process to PTX.
// (ptxas checks: nvptx-ptxas.test.)
//
// RUN: %wavetile compile %s --target sm_90 --emit ptx | FileCheck %s --check-prefixes=PTX,PTX90
// RUN: %wavetile compile %s --target sm_90a | FileCheck %s --check-prefixes=PTX,PTX90A
// RUN: %wavetile compile %s --target sm_90 --emit asm | FileCheck %s --check-prefixes=PTX,PTX90
// RUN: %wavetile compile %s --target sm_90 --emit llvm | FileCheck %s --check-prefix=IR
// RUN: not %wavetile compile %s --target sm_90 --emit hsaco 2>&1 | FileCheck %s --check-prefix=BADEMIT

// PTX90: .version 8.4
// PTX90: .target sm_90{{$}}
// PTX90A: .version 8.4
// PTX90A: .target sm_90a
// PTX: .address_size 64

// IR: target datalayout = "e-{{.*}}"
// IR: target triple = "nvptx64-nvidia-cuda"
// IR: define ptx_kernel void @scale_copy(

// BADEMIT: --emit 'hsaco' does not apply to target 'sm_90'; use ptx, asm or llvm

gpu.module @kernels {
  // out[4i .. 4i+3] = 2 * in[4i .. 4i+3], one <4 x float> per thread.
  // PTX-LABEL: .entry scale_copy(
  // PTX: .maxntid 256, 1, 1
  // LLVM 22 types PTX loads and stores by width (.b32, not .f32); `readonly` + `noalias`
  // make the load non-coherent (ld.global.nc, the read-only data path).
  // PTX: ld.global{{(\.nc)?}}.v4.{{f32|b32}}
  // PTX: st.global.v4.{{f32|b32}}
  llvm.func @scale_copy(%in: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %out: !llvm.ptr<1> {llvm.noalias})
      attributes {nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>} {
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %bid = nvvm.read.ptx.sreg.ctaid.x : i32
    %c256 = llvm.mlir.constant(256 : i32) : i32
    %c4 = llvm.mlir.constant(4 : i32) : i32
    %base = llvm.mul %bid, %c256 : i32
    %i = llvm.add %base, %tid : i32
    %e = llvm.mul %i, %c4 : i32
    %e64 = llvm.zext %e : i32 to i64
    %p = llvm.getelementptr inbounds %in[%e64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %v = llvm.load %p {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %two = llvm.mlir.constant(dense<2.0> : vector<4xf32>) : vector<4xf32>
    %r = llvm.fmul %v, %two : vector<4xf32>
    %q = llvm.getelementptr inbounds %out[%e64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    llvm.store %r, %q {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
    llvm.return
  }

  // One m16n8k16 bf16 mma.sync per warp: A is 4 x (2 x bf16), B 2 x (2 x bf16), C/D 4 x f32 per lane.
  // PTX-LABEL: .entry mma_bf16(
  // PTX: .reqntid 128, 1, 1
  // PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
  llvm.func @mma_bf16(%a: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %b: !llvm.ptr<1> {llvm.noalias, llvm.readonly},
                      %c: !llvm.ptr<1> {llvm.noalias})
      attributes {nvvm.kernel, nvvm.reqntid = array<i32: 128, 1, 1>} {
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %t64 = llvm.zext %tid : i32 to i64
    %pa = llvm.getelementptr inbounds %a[%t64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, vector<4xi32>
    %va = llvm.load %pa {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
    %pb = llvm.getelementptr inbounds %b[%t64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, vector<2xi32>
    %vb = llvm.load %pb {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xi32>
    %pc = llvm.getelementptr inbounds %c[%t64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, vector<4xf32>
    %vc = llvm.load %pc {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %i0 = llvm.mlir.constant(0 : i32) : i32
    %i1 = llvm.mlir.constant(1 : i32) : i32
    %i2 = llvm.mlir.constant(2 : i32) : i32
    %i3 = llvm.mlir.constant(3 : i32) : i32
    %a0 = llvm.extractelement %va[%i0 : i32] : vector<4xi32>
    %a1 = llvm.extractelement %va[%i1 : i32] : vector<4xi32>
    %a2 = llvm.extractelement %va[%i2 : i32] : vector<4xi32>
    %a3 = llvm.extractelement %va[%i3 : i32] : vector<4xi32>
    %b0 = llvm.extractelement %vb[%i0 : i32] : vector<2xi32>
    %b1 = llvm.extractelement %vb[%i1 : i32] : vector<2xi32>
    %c0 = llvm.extractelement %vc[%i0 : i32] : vector<4xf32>
    %c1 = llvm.extractelement %vc[%i1 : i32] : vector<4xf32>
    %c2 = llvm.extractelement %vc[%i2 : i32] : vector<4xf32>
    %c3 = llvm.extractelement %vc[%i3 : i32] : vector<4xf32>
    %d = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%c0, %c1, %c2, %c3]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
    %d1 = llvm.extractvalue %d[1] : !llvm.struct<(f32, f32, f32, f32)>
    %d2 = llvm.extractvalue %d[2] : !llvm.struct<(f32, f32, f32, f32)>
    %d3 = llvm.extractvalue %d[3] : !llvm.struct<(f32, f32, f32, f32)>
    %u = llvm.mlir.undef : vector<4xf32>
    %w0 = llvm.insertelement %d0, %u[%i0 : i32] : vector<4xf32>
    %w1 = llvm.insertelement %d1, %w0[%i1 : i32] : vector<4xf32>
    %w2 = llvm.insertelement %d2, %w1[%i2 : i32] : vector<4xf32>
    %w3 = llvm.insertelement %d3, %w2[%i3 : i32] : vector<4xf32>
    llvm.store %w3, %pc {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
    llvm.return
  }
}
