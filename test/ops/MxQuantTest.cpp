//===- MxQuantTest.cpp - MXFP4 quantization on the host, byte for byte ----===//
//
// The reference follows AITER's Python definition (aiter/utility/fp4_utils.py): the e8m0
// byte from amax divided in f32 (6 or 4) and the f32 exponent bits; e2m1 codes by torchao's
// bit-level round-to-nearest-even (not the kernel's midpoint counting); AITER's
// e8m0_shuffle index formula. Codes and scales must match byte for byte, for all four
// rounding modes, on random rows with tails and on rows of exact e2m1 midpoints.
//
//===----------------------------------------------------------------------===//

#include "HostBuffer.h"

#include "wavetile/ops/Quant.h"

#include "../../lib/kernels/Checks.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

using namespace wavetile;
using namespace wavetile::ops;
using wavetile::test::HostBuffer;

namespace {

uint32_t bitsOf(float f) { return std::bit_cast<uint32_t>(f); }
float floatOf(uint32_t u) { return std::bit_cast<float>(u); }

/// The biased exponent of x, bumped when rounding up a value with mantissa bits.
uint8_t floorByte(float x) { return uint8_t((bitsOf(x) >> 23) & 0xFF); }
uint8_t ceilByte(float x) {
  uint32_t exponent = (bitsOf(x) >> 23) & 0xFF;
  return uint8_t(exponent < 0xFF && (bitsOf(x) & 0x7FFFFF) ? exponent + 1 : exponent);
}

uint8_t referenceScale(float amax, MxScaleRound round) {
  switch (round) {
  case MxScaleRound::RoundUp:
    return ceilByte(amax / 6.0f);
  case MxScaleRound::RoundDown:
    return floorByte(amax / 4.0f);
  case MxScaleRound::Ceil:
    return ceilByte(amax / 4.0f);
  case MxScaleRound::Even:
    return floorByte(floatOf((bitsOf(amax) + 0x200000) & 0xFF800000) / 4.0f);
  }
  return 0;
}

/// torchao's _f32_to_floatx_unpacked for e2m1: saturate at 6, denormals (below 1) by adding
/// a magic float, normals by adding the rounding bias to the bits. NaN saturates too (ours:
/// torchao leaves it undefined).
uint8_t referenceCode(float v) {
  uint32_t sign = bitsOf(v) & 0x80000000u;
  float x = floatOf(bitsOf(v) ^ sign);
  uint8_t code;
  if (x >= 6.0f || std::isnan(x)) {
    code = 7;
  } else if (x < 1.0f) {
    const uint32_t denormExponent = (127 - 1) + (23 - 1) + 1;
    code = uint8_t(bitsOf(x + floatOf(denormExponent << 23)) - (denormExponent << 23));
  } else {
    uint32_t b = bitsOf(x);
    uint32_t odd = (b >> 22) & 1;
    b += (uint32_t(1 - 127) << 23) + ((1u << 21) - 1);
    b += odd;
    code = uint8_t(b >> 22);
  }
  return uint8_t(code | (sign >> 28));
}

int64_t shuffleIndex(int64_t paddedGroups, int64_t x, int64_t y) {
  return (x / 32 * paddedGroups) * 32 + (y / 8) * 256 + (y % 4) * 64 + (x % 16) * 4 + (y % 8) / 4 * 2 + (x % 32) / 16;
}

const char *roundName(MxScaleRound round) {
  switch (round) {
  case MxScaleRound::RoundDown:
    return "down";
  case MxScaleRound::RoundUp:
    return "up";
  case MxScaleRound::Even:
    return "even";
  case MxScaleRound::Ceil:
    return "ceil";
  }
  return "?";
}

struct Case {
  DType in;
  int64_t m, n;
  MxScaleRound round;
  bool shuffle;
};

class MxQuantTest : public ::testing::TestWithParam<Case> {};

TEST_P(MxQuantTest, MatchesAitersDefinitionByteForByte) {
  auto [inType, m, n, round, shuffle] = GetParam();
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::normal_distribution<float> value(0.f, 1.f);
  std::uniform_int_distribution<int> exponent(-20, 20), midpoint(0, 15);
  const float midpoints[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f};
  int64_t stride = n + 6;
  HostBuffer input(inType, m * stride);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < stride; ++c) {
      float v = value(rng) * std::ldexp(1.f, exponent(rng) / 4);
      if (r % 4 == 1) // groups of exact e2m1 midpoints (and 6) under a power-of-two scale
        v = (midpoint(rng) % 2 ? -1.f : 1.f) * midpoints[midpoint(rng) % 8] * (c % 32 == 0 ? 1.f : 0.5f);
      if (r % 4 == 3 && c < 40) // a zero group, and tiny values
        v = c < 32 ? 0.f : -1e-6f * float(c);
      if (r % 4 == 3 && (c == 40 || c == 45)) // NaNs of both signs: scale byte 255, the rest 0
        v = c == 40 ? NAN : -NAN;
      input.set(r * stride + c, v);
    }
  const int64_t groups = (n + 31) / 32;
  const int64_t scaleRows = shuffle ? shuffledScaleRows(m) : m;
  const int64_t scaleColumns = shuffle ? shuffledScaleColumns(groups) : groups;
  std::vector<uint8_t> out(m * (n / 2 + 5), 0x5a), scales(scaleRows * scaleColumns, 0x5a);
  int64_t outStride = n / 2 + 5;
  ASSERT_TRUE(dynamic_per_group_scaled_quant(*host.runtime, {out.data(), DType::f4E2M1FN, {m, n / 2}, {outStride, 1}},
                                             {input.data(), inType, {m, n}, {stride, 1}},
                                             TensorRef::contiguous(scales.data(), DType::f8E8M0FNU,
                                                                   {scaleRows, scaleColumns}),
                                             32, &error, round, shuffle))
      << error;

  int64_t bad = 0;
  std::vector<uint8_t> expectedScales(scaleRows * scaleColumns, 0x5a);
  if (shuffle) // the padding of the rows the kernel covers is zero
    for (int64_t r = 0; r < (m + 31) / 32 * 32; ++r)
      for (int64_t g = 0; g < scaleColumns; ++g)
        expectedScales[shuffleIndex(scaleColumns, r, g)] = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t end = std::min(n, (g + 1) * 32);
      float amax = 0;
      for (int64_t c = g * 32; c < end; ++c) { // NaN propagates, as in torch.amax
        float v = std::abs(input.get(r * stride + c));
        amax = std::isnan(v) || v > amax ? v : amax;
      }
      uint8_t byte = referenceScale(amax, round);
      expectedScales[shuffle ? shuffleIndex(scaleColumns, r, g) : r * groups + g] = byte;
      float dq = floatOf(uint32_t(byte) << 23), inverse = dq == 0 ? 0.f : 1.0f / dq;
      for (int64_t c = g * 32; c < end; c += 2) {
        uint8_t expected = uint8_t(referenceCode(input.get(r * stride + c) * inverse) |
                                   referenceCode(input.get(r * stride + c + 1) * inverse) << 4);
        uint8_t got = out[r * outStride + c / 2];
        if (got != expected && bad++ < 8)
          ADD_FAILURE() << "byte " << c / 2 << " of row " << r << " = 0x" << std::hex << int(got) << ", expected 0x"
                        << int(expected) << std::dec << " (x = " << input.get(r * stride + c) << ", "
                        << input.get(r * stride + c + 1) << ", scale byte " << int(byte) << ")";
      }
    }
  for (size_t i = 0; i < scales.size(); ++i)
    if (scales[i] != expectedScales[i] && bad++ < 8)
      ADD_FAILURE() << "scale byte " << i << " = " << int(scales[i]) << ", expected " << int(expectedScales[i]);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = n / 2; c < outStride; ++c)
      if (out[r * outStride + c] != 0x5a && bad++ < 8)
        ADD_FAILURE() << "wrote padding at row " << r << " byte " << c;
  EXPECT_EQ(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(Host, MxQuantTest,
                         ::testing::Values(Case{DType::bf16, 9, 4096, MxScaleRound::RoundUp, false},
                                           Case{DType::bf16, 33, 96, MxScaleRound::RoundUp, true},
                                           Case{DType::f16, 6, 62, MxScaleRound::RoundDown,
                                                false}, // a partial last group
                                           Case{DType::f32, 5, 320, MxScaleRound::Even, false},
                                           Case{DType::bf16, 4, 200, MxScaleRound::Even, true},
                                           Case{DType::f16, 3, 128, MxScaleRound::Ceil, false},
                                           Case{DType::bf16, 2, 20000, MxScaleRound::RoundUp, false}, // in chunks
                                           // From kFewQuantRows rows: chunks of 2048 columns, 32 bytes per thread
                                           Case{DType::bf16, 520, 2080, MxScaleRound::RoundUp, true},
                                           Case{DType::f32, 1, 32, MxScaleRound::Ceil, true},
                                           // The row and hidden sizes not above.
                                           Case{DType::bf16, 127, 5120, MxScaleRound::Even, true},
                                           Case{DType::f16, 1000, 64, MxScaleRound::RoundDown, false},
                                           Case{DType::bf16, 3, 65536, MxScaleRound::Ceil, false},
                                           Case{DType::f32, 1, 4096, MxScaleRound::RoundUp, true}),
                         [](const auto &info) {
                           const Case &c = info.param;
                           return std::string(dsl::dtypeName(c.in)) + "_" + std::to_string(c.m) + "x" +
                                  std::to_string(c.n) + "_" + roundName(c.round) + (c.shuffle ? "_shuffled" : "");
                         });

TEST(MxQuantOp, RefusesBadArguments) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::vector<float> a(64 * 3);
  std::vector<uint8_t> q(256), s(256 * 8);
  TensorRef in = TensorRef::contiguous(a.data(), DType::f32, {3, 64});
  TensorRef packed = TensorRef::contiguous(q.data(), DType::f4E2M1FN, {3, 32});
  auto refuses = [&](bool ok, const std::string &says) { wavetile::test::expectRefused(ok, error, says); };
  refuses(dynamic_per_group_scaled_quant(*host.runtime, packed, in,
                                         TensorRef::contiguous(s.data(), DType::f8E8M0FNU, {3, 2}), 64, &error),
          "MXFP4 quantizes groups of 32, got group_size 64");
  refuses(dynamic_per_group_scaled_quant(*host.runtime, packed, in,
                                         TensorRef::contiguous(s.data(), DType::f32, {3, 2}), 32, &error),
          "'scales' has dtype f32; expected f8E8M0FNU");
  refuses(dynamic_per_group_scaled_quant(*host.runtime, packed, in,
                                         TensorRef::contiguous(s.data(), DType::f8E8M0FNU, {3, 2}), 32, &error,
                                         MxScaleRound::RoundUp, true),
          "'scales' has shape [3, 2]; expected [256, 8]");
  refuses(dynamic_per_group_scaled_quant(*host.runtime, TensorRef::contiguous(q.data(), DType::f4E2M1FN, {3, 64}), in,
                                         TensorRef::contiguous(s.data(), DType::f8E8M0FNU, {3, 2}), 32, &error),
          "'out' has shape [3, 64]; expected [3, 32]");
  EXPECT_EQ(host.runtime->loadedModules(), 0u);
}

} // namespace

namespace {

// Packed fp4 rows of N/2 = 50 bytes are not 16-byte multiples: kernels must not be
// specialized as aligned (GPU stores would cross row ends); the host cannot show it, so the
// decision itself is checked.
TEST(MxQuantOp, PackedRowsOfUnalignedByteLengthAreNotAligned) {
  alignas(16) static uint8_t bytes[256];
  TensorRef packed50 = TensorRef::contiguous(bytes, DType::f4E2M1FN, {3, 50});
  TensorRef packed64 = TensorRef::contiguous(bytes, DType::f4E2M1FN, {3, 64});
  EXPECT_FALSE(vectorAligned({&packed50}));
  EXPECT_TRUE(vectorAligned({&packed64}));
  TensorRef scalesPerToken = TensorRef::contiguous(bytes, DType::f32, {5, 1});
  EXPECT_FALSE(vectorAligned({&scalesPerToken}));
}

} // namespace
