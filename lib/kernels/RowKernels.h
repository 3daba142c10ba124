//===- RowKernels.h - block and warp sizes of row-wise library kernels -*- C++ -*-===//
#ifndef WAVETILE_LIB_KERNELS_ROWKERNELS_H
#define WAVETILE_LIB_KERNELS_ROWKERNELS_H

#include "wavetile/ops/OpRuntime.h"

#include <algorithm>

namespace wavetile::ops {

/// The smallest power of two that is at least `n` (tiles have power-of-two sizes).
inline int64_t powerOfTwoAtLeast(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

/// The largest power of two in [narrowest, widest] that divides `width`, or 0: a block that
/// tiles a row with no partly masked block.
inline int64_t dividingBlock(int64_t width, int64_t narrowest, int64_t widest) {
  for (int64_t block = widest; block >= narrowest; block /= 2)
    if (width % block == 0)
      return block;
  return 0;
}

/// Warps for a program that holds one row chunk of `block` elements of `dtype`: threads
/// enough that each holds `bytesPerThread` of it (by default two 16-byte vectors: more
/// threads per row measured slower on the H200 at N = 4096), at most 512.
inline int rowWarps(int64_t block, DType dtype, int64_t warpSize, int64_t bytesPerThread = 32) {
  return int(std::clamp<int64_t>(block * (dsl::bitWidth(dtype) / 8) / bytesPerThread, warpSize, 512) / warpSize);
}

} // namespace wavetile::ops

#endif
