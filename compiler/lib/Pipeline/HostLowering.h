//===- HostLowering.h - shared by the host JIT and host shared objects ----===//
//
// Internal to the compiler library.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_PIPELINE_HOSTLOWERING_H
#define WAVETILE_PIPELINE_HOSTLOWERING_H

#include "wavetile/Compiler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace wavetile::detail {

/// Verifies the kernels' signatures are launchable and lowers a copy of the module to the
/// LLVM dialect for the host (each kernel gets a `<kernel>__grid` driver).
mlir::OwningOpRef<mlir::ModuleOp> lowerCopyForHost(const Module &module, std::string *error,
                                                   LoopPipelining pipelining = LoopPipelining::AsyncCopies);

/// Initializes LLVM's backend for this CPU, once per process.
void initializeHostTarget();

/// This CPU's name and LLVM feature string, without the bf16 instructions: they flush
/// subnormals, and the host's semantics are exact.
const std::string &hostCpu();
const std::string &hostFeatures();

/// f32 -> bf16, exactly (round to nearest even, subnormals and NaN payloads kept): what LLVM
/// calls as __truncsfbf2 when it narrows a bf16 value it carried in f32 registers.
_Float16 wavetileTruncF32ToBF16(float value);

} // namespace wavetile::detail

#endif
