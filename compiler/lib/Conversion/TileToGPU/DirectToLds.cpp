//===- DirectToLds.cpp - plans for AMD global-to-LDS direct loads ---------===//

#include "DirectToLds.h"

using namespace wavetile;
using namespace wavetile::direct_lds;

std::optional<Plan> wavetile::direct_lds::planCopy(
    const CopyShape &s, int64_t laneBytes,
    llvm::function_ref<int64_t(int64_t reg, int64_t lane, int64_t warp)> ldsOffset) {
  if (laneBytes % s.elementBytes || (s.groupElements * s.elementBytes) % laneBytes)
    return std::nullopt;
  if (s.rowLength % s.groupElements || s.registers % s.groupElements)
    return std::nullopt;
  Plan p;
  p.laneElements = laneBytes / s.elementBytes;
  p.instructionsPerGroup = s.groupElements / p.laneElements;
  p.lanesPerRow = s.rowLength / s.groupElements;
  if (s.warpSize % p.lanesPerRow)
    return std::nullopt; // a wave must cover whole rows for its runs to be contiguous
  p.warpRows = s.warpSize / p.lanesPerRow;
  for (int64_t reg = 0; reg < s.registers; reg += s.groupElements)
    p.groupRow.push_back(ldsOffset(reg, 0, 0) / s.rowLength);

  // Every element each slot writes must be where the shared layout wants it.
  ConstantArith a;
  for (int64_t warp = 0; warp < s.numWarps; ++warp)
    for (int64_t group = 0; group < p.groups(); ++group)
      for (int64_t instruction = 0; instruction < p.instructionsPerGroup; ++instruction)
        for (int64_t lane = 0; lane < s.warpSize; ++lane) {
          Slot<int64_t> slot = slotWith(a, s, p, lane, warp, group, instruction);
          if (slot.owner < 0 || slot.owner >= s.warpSize || slot.part >= p.instructionsPerGroup)
            return std::nullopt;
          p.permuted |= slot.owner != lane;
          for (int64_t i = 0; i < p.laneElements; ++i) {
            int64_t reg = group * s.groupElements + slot.part * p.laneElements + i;
            if (ldsOffset(reg, slot.owner, warp) != slot.runStart + lane * p.laneElements + i)
              return std::nullopt;
          }
        }
  return p;
}
