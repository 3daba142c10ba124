//===- TileDialect.h - the tile dialect -------------------------*- C++ -*-===//
//
// Compiler-internal header: it pulls in MLIR. Users of the DSL and runtime never see it.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_DIALECT_TILE_IR_TILEDIALECT_H
#define WAVETILE_DIALECT_TILE_IR_TILEDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "wavetile/Dialect/Tile/IR/TileDialect.h.inc"
#include "wavetile/Dialect/Tile/IR/TileEnums.h.inc"
#include "wavetile/Dialect/Tile/IR/TileAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "wavetile/Dialect/Tile/IR/TileAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "wavetile/Dialect/Tile/IR/TileTypes.h.inc"

#define GET_OP_CLASSES
#include "wavetile/Dialect/Tile/IR/TileOps.h.inc"

namespace wavetile::tile {
/// Elements of `tensorType` covered by its shape, ignoring the encoding.
int64_t numElements(mlir::RankedTensorType tensorType);
/// The same tensor type without a layout encoding.
mlir::RankedTensorType stripEncoding(mlir::RankedTensorType tensorType);
} // namespace wavetile::tile

#endif
