//===- ModuleImpl.h - what a wavetile::Module holds -------------*- C++ -*-===//
//
// Compiler-internal: shared by the compiler and the DSL library, never installed.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_PIPELINE_MODULEIMPL_H
#define WAVETILE_PIPELINE_MODULEIMPL_H

#include "wavetile/Compiler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace wavetile {
struct Module::Impl {
  Impl();
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// Collects diagnostics of a context as "file:line:col: error: message" lines.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(mlir::MLIRContext *context);
  ~DiagnosticCapture();
  std::string take();

private:
  mlir::MLIRContext *context;
  uint64_t handlerId;
  std::string text;
};

/// "file:line:col" of the innermost file location within `loc`, or "<unknown>".
std::string formatLocation(mlir::Location loc);
} // namespace wavetile

#endif
