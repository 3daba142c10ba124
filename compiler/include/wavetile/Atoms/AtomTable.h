//===- AtomTable.h - Matrix instructions described as data -----*- C++ -*-===//
//
// Every matrix instruction Wavetile emits ("atom"), described once: its shape,
// element types, how each operand is spread over the lanes of a wave / warp /
// warpgroup, its issue cost, and the assembly mnemonic and MLIR op that the
// lowering produces for it.
//
// Operand maps use the project's layout algebra. An operand map is a layout
// from (lane, value) -- lane the fastest mode, value the index of the element
// in the instruction's register operand, in register order -- to the
// column-major index of the element in the operand matrix:
//   A : M x K          index = m + M * k
//   B : K x N          index = k + K * n
//   C : M x N          index = m + M * n   (C and D share one layout)
//   ScaleA : M x (K/32)   ScaleB : (K/32) x N   (block-scaled MFMA only)
//
// Pure C++17; no LLVM/MLIR headers.
//
//===----------------------------------------------------------------------===//

#ifndef WAVETILE_ATOMS_ATOMTABLE_H
#define WAVETILE_ATOMS_ATOMTABLE_H

#include "wavetile/Layout/LayoutAlgebra.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wavetile::atoms {

enum class Target { gfx942, gfx950, sm_90, sm_90a };

/// Element types of matrix operands. fp8 comes in AMD's FNUZ flavour (gfx942)
/// and the OCP flavour (gfx950, NVIDIA). e8m0 is the block-scale exponent.
enum class ScalarKind {
  f32,
  f16,
  bf16,
  f8E4M3FNUZ,
  f8E5M2FNUZ,
  f8E4M3FN,
  f8E5M2,
  f6E2M3,
  f6E3M2,
  f4E2M1,
  i8,
  i32,
  e8m0
};

enum class Operand { A, B, C, ScaleA, ScaleB };

/// Where an instruction reads a multiplicand from.
enum class OperandSource {
  Registers,
  /// wgmma: a 64-bit shared-memory matrix descriptor; no lane map exists.
  SharedMemoryDescriptor
};

/// One operand's distribution over the lanes that execute the instruction.
struct OperandMap {
  int rows = 0;
  int cols = 0;
  int lanes = 0;         // threads holding the operand (the atom's wave size)
  int valuesPerLane = 0; // elements of the operand in each thread's registers
  /// (lane, value) -> column-major element index; domain size
  /// lanes * valuesPerLane == rows * cols.
  layout::Layout laneValueToElement;

  /// Column-major index (row + rows * col) of the element that `lane` holds
  /// as register element `value`.
  int64_t elementAt(int lane, int value) const;
};

/// Scale operands of block-scaled MFMA cover this many K elements each.
inline constexpr int kScaleBlockSize = 32;

struct Atom {
  std::string name; // stable id: "<target>.<instruction>[.<formats>]"
  Target target;    // first target that has the instruction; see runsOn()
  int waveSize;     // 64 (CDNA wave), 32 (mma.sync warp), 128 (warpgroup)
  int m, n, k;
  int blocks; // MFMA multi-block count; the table holds single-block atoms
  ScalarKind aType, bType, cType;
  std::optional<ScalarKind> scaleType; // e8m0 for block-scaled MFMA
  OperandSource aSource, bSource;
  std::optional<OperandMap> a, b; // nullopt when read through a descriptor
  OperandMap c;
  std::optional<OperandMap> scaleA, scaleB;
  /// Cycles one issue occupies the SIMD's matrix pipeline (AMD ISA "passes",
  /// 4 cycles each), i.e. the throughput cost. NVIDIA does not document it.
  std::optional<int> issueCycles;
  std::string mnemonic; // assembly (AMD) or PTX spelling
  std::string mlirOp;   // op the lowering emits, e.g. "amdgpu.mfma"

  /// The map of `operand`, or null when the atom has none (descriptor-sourced
  /// wgmma multiplicands, scales of unscaled atoms).
  const OperandMap *operandMap(Operand operand) const;
};

/// Every atom, in a fixed order. Built on first use.
const std::vector<Atom> &allAtoms();

/// The atom called `name`, or null.
const Atom *lookupAtom(std::string_view name);

/// Whether `atom` can be issued on `target`: its own target, and sm_90a also
/// accepts every sm_90 instruction.
bool runsOn(const Atom &atom, Target target);

/// Atoms that run on `target`.
std::vector<const Atom *> atomsFor(Target target);

/// Atoms that run on `target` with exactly these element types.
std::vector<const Atom *> findAtoms(Target target, ScalarKind aType,
                                    ScalarKind bType, ScalarKind cType);

/// "gfx942", "gfx950", "sm_90", "sm_90a".
const char *targetName(Target target);
std::optional<Target> parseTarget(std::string_view name);

/// MLIR builtin type spelling, e.g. "f8E4M3FNUZ", "f4E2M1FN", "f8E8M0FNU".
const char *scalarKindName(ScalarKind kind);
int bitWidth(ScalarKind kind);

const char *operandName(Operand operand);

} // namespace wavetile::atoms

#endif // WAVETILE_ATOMS_ATOMTABLE_H
