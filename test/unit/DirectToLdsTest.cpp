//===- DirectToLdsTest.cpp - plans for AMD load-to-LDS copies -------------===//
//
// The layouts here are written independently of the compiler's: a 2-D blocked layout
// (sizePerThread [1, g], lanes and warps row-major over [rows, columns]) and the XOR
// swizzle as the shared-layout attribute documents it. A plan is then executed the way the
// CDNA3/CDNA4 ISA guides define load-to-LDS: lane i of a wave writes its bytes at the
// wave's LDS base + i * bytes. Every element must land exactly where the shared layout puts
// it, and every LDS element of the tile must be written exactly once.
//
//===----------------------------------------------------------------------===//

#include "../../compiler/lib/Conversion/TileToGPU/DirectToLds.h"

#include <gtest/gtest.h>

#include <vector>

using namespace wavetile;
using namespace wavetile::direct_lds;

namespace {

struct Copy {
  int64_t rows, columns, elementBytes, group; // tile, element size, sizePerThread along columns
  int64_t lanesAlongColumns, warps;           // 64-lane waves, warps stacked along rows
  int64_t vec = 1, perPhase = 1, maxPhase = 1, padding = 0;

  int64_t lanesAlongRows() const { return 64 / lanesAlongColumns; }
  int64_t columnRepeats() const { return columns / (group * lanesAlongColumns); }
  int64_t rowRepeats() const { return rows / (lanesAlongRows() * warps); }
  int64_t registers() const { return rowRepeats() * columnRepeats() * group; }
  /// Tile (row, column) of register `reg` of (lane, warp); registers run along columns first.
  std::pair<int64_t, int64_t> element(int64_t reg, int64_t lane, int64_t warp) const {
    int64_t within = reg % group, columnRepeat = (reg / group) % columnRepeats(),
            rowRepeat = reg / (group * columnRepeats());
    int64_t row = rowRepeat * lanesAlongRows() * warps + warp * lanesAlongRows() + lane / lanesAlongColumns;
    int64_t column = columnRepeat * group * lanesAlongColumns + (lane % lanesAlongColumns) * group + within;
    return {row, column};
  }
  int64_t shared(int64_t row, int64_t column) const {
    int64_t phase = (row / perPhase) % maxPhase;
    return row * (columns + padding) + ((column / vec) ^ phase) * vec + column % vec;
  }
  CopyShape shape() const {
    return {64, warps, registers(), elementBytes, group, columns, vec, perPhase, maxPhase};
  }
  std::optional<Plan> plan(int64_t laneBytes) const {
    return planCopy(shape(), laneBytes, [&](int64_t reg, int64_t lane, int64_t warp) {
      auto [row, column] = element(reg, lane, warp);
      return shared(row, column);
    });
  }
};

/// Runs `plan` as the hardware would and checks where everything lands.
void expectCopiesExactly(const Copy &c, const Plan &plan) {
  CopyShape s = c.shape();
  std::vector<int64_t> lds(c.rows * (c.columns + c.padding), -1);
  ConstantArith a;
  for (int64_t warp = 0; warp < c.warps; ++warp)
    for (int64_t group = 0; group < plan.groups(); ++group)
      for (int64_t instruction = 0; instruction < plan.instructionsPerGroup; ++instruction) {
        int64_t waveBase = slotWith(a, s, plan, int64_t(0), warp, group, instruction).runStart;
        for (int64_t lane = 0; lane < 64; ++lane) {
          Slot<int64_t> slot = slotWith(a, s, plan, lane, warp, group, instruction);
          ASSERT_EQ(slot.runStart, waveBase) << "the LDS base must be uniform over the wave";
          for (int64_t i = 0; i < plan.laneElements; ++i) {
            int64_t reg = group * c.group + slot.part * plan.laneElements + i;
            auto [row, column] = c.element(reg, slot.owner, warp);
            int64_t at = waveBase + lane * plan.laneElements + i; // the hardware's choice
            ASSERT_LT(at, int64_t(lds.size()));
            ASSERT_EQ(lds[at], -1) << "LDS element " << at << " written twice";
            lds[at] = row * c.columns + column;
          }
        }
      }
  for (int64_t row = 0; row < c.rows; ++row)
    for (int64_t column = 0; column < c.columns; ++column)
      ASSERT_EQ(lds[c.shared(row, column)], row * c.columns + column) << "element (" << row << ", " << column << ")";
}

// A 64x32 bf16 A tile of a GEMM: 8 elements per thread, 4 lanes per row, 4 warps, and the
// swizzle that spreads 16-byte MFMA operand reads over the banks.
Copy gemmTile() {
  Copy c{64, 32, 2, 8, 4, 4};
  c.vec = 8, c.perPhase = 2, c.maxPhase = 4;
  return c;
}

TEST(DirectToLds, SixteenBytesPerLaneUnderSwizzle) {
  Copy c = gemmTile();
  std::optional<Plan> plan = c.plan(16);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->laneElements, 8);
  EXPECT_EQ(plan->instructions(), 1);
  EXPECT_TRUE(plan->permuted); // the swizzle moves groups between lanes of a row
  expectCopiesExactly(c, *plan);
}

TEST(DirectToLds, OneDwordPerLaneSplitsGroups) {
  Copy c = gemmTile();
  std::optional<Plan> plan = c.plan(4);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->laneElements, 2);
  EXPECT_EQ(plan->instructionsPerGroup, 4);
  expectCopiesExactly(c, *plan);
}

TEST(DirectToLds, UnswizzledTileNeedsNoExchange) {
  Copy c{32, 64, 2, 8, 8, 2};
  std::optional<Plan> plan = c.plan(16);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->permuted);
  expectCopiesExactly(c, *plan);
  // fp8 and fp32 elements, several register groups per thread.
  for (Copy other : {Copy{64, 128, 1, 16, 8, 4, 16, 1, 8}, Copy{128, 32, 4, 4, 8, 2, 4, 2, 8}}) {
    std::optional<Plan> p = other.plan(16);
    ASSERT_TRUE(p);
    expectCopiesExactly(other, *p);
    p = other.plan(4);
    ASSERT_TRUE(p);
    expectCopiesExactly(other, *p);
  }
}

TEST(DirectToLds, LayoutsWithoutContiguousWaveRunsHaveNoPlan) {
  // Lanes cover only part of a row, so a wave's elements are not one LDS run.
  Copy partialRows{32, 128, 2, 8, 4, 2};
  EXPECT_FALSE(partialRows.plan(16));
  // Padding breaks the run after every row.
  Copy padded = gemmTile();
  padded.padding = 8;
  EXPECT_FALSE(padded.plan(16));
  // Lane parts larger than the groups a thread's offsets come in.
  EXPECT_FALSE((Copy{32, 64, 2, 4, 16, 2}.plan(16)));
}

TEST(DirectToLds, PlansAreCheckedAgainstTheTrueLayout) {
  // Describe the swizzle to the planner with the wrong phase period: the slots it derives
  // disagree with where the layout puts the elements, and the check refuses the plan.
  Copy c = gemmTile();
  CopyShape wrong = c.shape();
  wrong.perPhase = 1;
  EXPECT_FALSE(planCopy(wrong, 16, [&](int64_t reg, int64_t lane, int64_t warp) {
    auto [row, column] = c.element(reg, lane, warp);
    return c.shared(row, column);
  }));
}

} // namespace
