//===- IndexArith.h - index arithmetic evaluated at compile time -*- C++ -*-===//
//
// Index formulas are written once as templates over an arithmetic: ConstantArith evaluates
// them at compile time (coordinates, contiguity and alignment proofs); the GPU lowering's
// IRArith emits the same formula as IR.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_DIALECT_TILE_IR_INDEXARITH_H
#define WAVETILE_DIALECT_TILE_IR_INDEXARITH_H

#include <cstdint>

namespace wavetile {

struct ConstantArith {
  int64_t constant(int64_t v) const { return v; }
  int64_t add(int64_t x, int64_t y) const { return x + y; }
  int64_t mul(int64_t x, int64_t y) const { return x * y; }
  int64_t div(int64_t x, int64_t y) const { return x / y; }
  int64_t rem(int64_t x, int64_t y) const { return x % y; }
  int64_t bitXor(int64_t x, int64_t y) const { return x ^ y; }
};

} // namespace wavetile

#endif
