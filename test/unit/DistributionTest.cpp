//===- DistributionTest.cpp - layouts resolved against tile shapes --------===//
//
// reshapedBlockedLayout is checked by brute force: under the layout it returns, every
// thread must own exactly the row-major elements it owns of the source. Dot-operand layouts
// are checked the same way: each warp covers its part of the operand once, and A and B
// agree on the K of every (lane, value, K step) the MMA contracts.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Dialect/Tile/IR/Distribution.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>

using namespace wavetile::tile;

namespace {

struct Fixture : ::testing::Test {
  Fixture() { context.loadDialect<TileDialect>(); }
  mlir::MLIRContext context;
};

/// The row-major elements each (warp, lane) owns, in thread order.
std::vector<std::set<int64_t>> ownership(mlir::Attribute layout, llvm::ArrayRef<int64_t> shape, int64_t warpSize,
                                         int64_t numWarps) {
  std::optional<BlockedGeometry> g = blockedGeometry(layout, shape);
  EXPECT_TRUE(g.has_value());
  std::vector<std::set<int64_t>> owned;
  for (int64_t warp = 0; warp < numWarps; ++warp)
    for (int64_t lane = 0; lane < warpSize; ++lane) {
      std::set<int64_t> &elements = owned.emplace_back();
      for (int64_t r = 0; r < g->elementsPerThread(); ++r)
        elements.insert(linearElement(*g, shape, r, lane, warp));
    }
  return owned;
}

TEST_F(Fixture, ReshapeKeepsEveryThreadsElements) {
  struct Case {
    std::vector<int64_t> source, result;
    int64_t vector, warpSize, numWarps;
  };
  std::vector<Case> cases = {
      {{4096}, {128, 32}, 8, 64, 4},  {{4096}, {32, 128}, 8, 32, 4},   {{8192}, {256, 16, 2}, 8, 64, 8},
      {{128, 32}, {4096}, 8, 64, 4},  {{2048}, {1024, 2}, 4, 32, 2},   {{1024}, {2, 512}, 4, 64, 4},
      {{64, 64}, {16, 4, 64}, 4, 32, 4}, {{16, 16, 2}, {512}, 2, 32, 4},
  };
  int found = 0;
  for (const Case &c : cases) {
    SCOPED_TRACE(::testing::Message() << "source " << c.source.size() << "-D, " << c.source.back() << " fastest, "
                                      << c.warpSize << " lanes x " << c.numWarps << " warps");
    BlockedLayoutAttr source = defaultBlockedLayout(&context, c.source, c.vector, c.warpSize, c.numWarps);
    BlockedLayoutAttr result = reshapedBlockedLayout(source, c.source, c.result);
    if (!result)
      continue;
    ++found;
    EXPECT_EQ(ownership(source, c.source, c.warpSize, c.numWarps),
              ownership(result, c.result, c.warpSize, c.numWarps));
  }
  // Every case above has such a layout: default layouts of power-of-two tiles without
  // replication split at any power-of-two boundary.
  EXPECT_EQ(found, int(cases.size()));
}

TEST_F(Fixture, ReshapeOfAReplicatedOrMixedLayoutHasNone) {
  // 128 elements over 64 lanes x 4 warps: threads repeat elements.
  BlockedLayoutAttr replicated = defaultBlockedLayout(&context, {128}, 4, 64, 4);
  EXPECT_FALSE(reshapedBlockedLayout(replicated, {128}, {8, 16}));
  // [4, 1024]: 8 per thread, 64 lanes, one warp along the row (so the row repeats in
  // registers) and 4 warps down the rows: flattened, warps come after register repeats.
  BlockedLayoutAttr mixed = BlockedLayoutAttr::get(&context, {1, 8}, {1, 64}, {4, 1}, {1, 0});
  EXPECT_FALSE(reshapedBlockedLayout(mixed, {4, 1024}, {4096}));
  // The same layout splits fine where the digits fall into runs.
  BlockedLayoutAttr split = reshapedBlockedLayout(mixed, {4, 1024}, {4, 2, 512});
  ASSERT_TRUE(split);
  EXPECT_EQ(ownership(mixed, {4, 1024}, 64, 4), ownership(split, {4, 2, 512}, 64, 4));
}

/// X's rows as a row reduction's products broadcast them: the layout `droppedDimLayout` gives
/// `xShape` (the products' `sum` layout without the columns, dim 1) must own what the slice
/// owns, and the reshape splitting each byte's two nibbles (last dim doubled) must keep it.
/// Returns X's layout (null, after a failed expectation, when there is none).
BlockedLayoutAttr expectXRowsKeepTheSlice(mlir::MLIRContext &context, BlockedLayoutAttr sum,
                                          llvm::SmallVector<int64_t> xShape) {
  llvm::SmallVector<int64_t> expanded = xShape, nibbles = xShape;
  expanded.insert(expanded.begin() + 1, 1);
  nibbles.back() /= 2;
  nibbles.push_back(2);
  BlockedLayoutAttr rows = droppedDimLayout(sum, expanded, 1);
  EXPECT_TRUE(rows);
  if (!rows)
    return {};
  EXPECT_EQ(ownership(SliceLayoutAttr::get(&context, 1, sum), xShape, 32, 4), ownership(rows, xShape, 32, 4));
  BlockedLayoutAttr unpacked = reshapedBlockedLayout(rows, xShape, nibbles);
  EXPECT_TRUE(unpacked);
  if (unpacked) {
    EXPECT_EQ(ownership(rows, xShape, 32, 4), ownership(unpacked, nibbles, 32, 4));
  }
  return rows;
}

TEST_F(Fixture, RowReductionsStayWithinWarps) {
  // The skinny GEMM's [1, 32 columns, 512 K] products: warps split the columns, 16 lanes split
  // K in runs of 32, the other lane bit takes a column.
  BlockedLayoutAttr sum = rowReductionLayout(&context, {1, 32, 512}, 32, 32, 4);
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum, BlockedLayoutAttr::get(&context, {1, 1, 32}, {1, 2, 16}, {1, 4, 1}, {2, 1, 0}));
  // Runs shrink until the lanes left fit in a warp's rows: 4 rows, one per warp, all 32 lanes on K.
  EXPECT_EQ(rowReductionLayout(&context, {4, 512}, 32, 32, 4),
            BlockedLayoutAttr::get(&context, {1, 16}, {1, 32}, {4, 1}, {1, 0}));
  EXPECT_FALSE(rowReductionLayout(&context, {2, 512}, 32, 32, 4)); // fewer rows than warps
  // The X row it is broadcast from ([1, 512]): the lanes and warps of the columns hold copies.
  BlockedLayoutAttr row = expectXRowsKeepTheSlice(context, sum, {1, 512});
  ASSERT_TRUE(row);
  // The copies need a first dimension each thread holds whole.
  EXPECT_FALSE(reshapedBlockedLayout(row, {1, 512}, {2, 256}));
  // W ([32, 512], expanded at 0) has no lanes or warps to move.
  EXPECT_EQ(droppedDimLayout(sum, {1, 32, 512}, 0), BlockedLayoutAttr::get(&context, {1, 32}, {2, 16}, {4, 1}, {1, 0}));
  EXPECT_FALSE(droppedDimLayout(sum, {1, 32, 512}, 1)); // extent 32, not 1
  // Two rows of X ([2, 16, 512] products): each thread holds both rows, the copies sit on them.
  BlockedLayoutAttr pair = rowReductionLayout(&context, {2, 16, 512}, 32, 32, 4);
  ASSERT_TRUE(pair);
  EXPECT_TRUE(expectXRowsKeepTheSlice(context, pair, {2, 512}));
}

/// A [rows, k] and B [k, cols] of one warp's MMA on `atom` (warps 1 x 1).
struct DotOperands {
  MmaGeometry a, b;
};
std::optional<DotOperands> dotOperands(mlir::MLIRContext &context, llvm::StringRef atom, int64_t rows, int64_t k,
                                       int64_t cols) {
  auto mma = MmaLayoutAttr::get(&context, atom, {1u, 1u});
  auto a = mmaGeometry(DotOperandLayoutAttr::get(&context, 0, mma), {rows, k});
  auto b = mmaGeometry(DotOperandLayoutAttr::get(&context, 1, mma), {k, cols});
  if (!a || !b)
    return std::nullopt;
  return DotOperands{*a, *b};
}

TEST_F(Fixture, CdnaDotOperandsPairKStepsIntoContiguousRuns) {
  // gfx942's bf16 32x32x8 atom: 4 values (64 bits) per lane and K step; K 32 is 4 steps.
  auto ops = dotOperands(context, "gfx942.mfma_f32_32x32x8_bf16", 64, 32, 32);
  ASSERT_TRUE(ops);
  const MmaGeometry &a = ops->a, &b = ops->b;
  EXPECT_EQ(a.kPack, 2);
  EXPECT_EQ(b.kPack, 2);
  std::set<std::pair<int64_t, int64_t>> coveredA, coveredB;
  for (int64_t lane = 0; lane < 64; ++lane) {
    for (int64_t r = 0; r < a.elementsPerThread(); ++r)
      coveredA.insert(a.coordinate(r, lane, 0));
    for (int64_t r = 0; r < b.elementsPerThread(); ++r)
      coveredB.insert(b.coordinate(r, lane, 0));
    // A's registers of K steps 2j and 2j+1 in one row are 8 consecutive K.
    for (int64_t r = 0; r < a.elementsPerThread(); r += 8)
      for (int64_t i = 0; i < 8; ++i)
        EXPECT_EQ(a.coordinate(r + i, lane, 0),
                  std::pair(a.coordinate(r, lane, 0).first, a.coordinate(r, lane, 0).second + i));
    // K step s contracts A's and B's elements at each atom K k: in A and in B they must stand
    // for the same tile K (found here in the same lane, which holds the same k of both).
    for (int64_t step = 0; step < a.reps[1]; ++step)
      for (int64_t v = 0; v < a.valuesPerLane(); ++v) {
        int64_t atomK = a.map->elementAt(int(lane), int(v)) / a.atomRows; // A's column
        int64_t bRegister = -1;
        for (int64_t w = 0; w < b.valuesPerLane(); ++w)
          if (b.map->elementAt(int(lane), int(w)) % b.atomRows == atomK) // B's row
            bRegister = step * b.reps[1] * b.valuesPerLane() + w;
        ASSERT_GE(bRegister, 0);
        EXPECT_EQ(a.coordinate(step * a.valuesPerLane() + v, lane, 0).second, b.coordinate(bRegister, lane, 0).first);
      }
  }
  EXPECT_EQ(coveredA.size(), size_t(64 * 32));
  EXPECT_EQ(coveredB.size(), size_t(32 * 32));
}

TEST_F(Fixture, KStepsStayApartWhereFragmentsAreWideOrStepsOdd) {
  // gfx950's bf16 16x16x32: 8 values (128 bits) per lane already.
  auto wide = dotOperands(context, "gfx950.mfma_f32_16x16x32_bf16", 16, 64, 16);
  ASSERT_TRUE(wide);
  EXPECT_EQ(wide->a.kPack, 1);
  // gfx942 with one K step (K 8 on the 32x32x8 atom): nothing to pair.
  auto single = dotOperands(context, "gfx942.mfma_f32_32x32x8_bf16", 32, 8, 32);
  ASSERT_TRUE(single);
  EXPECT_EQ(single->a.kPack, 1);
  // mma.sync (32 lanes) reads 128 bits per ldmatrix already.
  auto nvidia = dotOperands(context, "sm_90.mma_m16n8k16_f32_bf16_bf16", 16, 32, 8);
  ASSERT_TRUE(nvidia);
  EXPECT_EQ(nvidia->a.kPack, 1);
}

/// The row-major elements each (warp, lane) of an MMA-operand layout holds.
std::vector<std::set<int64_t>> mmaOwnership(const MmaGeometry &g, llvm::ArrayRef<int64_t> shape) {
  std::vector<std::set<int64_t>> owned;
  for (int64_t warp = 0; warp < g.numWarps(); ++warp)
    for (int64_t lane = 0; lane < g.warpSize(); ++lane) {
      std::set<int64_t> &elements = owned.emplace_back();
      for (int64_t r = 0; r < g.elementsPerThread(); ++r) {
        auto [row, col] = g.coordinate(r, lane, warp);
        elements.insert(row * shape[1] + col);
      }
    }
  return owned;
}

// MXFP4 operands decoded in registers: the packed bytes (a byte's two codes, [rows, K/2, 2])
// and the per-32 scales ([rows, K/32, 32]) of an mma.sync operand tile have blocked layouts
// that reshape to it in registers, A replicated over the warps that split N.
TEST_F(Fixture, DotOperandsHaveBlockedEquivalentsForPackedCodesAndGroupScales) {
  // For each atom (4 warps splitting N), A [16, K] and the transposed B [64, K] as [rows, K/2, 2]
  // bytes and [rows, K/32, 32] scales.
  struct Atom {
    const char *name;
    int64_t warpSize;
    std::vector<int64_t> ks;
  };
  for (const Atom &atom :
       {Atom{"sm_90.mma_m16n8k16_f32_bf16_bf16", 32, {128, 256}}, Atom{"gfx942.mfma_f32_16x16x16_bf16", 64, {128}}}) {
    auto mma = MmaLayoutAttr::get(&context, atom.name, {1u, 4u});
    auto a = DotOperandLayoutAttr::get(&context, 0, mma), b = DotOperandLayoutAttr::get(&context, 1, mma, true);
    for (int64_t k : atom.ks)
      for (auto [layout, rows] : {std::pair{a, int64_t(16)}, std::pair{b, int64_t(64)}})
        for (std::vector<int64_t> blockedShape : {std::vector<int64_t>{rows, k / 2, 2}, {rows, k / 32, 32}}) {
          SCOPED_TRACE(::testing::Message() << atom.name << " operand " << layout.getOperandIndex() << " [" << rows
                                            << ", " << k << "] as " << blockedShape[1] << " x " << blockedShape[2]);
          BlockedLayoutAttr blocked = equivalentBlockedLayout(layout, {rows, k}, blockedShape);
          ASSERT_TRUE(blocked);
          std::optional<MmaGeometry> g = mmaGeometry(layout, {rows, k});
          ASSERT_TRUE(g);
          EXPECT_EQ(ownership(blocked, blockedShape, atom.warpSize, 4), mmaOwnership(*g, {rows, k}));
        }
  }
  // Two warps along M hold rows 16 apart in 8-row runs: no blocked layout does that.
  auto tall = MmaLayoutAttr::get(&context, "sm_90.mma_m16n8k16_f32_bf16_bf16", {2u, 2u});
  EXPECT_FALSE(equivalentBlockedLayout(DotOperandLayoutAttr::get(&context, 0, tall), {64, 64}, {64, 32, 2}));
  // The element counts must agree.
  auto wide = MmaLayoutAttr::get(&context, "sm_90.mma_m16n8k16_f32_bf16_bf16", {1u, 4u});
  EXPECT_FALSE(equivalentBlockedLayout(DotOperandLayoutAttr::get(&context, 0, wide), {16, 128}, {16, 32, 2}));
}

} // namespace
