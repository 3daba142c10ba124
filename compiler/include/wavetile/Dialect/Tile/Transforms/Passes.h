//===- Passes.h - tile dialect transforms -----------------------*- C++ -*-===//
#ifndef WAVETILE_DIALECT_TILE_TRANSFORMS_PASSES_H
#define WAVETILE_DIALECT_TILE_TRANSFORMS_PASSES_H

#include "wavetile/Dialect/Tile/IR/TileDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/Pass.h"

namespace wavetile::tile {
#define GEN_PASS_DECL
#include "wavetile/Dialect/Tile/Transforms/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "wavetile/Dialect/Tile/Transforms/Passes.h.inc"

/// Builds the exact conversion of `source` (scalar or tile) to element type `target`.
/// One side must be f32/f16/bf16, the other an 8/6/4-bit float format.
mlir::Value buildFpConvert(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value source,
                           mlir::Type target, RoundingMode rounding, bool saturate);
} // namespace wavetile::tile

#endif
