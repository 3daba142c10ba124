//===- Passes.td - tile dialect transforms -------------------*- tablegen -*-===//
#ifndef WAVETILE_TILE_TRANSFORMS_PASSES
#define WAVETILE_TILE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TileExpandFpConvert : Pass<"tile-expand-fp-convert"> {
  let summary = "Expand tile.fp_convert into integer and f32 arithmetic";
  let description = [{
    Rewrites each `tile.fp_convert` into `arith`/`math` ops that compute the exact result
    (round-to-nearest-even or toward zero, saturation, NaN/Inf encodings) from the format's
    definition. Used where the target has no conversion instruction, and on the host.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

#endif
