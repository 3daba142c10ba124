//===- DistributionTest.cpp - layouts resolved against tile shapes --------===//
//
// reshapedBlockedLayout is checked by brute force: under the layout it returns, every
// thread must own exactly the row-major elements it owns of the source.
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

} // namespace
