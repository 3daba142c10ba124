// Hand-written gpu.modules in the LLVM dialect + ROCDL (what the distribution pass
// and convert-*-to-rocdl will produce), compiled in-process to AMDGPU assembly and
// to an hsaco (lld as a library), then inspected.
//
// RUN: %wavetile compile %s --target gfx942 --emit asm | FileCheck %s --check-prefixes=ASM,ASM942
// RUN: %wavetile compile %s --target gfx950 --emit asm | FileCheck %s --check-prefixes=ASM,ASM950
// RUN: %wavetile compile %s --target gfx942 --emit llvm | FileCheck %s --check-prefix=IR
// RUN: %wavetile compile %s --target gfx942 -o %t.gfx942.hsaco
// RUN: llvm-readelf --file-header --dyn-syms %t.gfx942.hsaco | FileCheck %s --check-prefix=ELF
// RUN: %wavetile inspect %t.gfx942.hsaco --json | FileCheck %s --check-prefix=INSPECT
// RUN: %wavetile inspect %t.gfx942.hsaco | FileCheck %s --check-prefix=TEXT
// RUN: %wavetile compile %s --target gfx950 --emit hsaco -o %t.gfx950.hsaco
// RUN: %wavetile inspect %t.gfx950.hsaco --json | FileCheck %s --check-prefix=INSPECT950

// ASM942: .amdgcn_target "amdgcn-amd-amdhsa--gfx942"
// ASM950: .amdgcn_target "amdgcn-amd-amdhsa--gfx950"
// ASM: .amdhsa_code_object_version 5

// IR: target datalayout = "e-{{.*}}"
// IR: target triple = "amdgcn-amd-amdhsa"
// IR: define amdgpu_kernel void @scale_copy({{.*}}) {{.*}}#[[COPY:[0-9]+]]
// IR: define amdgpu_kernel void @lds_exchange({{.*}}) {{.*}}#[[LDS:[0-9]+]]
// IR-DAG: attributes #[[COPY]] = { {{.*}}"amdgpu-flat-work-group-size"="256,256"
// IR-DAG: attributes #[[LDS]] = { {{.*}}"amdgpu-flat-work-group-size"="512,512"
// IR-DAG: !{i32 1, !"amdhsa_code_object_version", i32 500}

// ELF: OS/ABI: AMDGPU - HSA
// ELF: ABI Version: 3
// ELF: Machine: EM_AMDGPU
// ELF: Flags: {{.*}}gfx942
// ELF-NOT: UND {{[_a-zA-Z]}}

// Every kernel: no scratch, no spills, a small VGPR count, full occupancy, and the
// instructions its source asks for.
// INSPECT: "format": "hsaco",
// INSPECT: "chip": "gfx942",
// INSPECT: "code_object_version": 5,
// INSPECT: "notes": [],
// INSPECT-LABEL: "name": "scale_copy",
// INSPECT-NEXT: "vgpr_count": {{([1-9]|[1-3][0-9])}},
// INSPECT-NEXT: "agpr_count": 0,
// INSPECT-NEXT: "sgpr_count": {{[0-9]+}},
// INSPECT-NEXT: "group_segment_fixed_size": 0,
// INSPECT-NEXT: "private_segment_fixed_size": 0,
// INSPECT-NEXT: "vgpr_spill_count": 0,
// INSPECT-NEXT: "sgpr_spill_count": 0,
// INSPECT-NEXT: "wavefront_size": 64,
// INSPECT-NEXT: "max_flat_workgroup_size": 256,
// INSPECT: "waves_per_simd": 8,
// INSPECT: "global_load_dwordx4": 1,
// INSPECT: "global_store_dwordx4": 1,
// INSPECT-LABEL: "name": "mfma_bf16",
// INSPECT-NEXT: "vgpr_count": {{([1-9]|[1-3][0-9])}},
// INSPECT: "private_segment_fixed_size": 0,
// INSPECT-NEXT: "vgpr_spill_count": 0,
// INSPECT-NEXT: "sgpr_spill_count": 0,
// INSPECT-NEXT: "wavefront_size": 64,
// INSPECT-NEXT: "max_flat_workgroup_size": 64,
// INSPECT: "waves_per_simd": 8,
// INSPECT: "v_mfma_f32_32x32x8_bf16": 1
// INSPECT-LABEL: "name": "buffer_copy",
// INSPECT-NEXT: "vgpr_count": {{([1-9]|[1-3][0-9])}},
// INSPECT: "private_segment_fixed_size": 0,
// INSPECT-NEXT: "vgpr_spill_count": 0,
// INSPECT-NEXT: "sgpr_spill_count": 0,
// INSPECT: "buffer_load_dwordx4": 1,
// INSPECT-NEXT: "buffer_store_dwordx4": 1,
// INSPECT-LABEL: "name": "lds_exchange",
// INSPECT-NEXT: "vgpr_count": {{([1-9]|[1-3][0-9])}},
// INSPECT-NEXT: "agpr_count": 0,
// INSPECT-NEXT: "sgpr_count": {{[0-9]+}},
// INSPECT-NEXT: "group_segment_fixed_size": 8192,
// INSPECT-NEXT: "private_segment_fixed_size": 0,
// INSPECT-NEXT: "vgpr_spill_count": 0,
// INSPECT-NEXT: "sgpr_spill_count": 0,
// INSPECT-NEXT: "wavefront_size": 64,
// INSPECT-NEXT: "max_flat_workgroup_size": 512,
// INSPECT: "waves_per_simd": 8,
// INSPECT: "ds_read_b128": 1,
// INSPECT-NEXT: "ds_write_b128": 1,
// INSPECT: "s_barrier": 1,

// TEXT: AMDGPU code object, target amdgcn-amd-amdhsa--gfx942, code object v5
// TEXT: kernel scale_copy
// TEXT-NEXT: vgpr_count={{[0-9]+}} agpr_count=0 {{.*}} private_segment_fixed_size=0 vgpr_spill_count=0 sgpr_spill_count=0
// TEXT-NEXT: occupancy 8 waves/SIMD
// TEXT: kernel lds_exchange
// TEXT: ds_write_b128=1

// INSPECT950: "chip": "gfx950",
// INSPECT950: "code_object_version": 5,
// INSPECT950-LABEL: "name": "mfma_bf16",
// INSPECT950: "private_segment_fixed_size": 0,
// INSPECT950: "v_mfma_f32_32x32x8_bf16": 1
// INSPECT950-LABEL: "name": "lds_exchange",
// INSPECT950: "ds_read_b128": 1,
// INSPECT950-NEXT: "ds_write_b128": 1,

gpu.module @kernels {
  // out[4i .. 4i+3] = 2 * in[4i .. 4i+3], one <4 x float> per thread.
  // ASM-LABEL: {{^}}scale_copy:
  // ASM: global_load_dwordx4
  // ASM: {{v_pk_mul_f32|v_pk_add_f32|v_mul_f32|v_add_f32}}
  // ASM: global_store_dwordx4
  // ASM: s_endpgm
  llvm.func @scale_copy(%in: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %out: !llvm.ptr<1> {llvm.noalias})
      attributes {rocdl.kernel, rocdl.flat_work_group_size = "256,256"} {
    %tid = rocdl.workitem.id.x : i32
    %bid = rocdl.workgroup.id.x : i32
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

  // One 32x32x8 bf16 MFMA per wave: A and B are 4 bf16 (as i16) per lane, C/D 16 f32 per lane.
  // ASM-LABEL: {{^}}mfma_bf16:
  // ASM: global_load_dwordx2
  // ASM: v_mfma_f32_32x32x8_bf16
  // ASM: global_store_dwordx4
  llvm.func @mfma_bf16(%a: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %b: !llvm.ptr<1> {llvm.noalias, llvm.readonly},
                       %c: !llvm.ptr<1> {llvm.noalias})
      attributes {rocdl.kernel, rocdl.flat_work_group_size = "64,64"} {
    %tid = rocdl.workitem.id.x : i32
    %t64 = llvm.zext %tid : i32 to i64
    %pa = llvm.getelementptr inbounds %a[%t64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, vector<4xi16>
    %va = llvm.load %pa {alignment = 8 : i64} : !llvm.ptr<1> -> vector<4xi16>
    %pb = llvm.getelementptr inbounds %b[%t64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, vector<4xi16>
    %vb = llvm.load %pb {alignment = 8 : i64} : !llvm.ptr<1> -> vector<4xi16>
    %pc = llvm.getelementptr inbounds %c[%t64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, vector<16xf32>
    %acc = llvm.load %pc {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %z = llvm.mlir.constant(0 : i32) : i32
    %d = rocdl.mfma.f32.32x32x8bf16.1k %va, %vb, %acc, %z, %z, %z
        : (vector<4xi16>, vector<4xi16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
    llvm.store %d, %pc {alignment = 64 : i64} : vector<16xf32>, !llvm.ptr<1>
    llvm.return
  }

  // A bounded copy through buffer resources: 16 bytes per thread, loads past n bytes read 0.
  // ASM-LABEL: {{^}}buffer_copy:
  // ASM: buffer_load_dwordx4
  // ASM: buffer_store_dwordx4
  llvm.func @buffer_copy(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>, %n: i32)
      attributes {rocdl.kernel, rocdl.flat_work_group_size = "256,256"} {
    %tid = rocdl.workitem.id.x : i32
    %stride = llvm.mlir.constant(0 : i16) : i16
    %flags = llvm.mlir.constant(159744 : i32) : i32
    %n64 = llvm.zext %n : i32 to i64
    %src = rocdl.make.buffer.rsrc %in, %stride, %n64, %flags : !llvm.ptr<1> to !llvm.ptr<8>
    %dst = rocdl.make.buffer.rsrc %out, %stride, %n64, %flags : !llvm.ptr<1> to !llvm.ptr<8>
    %c16 = llvm.mlir.constant(16 : i32) : i32
    %off = llvm.mul %tid, %c16 : i32
    %z = llvm.mlir.constant(0 : i32) : i32
    %v = rocdl.raw.ptr.buffer.load %src, %off, %z, %z : vector<4xf32>
    rocdl.raw.ptr.buffer.store %v, %dst, %off, %z, %z : vector<4xf32>
    llvm.return
  }

  // Stage 16 bytes per thread in LDS, barrier, read another thread's 16 bytes.
  // Only reqd_work_group_size is given: codegen sets flat-work-group-size to 512,512.
  // ASM-LABEL: {{^}}lds_exchange:
  // ASM: ds_write_b128
  // ASM: s_barrier
  // ASM: ds_read_b128
  llvm.mlir.global internal @stage() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<2048 x f32>
  llvm.func @lds_exchange(%in: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %out: !llvm.ptr<1> {llvm.noalias})
      attributes {rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 512, 1, 1>} {
    %tid = rocdl.workitem.id.x : i32
    %c4 = llvm.mlir.constant(4 : i32) : i32
    %c511 = llvm.mlir.constant(511 : i32) : i32
    %e = llvm.mul %tid, %c4 : i32
    %e64 = llvm.zext %e : i32 to i64
    %p = llvm.getelementptr inbounds %in[%e64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %v = llvm.load %p {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %lds = llvm.mlir.addressof @stage : !llvm.ptr<3>
    %w = llvm.getelementptr inbounds %lds[%e] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
    llvm.store %v, %w {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
    rocdl.s.barrier
    %other = llvm.sub %c511, %tid : i32
    %o = llvm.mul %other, %c4 : i32
    %r = llvm.getelementptr inbounds %lds[%o] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
    %x = llvm.load %r {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
    %q = llvm.getelementptr inbounds %out[%e64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    llvm.store %x, %q {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
    llvm.return
  }
}
