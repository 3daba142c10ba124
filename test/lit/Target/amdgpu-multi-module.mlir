// Several gpu.modules for one AMD target become one code object: they are linked at
// the LLVM IR level (one object, one HSA metadata note listing every kernel; lld
// linking several objects would leave several notes). NVIDIA modules in the same
// file are skipped for AMD targets, and vice versa.
//
// RUN: %wavetile compile %s --target gfx942 -o %t.hsaco
// RUN: %wavetile inspect %t.hsaco | FileCheck %s
// RUN: %wavetile compile %s --target gfx942 --emit asm | FileCheck %s --check-prefix=ASM
// RUN: %wavetile compile %s --target sm_90 | FileCheck %s --check-prefix=PTX
// RUN: %wavetile compile %s --target sm_90 --emit llvm | FileCheck %s --check-prefix=IR

// CHECK: AMDGPU code object, target amdgcn-amd-amdhsa--gfx942, code object v5
// CHECK-NOT: note:
// CHECK: kernel first
// CHECK: max_flat_workgroup_size=128
// CHECK: kernel second
// CHECK: max_flat_workgroup_size=1024

// ASM: {{^}}first:
// ASM: {{^}}second:
// ASM: amdhsa.kernels:
// ASM: .name: first
// ASM: .name: second

// PTX: .entry third(
// PTX-NOT: first

// IR: target triple = "nvptx64-nvidia-cuda"
// IR-NOT: define {{.*}}@first
// IR: define ptx_kernel void @third(

gpu.module @one {
  llvm.func @first(%p: !llvm.ptr<1>) attributes {rocdl.kernel, rocdl.flat_work_group_size = "128,128"} {
    %c = llvm.mlir.constant(1.0 : f32) : f32
    llvm.store %c, %p : f32, !llvm.ptr<1>
    llvm.return
  }
}
gpu.module @two {
  llvm.func @second(%p: !llvm.ptr<1>) attributes {rocdl.kernel, rocdl.flat_work_group_size = "1,1024"} {
    %c = llvm.mlir.constant(2.0 : f32) : f32
    llvm.store %c, %p : f32, !llvm.ptr<1>
    llvm.return
  }
}
gpu.module @three {
  llvm.func @third(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %c = llvm.mlir.constant(3.0 : f32) : f32
    llvm.store %c, %p : f32, !llvm.ptr<1>
    llvm.return
  }
}
