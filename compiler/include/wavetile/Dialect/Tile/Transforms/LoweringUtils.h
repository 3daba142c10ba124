//===- LoweringUtils.h - scalar semantics shared by every lowering -*- C++ -*-===//
//
// The host and GPU lowerings compute the same element-level semantics; these builders are
// that semantics, written once.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_DIALECT_TILE_TRANSFORMS_LOWERINGUTILS_H
#define WAVETILE_DIALECT_TILE_TRANSFORMS_LOWERINGUTILS_H

#include "wavetile/Dialect/Tile/IR/TileDialect.h"

namespace mlir {
class TypeConverter;
} // namespace mlir

namespace wavetile::tile {

/// What every tile lowering's type converter shares: async tokens become i1, and values
/// whose users are not converted yet are bridged by unrealized casts.
void addCommonTileConversions(mlir::TypeConverter &converter);

/// Combines two scalars as a reduce/scan kind says (`custom` inlines the combiner region).
/// max/min propagate NaN and order -0 below +0; on i1 they are or/and.
mlir::Value buildCombine(mlir::OpBuilder &b, mlir::Location loc, CombineKind kind, mlir::Region &combiner,
                         mlir::Value x, mlir::Value y);

/// A dot operand element widened to the accumulator type exactly: f32 for floats (narrow
/// formats decoded in software), i32 for i8 (sign-extended).
mlir::Value buildWidenForDot(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::Type acc);

/// `then()` where `condition` holds (always when it is null), else `otherwise()`, as an
/// scf.if yielding the one value.
mlir::Value guarded(mlir::OpBuilder &b, mlir::Location loc, mlir::Value condition,
                    llvm::function_ref<mlir::Value(mlir::OpBuilder &)> then,
                    llvm::function_ref<mlir::Value(mlir::OpBuilder &)> otherwise);

/// `effect()` only where `condition` holds (always when it is null).
void guardedEffect(mlir::OpBuilder &b, mlir::Location loc, mlir::Value condition,
                   llvm::function_ref<void(mlir::OpBuilder &)> effect);

/// x + y and x * y for integer or float scalars.
mlir::Value buildAdd(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value buildMul(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);

/// tile.lookup_nibbles on one i8: the i16 of table[b & 15] (low byte) and table[b >> 4].
mlir::Value buildLookupNibbles(mlir::OpBuilder &b, mlir::Location loc, mlir::Value byte, llvm::ArrayRef<int8_t> table);

} // namespace wavetile::tile

#endif
