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

def TileAssignLayouts : Pass<"tile-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Give every tile of every kernel a distributed layout for a GPU target";
  let description = [{
    Tiles that have no layout get one. Loads, stores, aranges and splats start from the
    coalesced default for their shape: the last dimension fastest with up to 128 bits per
    thread (sized by the narrowest element type the kernel moves through memory at that
    shape). Elementwise ops, loads, scans and dots propagate their operand's layout forward;
    a reduction yields the slice of its input's layout. Where an operand's layout differs
    from what its user needs, a `tile.convert_layout` is inserted. Tiles pinned by the
    author keep their layouts. GPU tiles need power-of-two dimensions.
  }];
  let options = [
    Option<"warpSize", "warp-size", "int64_t", /*default=*/"0",
           "Threads per warp of the target (64 on CDNA, 32 on NVIDIA)">,
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "Target whose matrix instructions (atom table) dots use; none keeps dots on blocked layouts">,
  ];
}

#endif
