//===- Numerics.h - host-side data helpers for example checks ---*- C++ -*-===//
#ifndef WAVETILE_EXAMPLES_NUMERICS_H
#define WAVETILE_EXAMPLES_NUMERICS_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace wavetile::examples {

/// bf16 from f32 with round-to-nearest-even (NaN stays NaN).
inline uint16_t toBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f))
    return 0x7fc0;
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return uint16_t((bits + rounding) >> 16);
}

inline float fromBF16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Uniform values in [lo, hi) from a seeded generator.
inline std::vector<float> randomFloats(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// The f32 NaN pattern outputs are filled with before a run, so unwritten elements show.
inline float poisonF32() { return std::numeric_limits<float>::quiet_NaN(); }
inline constexpr uint16_t kPoisonBF16 = 0x7fa5;

} // namespace wavetile::examples

#endif
