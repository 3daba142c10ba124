//===- MxQuantTest.cpp - MX quantization on the host, byte for byte -------===//
//
// The reference follows AITER's Python definitions (aiter/utility/fp4_utils.py,
// per_1x32_f4_quant and per_1x32_f8_scale_f8_quant in aiter/ops/quant.py): the e8m0 byte
// from amax times the rounded reciprocal of the element's largest value (the product AITER's
// kernels and torch's GPU division by a scalar compute) or divided by its largest power of
// two, and the f32 exponent bits; x divided by the byte's power of two (byte 0 is 2^-127);
// e2m1 codes by torchao's bit-level round-to-nearest-even (not the kernel's midpoint
// counting), fp8 codes to nearest even, saturating; AITER's e8m0_shuffle index formula, or
// the transpose for shuffled MXFP8 groups of 64 and 128. Codes and scales must match byte for
// byte, for all four rounding modes, on random rows with tails, rows of exact e2m1 midpoints
// and fp8 maxima, zero, subnormal and NaN groups.
//
//===----------------------------------------------------------------------===//

#include "HostBuffer.h"

#include "wavetile/ops/Quant.h"

#include "../../lib/kernels/Checks.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <optional>
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

/// AITER's f32_to_mx_e8m0_scale for codes of `element`: _DTYPE_CFG's largest value, largest
/// power of two and mantissa bits.
uint8_t referenceScale(float amax, MxScaleRound round, DType element) {
  const bool fp4 = element == DType::f4E2M1FN;
  const float largest = float(quantMax(element));
  const float power = fp4 ? 4.0f : element == DType::f8E4M3FNUZ ? 128.0f : 256.0f;
  const uint32_t halfStep = 1u << (23 - (fp4 ? 1 : 3) - 1);
  switch (round) {
  case MxScaleRound::RoundUp:
    return ceilByte(amax * (1.0f / largest));
  case MxScaleRound::RoundDown:
    return floorByte(amax / power);
  case MxScaleRound::Ceil:
    return ceilByte(amax / power);
  case MxScaleRound::Even:
    return floorByte(floatOf((bitsOf(amax) + halfStep) & 0xFF800000) / power);
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
  DType out = DType::f4E2M1FN; // MXFP4, or fp8 codes (MXFP8)
  int64_t group = 32;
};

class MxQuantTest : public ::testing::TestWithParam<Case> {};

TEST_P(MxQuantTest, MatchesAitersDefinitionByteForByte) {
  auto [inType, m, n, round, shuffle, outType, group] = GetParam();
  const bool fp4 = outType == DType::f4E2M1FN, fnuz = outType == DType::f8E4M3FNUZ;
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
      const float sign = midpoint(rng) % 2 ? -1.f : 1.f;
      if (r % 4 == 1) // groups of exact e2m1 midpoints (and 6) under a power-of-two scale
        v = sign * midpoints[midpoint(rng) % 8] * (c % 32 == 0 ? 1.f : 0.5f);
      if (r % 4 == 1 && !fp4 && c % 32 == 0) // fp8's largest value times a power of two
        v = sign * float(quantMax(outType)) * std::ldexp(1.f, int(c / 32 % 5) - 2);
      if (r % 4 == 3 && c < 40) // a zero group, and tiny values
        v = c < 32 ? 0.f : -1e-6f * float(c);
      if (r % 4 == 3 && (c == 40 || c == 45)) // NaNs of both signs: scale byte 255
        v = c == 40 ? NAN : -NAN;
      if (r % 4 == 3 && c >= 128 && c < 256) // below 2^-125: byte 0 (2^-127) rounding down
        v = sign * std::ldexp(1.f + float(c % 5) / 8, -126 - int(c / 32 % 2));
      input.set(r * stride + c, v);
    }
  const int64_t groups = (n + group - 1) / group, perByte = fp4 ? 2 : 1;
  const bool tiled = shuffle && group == 32, transposed = shuffle && !tiled;
  const int64_t scaleRows = tiled ? shuffledScaleRows(m) : m;
  const int64_t scaleColumns = tiled ? shuffledScaleColumns(groups) : groups;
  const int64_t outStride = n / perByte + 5;
  std::vector<uint8_t> out(m * outStride, 0x5a), scales(scaleRows * scaleColumns, 0x5a);
  ASSERT_TRUE(dynamic_per_group_scaled_quant(*host.runtime, {out.data(), outType, {m, n / perByte}, {outStride, 1}},
                                             {input.data(), inType, {m, n}, {stride, 1}},
                                             TensorRef::contiguous(scales.data(), DType::f8E8M0FNU,
                                                                   {scaleRows, scaleColumns}),
                                             group, &error, round, shuffle))
      << error;

  int64_t bad = 0;
  std::vector<uint8_t> expectedScales(scaleRows * scaleColumns, 0x5a);
  if (tiled) // the padding of the rows the kernel covers is zero
    for (int64_t r = 0; r < (m + 31) / 32 * 32; ++r)
      for (int64_t g = 0; g < scaleColumns; ++g)
        expectedScales[shuffleIndex(scaleColumns, r, g)] = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t end = std::min(n, (g + 1) * group);
      float amax = 0;
      for (int64_t c = g * group; c < end; ++c) { // NaN propagates, as in torch.amax
        float v = std::abs(input.get(r * stride + c));
        amax = std::isnan(v) || v > amax ? v : amax;
      }
      uint8_t byte = referenceScale(amax, round, outType);
      expectedScales[tiled ? shuffleIndex(scaleColumns, r, g) : transposed ? g * m + r : r * groups + g] = byte;
      // AITER's e8m0_to_f32: byte 0 is 2^-127, 255 NaN (MXFP4 multiplies by 0 there instead).
      const float dq = byte == 0 ? std::ldexp(1.f, -127) : floatOf(uint32_t(byte) << 23);
      for (int64_t c = g * group; c < end; c += perByte) {
        auto quotient = [&](int64_t column) {
          float x = input.get(r * stride + column);
          return byte == 255 ? (fp4 ? x * 0.f : NAN) : x / dq;
        };
        uint8_t expected = fp4 ? uint8_t(referenceCode(quotient(c)) | referenceCode(quotient(c + 1)) << 4)
                               : wavetile::test::encodeFp8(quotient(c), fnuz);
        uint8_t got = out[r * outStride + c / perByte];
        const bool bothNaN = !fp4 && std::isnan(quotient(c)) && std::isnan(wavetile::test::decodeFp8(got, fnuz));
        if (got != expected && !bothNaN && bad++ < 8)
          ADD_FAILURE() << "byte " << c / perByte << " of row " << r << " = 0x" << std::hex << int(got)
                        << ", expected 0x" << int(expected) << std::dec << " (x = " << input.get(r * stride + c)
                        << ", scale byte " << int(byte) << ")";
      }
    }
  for (size_t i = 0; i < scales.size(); ++i)
    if (scales[i] != expectedScales[i] && bad++ < 8)
      ADD_FAILURE() << "scale byte " << i << " = " << int(scales[i]) << ", expected " << int(expectedScales[i]);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = n / perByte; c < outStride; ++c)
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
                                           Case{DType::f32, 1, 4096, MxScaleRound::RoundUp, true},
                                           Case{DType::f32, 8, 256, MxScaleRound::RoundDown, false}, // byte 0
                                           // MXFP8: fp8 codes, e8m0 scales of groups of 32, 64, 128.
                                           Case{DType::bf16, 9, 4096, MxScaleRound::RoundUp, false,
                                                DType::f8E4M3FN},
                                           Case{DType::bf16, 33, 256, MxScaleRound::RoundUp, true,
                                                DType::f8E4M3FN}, // tiled
                                           Case{DType::f16, 6, 192, MxScaleRound::RoundDown, false,
                                                DType::f8E4M3FNUZ, 64},
                                           Case{DType::f32, 5, 384, MxScaleRound::Even, true, DType::f8E4M3FN,
                                                128}, // transposed
                                           Case{DType::bf16, 520, 2048, MxScaleRound::RoundUp, true,
                                                DType::f8E4M3FNUZ}, // many rows, tiled
                                           Case{DType::bf16, 3, 16384, MxScaleRound::Ceil, false,
                                                DType::f8E4M3FNUZ, 128},
                                           Case{DType::f32, 1, 4096, MxScaleRound::RoundUp, true,
                                                DType::f8E4M3FN, 64},
                                           Case{DType::bf16, 127, 5120, MxScaleRound::Even, false,
                                                DType::f8E4M3FN},
                                           Case{DType::f32, 8, 256, MxScaleRound::RoundDown, false,
                                                DType::f8E4M3FN, 64}), // byte 0, saturation
                         [](const auto &info) {
                           const Case &c = info.param;
                           std::string out = c.out == DType::f4E2M1FN ? "" : "_" + std::string(dsl::dtypeName(c.out)) +
                                                                               "_g" + std::to_string(c.group);
                           return std::string(dsl::dtypeName(c.in)) + "_" + std::to_string(c.m) + "x" +
                                  std::to_string(c.n) + "_" + roundName(c.round) + (c.shuffle ? "_shuffled" : "") +
                                  out;
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
  // A call with e8m0 scales [3, columns] unless `scales` is given.
  auto quantize = [&](const TensorRef &out, int64_t columns, int64_t group, bool shuffle = false,
                      const TensorRef *count = nullptr, std::optional<TensorRef> scales = std::nullopt) {
    return dynamic_per_group_scaled_quant(
        *host.runtime, out, in, scales ? *scales : TensorRef::contiguous(s.data(), DType::f8E8M0FNU, {3, columns}),
        group, &error, MxScaleRound::RoundUp, shuffle, {count});
  };
  refuses(quantize(packed, 2, 64), "MXFP4 quantizes groups of 32, got group_size 64");
  refuses(quantize(packed, 2, 32, false, nullptr, TensorRef::contiguous(s.data(), DType::f32, {3, 2})),
          "'scales' has dtype f32; expected f8E8M0FNU");
  refuses(quantize(packed, 2, 32, true), "'scales' has shape [3, 2]; expected [256, 8]");
  refuses(quantize(TensorRef::contiguous(q.data(), DType::f4E2M1FN, {3, 64}), 2, 32),
          "'out' has shape [3, 64]; expected [3, 32]");
  // MXFP8: fp8 codes with e8m0 scales.
  TensorRef fp8 = TensorRef::contiguous(q.data(), DType::f8E4M3FN, {3, 64});
  refuses(quantize(TensorRef::contiguous(q.data(), DType::i8, {3, 64}), 2, 32),
          "'out' has dtype i8; e8m0 scales go with f4E2M1FN (MXFP4, packed two per byte) or fp8 (MXFP8) codes");
  refuses(quantize(fp8, 1, 48), "MXFP8 quantizes groups of 32, 64 or 128, got group_size 48");
  refuses(quantize(fp8, 1, 128), "the hidden size 64 is not a multiple of group_size 128");
  refuses(quantize(fp8, 1, 32), "'scales' has shape [3, 1]; expected [3, 2]");
  refuses(quantize(fp8, 1, 64, true, nullptr, TensorRef{s.data(), DType::f8E8M0FNU, {3, 1}, {2, 2}}),
          "shuffled e8m0 'scales' must be one contiguous block of M x N/group_size bytes, got strides [2, 2]");
  int32_t count = 1;
  const TensorRef one = TensorRef::contiguous(&count, DType::i32, {1});
  refuses(quantize(fp8, 1, 64, true, &one), "num_rows is not supported with shuffled (transposed) e8m0 scales");
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
