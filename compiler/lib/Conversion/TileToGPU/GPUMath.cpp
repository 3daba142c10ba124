//===- GPUMath.cpp - math without device libraries ------------------------===//

#include "wavetile/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace wavetile {
#define GEN_PASS_DEF_LOWERGPUMATH
#include "wavetile/Conversion/Passes.h.inc"
} // namespace wavetile

using namespace mlir;

namespace {
/// Ops LLVM lowers natively on AMDGPU and NVPTX; everything else is rewritten. f32 exp2 is
/// one instruction on both (v_exp_f32, ex2.approx.f32); narrower exp2 is computed in f32.
bool hasNativeInstruction(StringRef name) {
  name.consume_front("math."); // the pattern populators name ops with their dialect
  return llvm::is_contained({"sqrt", "absf", "absi", "floor", "ceil", "fma", "copysign", "round", "roundeven", "trunc"}, name);
}

bool isF32(Type type) { return getElementTypeOrSelf(type).isF32(); }

/// The f32 constant v as a value of `type` (f32 or a shaped type of f32, splat).
Value f32Constant(OpBuilder &b, Location loc, Type type, double v) {
  Attribute value = b.getF32FloatAttr(float(v));
  if (auto shaped = dyn_cast<ShapedType>(type))
    value = DenseElementsAttr::get(shaped, value);
  return arith::ConstantOp::create(b, loc, type, cast<TypedAttr>(value));
}

/// A rewrite of f32 `Op` (scalar or vector) into arithmetic; `constant(v)` makes f32 constants
/// of the op's type.
template <typename Op> struct F32Rewrite : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  using Constant = function_ref<Value(double)>;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rw) const final {
    Type type = op.getType();
    if (!isF32(type))
      return failure();
    Location loc = op.getLoc();
    rewrite(op, rw, [&](double v) { return f32Constant(rw, loc, type, v); });
    return success();
  }
  virtual void rewrite(Op op, PatternRewriter &rw, Constant constant) const = 0;
};

/// f32 exp(x) = 2^(x log2 e) on the hardware's exp2, a few instructions instead of a
/// polynomial. The product's rounding error (x·log2 e - hi, plus log2 e's own) would cost up
/// to |x|·2^-24 relative, so it is carried as lo and applied as 2^hi · (1 + lo·ln 2), unless
/// the op allows approximation ('afn': the DSL's approximateExp).
struct ExpThroughExp2 : F32Rewrite<math::ExpOp> {
  using F32Rewrite::F32Rewrite;
  void rewrite(math::ExpOp op, PatternRewriter &rw, Constant constant) const override {
    Location loc = op.getLoc();
    const float log2eHi = float(M_LOG2E);
    const double log2eLo = M_LOG2E - double(log2eHi);
    Value x = op.getOperand();
    Value hi = arith::MulFOp::create(rw, loc, x, constant(log2eHi));
    Value e = math::Exp2Op::create(rw, loc, hi);
    if (bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn)) {
      rw.replaceOp(op, e);
      return;
    }
    Value productError = math::FmaOp::create(rw, loc, x, constant(log2eHi), arith::NegFOp::create(rw, loc, hi));
    Value lo = math::FmaOp::create(rw, loc, x, constant(log2eLo), productError);
    Value corrected = math::FmaOp::create(rw, loc, e, arith::MulFOp::create(rw, loc, lo, constant(M_LN2)), e);
    // Where 2^hi is 0, infinite or NaN (|hi| >= 126), the correction would only make NaNs.
    Value finite = arith::CmpFOp::create(rw, loc, arith::CmpFPredicate::OLT, math::AbsFOp::create(rw, loc, hi),
                                         constant(126.0));
    rw.replaceOpWithNewOp<arith::SelectOp>(op, finite, corrected, e);
  }
};

/// f32 rsqrt(x) as the hardware's reciprocal square root, as CUDA's rsqrtf and Triton's
/// rsqrt: 1/sqrt(x) with both allowed to approximate, which NVPTX selects as rsqrt.approx.f32
/// and AMDGPU as v_sqrt_f32 and v_rcp_f32 (within 2 ulp). Correctly rounded, the pair was two
/// refinement sequences with slow paths on a norm's critical path.
struct RsqrtThroughApproximateSqrt : F32Rewrite<math::RsqrtOp> {
  using F32Rewrite::F32Rewrite;
  void rewrite(math::RsqrtOp op, PatternRewriter &rw, Constant constant) const override {
    Value sqrt = math::SqrtOp::create(rw, op.getLoc(), op.getOperand(), arith::FastMathFlags::afn);
    rw.replaceOpWithNewOp<arith::DivFOp>(op, constant(1.0), sqrt, arith::FastMathFlags::afn);
  }
};

/// f32 erf without a division or a branch (MLIR's approximation divides two polynomials: an
/// IEEE division per element, whose slow-path branch serialized gelu_and_mul's elements):
/// below kErfSplit x + x·P(x²); from there copysign(1 - 2^Q(|x|), x) with Q ≈ log2(erfc), its
/// input clamped where erfc drops below 2^-25 and 1 - 2^Q rounds to 1. Both halves are
/// computed and one is selected. scripts/fit-erf.py fits the coefficients and bounds the
/// error: 1.2 ulp with an exact exp2, 2.1 with the hardware's (2 ulp).
struct ErfThroughExp2 : F32Rewrite<math::ErfOp> {
  static constexpr double kErfSplit = 0.875, kErfClamp = 4.0;
  static constexpr float kErfBelowSplit[] = {0x1.06eba6p-3f,  -0x1.81271p-2f,  0x1.ce21d6p-4f,
                                             -0x1.b6fdfap-6f, 0x1.4a07ccp-8f, -0x1.463b68p-11f};
  static constexpr float kErfAboveSplit[] = {-0x1.b44384p-13f, -0x1.a09036p+0f, -0x1.d664cep-1f, -0x1.3405a8p-3f,
                                             0x1.08831ep-5f,   -0x1.23663ap-8f, 0x1.2e687ap-12f};

  using F32Rewrite::F32Rewrite;
  void rewrite(math::ErfOp op, PatternRewriter &rw, Constant constant) const override {
    Location loc = op.getLoc();
    auto polynomial = [&](ArrayRef<float> coefficients, Value v) { // Horner's rule in fmas
      Value r = constant(coefficients.back());
      for (float c : llvm::reverse(coefficients.drop_back()))
        r = math::FmaOp::create(rw, loc, r, v, constant(c));
      return r;
    };
    Value x = op.getOperand();
    Value a = math::AbsFOp::create(rw, loc, x);
    Value below = math::FmaOp::create(rw, loc, x, polynomial(kErfBelowSplit, arith::MulFOp::create(rw, loc, x, x)), x);
    // minimumf keeps a NaN, which then reaches the result.
    Value tail = math::Exp2Op::create(
        rw, loc, polynomial(kErfAboveSplit, arith::MinimumFOp::create(rw, loc, a, constant(kErfClamp))));
    Value above = math::CopySignOp::create(rw, loc, arith::SubFOp::create(rw, loc, constant(1.0), tail), x);
    Value isBelow = arith::CmpFOp::create(rw, loc, arith::CmpFPredicate::OLT, a, constant(kErfSplit));
    rw.replaceOpWithNewOp<arith::SelectOp>(op, isBelow, below, above);
  }
};

struct LowerGPUMath : wavetile::impl::LowerGPUMathBase<LowerGPUMath> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Every expansion but fma's into a product and a sum (an fma is one instruction, and
    // kernels use it for its single rounding: exact remainders), roundeven's (one
    // instruction) and round's (LLVM's lowering is exact; MLIR's expansion through x + 0.5
    // rounds the float just below 0.5 up, and roundeven's goes through it).
    math::populateExpansionPatterns(patterns, {"ctlz", "sinh", "cosh", "tan", "tanh", "asinh", "acosh", "atanh", "ceil",
                                               "exp2", "powf", "fpowi", "clampf"});
    // f16/bf16 go through f32 for everything without a native instruction; f32 exp, rsqrt
    // and erf stay for the second step (the expansions would turn exp2 back into exp).
    populateMathF32ExpansionPatterns(patterns, [](StringRef name) { return !hasNativeInstruction(name); });
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      name.consume_front("math.");
      return !hasNativeInstruction(name) && name != "exp" && name != "rsqrt" && name != "erf";
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    RewritePatternSet hardware(&getContext());
    hardware.add<ExpThroughExp2, RsqrtThroughApproximateSqrt, ErfThroughExp2>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(hardware))))
      return signalPassFailure();
    // Anything still a math op without a native instruction would become a library call.
    WalkResult leftover = getOperation()->walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "math" &&
          !hasNativeInstruction(op->getName().stripDialect()) &&
          !(isa<math::Exp2Op>(op) && isF32(op->getResult(0).getType()))) {
        op->emitOpError() << "has no native GPU instruction and no approximation; it would need a "
                             "vendor device library";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
