//===- TileBase.td - the tile dialect ------------------------*- tablegen -*-===//
#ifndef WAVETILE_TILE_BASE
#define WAVETILE_TILE_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::wavetile::tile";
  let summary = "Block-level tile programs: tiles, layouts, pointers, buffer views, shared memory";
  let description = [{
    A kernel is a block-level SPMD program. Values are tiles (ranked tensors, optionally
    carrying a distributed layout as their encoding), scalars, global pointers, bounded
    buffer views and shared-memory buffers. Elementwise math uses `arith`/`math` on tiles;
    control flow uses `scf`.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    /// Unit attribute marking a `func.func` as a tile kernel.
    static constexpr ::llvm::StringLiteral kKernelAttrName = "tile.kernel";
    /// i32 attribute on a kernel: warps per block.
    static constexpr ::llvm::StringLiteral kNumWarpsAttrName = "tile.num_warps";
    /// i32 attribute on a kernel: depth of the shared-memory ring tile-pipeline-loops
    /// prefetches K-loop operands through (1 or absent: no pipelining).
    static constexpr ::llvm::StringLiteral kNumStagesAttrName = "tile.num_stages";
    /// i32 attribute on a kernel or module: threads per warp (64 on CDNA, 32 on NVIDIA).
    static constexpr ::llvm::StringLiteral kWarpSizeAttrName = "tile.warp_size";
    /// Unit attribute on a kernel: its bf16 and f16 sums computed in f32 and rounded back
    /// stay f32 sums on NVIDIA, where convert-tile-to-gpu otherwise narrows them.
    static constexpr ::llvm::StringLiteral kWideRoundedSumsAttrName = "tile.wide_rounded_sums";
    /// Dictionary of integer compile-time parameters a kernel was specialized with.
    static constexpr ::llvm::StringLiteral kParamsAttrName = "tile.params";
    /// Unit attribute on a pointer argument: the kernel touches nothing 2^31 - 1 bytes or
    /// more past it (tile-use-buffer-views addresses it through a buffer view).
    static constexpr ::llvm::StringLiteral kWithin2GiBAttrName = "tile.within_2gib";
    /// Integer attribute on a kernel argument, from the launch's specialization: a pointer's
    /// address is a multiple of this many bytes; an integer is a multiple of this value.
    static constexpr ::llvm::StringLiteral kDivisibilityAttrName = "tile.divisibility";
  }];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif
