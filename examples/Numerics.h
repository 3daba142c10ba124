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

/// fp8 e4m3 (OCP "e4m3fn": bias 7, no infinities, 0x7f/0xff NaN) to f32, exactly.
inline float fromE4M3(uint8_t x) {
  int exponent = (x >> 3) & 0xf, mantissa = x & 7;
  float magnitude = (exponent == 0xf && mantissa == 7) ? std::numeric_limits<float>::quiet_NaN()
                    : exponent == 0                    ? std::ldexp(float(mantissa), -9)
                                                       : std::ldexp(float(8 + mantissa), exponent - 10);
  return (x & 0x80) ? -magnitude : magnitude;
}

/// Random e4m3 codes of magnitude below 2 (exponent field 0..7, subnormals included), each
/// code of that range equally likely.
inline std::vector<uint8_t> randomE4M3(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> code(0, 127); // sign, exponent 0..7, mantissa
  std::vector<uint8_t> v(n);
  for (uint8_t &x : v) {
    int c = code(rng);
    x = uint8_t(((c & 64) << 1) | (c & 63));
  }
  return v;
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
