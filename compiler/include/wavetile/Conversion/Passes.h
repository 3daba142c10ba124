//===- Passes.h - conversions -----------------------------------*- C++ -*-===//
#ifndef WAVETILE_CONVERSION_PASSES_H
#define WAVETILE_CONVERSION_PASSES_H

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace wavetile {
#define GEN_PASS_DECL
#include "wavetile/Conversion/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "wavetile/Conversion/Passes.h.inc"

/// Suffix of the driver function that runs a host kernel over its whole grid.
inline constexpr const char *kHostGridSuffix = "__grid";
/// Integer attribute on a GPU kernel whose shared buffer is dynamic shared memory: the bytes
/// each launch must provide (the runtime reads it from the manifest).
inline constexpr const char *kDynamicSharedBytesAttrName = "wavetile.dynamic_shared_bytes";
} // namespace wavetile

#endif
