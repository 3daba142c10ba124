//===- ExpandHostBF16.cpp - exact bf16 conversions on the host ------------===//

#include "wavetile/Conversion/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace wavetile {
#define GEN_PASS_DEF_EXPANDHOSTBF16
#include "wavetile/Conversion/Passes.h.inc"
} // namespace wavetile

namespace {
struct ExpandHostBF16 : wavetile::impl::ExpandHostBF16Base<ExpandHostBF16> {
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    mlir::arith::populateExpandBFloat16Patterns(patterns);
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
