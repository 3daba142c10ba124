//===- AtomTableTest.cpp - Tests for the matrix instruction table ---------===//
//
// The operand maps are checked against references transcribed directly from
// vendor material (never derived from the table), against worked examples
// copied from that material, and by simulating one MMA per atom.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Atoms/AtomTable.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace wavetile;
using namespace wavetile::atoms;

namespace {

constexpr Operand kAllOperands[] = {Operand::A, Operand::B, Operand::C,
                                    Operand::ScaleA, Operand::ScaleB};

struct Coord {
  int row, col;
  bool operator==(const Coord &other) const {
    return row == other.row && col == other.col;
  }
  bool operator!=(const Coord &other) const { return !(*this == other); }
};

std::ostream &operator<<(std::ostream &os, const Coord &coord) {
  return os << "[" << coord.row << "][" << coord.col << "]";
}

Coord coordAt(const OperandMap &map, int lane, int value) {
  int64_t element = map.elementAt(lane, value);
  return {static_cast<int>(element % map.rows),
          static_cast<int>(element / map.rows)};
}

/// The element each register slot holds; slot index = lane + lanes * value.
struct SlotTable {
  int lanes = 0, values = 0;
  std::vector<Coord> element;
  Coord at(int lane, int value) const { return element[lane + lanes * value]; }
};

struct Slot {
  int lane, value;
};

SlotTable tabulate(int lanes, int values,
                   const std::function<Coord(int lane, int value)> &coordOf) {
  SlotTable table{lanes, values, {}};
  for (int value = 0; value < values; ++value)
    for (int lane = 0; lane < lanes; ++lane)
      table.element.push_back(coordOf(lane, value));
  return table;
}

/// Builds a slot table from an element -> slot rule, checking that the rule
/// itself fills every slot exactly once.
SlotTable invert(int lanes, int rows, int cols,
                 const std::function<Slot(int row, int col)> &slotOf) {
  int values = rows * cols / lanes;
  SlotTable table{lanes, values, std::vector<Coord>(rows * cols, {-1, -1})};
  for (int col = 0; col < cols; ++col) {
    for (int row = 0; row < rows; ++row) {
      Slot slot = slotOf(row, col);
      Coord &entry = table.element.at(slot.lane + lanes * slot.value);
      EXPECT_EQ(entry, (Coord{-1, -1})) << "reference reuses a slot";
      entry = {row, col};
    }
  }
  return table;
}

//===----------------------------------------------------------------------===//
// References, transcribed from vendor material.
//===----------------------------------------------------------------------===//

// AMD Matrix Instruction Calculator (ROCm/amd_matrix_instruction_calculator),
// InstCalcGfx9.__get_input_reg_lanes for one block: where input entry (i, k)
// lives, i being A's row or B's column.
Slot calculatorInputSlot(int nonK, int K, int i, int k) {
  int elementsInContiguousGprs = K / (64 / nonK);
  int localElement = k % elementsInContiguousGprs;
  int lane = (k / elementsInContiguousGprs) * nonK + i;
  return {lane, localElement};
}

// InstCalcGfx9.__get_output_reg_lanes for block 0 of 32-bit outputs.
Slot calculatorOutputSlot(int M, int N, int i, int j) {
  int multirowsPerRegister = 64 / N;
  int multirowHeight = 4;
  int blocksPerRegister =
      (64 + N * M / multirowHeight - 1) / (N * M / multirowHeight); // ceil
  int reg = (i / (multirowHeight * multirowsPerRegister)) * multirowHeight +
            i % multirowHeight;
  int lane =
      ((i / multirowHeight) % multirowsPerRegister) * blocksPerRegister * N + j;
  return {lane, reg};
}

// composable_kernel test/mx_mfma_op (load_A_row_major / load_B_col_major):
// lane l starts at row (column of B) l % M and K offset (l / M) * chunk_size,
// reading num_chunks chunks chunk_offset = chunk_size * 64 / M apart;
// chunk_size 16 and 2 chunks for fp8, one chunk of 32 for fp6 and fp4.
// Returns (non-K index, k).
Coord ckScaledInput(int nonK, int bits, int lane, int value) {
  int chunkSize = bits == 8 ? 16 : 32;
  int chunkOffset = chunkSize * 64 / nonK;
  int k = (lane / nonK) * chunkSize + (value / chunkSize) * chunkOffset +
          value % chunkSize;
  return {lane % nonK, k};
}

// CK load_mx_A_row_major: lane l reads scale[l % M][l / M] (non-K index, K
// block).
Coord ckScale(int nonK, int lane) { return {lane % nonK, lane / nonK}; }

// PTX ISA "Matrix Fragments for mma.m16n8k16 with floating point type",
// .f16/.bf16.
Coord ptxM16N8K16A(int laneid, int i) {
  int groupID = laneid >> 2, threadID_in_group = laneid % 4;
  int row = ((0 <= i && i < 2) || (4 <= i && i < 6)) ? groupID : groupID + 8;
  int col = i < 4 ? (threadID_in_group * 2) + (i & 0x1)
                  : (threadID_in_group * 2) + (i & 0x1) + 8;
  return {row, col};
}

Coord ptxM16N8K16B(int laneid, int i) {
  int groupID = laneid >> 2, threadID_in_group = laneid % 4;
  int row = i < 2 ? (threadID_in_group * 2) + (i & 0x1)
                  : (threadID_in_group * 2) + (i & 0x1) + 8;
  return {row, groupID};
}

// Same section, accumulators C/D (also used by m16n8k32).
Coord ptxM16N8Accumulator(int laneid, int i) {
  int groupID = laneid >> 2, threadID_in_group = laneid % 4;
  int row = i < 2 ? groupID : groupID + 8;
  int col = (threadID_in_group * 2) + (i & 0x1);
  return {row, col};
}

// PTX ISA "Matrix Fragments for mma.m16n8k32", .e4m3/.e5m2.
Coord ptxM16N8K32A(int laneid, int i) {
  int groupID = laneid >> 2, threadID_in_group = laneid % 4;
  int row = ((0 <= i && i < 4) || (8 <= i && i < 12)) ? groupID : groupID + 8;
  int col = i < 8 ? (threadID_in_group * 4) + (i & 0x3)
                  : (threadID_in_group * 4) + (i & 0x3) + 16;
  return {row, col};
}

Coord ptxM16N8K32B(int laneid, int i) {
  int groupID = laneid >> 2, threadID_in_group = laneid % 4;
  int row = i < 4 ? (threadID_in_group * 4) + (i & 0x3)
                  : (threadID_in_group * 4) + (i & 0x3) + 16;
  return {row, groupID};
}

// PTX ISA wgmma "Register Fragments", figure "WGMMA .m64nNk16 register
// fragment layout for accumulator matrix D" (same for m64nNk32): warp w of
// the warpgroup owns rows 16w..16w+15, laid out like the mma.m16n8
// accumulator and repeated every 8 columns; d_i, i = 4 * (8-column block) +
// index within the m16n8 fragment.
Coord ptxWgmmaAccumulator(int thread, int i) {
  int warp = thread / 32, laneid = thread % 32;
  int groupID = laneid >> 2, threadID_in_group = laneid % 4;
  int row = warp * 16 + groupID + 8 * ((i >> 1) & 0x1);
  int col = (i >> 2) * 8 + threadID_in_group * 2 + (i & 0x1);
  return {row, col};
}

/// The reference slot table of `operand`, or nullopt when the instruction has
/// no register map for it. Chosen by instruction family only.
std::optional<SlotTable> referenceSlots(const Atom &atom, Operand operand) {
  int M = atom.m, N = atom.n, K = atom.k;
  bool scaled = atom.mlirOp == "amdgpu.scaled_mfma";
  if (atom.mlirOp == "amdgpu.mfma" || scaled) {
    switch (operand) {
    case Operand::A:
      if (scaled)
        return tabulate(64, 32, [&](int lane, int value) {
          return ckScaledInput(M, bitWidth(atom.aType), lane, value);
        });
      return invert(64, M, K, [&](int i, int k) {
        return calculatorInputSlot(M, K, i, k);
      });
    case Operand::B:
      if (scaled)
        return tabulate(64, 32, [&](int lane, int value) {
          Coord columnAndK =
              ckScaledInput(N, bitWidth(atom.bType), lane, value);
          return Coord{columnAndK.col, columnAndK.row};
        });
      return invert(64, K, N, [&](int k, int j) {
        return calculatorInputSlot(N, K, j, k);
      });
    case Operand::C:
      return invert(64, M, N, [&](int i, int j) {
        return calculatorOutputSlot(M, N, i, j);
      });
    case Operand::ScaleA:
      if (!scaled)
        return std::nullopt;
      return tabulate(64, 1, [&](int lane, int) { return ckScale(M, lane); });
    case Operand::ScaleB:
      if (!scaled)
        return std::nullopt;
      return tabulate(64, 1, [&](int lane, int) {
        Coord columnAndBlock = ckScale(N, lane);
        return Coord{columnAndBlock.col, columnAndBlock.row};
      });
    }
  }
  if (atom.mlirOp == "nvvm.mma.sync") {
    bool k16 = K == 16;
    switch (operand) {
    case Operand::A:
      return tabulate(32, k16 ? 8 : 16, k16 ? ptxM16N8K16A : ptxM16N8K32A);
    case Operand::B:
      return tabulate(32, k16 ? 4 : 8, k16 ? ptxM16N8K16B : ptxM16N8K32B);
    case Operand::C:
      return tabulate(32, 4, ptxM16N8Accumulator);
    default:
      return std::nullopt;
    }
  }
  if (atom.mlirOp == "nvvm.wgmma.mma_async" && operand == Operand::C)
    return tabulate(128, N / 2, ptxWgmmaAccumulator);
  return std::nullopt;
}

struct Mismatches {
  int count = 0;
  std::string firstFew;
};

Mismatches compareWithReference(const OperandMap &map,
                                const SlotTable &reference) {
  Mismatches mismatches;
  for (int value = 0; value < map.valuesPerLane; ++value) {
    for (int lane = 0; lane < map.lanes; ++lane) {
      Coord got = coordAt(map, lane, value);
      Coord want = reference.at(lane, value);
      if (got == want || ++mismatches.count > 3)
        continue;
      std::ostringstream line;
      line << "lane " << lane << " value " << value << ": table " << got
           << ", reference " << want << "\n";
      mismatches.firstFew += line.str();
    }
  }
  return mismatches;
}

//===----------------------------------------------------------------------===//
// Table-wide properties.
//===----------------------------------------------------------------------===//

TEST(AtomTable, EveryOperandMapIsABijection) {
  for (const Atom &atom : allAtoms()) {
    for (Operand operand : kAllOperands) {
      const OperandMap *map = atom.operandMap(operand);
      if (!map)
        continue;
      SCOPED_TRACE(atom.name + " " + operandName(operand) + " " +
                   map->laneValueToElement.str());
      int elements = map->rows * map->cols;
      EXPECT_EQ(map->lanes, atom.waveSize);
      EXPECT_EQ(map->lanes * map->valuesPerLane, elements);
      EXPECT_EQ(map->laneValueToElement.size(), elements);
      EXPECT_TRUE(layout::isBijective(map->laneValueToElement));

      std::vector<int> hits(elements, 0);
      for (int value = 0; value < map->valuesPerLane; ++value) {
        for (int lane = 0; lane < map->lanes; ++lane) {
          int64_t element = map->elementAt(lane, value);
          ASSERT_GE(element, 0);
          ASSERT_LT(element, elements);
          ++hits[element];
        }
      }
      int notOnce = 0;
      for (int count : hits)
        notOnce += count != 1;
      EXPECT_EQ(notOnce, 0) << "elements not covered exactly once";
    }
  }
}

TEST(AtomTable, OperandShapesFollowTheInstructionShape) {
  for (const Atom &atom : allAtoms()) {
    SCOPED_TRACE(atom.name);
    EXPECT_EQ(atom.blocks, 1);
    EXPECT_EQ(atom.c.rows, atom.m);
    EXPECT_EQ(atom.c.cols, atom.n);
    bool descriptorSourced =
        atom.aSource == OperandSource::SharedMemoryDescriptor;
    EXPECT_EQ(atom.bSource, atom.aSource);
    EXPECT_EQ(atom.a.has_value(), !descriptorSourced);
    EXPECT_EQ(atom.b.has_value(), !descriptorSourced);
    if (atom.a) {
      EXPECT_EQ(atom.a->rows, atom.m);
      EXPECT_EQ(atom.a->cols, atom.k);
      EXPECT_EQ(atom.b->rows, atom.k);
      EXPECT_EQ(atom.b->cols, atom.n);
    }
    EXPECT_EQ(atom.scaleA.has_value(), atom.scaleType.has_value());
    EXPECT_EQ(atom.scaleB.has_value(), atom.scaleType.has_value());
    if (atom.scaleType) {
      EXPECT_EQ(*atom.scaleType, ScalarKind::e8m0);
      EXPECT_EQ(atom.scaleA->rows, atom.m);
      EXPECT_EQ(atom.scaleA->cols, atom.k / kScaleBlockSize);
      EXPECT_EQ(atom.scaleB->rows, atom.k / kScaleBlockSize);
      EXPECT_EQ(atom.scaleB->cols, atom.n);
      EXPECT_EQ(atom.scaleA->valuesPerLane, 1);
    }
  }
}

TEST(AtomTable, NamesAreUniqueAndPrefixedByTarget) {
  std::set<std::string> names;
  for (const Atom &atom : allAtoms()) {
    EXPECT_TRUE(names.insert(atom.name).second) << atom.name;
    EXPECT_EQ(atom.name.rfind(std::string(targetName(atom.target)) + ".", 0),
              0u)
        << atom.name;
    EXPECT_EQ(lookupAtom(atom.name), &atom);
  }
}

TEST(AtomTable, CountsPerTarget) {
  // gfx942: {f16, bf16} x 2 shapes + 4 fp8 pairings x 2 shapes + i8 x 2.
  EXPECT_EQ(atomsFor(Target::gfx942).size(), 14u);
  // gfx950: the 14 kept + 4 new 16-bit + 25 format pairings x 2 scaled.
  EXPECT_EQ(atomsFor(Target::gfx950).size(), 68u);
  // sm_90: mma.sync f16, bf16, 4 fp8 pairings, s8.
  EXPECT_EQ(atomsFor(Target::sm_90).size(), 7u);
  // sm_90a: everything of sm_90 + wgmma (2 + 4 pairings + s8) x N in {64,128,256}.
  EXPECT_EQ(atomsFor(Target::sm_90a).size(), 28u);
  EXPECT_EQ(allAtoms().size(), 14u + 68u + 7u + 21u);
}

TEST(AtomTable, Fp8FlavourFollowsTheTarget) {
  for (const Atom &atom : allAtoms()) {
    for (ScalarKind type : {atom.aType, atom.bType}) {
      bool fnuz =
          type == ScalarKind::f8E4M3FNUZ || type == ScalarKind::f8E5M2FNUZ;
      bool ocp = type == ScalarKind::f8E4M3FN || type == ScalarKind::f8E5M2;
      if (atom.target == Target::gfx942)
        EXPECT_FALSE(ocp) << atom.name;
      else
        EXPECT_FALSE(fnuz) << atom.name;
    }
  }
}

//===----------------------------------------------------------------------===//
// Operand maps against the references.
//===----------------------------------------------------------------------===//

TEST(AtomTable, OperandMapsMatchVendorReferences) {
  for (const Atom &atom : allAtoms()) {
    for (Operand operand : kAllOperands) {
      SCOPED_TRACE(atom.name + " " + operandName(operand));
      const OperandMap *map = atom.operandMap(operand);
      std::optional<SlotTable> reference = referenceSlots(atom, operand);
      ASSERT_EQ(map != nullptr, reference.has_value());
      if (!map)
        continue;
      ASSERT_EQ(reference->lanes, map->lanes);
      ASSERT_EQ(reference->values, map->valuesPerLane);
      Mismatches mismatches = compareWithReference(*map, *reference);
      EXPECT_EQ(mismatches.count, 0) << mismatches.firstFew;
    }
  }
}

TEST(AtomTable, ReferenceComparisonRejectsAWrongMap) {
  // 32x32x8 A with lane groups and register values exchanged: k = lane / 32 +
  // 2 * value instead of 4 * (lane / 32) + value.
  const Atom *atom = lookupAtom("gfx942.mfma_f32_32x32x8_bf16");
  ASSERT_NE(atom, nullptr);
  using layout::IntTuple;
  OperandMap wrong{32, 8, 64, 4,
                   layout::Layout(IntTuple{IntTuple{32, 2}, IntTuple(4)},
                                  IntTuple{IntTuple{1, 32}, IntTuple(64)})};
  EXPECT_GT(
      compareWithReference(wrong, *referenceSlots(*atom, Operand::A)).count, 0);
}

//===----------------------------------------------------------------------===//
// Worked examples, copied as numbers from the documents.
//===----------------------------------------------------------------------===//

struct WorkedExample {
  const char *atom;
  Operand operand;
  int lane, value;
  int row, col;
};

// AMD Matrix Instruction Calculator, `-a cdna3 -i <inst> --get-register`;
// "vR{L}.[hi:lo]" is lane L, value R * (32 / bits) + lo / bits.
const WorkedExample kCalculatorExamples[] = {
    // A[1][6] = v1{33}.[15:0]
    {"gfx942.mfma_f32_32x32x8_bf16", Operand::A, 33, 2, 1, 6},
    // D[13][5] = v5{37}
    {"gfx942.mfma_f32_32x32x8_bf16", Operand::C, 37, 5, 13, 5},
    // B[7][20] = v1{52}.[31:16]
    {"gfx942.mfma_f32_32x32x8_f16", Operand::B, 52, 3, 7, 20},
    // B[9][3] = v0{35}.[31:16]
    {"gfx942.mfma_f32_16x16x16_f16", Operand::B, 35, 1, 9, 3},
    // C[14][7] = v2{55}
    {"gfx942.mfma_f32_16x16x16_bf16", Operand::C, 55, 2, 14, 7},
    // A[31][15] = v1{63}.[31:24]
    {"gfx942.mfma_f32_32x32x16_fp8_fp8", Operand::A, 63, 7, 31, 15},
    // A[5][9] = v0{37}.[15:8]
    {"gfx942.mfma_f32_32x32x16_bf8_bf8", Operand::A, 37, 1, 5, 9},
    // B[27][2] = v0{50}.[31:24]
    {"gfx942.mfma_f32_16x16x32_bf8_fp8", Operand::B, 50, 3, 27, 2},
    // D[14][7] = v2{55}
    {"gfx942.mfma_i32_16x16x32_i8", Operand::C, 55, 2, 14, 7},
    // D[30][1] = v14{33}
    {"gfx942.mfma_i32_32x32x16_i8", Operand::C, 33, 14, 30, 1},
};

// AMD ROCm blog "Matrix Core Programming on AMD CDNA3 and CDNA4
// architecture": 5.2 loads a_reg = A + 4 * (l / 16) + 16 * (l % 16) (row-major
// 16x16); 5.4 loads a_reg[i * 16 + j] = A[(l % 32) * 64 + (l / 32) * 16 +
// i * 32 + j] (row-major 32x64 fp8).
const WorkedExample kBlogExamples[] = {
    {"gfx950.mfma_f32_16x16x16_f16", Operand::A, 17, 3, 1, 7},
    {"gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp8", Operand::A, 0, 16, 0, 32},
    {"gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp8", Operand::A, 32, 16, 0,
     48},
    {"gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp8", Operand::A, 33, 31, 1,
     63},
};

// composable_kernel test/mx_mfma_op register mapping tables ("Register
// Mapping for 16x128 for FP8/FP4/FP6") and load_mx_A_row_major.
const WorkedExample kCkExamples[] = {
    // FP8 16x128: thread 16 Reg 0 [0:7] = K16, thread 0 Reg 4 [0:7] = K64,
    // thread 48 Reg 7 [24:31] = K127.
    {"gfx950.mfma_scale_f32_16x16x128_f8f6f4.fp8_bf8", Operand::A, 16, 0, 0,
     16},
    {"gfx950.mfma_scale_f32_16x16x128_f8f6f4.fp8_bf8", Operand::A, 0, 16, 0,
     64},
    {"gfx950.mfma_scale_f32_16x16x128_f8f6f4.fp8_bf8", Operand::A, 48, 31, 0,
     127},
    // B 128x16 FP8: thread 35 Reg 4 [0:7] = K96 of column 3.
    {"gfx950.mfma_scale_f32_16x16x128_f8f6f4.bf8_fp8", Operand::B, 35, 16, 96,
     3},
    // FP4 16x128: thread 16 Reg 0 [0:7] = K32K33 (low nibble K32), thread 48
    // Reg 3 [24:31] = K126K127.
    {"gfx950.mfma_scale_f32_16x16x128_f8f6f4.fp4_fp4", Operand::A, 16, 0, 0,
     32},
    {"gfx950.mfma_scale_f32_16x16x128_f8f6f4.fp4_fp4", Operand::A, 48, 31, 0,
     127},
    // FP6 32x64: thread 32 Reg 3-5 holds K = 48-63.
    {"gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp6_bf6", Operand::A, 32, 16, 0,
     48},
    // Scales: lane l reads scale[l % M][l / M].
    {"gfx950.mfma_scale_f32_16x16x128_f8f6f4.fp4_fp4", Operand::ScaleA, 17, 0,
     1, 1},
    {"gfx950.mfma_scale_f32_16x16x128_f8f6f4.fp4_fp4", Operand::ScaleA, 62, 0,
     14, 3},
    {"gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp8", Operand::ScaleB, 40, 0, 1,
     8},
};

// PTX ISA fragment figures: Figure 83 (m16n8k16 C/D: lane 1 holds c0,c1 at
// row 0 columns 2,3; c2,c3 at row 8), Figure 79 (m16n8k16 A: lane 5 holds
// a2,a3 at row 9 columns 2,3, a4 at row 1 column 10), Figure 88 (m16n8k32 A:
// lane 7 holds a12..a15 at row 9 columns 28..31), the WGMMA D figure (thread
// 0 holds d0,d1 at (0,0),(0,1), d2,d3 at (8,0),(8,1), d4 at (0,8); thread 4
// starts row 1; thread 32 starts row 16).
const WorkedExample kPtxExamples[] = {
    {"sm_90.mma_m16n8k16_f32_f16_f16", Operand::C, 1, 0, 0, 2},
    {"sm_90.mma_m16n8k16_f32_f16_f16", Operand::C, 1, 3, 8, 3},
    {"sm_90.mma_m16n8k16_f32_bf16_bf16", Operand::A, 5, 3, 9, 3},
    {"sm_90.mma_m16n8k16_f32_bf16_bf16", Operand::A, 5, 4, 1, 10},
    {"sm_90.mma_m16n8k16_f32_bf16_bf16", Operand::B, 6, 2, 12, 1},
    {"sm_90.mma_m16n8k32_f32_e4m3_e5m2", Operand::A, 7, 13, 9, 29},
    {"sm_90.mma_m16n8k32_f32_e4m3_e5m2", Operand::B, 7, 5, 29, 1},
    {"sm_90a.wgmma_m64n64k16_f32_bf16_bf16", Operand::C, 0, 1, 0, 1},
    {"sm_90a.wgmma_m64n64k16_f32_bf16_bf16", Operand::C, 0, 2, 8, 0},
    {"sm_90a.wgmma_m64n64k16_f32_bf16_bf16", Operand::C, 0, 4, 0, 8},
    {"sm_90a.wgmma_m64n128k16_f32_f16_f16", Operand::C, 4, 0, 1, 0},
    {"sm_90a.wgmma_m64n256k32_f32_e4m3_e4m3", Operand::C, 32, 0, 16, 0},
    {"sm_90a.wgmma_m64n64k32_f32_e5m2_e4m3", Operand::C, 127, 31, 63, 63},
};

void checkExamples(const WorkedExample *begin, const WorkedExample *end) {
  for (const WorkedExample *example = begin; example != end; ++example) {
    SCOPED_TRACE(std::string(example->atom) + " " +
                 operandName(example->operand) + " lane " +
                 std::to_string(example->lane) + " value " +
                 std::to_string(example->value));
    const Atom *atom = lookupAtom(example->atom);
    ASSERT_NE(atom, nullptr);
    const OperandMap *map = atom->operandMap(example->operand);
    ASSERT_NE(map, nullptr);
    EXPECT_EQ(coordAt(*map, example->lane, example->value),
              (Coord{example->row, example->col}));
  }
}

TEST(AtomTable, CalculatorWorkedExamples) {
  checkExamples(std::begin(kCalculatorExamples), std::end(kCalculatorExamples));
}
TEST(AtomTable, RocmBlogWorkedExamples) {
  checkExamples(std::begin(kBlogExamples), std::end(kBlogExamples));
}
TEST(AtomTable, ComposableKernelWorkedExamples) {
  checkExamples(std::begin(kCkExamples), std::end(kCkExamples));
}
TEST(AtomTable, PtxWorkedExamples) {
  checkExamples(std::begin(kPtxExamples), std::end(kPtxExamples));
}

//===----------------------------------------------------------------------===//
// Hardware measurement of which lane's scale byte scales which register byte
// (gfx950, fp8 operands): composable_kernel
// test/mx_mfma_op/scale_mapping_{16x16x128,32x32x64}.{cpp,txt}. Each probe t
// sets lane L's scale to 2^L, one A byte to 1.0 -- row r, lane r + M * (t /
// 32), register byte t % 32 -- and B's first column to 1.0; log2 of the result
// is the lane whose scale applied ("a(r,t) is scaled from thread ..."). B was
// probed the same way by column. For row / column 0 the measured lane per run
// of 16 probes is
//   16x16x128: 0 32 0 32 16 48 16 48        32x32x64: 0 32 0 32
// and row / column r adds r.
//===----------------------------------------------------------------------===//

TEST(AtomTable, ScaledMfmaMatchesMeasuredScalePairing) {
  struct Measurement {
    const char *atom;
    std::vector<int> laneOfProbeRun;
  };
  const Measurement measurements[] = {
      {"gfx950.mfma_scale_f32_16x16x128_f8f6f4.fp8_fp8",
       {0, 32, 0, 32, 16, 48, 16, 48}},
      {"gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp8", {0, 32, 0, 32}},
  };
  for (const Measurement &measurement : measurements) {
    const Atom *atom = lookupAtom(measurement.atom);
    ASSERT_NE(atom, nullptr) << measurement.atom;
    for (Operand data : {Operand::A, Operand::B}) {
      SCOPED_TRACE(atom->name + " " + operandName(data));
      bool isA = data == Operand::A;
      const OperandMap &map = *atom->operandMap(data);
      const OperandMap &scales =
          *atom->operandMap(isA ? Operand::ScaleA : Operand::ScaleB);
      int nonK = isA ? atom->m : atom->n;
      // The lane supplying the scale of (non-K index, K block), per the table.
      std::vector<int> scaleLane(nonK * (atom->k / kScaleBlockSize), -1);
      for (int lane = 0; lane < scales.lanes; ++lane) {
        Coord scale = coordAt(scales, lane, 0);
        int index = isA ? scale.row : scale.col;
        int block = isA ? scale.col : scale.row;
        scaleLane[index + nonK * block] = lane;
      }
      int wrong = 0;
      for (int r = 0; r < nonK; ++r) {
        for (int probe = 0; probe < atom->k; ++probe) {
          Coord element = coordAt(map, r + nonK * (probe / 32), probe % 32);
          int index = isA ? element.row : element.col;
          int k = isA ? element.col : element.row;
          int measuredLane = r + measurement.laneOfProbeRun[probe / 16];
          wrong += index != r ||
                   scaleLane[r + nonK * (k / kScaleBlockSize)] != measuredLane;
        }
      }
      EXPECT_EQ(wrong, 0);
    }
  }
}

//===----------------------------------------------------------------------===//
// Lookups and per-atom facts.
//===----------------------------------------------------------------------===//

TEST(AtomTable, UnknownNamesAreRejected) {
  EXPECT_EQ(lookupAtom(""), nullptr);
  EXPECT_EQ(lookupAtom("gfx942.mfma_f32_32x32x8_bf16_1k"), nullptr);
  EXPECT_EQ(lookupAtom("gfx950.mfma_scale_f32_32x32x64_f8f6f4"), nullptr);
  EXPECT_EQ(parseTarget(""), std::nullopt);
  EXPECT_EQ(parseTarget("gfx90a"), std::nullopt);
  EXPECT_EQ(parseTarget("sm_90A"), std::nullopt);
  EXPECT_EQ(parseTarget("sm_100a"), std::nullopt);
  for (Target target :
       {Target::gfx942, Target::gfx950, Target::sm_90, Target::sm_90a})
    EXPECT_EQ(parseTarget(targetName(target)), target);
}

TEST(AtomTable, MnemonicsAndOps) {
  struct Expected {
    const char *atom, *mnemonic, *mlirOp;
  };
  const Expected expected[] = {
      {"gfx942.mfma_f32_32x32x8_bf16", "v_mfma_f32_32x32x8_bf16",
       "amdgpu.mfma"},
      {"gfx950.mfma_f32_16x16x32_bf16", "v_mfma_f32_16x16x32_bf16",
       "amdgpu.mfma"},
      {"gfx942.mfma_f32_16x16x32_fp8_bf8", "v_mfma_f32_16x16x32_fp8_bf8",
       "amdgpu.mfma"},
      {"gfx950.mfma_scale_f32_16x16x128_f8f6f4.bf6_fp4",
       "v_mfma_scale_f32_16x16x128_f8f6f4", "amdgpu.scaled_mfma"},
      {"sm_90.mma_m16n8k16_f32_bf16_bf16",
       "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "nvvm.mma.sync"},
      {"sm_90.mma_m16n8k32_f32_e5m2_e4m3",
       "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32", "nvvm.mma.sync"},
      {"sm_90a.wgmma_m64n128k16_f32_bf16_bf16",
       "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
       "nvvm.wgmma.mma_async"},
      {"sm_90a.wgmma_m64n256k32_f32_e4m3_e5m2",
       "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e5m2",
       "nvvm.wgmma.mma_async"},
  };
  for (const Expected &entry : expected) {
    const Atom *atom = lookupAtom(entry.atom);
    ASSERT_NE(atom, nullptr) << entry.atom;
    EXPECT_EQ(atom->mnemonic, entry.mnemonic);
    EXPECT_EQ(atom->mlirOp, entry.mlirOp);
  }
}

TEST(AtomTable, IssueCycles) {
  auto cycles = [](const char *name) {
    const Atom *atom = lookupAtom(name);
    return atom ? atom->issueCycles : std::optional<int>(-1);
  };
  // Calculator (CDNA3) / LLVM gfx950 model: 8 passes for 32x32, 4 for 16x16.
  EXPECT_EQ(cycles("gfx942.mfma_f32_32x32x8_bf16"), 32);
  EXPECT_EQ(cycles("gfx942.mfma_f32_16x16x16_f16"), 16);
  EXPECT_EQ(cycles("gfx942.mfma_i32_32x32x16_i8"), 32);
  EXPECT_EQ(cycles("gfx950.mfma_f32_32x32x16_bf16"), 32);
  EXPECT_EQ(cycles("gfx950.mfma_f32_16x16x32_f16"), 16);
  // ROCm blog: the f8f6f4 forms take twice as long when A or B is fp8.
  EXPECT_EQ(cycles("gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp8_fp8"), 64);
  EXPECT_EQ(cycles("gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp4_bf8"), 64);
  EXPECT_EQ(cycles("gfx950.mfma_scale_f32_32x32x64_f8f6f4.fp6_fp4"), 32);
  EXPECT_EQ(cycles("gfx950.mfma_scale_f32_16x16x128_f8f6f4.fp8_fp4"), 32);
  EXPECT_EQ(cycles("gfx950.mfma_scale_f32_16x16x128_f8f6f4.fp4_fp4"), 16);
  EXPECT_EQ(cycles("sm_90.mma_m16n8k16_f32_f16_f16"), std::nullopt);
}

TEST(AtomTable, CandidatesByTypes) {
  EXPECT_EQ(findAtoms(Target::gfx942, ScalarKind::bf16, ScalarKind::bf16,
                      ScalarKind::f32)
                .size(),
            2u);
  // 32x32x8, 16x16x16, 32x32x16, 16x16x32.
  EXPECT_EQ(findAtoms(Target::gfx950, ScalarKind::f16, ScalarKind::f16,
                      ScalarKind::f32)
                .size(),
            4u);
  // Plain 32x32x16 / 16x16x32 and both scaled shapes.
  EXPECT_EQ(findAtoms(Target::gfx950, ScalarKind::f8E4M3FN, ScalarKind::f8E5M2,
                      ScalarKind::f32)
                .size(),
            4u);
  EXPECT_TRUE(findAtoms(Target::gfx942, ScalarKind::f8E4M3FN,
                        ScalarKind::f8E4M3FN, ScalarKind::f32)
                  .empty());
  // sm_90a accepts mma.sync as well as wgmma.
  EXPECT_EQ(findAtoms(Target::sm_90a, ScalarKind::bf16, ScalarKind::bf16,
                      ScalarKind::f32)
                .size(),
            4u);
  EXPECT_EQ(findAtoms(Target::sm_90, ScalarKind::bf16, ScalarKind::bf16,
                      ScalarKind::f32)
                .size(),
            1u);
}

TEST(AtomTable, ScalarKinds) {
  EXPECT_EQ(bitWidth(ScalarKind::bf16), 16);
  EXPECT_EQ(bitWidth(ScalarKind::f8E5M2FNUZ), 8);
  EXPECT_EQ(bitWidth(ScalarKind::f6E3M2), 6);
  EXPECT_EQ(bitWidth(ScalarKind::f4E2M1), 4);
  EXPECT_EQ(bitWidth(ScalarKind::e8m0), 8);
  EXPECT_STREQ(scalarKindName(ScalarKind::f8E4M3FNUZ), "f8E4M3FNUZ");
  EXPECT_STREQ(scalarKindName(ScalarKind::f4E2M1), "f4E2M1FN");
  EXPECT_STREQ(scalarKindName(ScalarKind::e8m0), "f8E8M0FNU");
}

//===----------------------------------------------------------------------===//
// One simulated MMA per atom with register multiplicands.
//
// The compiler scatters A, B (and scales) into registers with the table's
// maps. The simulated hardware computes register slot s of D as the
// (scaled) dot product for the element the reference map assigns to s,
// fetching each A/B/scale element from the slot its reference map names. The
// compiler gathers D with the table's C map. The result equals a plain
// matrix product only if table and references agree and the references pair
// A's K index with B's.
//===----------------------------------------------------------------------===//

/// slotOf[element index] for a reference slot table of a rows x cols operand.
std::vector<int> slotsByElement(const SlotTable &table, int rows) {
  std::vector<int> slotOf(table.element.size(), -1);
  for (size_t slot = 0; slot < table.element.size(); ++slot)
    slotOf[table.element[slot].row + rows * table.element[slot].col] =
        static_cast<int>(slot);
  return slotOf;
}

std::vector<int64_t> scatter(const OperandMap &map,
                             const std::vector<int64_t> &matrix) {
  std::vector<int64_t> registers(matrix.size());
  for (int value = 0; value < map.valuesPerLane; ++value)
    for (int lane = 0; lane < map.lanes; ++lane)
      registers[lane + map.lanes * value] = matrix[map.elementAt(lane, value)];
  return registers;
}

TEST(AtomTable, SimulatedMmaMatchesMatrixProduct) {
  std::mt19937 rng(20240601);
  std::uniform_int_distribution<int> small(-4, 4);
  std::uniform_int_distribution<int> exponent(0, 2);

  for (const Atom &atom : allAtoms()) {
    if (!atom.a)
      continue;
    SCOPED_TRACE(atom.name);
    const int M = atom.m, N = atom.n, K = atom.k;
    const int kBlocks = K / kScaleBlockSize;
    bool scaled = atom.scaleType.has_value();

    std::vector<int64_t> a(M * K), b(K * N), scaleA, scaleB;
    for (int64_t &x : a)
      x = small(rng);
    for (int64_t &x : b)
      x = small(rng);
    if (scaled) {
      scaleA.resize(M * kBlocks);
      scaleB.resize(kBlocks * N);
      for (int64_t &x : scaleA)
        x = int64_t(1) << exponent(rng); // e8m0: a power of two
      for (int64_t &x : scaleB)
        x = int64_t(1) << exponent(rng);
    }

    // Compiler side: scatter with the table.
    std::vector<int64_t> regA = scatter(*atom.a, a);
    std::vector<int64_t> regB = scatter(*atom.b, b);
    std::vector<int64_t> regScaleA, regScaleB;
    if (scaled) {
      regScaleA = scatter(*atom.scaleA, scaleA);
      regScaleB = scatter(*atom.scaleB, scaleB);
    }

    // Hardware side: locate operands with the references.
    std::vector<int> slotOfA =
        slotsByElement(*referenceSlots(atom, Operand::A), M);
    std::vector<int> slotOfB =
        slotsByElement(*referenceSlots(atom, Operand::B), K);
    std::vector<int> slotOfScaleA, slotOfScaleB;
    if (scaled) {
      slotOfScaleA = slotsByElement(*referenceSlots(atom, Operand::ScaleA), M);
      slotOfScaleB =
          slotsByElement(*referenceSlots(atom, Operand::ScaleB), kBlocks);
    }
    SlotTable accumulatorSlots = *referenceSlots(atom, Operand::C);
    std::vector<int64_t> regD(M * N);
    for (size_t slot = 0; slot < regD.size(); ++slot) {
      Coord out = accumulatorSlots.element[slot];
      int64_t sum = 0;
      for (int k = 0; k < K; ++k) {
        int64_t product =
            regA[slotOfA[out.row + M * k]] * regB[slotOfB[k + K * out.col]];
        if (scaled)
          product *=
              regScaleA[slotOfScaleA[out.row + M * (k / kScaleBlockSize)]] *
              regScaleB[slotOfScaleB[k / kScaleBlockSize + kBlocks * out.col]];
        sum += product;
      }
      regD[slot] = sum;
    }

    // Compiler side: gather D with the table; compare with A x B.
    int wrong = 0;
    for (int value = 0; value < atom.c.valuesPerLane; ++value) {
      for (int lane = 0; lane < atom.c.lanes; ++lane) {
        Coord out = coordAt(atom.c, lane, value);
        int64_t expected = 0;
        for (int k = 0; k < K; ++k) {
          int64_t product = a[out.row + M * k] * b[k + K * out.col];
          if (scaled)
            product *= scaleA[out.row + M * (k / kScaleBlockSize)] *
                       scaleB[k / kScaleBlockSize + kBlocks * out.col];
          expected += product;
        }
        wrong += regD[lane + atom.c.lanes * value] != expected;
      }
    }
    EXPECT_EQ(wrong, 0);
  }
}

} // namespace
