//===- TileAttrs.td - layouts and enums of the tile dialect --*- tablegen -*-===//
#ifndef WAVETILE_TILE_ATTRS
#define WAVETILE_TILE_ATTRS

include "wavetile/Dialect/Tile/IR/TileBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/TensorEncoding.td"

//===----------------------------------------------------------------------===//
// Distributed layouts: which thread of which warp holds which element of a tile.
//===----------------------------------------------------------------------===//

def Tile_DistributedLayoutInterface : AttrInterface<"DistributedLayoutAttr"> {
  let cppNamespace = "::wavetile::tile";
  let description = [{
    A layout that distributes the elements of a register tile over the threads of a block.
  }];
  let methods = [
    InterfaceMethod<"Threads per warp this layout is written for.", "int64_t", "getWarpSize">,
    InterfaceMethod<"Warps per block this layout is written for.", "int64_t", "getNumWarps">,
  ];
}

class Tile_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tile_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class Tile_LayoutAttr<string name, string attrMnemonic>
    : Tile_Attr<name, attrMnemonic, [
        DeclareAttrInterfaceMethods<Tile_DistributedLayoutInterface>,
        DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let genVerifyDecl = 1;
}

def Tile_BlockedLayoutAttr : Tile_LayoutAttr<"BlockedLayout", "blocked"> {
  let summary = "each thread holds a contiguous block; threads and warps tile the rest";
  let description = [{
    Per dimension d the block covers sizePerThread[d] * threadsPerWarp[d] * warpsPerBlock[d]
    elements; a tile dimension must be a multiple of that (the pattern repeats) or divide
    it (threads hold replicas). `order` lists dimensions from fastest to slowest varying.
  }];
  let parameters = (ins ArrayRefParameter<"unsigned">:$sizePerThread,
                        ArrayRefParameter<"unsigned">:$threadsPerWarp,
                        ArrayRefParameter<"unsigned">:$warpsPerBlock,
                        ArrayRefParameter<"unsigned">:$order);
  let assemblyFormat = [{
    `<` `sizePerThread` `=` `[` $sizePerThread `]` `,` `threadsPerWarp` `=` `[` $threadsPerWarp `]`
    `,` `warpsPerBlock` `=` `[` $warpsPerBlock `]` `,` `order` `=` `[` $order `]` `>`
  }];
}

def Tile_SliceLayoutAttr : Tile_LayoutAttr<"SliceLayout", "slice"> {
  let summary = "the layout of a tile that dropped dimension `dim` of its parent (reductions)";
  let parameters = (ins "unsigned":$dim, "::wavetile::tile::DistributedLayoutAttr":$parent);
  let assemblyFormat = "`<` `dim` `=` $dim `,` `parent` `=` $parent `>`";
}

def Tile_MmaLayoutAttr : Tile_LayoutAttr<"MmaLayout", "mma"> {
  let summary = "accumulator layout of a matrix instruction from the atom table";
  let description = [{
    `atom` names an entry of the atom table (e.g. "gfx942.mfma_f32_32x32x8_bf16"); its C
    lane map places elements within one warp's M x N atom tile; warpsPerBlock tiles warps over
    the tile, and the pattern repeats to cover it.
  }];
  let parameters = (ins StringRefParameter<>:$atom,
                        ArrayRefParameter<"unsigned">:$warpsPerBlock);
  let assemblyFormat = "`<` `atom` `=` $atom `,` `warpsPerBlock` `=` `[` $warpsPerBlock `]` `>`";
}

def Tile_DotOperandLayoutAttr : Tile_LayoutAttr<"DotOperandLayout", "dot_operand"> {
  let summary = "layout of an operand of a dot with an MMA parent: A (0), B (1), or the block scales of A (2) or B (3) of a scaled dot";
  let description = [{
    The scale layouts (2, 3) place the M x K/32 scales of A and K/32 x N scales of B as the
    parent's (block-scaled) atom reads them, repeating and splitting over warps like A and B.

    With `transposed = true` the tile is the operand's transpose (K x M for A, N x K for B):
    each thread holds element (j, i) where the operand layout holds (i, j), so a `tile.trans`
    from it to the operand layout moves nothing. Tiles stored K-contiguous (weights as
    [N, K]) are read straight into it; dots take only untransposed operand layouts.
  }];
  let parameters = (ins "unsigned":$operandIndex, "MmaLayoutAttr":$parent,
                        DefaultValuedParameter<"bool", "false">:$transposed);
  let assemblyFormat = [{
    `<` `operand` `=` $operandIndex `,` `parent` `=` $parent (`,` `transposed` `=` $transposed^)? `>`
  }];
  let skipDefaultBuilders = 1;
  let builders = [
    AttrBuilderWithInferredContext<(ins "unsigned":$operandIndex, "MmaLayoutAttr":$parent,
                                        CArg<"bool", "false">:$transposed), [{
      return $_get(parent.getContext(), operandIndex, parent, transposed);
    }]>,
    AttrBuilder<(ins "unsigned":$operandIndex, "MmaLayoutAttr":$parent, CArg<"bool", "false">:$transposed), [{
      return $_get($_ctxt, operandIndex, parent, transposed);
    }]>
  ];
}

def Tile_LinearLayoutAttr : Tile_LayoutAttr<"LinearLayout", "linear"> {
  let summary = "a general thread-element map written in the layout algebra";
  let description = [{
    `map` is a layout-algebra layout with exactly three top-level modes
    (values per thread, lanes, warps) mapping to the row-major linear index of a tile
    element. It must reach every element of the tile.
  }];
  let parameters = (ins StringRefParameter<>:$map);
  let assemblyFormat = "`<` $map `>`";
}

//===----------------------------------------------------------------------===//
// Shared-memory layout.
//===----------------------------------------------------------------------===//

def Tile_SharedLayoutAttr : Tile_Attr<"SharedLayout", "shared_layout"> {
  let summary = "XOR-swizzled, optionally padded placement of a tile in shared memory";
  let description = [{
    Rows (along the slowest dimension of `order`) are split into groups of `vec` elements;
    row r XORs its group index with (r / perPhase) % maxPhase, which spreads the rows of a
    column walk across banks. `padding` elements are added after each row instead of (or in
    addition to) swizzling.
  }];
  let parameters = (ins "unsigned":$vec, "unsigned":$perPhase, "unsigned":$maxPhase,
                        ArrayRefParameter<"unsigned">:$order, "unsigned":$padding);
  let assemblyFormat = [{
    `<` `vec` `=` $vec `,` `perPhase` `=` $perPhase `,` `maxPhase` `=` $maxPhase `,`
    `order` `=` `[` $order `]` `,` `padding` `=` $padding `>`
  }];
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Enums.
//===----------------------------------------------------------------------===//

def Tile_CombineKind : I32EnumAttr<"CombineKind", "combiner of a reduction or scan", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>, I32EnumAttrCase<"min", 2>,
    I32EnumAttrCase<"custom", 3>]> {
  let cppNamespace = "::wavetile::tile";
  let genSpecializedAttr = 0;
}
def Tile_CombineKindAttr : EnumAttr<Tile_Dialect, Tile_CombineKind, "combine">;

def Tile_RoundingMode : I32EnumAttr<"RoundingMode", "float rounding mode", [
    I32EnumAttrCase<"rtne", 0>, I32EnumAttrCase<"rtz", 1>]> {
  let cppNamespace = "::wavetile::tile";
  let genSpecializedAttr = 0;
}
def Tile_RoundingModeAttr : EnumAttr<Tile_Dialect, Tile_RoundingMode, "rounding">;

def Tile_FenceOrdering : I32EnumAttr<"FenceOrdering", "what a fence orders", [
    I32EnumAttrCase<"release", 0>, I32EnumAttrCase<"acquire", 1>]> {
  let cppNamespace = "::wavetile::tile";
  let genSpecializedAttr = 0;
}
def Tile_FenceOrderingAttr : EnumAttr<Tile_Dialect, Tile_FenceOrdering, "fence_ordering">;

#endif
