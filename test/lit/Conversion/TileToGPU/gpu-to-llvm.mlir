// wavetile-gpu-to-llvm: gpu.funcs become vendor kernels in the LLVM dialect, math goes to
// LLVM intrinsics, and nothing refers to a device library (__ocml_*, __nv_*).
// RUN: %wavetile-opt %s -pass-pipeline='builtin.module(gpu.module(wavetile-gpu-to-llvm{target=gfx942}))' | FileCheck %s --check-prefix=AMD
// RUN: %wavetile-opt %s -pass-pipeline='builtin.module(gpu.module(wavetile-gpu-to-llvm{target=sm_90}))' | FileCheck %s --check-prefix=NV

// AMD-LABEL: llvm.func @k
// AMD-SAME:    rocdl.kernel
// AMD-SAME:    rocdl.reqd_work_group_size = array<i32: 128, 1, 1>
// AMD:         rocdl.workitem.id.x
// AMD:         llvm.intr.sqrt
// AMD:         llvm.intr.floor
// AMD:         rocdl.barrier
// AMD-NOT:     llvm.func @__
// NV-LABEL:    llvm.func @k
// NV-SAME:     nvvm.kernel
// NV-SAME:     nvvm.maxntid = array<i32: 128, 1, 1>
// NV:          nvvm.read.ptx.sreg.tid.x
// NV:          llvm.intr.sqrt
// NV:          llvm.intr.floor
// NV:          nvvm.shfl.sync bfly
// An estimated reciprocal is one rcp.approx.ftz on NVIDIA (on AMD an fdiv allowed to
// approximate); a reciprocal square root, an exact reciprocal and an estimated quotient stay
// divisions.
// NV:          nvvm.rcp.approx.ftz.f %{{.*}} : f32
// NV-COUNT-2:  nvvm.rcp.approx.ftz.f
// NV:          llvm.fdiv {{.*}} {fastmathFlags = #llvm.fastmath<afn>} : f32
// NV:          llvm.fdiv %{{.*}}, %{{.*}} : f32
// NV:          llvm.fdiv {{.*}} {fastmathFlags = #llvm.fastmath<afn>} : f32
// NV-NOT:      nvvm.rcp.approx
// NV-NOT:      llvm.func @__
// AMD:         llvm.fdiv {{.*}} {fastmathFlags = #llvm.fastmath<afn>} : f32
// AMD-NOT:     rcp.approx
module attributes {gpu.container_module} {
  gpu.module @wavetile {
    gpu.func @k(%p: !llvm.ptr<1>, %x: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %tid = gpu.thread_id x
      %s = math.sqrt %x : f32
      %f = math.floor %s : f32
      gpu.barrier
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %r, %valid = gpu.shuffle xor %f, %c1, %c32 : f32
      llvm.store %r, %p : f32, !llvm.ptr<1>
      %one = arith.constant 1.0 : f32
      %estimate = arith.divf %one, %x fastmath<afn> : f32
      %pair = vector.broadcast %x : f32 to vector<2xf32>
      %ones = arith.constant dense<1.0> : vector<2xf32>
      %estimates = arith.divf %ones, %pair fastmath<afn> : vector<2xf32>
      llvm.store %estimates, %p : vector<2xf32>, !llvm.ptr<1>
      %root = math.sqrt %x fastmath<afn> : f32
      %rsqrt = arith.divf %one, %root fastmath<afn> : f32
      %exact = arith.divf %one, %x : f32
      %quotient = arith.divf %s, %x fastmath<afn> : f32
      llvm.store %estimate, %p : f32, !llvm.ptr<1>
      llvm.store %rsqrt, %p : f32, !llvm.ptr<1>
      llvm.store %exact, %p : f32, !llvm.ptr<1>
      llvm.store %quotient, %p : f32, !llvm.ptr<1>
      gpu.return
    }
  }
}
