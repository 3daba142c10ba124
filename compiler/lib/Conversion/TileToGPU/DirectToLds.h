//===- DirectToLds.h - AMD global-to-LDS direct loads for async copies -*- C++ -*-===//
//
// CDNA's "load to LDS" instructions (buffer_load_dword* ... lds, global_load_lds_dword*)
// read each lane's bytes from the lane's own address but write them where the hardware
// decides: lane i of the wave writes its `laneBytes` at ldsBase + i * laneBytes, ldsBase
// being one value for the whole wave (M0 plus the instruction offset). Data no longer passes
// through registers, but a wave's write is one contiguous run of LDS.
//
// A tile copy has its own thread-to-element map (the offsets' blocked layout) and its own
// element-to-LDS map (the shared layout's XOR swizzle). A plan lines the two up: for every
// instruction, lane i takes over the part of a register group that belongs at slot i of the
// run, which, under a swizzle, another lane of the same wave holds (the lowering fetches its
// offset with ds_bpermute). Plans are derived from the layouts' parameters and then checked
// element by element against the true LDS position of every (register, lane, warp); a layout
// whose copy cannot be written this way has no plan.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_CONVERSION_TILETOGPU_DIRECTTOLDS_H
#define WAVETILE_CONVERSION_TILETOGPU_DIRECTTOLDS_H

#include "wavetile/Dialect/Tile/IR/IndexArith.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace wavetile {

namespace direct_lds {

/// The copy as the layouts give it: each thread's registers come in groups of
/// `groupElements` with consecutive offsets (and consecutive tile columns); the shared tile is
/// row-major, `rowLength` elements per row, groups of `vec` columns XORed with
/// (row / perPhase) % maxPhase (maxPhase 1: no swizzle).
struct CopyShape {
  int64_t warpSize, numWarps, registers;
  int64_t elementBytes, groupElements;
  int64_t rowLength;
  int64_t vec = 1, perPhase = 1, maxPhase = 1;
};

struct Plan {
  int64_t laneElements;        // elements each lane moves per instruction
  int64_t instructionsPerGroup; // per register group and thread
  int64_t lanesPerRow, warpRows;
  llvm::SmallVector<int64_t> groupRow; // first shared row warp 0 writes, per register group
  bool permuted = false;       // some lane moves data another lane holds the offset of

  int64_t groups() const { return int64_t(groupRow.size()); }
  /// Load-to-LDS instructions one thread issues per copy.
  int64_t instructions() const { return groups() * instructionsPerGroup; }
};

/// Where instruction `instruction` of register group `group` writes, for `lane` of `warp`:
/// the wave's LDS run starts at element `runStart` (uniform over the wave), and the lane
/// moves part `part` (of laneElements elements) of register group `group` of lane `owner`.
template <typename T>
struct Slot {
  T owner, part, runStart;
};

/// The slot formula, written once over IR values or constants (see IRArith/ConstantArith).
template <typename Arith, typename T>
Slot<T> slotWith(const Arith &a, const CopyShape &s, const Plan &p, T lane, T warp, int64_t group,
                 int64_t instruction) {
  T firstRow = a.add(a.constant(p.groupRow[group]), a.mul(warp, a.constant(p.warpRows)));
  // Element of the wave's run this lane writes, and where that is in the tile.
  T inRun = a.add(a.constant(instruction * s.warpSize * p.laneElements), a.mul(lane, a.constant(p.laneElements)));
  T rowInRun = a.div(inRun, a.constant(s.rowLength));
  T physicalColumn = a.rem(inRun, a.constant(s.rowLength));
  T column = physicalColumn;
  if (s.maxPhase > 1) { // the swizzle is its own inverse within a row
    T phase = a.rem(a.div(a.add(firstRow, rowInRun), a.constant(s.perPhase)), a.constant(s.maxPhase));
    T vecGroup = a.bitXor(a.div(physicalColumn, a.constant(s.vec)), phase);
    column = a.add(a.mul(vecGroup, a.constant(s.vec)), a.rem(physicalColumn, a.constant(s.vec)));
  }
  T owner = a.add(a.mul(rowInRun, a.constant(p.lanesPerRow)), a.div(column, a.constant(s.groupElements)));
  T part = a.div(a.rem(column, a.constant(s.groupElements)), a.constant(p.laneElements));
  T runStart = a.add(a.mul(firstRow, a.constant(s.rowLength)), a.constant(instruction * s.warpSize * p.laneElements));
  return {owner, part, runStart};
}

/// A plan moving `laneBytes` per lane and instruction (the largest the target has, at most
/// a register group), or nullopt. `ldsOffset(reg, lane, warp)` is where the shared layout
/// puts the element that register `reg` of (lane, warp) copies; every slot is checked
/// against it.
std::optional<Plan> planCopy(const CopyShape &shape, int64_t laneBytes,
                             llvm::function_ref<int64_t(int64_t reg, int64_t lane, int64_t warp)> ldsOffset);

} // namespace direct_lds
} // namespace wavetile

#endif
