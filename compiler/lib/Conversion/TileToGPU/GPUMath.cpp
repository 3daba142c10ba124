//===- GPUMath.cpp - math without device libraries ------------------------===//

#include "wavetile/Conversion/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace wavetile {
#define GEN_PASS_DEF_LOWERGPUMATH
#include "wavetile/Conversion/Passes.h.inc"
} // namespace wavetile

using namespace mlir;

namespace {
/// Ops LLVM lowers natively on AMDGPU and NVPTX; everything else is rewritten.
bool hasNativeInstruction(StringRef name) {
  return llvm::is_contained({"sqrt", "absf", "absi", "floor", "ceil", "fma", "copysign", "roundeven", "trunc"}, name);
}

struct LowerGPUMath : wavetile::impl::LowerGPUMathBase<LowerGPUMath> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    math::populateExpansionPatterns(patterns);
    auto approximate = [](StringRef name) { return !hasNativeInstruction(name); };
    populateMathF32ExpansionPatterns(patterns, approximate);
    populateMathPolynomialApproximationPatterns(patterns, approximate);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Anything still a math op without a native instruction would become a library call.
    WalkResult leftover = getOperation()->walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "math" &&
          !hasNativeInstruction(op->getName().stripDialect())) {
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
