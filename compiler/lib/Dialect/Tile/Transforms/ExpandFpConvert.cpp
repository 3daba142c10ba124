//===- ExpandFpConvert.cpp - exact software float-format conversion -------===//
//
// Narrowing uses one formula for normal and subnormal results: with E the exponent of |x|
// clamped below at the format's minimum normal exponent emin, and m mantissa bits,
//   q = round(|x| * 2^(m - E))          (exact scaling, one rounding)
//   code = ((E - emin) << m) + q
// A carry out of q (q == 2^(m+1)) lands in the exponent field by itself, and a subnormal
// that rounds up to 2^m becomes the smallest normal. Codes above the largest finite one
// overflow to the largest finite value (saturate), Inf, or NaN, as the format allows.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/APFloat.h"

namespace wavetile::tile {
#define GEN_PASS_DEF_TILEEXPANDFPCONVERT
#include "wavetile/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace wavetile::tile

using namespace mlir;
using namespace wavetile::tile;

namespace {
/// Encoding facts of a narrow format, read from LLVM's float semantics.
struct NarrowFormat {
  unsigned bits;          // storage width
  unsigned mantissaBits;  // m
  int minNormalExponent;  // emin
  int maxExponent;        // emax: the largest finite value is below 2^(emax+1)
  bool hasSign;
  bool hasInf, hasNaN;
  bool nanIsNegativeZero; // the fnuz formats: 0x80 is NaN, there is no -0
  uint32_t maxFiniteCode, infCode, nanCode;

  explicit NarrowFormat(FloatType type) {
    const llvm::fltSemantics &sem = type.getFloatSemantics();
    bits = type.getWidth();
    mantissaBits = llvm::APFloat::semanticsPrecision(sem) - 1;
    minNormalExponent = llvm::APFloat::semanticsMinExponent(sem);
    maxExponent = llvm::APFloat::semanticsMaxExponent(sem);
    hasSign = llvm::APFloat::semanticsHasSignedRepr(sem);
    hasInf = llvm::APFloat::semanticsHasInf(sem);
    hasNaN = llvm::APFloat::semanticsHasNaN(sem);
    maxFiniteCode = llvm::APFloat::getLargest(sem).bitcastToAPInt().getZExtValue();
    infCode = hasInf ? llvm::APFloat::getInf(sem).bitcastToAPInt().getZExtValue() : 0;
    nanCode = hasNaN ? llvm::APFloat::getQNaN(sem).bitcastToAPInt().getZExtValue() : 0;
    nanIsNegativeZero = hasNaN && hasSign && nanCode == (1u << (bits - 1));
  }
  uint32_t magnitudeMask() const { return hasSign ? (1u << (bits - 1)) - 1 : (1u << bits) - 1; }
};

/// Builds constants and ops over a scalar or a tile shape alike.
struct ShapedBuilder {
  OpBuilder &b;
  Location loc;
  RankedTensorType shape; // null for scalars

  Type like(Type element) const {
    return shape ? Type(RankedTensorType::get(shape.getShape(), element, shape.getEncoding())) : element;
  }
  Value i32(int64_t v) const {
    Type t = b.getI32Type();
    auto attr = b.getI32IntegerAttr(int32_t(v));
    if (shape)
      return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(cast<ShapedType>(like(t)), Attribute(attr)));
    return arith::ConstantOp::create(b, loc, attr);
  }
  Value f32(float v) const {
    auto attr = b.getF32FloatAttr(v);
    if (shape)
      return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(cast<ShapedType>(like(b.getF32Type())), Attribute(attr)));
    return arith::ConstantOp::create(b, loc, attr);
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) const { return arith::CmpIOp::create(b, loc, p, x, y); }
  Value select(Value c, Value x, Value y) const { return arith::SelectOp::create(b, loc, c, x, y); }
  Value add(Value x, Value y) const { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) const { return arith::SubIOp::create(b, loc, x, y); }
  Value band(Value x, int64_t m) const { return arith::AndIOp::create(b, loc, x, i32(m)); }
  Value shl(Value x, Value s) const { return arith::ShLIOp::create(b, loc, x, s); }
  Value shr(Value x, int64_t s) const { return arith::ShRUIOp::create(b, loc, x, i32(s)); }
  Value bitcast(Value x, Type element) const { return arith::BitcastOp::create(b, loc, like(element), x); }
  /// 2^e as f32 for an i32 exponent within the f32 normal range.
  Value pow2(Value exponent) const {
    return bitcast(shl(add(exponent, i32(127)), i32(23)), b.getF32Type());
  }
};

Value narrow(ShapedBuilder &s, Value source, FloatType target, RoundingMode rounding, bool saturate) {
  NarrowFormat fmt(target);
  OpBuilder &b = s.b;
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  Value x = source;
  if (!getElementTypeOrSelf(x.getType()).isF32())
    x = arith::ExtFOp::create(b, s.loc, s.like(f32), x);
  Value bits = s.bitcast(x, i32);
  Value sign = s.shr(bits, 31);
  Value absBits = s.band(bits, 0x7fffffff);
  Value isNaN = s.cmp(arith::CmpIPredicate::ugt, absBits, s.i32(0x7f800000));
  Value biasedExponent = s.shr(absBits, 23);
  Value code;
  if (fmt.mantissaBits == 0 && !fmt.hasSign) {
    // e8m0: the code is the biased exponent; rtne rounds up from 1.5 (nearest power of 2). An f32
    // subnormal is fraction * 2^-149 with code 0 standing for 2^-127, so 1.5 * 2^-127 is 0x600000.
    Value roundUpFrom = s.select(s.cmp(arith::CmpIPredicate::eq, biasedExponent, s.i32(0)), s.i32(0x600000),
                                 s.i32(0x400000));
    Value roundUp = rounding == RoundingMode::rtne
                        ? s.cmp(arith::CmpIPredicate::uge, s.band(absBits, 0x7fffff), roundUpFrom)
                        : s.cmp(arith::CmpIPredicate::ne, s.i32(0), s.i32(0));
    code = s.add(biasedExponent, arith::ExtUIOp::create(b, s.loc, s.like(i32), roundUp));
  } else {
    int m = fmt.mantissaBits, emin = fmt.minNormalExponent;
    // f32 zeros/subnormals have exponent field 0; any emin of these formats is above -126.
    // Anything at or above 2^(emax+1) overflows, so E stops there: that keeps 2^(m-E) a normal
    // f32 even for Inf and NaN inputs.
    Value exponent = arith::MaxSIOp::create(b, s.loc, s.sub(biasedExponent, s.i32(127)), s.i32(emin));
    exponent = arith::MinSIOp::create(b, s.loc, exponent, s.i32(fmt.maxExponent + 1));
    Value absX = s.bitcast(absBits, f32);
    Value scaled = arith::MulFOp::create(b, s.loc, absX, s.pow2(s.sub(s.i32(m), exponent)));
    Value rounded = rounding == RoundingMode::rtne ? Value(math::RoundEvenOp::create(b, s.loc, scaled))
                                                   : Value(math::FloorOp::create(b, s.loc, scaled));
    // Clamp before the integer conversion: Inf, NaN and huge values must not make poison
    // (minnumf returns the bound for NaN; NaN inputs are replaced at the end anyway).
    Value clamped = arith::MinNumFOp::create(b, s.loc, rounded, s.f32(float(1 << (m + 2))));
    Value q = arith::FPToUIOp::create(b, s.loc, s.like(i32), clamped);
    Value exponentField = s.shl(s.sub(exponent, s.i32(emin)), s.i32(m));
    code = s.add(exponentField, q);
  }
  Value overflow = s.cmp(arith::CmpIPredicate::ugt, code, s.i32(fmt.maxFiniteCode));
  // Past the largest finite value: saturate to it, else Inf where the format has it, else NaN.
  // Rounding toward zero never leaves the finite range (IEEE 754): only an Inf input does.
  uint32_t overflowCode = saturate || (!fmt.hasInf && !fmt.hasNaN) ? fmt.maxFiniteCode
                          : fmt.hasInf                            ? fmt.infCode
                                                                  : fmt.nanCode;
  Value overflowValue = s.i32(overflowCode);
  if (rounding == RoundingMode::rtz && overflowCode != fmt.maxFiniteCode) {
    Value isInf = s.cmp(arith::CmpIPredicate::eq, absBits, s.i32(0x7f800000));
    overflowValue = s.select(isInf, overflowValue, s.i32(fmt.maxFiniteCode));
  }
  code = s.select(overflow, overflowValue, code);
  if (fmt.hasSign) {
    Value signBit = s.shl(sign, s.i32(fmt.bits - 1));
    Value withSign = arith::OrIOp::create(b, s.loc, code, signBit);
    // fnuz formats have no negative zero: -0 encodes as +0.
    if (fmt.nanIsNegativeZero)
      withSign = s.select(s.cmp(arith::CmpIPredicate::eq, code, s.i32(0)), code, withSign);
    code = withSign;
  }
  // NaN stays NaN where the format has one; fp6/fp4 have none and take the largest finite.
  code = s.select(isNaN, s.i32(fmt.hasNaN ? fmt.nanCode : fmt.maxFiniteCode), code);
  Value narrowInt = arith::TruncIOp::create(b, s.loc, s.like(b.getIntegerType(fmt.bits)), code);
  return s.bitcast(narrowInt, target);
}

Value widen(ShapedBuilder &s, Value source, FloatType sourceType, Type target) {
  NarrowFormat fmt(sourceType);
  OpBuilder &b = s.b;
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  Value narrowInt = s.bitcast(source, b.getIntegerType(fmt.bits));
  Value c = arith::ExtUIOp::create(b, s.loc, s.like(i32), narrowInt);
  Value magnitude = s.band(c, fmt.magnitudeMask());
  Value value;
  if (fmt.mantissaBits == 0 && !fmt.hasSign) {
    // e8m0: 2^(c - 127); c == 0 is the f32 subnormal 2^-127.
    Value normal = s.bitcast(s.shl(c, s.i32(23)), f32);
    value = s.select(s.cmp(arith::CmpIPredicate::eq, c, s.i32(0)), s.bitcast(s.i32(0x00400000), f32), normal);
  } else {
    int m = fmt.mantissaBits, emin = fmt.minNormalExponent;
    Value exponentField = s.shr(magnitude, m);
    Value fraction = s.band(magnitude, (1 << m) - 1);
    Value isNormal = s.cmp(arith::CmpIPredicate::ne, exponentField, s.i32(0));
    Value significand = s.select(isNormal, s.add(fraction, s.i32(1 << m)), fraction);
    Value scaleExponent = s.add(arith::MaxUIOp::create(b, s.loc, exponentField, s.i32(1)), s.i32(emin - 1 - m));
    value = arith::MulFOp::create(b, s.loc, arith::UIToFPOp::create(b, s.loc, s.like(f32), significand),
                                  s.pow2(scaleExponent));
  }
  if (fmt.hasSign) {
    Value negative = s.cmp(arith::CmpIPredicate::ne, s.band(c, 1 << (fmt.bits - 1)), s.i32(0));
    value = s.select(negative, arith::NegFOp::create(b, s.loc, value), value);
  }
  if (fmt.hasInf) {
    Value isInf = s.cmp(arith::CmpIPredicate::eq, magnitude, s.i32(fmt.infCode & fmt.magnitudeMask()));
    Value inf = s.f32(std::numeric_limits<float>::infinity());
    Value signedInf = s.select(s.cmp(arith::CmpIPredicate::ne, c, magnitude), arith::NegFOp::create(b, s.loc, inf), inf);
    value = s.select(isInf, signedInf, value);
  }
  if (fmt.hasNaN) {
    Value isNaN = fmt.nanIsNegativeZero
                      ? s.cmp(arith::CmpIPredicate::eq, c, s.i32(fmt.nanCode))
                      : s.cmp(arith::CmpIPredicate::ugt, magnitude, s.i32(fmt.hasInf ? fmt.infCode & fmt.magnitudeMask()
                                                                                     : fmt.maxFiniteCode));
    value = s.select(isNaN, s.f32(std::numeric_limits<float>::quiet_NaN()), value);
  }
  if (!target.isF32())
    value = arith::TruncFOp::create(b, s.loc, s.like(target), value);
  return value;
}
} // namespace

Value wavetile::tile::buildFpConvert(OpBuilder &builder, Location loc, Value source, Type target,
                                     RoundingMode rounding, bool saturate) {
  ShapedBuilder s{builder, loc, dyn_cast<RankedTensorType>(source.getType())};
  auto sourceElement = cast<FloatType>(getElementTypeOrSelf(source.getType()));
  auto targetElement = cast<FloatType>(getElementTypeOrSelf(target));
  if (sourceElement.getWidth() >= 16 && targetElement.getWidth() < 16)
    return narrow(s, source, targetElement, rounding, saturate);
  return widen(s, source, sourceElement, targetElement);
}

namespace {
struct ExpandFpConvertPattern : OpRewritePattern<FpConvertOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FpConvertOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildFpConvert(rewriter, op.getLoc(), op.getSource(),
                                          getElementTypeOrSelf(op.getResult().getType()),
                                          op.getRounding(), op.getSaturate()));
    return success();
  }
};

struct TileExpandFpConvert : wavetile::tile::impl::TileExpandFpConvertBase<TileExpandFpConvert> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandFpConvertPattern>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
