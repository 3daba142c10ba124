//===- LoweringUtils.cpp - scalar semantics shared by every lowering ------===//

#include "wavetile/Dialect/Tile/Transforms/LoweringUtils.h"

#include "wavetile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace wavetile::tile;

void wavetile::tile::addCommonTileConversions(TypeConverter &converter) {
  converter.addConversion([](AsyncTokenType type) -> Type { return IntegerType::get(type.getContext(), 1); });
  auto cast = [](OpBuilder &b, Type type, ValueRange inputs, Location loc) -> Value {
    return UnrealizedConversionCastOp::create(b, loc, type, inputs).getResult(0);
  };
  converter.addSourceMaterialization(cast);
  converter.addTargetMaterialization(cast);
}

Value wavetile::tile::guarded(OpBuilder &b, Location loc, Value condition, function_ref<Value(OpBuilder &)> then,
                              function_ref<Value(OpBuilder &)> otherwise) {
  if (!condition)
    return then(b);
  auto ifOp = scf::IfOp::create(
      b, loc, condition, [&](OpBuilder &tb, Location l) { scf::YieldOp::create(tb, l, then(tb)); },
      [&](OpBuilder &eb, Location l) { scf::YieldOp::create(eb, l, otherwise(eb)); });
  return ifOp.getResult(0);
}

void wavetile::tile::guardedEffect(OpBuilder &b, Location loc, Value condition,
                                   function_ref<void(OpBuilder &)> effect) {
  if (!condition)
    return effect(b);
  scf::IfOp::create(b, loc, condition, [&](OpBuilder &tb, Location l) {
    effect(tb);
    scf::YieldOp::create(tb, l);
  });
}

Value wavetile::tile::buildAdd(OpBuilder &b, Location loc, Value x, Value y) {
  return isa<FloatType>(x.getType()) ? Value(arith::AddFOp::create(b, loc, x, y))
                                     : Value(arith::AddIOp::create(b, loc, x, y));
}

Value wavetile::tile::buildMul(OpBuilder &b, Location loc, Value x, Value y) {
  return isa<FloatType>(x.getType()) ? Value(arith::MulFOp::create(b, loc, x, y))
                                     : Value(arith::MulIOp::create(b, loc, x, y));
}

Value wavetile::tile::buildCombine(OpBuilder &b, Location loc, CombineKind kind, Region &combiner, Value x, Value y) {
  bool isFloat = isa<FloatType>(x.getType());
  bool isBool = x.getType().isInteger(1); // true > false: max is or, min is and
  switch (kind) {
  case CombineKind::sum:
    return buildAdd(b, loc, x, y);
  case CombineKind::max:
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, x, y);
    return isBool ? Value(arith::MaxUIOp::create(b, loc, x, y)) : Value(arith::MaxSIOp::create(b, loc, x, y));
  case CombineKind::min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, x, y);
    return isBool ? Value(arith::MinUIOp::create(b, loc, x, y)) : Value(arith::MinSIOp::create(b, loc, x, y));
  case CombineKind::custom: {
    Block &body = combiner.front();
    IRMapping mapping;
    mapping.map(body.getArgument(0), x);
    mapping.map(body.getArgument(1), y);
    for (Operation &op : body.without_terminator())
      b.clone(op, mapping);
    return mapping.lookup(cast<YieldOp>(body.getTerminator()).getValue());
  }
  }
  llvm_unreachable("unknown combine kind");
}

Value wavetile::tile::buildWidenForDot(OpBuilder &b, Location loc, Value v, Type acc) {
  Type t = v.getType();
  if (t == acc)
    return v;
  if (isa<IntegerType>(t))
    return arith::ExtSIOp::create(b, loc, acc, v);
  auto f = cast<FloatType>(t);
  if (!isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(f)) // formats LLVM cannot extend
    return buildFpConvert(b, loc, v, acc, RoundingMode::rtne, false);
  if (f.getWidth() < acc.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, acc, v);
  return v;
}

Value wavetile::tile::buildLookupNibbles(OpBuilder &b, Location loc, Value byte, ArrayRef<int8_t> table) {
  // The table as two i64 halves; a nibble's entry is its half shifted by 8 times its low bits.
  Type i64 = b.getI64Type(), i16 = b.getI16Type();
  auto half = [&](int first) {
    uint64_t word = 0;
    for (int i = 0; i < 8; ++i)
      word |= uint64_t(uint8_t(table[first + i])) << (8 * i);
    return arith::ConstantIntOp::create(b, loc, i64, int64_t(word)).getResult();
  };
  auto c64 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i64, v).getResult(); };
  Value low = half(0), high = half(8);
  Value wide = arith::ExtUIOp::create(b, loc, i64, byte);
  auto entry = [&](Value nibble) {
    Value upper =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, arith::AndIOp::create(b, loc, nibble, c64(8)), c64(0));
    Value shift = arith::MulIOp::create(b, loc, arith::AndIOp::create(b, loc, nibble, c64(7)), c64(8));
    Value picked = arith::ShRUIOp::create(b, loc, arith::SelectOp::create(b, loc, upper, high, low), shift);
    return arith::AndIOp::create(b, loc, picked, c64(0xFF)).getResult();
  };
  Value first = entry(arith::AndIOp::create(b, loc, wide, c64(15)));
  Value second = entry(arith::ShRUIOp::create(b, loc, wide, c64(4)));
  Value both = arith::OrIOp::create(b, loc, first, arith::ShLIOp::create(b, loc, second, c64(8)));
  return arith::TruncIOp::create(b, loc, i16, both);
}
