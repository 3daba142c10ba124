//===- Distribution.h - how a layout spreads a tile over threads -*- C++ -*-===//
//
// The facts every GPU pass needs about a distributed layout on a tile shape: how many
// elements each thread holds, which tile coordinate each (register, lane, warp) holds, and
// the per-dimension formulas to compute those coordinates in generated code.
//
// Register order: registers are numbered with the layout's fastest dimension (order[0])
// varying fastest, so a thread's consecutive elements along that dimension are adjacent
// registers (what vector memory accesses need).
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_DIALECT_TILE_IR_DISTRIBUTION_H
#define WAVETILE_DIALECT_TILE_IR_DISTRIBUTION_H

#include "wavetile/Atoms/AtomTable.h"
#include "wavetile/Dialect/Tile/IR/IndexArith.h"
#include "wavetile/Dialect/Tile/IR/TileDialect.h"

namespace wavetile::tile {

/// A blocked layout's placement on one tile dimension.
struct DimPlacement {
  int64_t size;          // tile extent
  int64_t sizePerThread; // contiguous elements a thread holds per repetition
  int64_t threads;       // lanes along this dim
  int64_t warps;         // warps along this dim
  int64_t repetitions;   // times the block pattern repeats (1 when the block covers more than the tile)
  int64_t perThread() const { return sizePerThread * repetitions; }
  int64_t blockExtent() const { return sizePerThread * threads * warps; }
  /// Coordinate of register `r` (0 <= r < perThread()) for lane/warp ids along this dim.
  int64_t coordinate(int64_t r, int64_t laneId, int64_t warpId) const {
    int64_t c = (r / sizePerThread) * blockExtent() + (warpId * threads + laneId) * sizePerThread + r % sizePerThread;
    return c % size; // replicated when the block pattern is larger than the tile
  }
};

/// A blocked layout (or a slice of one) resolved against a tile shape.
struct BlockedGeometry {
  BlockedLayoutAttr blocked;             // the blocked layout at the root of slices
  llvm::SmallVector<unsigned> droppedDims; // dims of the root removed by slices (in root numbering)
  llvm::SmallVector<DimPlacement> dims;  // per root dimension (dropped dims have size 1)
  llvm::SmallVector<unsigned> order;     // root dims, fastest first
  int64_t warpSize, numWarps;

  bool isDropped(unsigned rootDim) const { return llvm::is_contained(droppedDims, rootDim); }
  /// Lane id / warp id along root dimension `d`.
  int64_t laneId(unsigned d, int64_t lane) const;
  int64_t warpId(unsigned d, int64_t warp) const;
  /// Registers per thread (the product over kept dims).
  int64_t elementsPerThread() const;
  /// Per-register index along each kept root dim, in register order.
  llvm::SmallVector<int64_t> registerIndex(int64_t reg) const;
  /// The register whose per-root-dim indices are `index` (inverse of registerIndex).
  int64_t registerNumber(llvm::ArrayRef<int64_t> index) const;
  /// The root dim that is tile dimension `tileDimension`.
  unsigned rootDim(unsigned tileDimension) const;
  /// Maps a kept root dim to the tile dimension it is.
  unsigned tileDim(unsigned rootDim) const;
};

/// An MMA accumulator (operand 2) or dot-operand (0 = A, 1 = B) layout resolved against a
/// tile shape. Warps tile the rows (A, C) and columns (B, C) of the tile, warp w holding
/// position (w % warpsM, w / warpsM); the atom's tile repeats to cover the rest. Registers
/// are the atom's per-lane values, repetition by repetition (row-major over repetitions).
struct MmaGeometry {
  const wavetile::atoms::Atom *atom;
  unsigned operand; // 0 A (or A's block scales), 1 B (or B's), 2 the accumulator
  bool scales;      // the block scales of A or B (dot-operand indices 2 and 3)
  bool transposed;  // the tile is the operand's transpose (see DotOperandLayoutAttr)
  const wavetile::atoms::OperandMap *map;
  int64_t warpsM, warpsN;
  int64_t reps[2];      // repetitions along tile rows and columns
  int64_t atomRows, atomCols;
  /// K steps whose per-lane runs interleave into one contiguous run (1: none). A and B of a
  /// dot permute K alike, so the sum is unchanged; CDNA's 64-bit bf16/fp8 fragments pair two
  /// K steps into one 128-bit LDS read.
  int64_t kPack = 1;

  int64_t valuesPerLane() const { return map->valuesPerLane; }
  int64_t elementsPerThread() const { return reps[0] * reps[1] * valuesPerLane(); }
  int64_t warpSize() const { return map->lanes; }
  int64_t numWarps() const { return warpsM * warpsN; }
  /// A/B: the tile K of atom K `k` in K step `step`, kStepStart(step) + (k / v) * kPack * v
  /// + k % v with v the values per lane (kPack 1: step * atomK + k); `k` is a constant or
  /// emitted IR, as `a` (IndexArith.h) computes.
  template <typename Arith, typename T> T tileK(const Arith &a, T k, int64_t step) const {
    int64_t v = valuesPerLane();
    T within = kPack == 1 ? k : a.add(a.mul(a.div(k, a.constant(v)), a.constant(kPack * v)), a.rem(k, a.constant(v)));
    return a.add(a.constant(kStepStart(step)), within);
  }
  int64_t kStepStart(int64_t step) const {
    int64_t atomK = operand == 0 ? atomCols : atomRows;
    return step / kPack * kPack * atomK + step % kPack * valuesPerLane();
  }
  /// Tile (row, column) held in register `reg` by (lane, warp).
  std::pair<int64_t, int64_t> coordinate(int64_t reg, int64_t lane, int64_t warp) const;
  /// The same in the operand's own orientation (what coordinate gives when not transposed).
  std::pair<int64_t, int64_t> operandCoordinate(int64_t reg, int64_t lane, int64_t warp) const;
};

/// Resolves an MMA or dot-operand layout; nullopt for other layouts or shapes the
/// warps-times-atom pattern does not divide.
std::optional<MmaGeometry> mmaGeometry(mlir::Attribute layout, llvm::ArrayRef<int64_t> shape);

/// Resolves a blocked or slice layout; nullopt for other layouts.
std::optional<BlockedGeometry> blockedGeometry(mlir::Attribute layout, llvm::ArrayRef<int64_t> shape);

/// A distributed layout (blocked, slice, MMA accumulator or dot operand) resolved against a
/// tile shape: which element each register of each (lane, warp) holds.
struct HeldElements {
  std::optional<BlockedGeometry> blocked; // blocked and slice layouts
  std::optional<MmaGeometry> mma;         // MMA accumulator and dot-operand layouts
  llvm::SmallVector<int64_t> shape;
  int64_t registers = 0; // per thread

  int64_t warpSize() const;
  int64_t numWarps() const;
  /// Row-major index of the element register `reg` of (lane, warp) holds.
  int64_t elementAt(int64_t reg, int64_t lane, int64_t warp) const;
};

/// Resolves a distributed layout; nullopt for layouts or shapes the others do not resolve.
std::optional<HeldElements> heldElements(mlir::Attribute layout, llvm::ArrayRef<int64_t> shape);

/// Elements each thread holds of a tile of `type` (which must carry a supported layout).
int64_t elementsPerThread(mlir::RankedTensorType type);

/// Row-major linear index of the element held in register `reg` by (lane, warp).
int64_t linearElement(const BlockedGeometry &g, llvm::ArrayRef<int64_t> shape, int64_t reg, int64_t lane,
                      int64_t warp);

/// The coalesced default layout for a tile: the last dimension fastest, `vector` contiguous
/// elements per thread along it (reduced when the tile is too small to give every thread
/// that many, but not below `minVector` where the last dimension holds it: threads then
/// repeat elements), lanes and then warps filling dimensions from the fastest.
BlockedLayoutAttr defaultBlockedLayout(mlir::MLIRContext *context, llvm::ArrayRef<int64_t> shape, int64_t vector,
                                       int64_t warpSize, int64_t numWarps, int64_t minVector = 1);

/// The layout for summing a tile over its last dimension within warps: warps split the
/// other dimensions (the rows), lanes split the last in runs of about `run` elements, so the
/// sum needs shuffles and no shared memory. Runs shrink until a warp's remaining lanes fit
/// in its rows. Null when there are fewer rows than warps or the tile is not a power of two.
BlockedLayoutAttr rowReductionLayout(mlir::MLIRContext *context, llvm::ArrayRef<int64_t> shape, int64_t run,
                                     int64_t warpSize, int64_t numWarps);

/// `layout` (blocked, over `shape`) without dimension `dim` of extent 1, as for the tile an
/// expand_dims made `shape` from: every thread keeps its elements. Lanes and warps along
/// `dim` move to the next slower dimension, which must have extent 1 or no lanes and warps
/// of its own (each thread then holds it whole, and they hold copies); null otherwise.
BlockedLayoutAttr droppedDimLayout(BlockedLayoutAttr layout, llvm::ArrayRef<int64_t> shape, unsigned dim);

/// The blocked layout for `resultShape` under which every thread holds exactly the elements
/// (in row-major order) it holds of `source` laid out by `layout` over `sourceShape`, so a
/// reshape between them stays in registers. Copies held by the lanes and warps of slow
/// dimensions each thread holds whole stay copies, on the result's first dimension (which
/// each thread must hold whole too). Null when no blocked layout does (the source replicates
/// elements otherwise, is not row-major, or its register, lane and warp digits do not split
/// into per-dimension runs at the new dimension boundaries).
BlockedLayoutAttr reshapedBlockedLayout(mlir::Attribute layout, llvm::ArrayRef<int64_t> sourceShape,
                                        llvm::ArrayRef<int64_t> resultShape);

/// A blocked layout for `shape` under which every thread holds the elements (in row-major
/// order) it holds of a tile of `layoutShape` (as many elements) laid out by `layout` (any
/// distributed layout: an MMA operand's, say), the same register of one holding the same
/// register of the other in every thread, so a reshape between them stays in registers.
/// Lanes and warps that hold copies go to a dimension each thread holds whole. Null when no
/// blocked layout does.
BlockedLayoutAttr equivalentBlockedLayout(mlir::Attribute layout, llvm::ArrayRef<int64_t> layoutShape,
                                          llvm::ArrayRef<int64_t> shape);

/// The XOR swizzle for a shared tile whose reads take 16 bytes from each of 8 consecutive
/// rows at one column (ldmatrix, MFMA operand reads): it places those 8 pieces in distinct
/// 16-byte bank groups of a 128-byte bank line. Null when rows are too short to need it.
/// The last dimension is the fastest; leading dimensions (multi-buffer stages) are slower.
SharedLayoutAttr operandSharedLayout(mlir::MLIRContext *context, llvm::ArrayRef<int64_t> shape,
                                     mlir::Type element);

/// A shared allocation and every view sliced from it (transitively), in creation order.
llvm::SmallVector<mlir::Value> sharedViews(SharedAllocOp alloc);

/// Gives a shared allocation `layout` and retypes its views to match.
void setSharedLayout(SharedAllocOp alloc, SharedLayoutAttr layout);

} // namespace wavetile::tile

#endif
