//===- QuantTest.cpp - quantization ops on the host, bit for bit ----------===//
//
// The reference is written from the definition in Quant.h with an independent fp8 encoder
// (the nearest of all 256 codes, ties to the even code, saturating): scales and outputs
// must match exactly (both sides divide in f32). Fresh random rows, some all zero, padded
// rows, poisoned outputs.
//
//===----------------------------------------------------------------------===//

#include "HostBuffer.h"

#include "wavetile/ops/Quant.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <tuple>

using namespace wavetile;
using namespace wavetile::ops;
using wavetile::test::decodeFp8;
using wavetile::test::encodeFp8;
using wavetile::test::HostBuffer;

namespace {

struct Case {
  QuantScheme mode;
  DType in, out;
  int64_t m, n, group;
  bool packed = false; // rows back to back (else 3 elements of padding after each)
  // Per token and per group: quantize rows below count * factor only (RowCount); -1: all rows.
  int32_t count = -1;
  int64_t factor = 1;
  bool shuffled = false; // per group: AITER's shuffled f32 scales, (row r, group g) at g * M + r
};

class QuantTest : public ::testing::TestWithParam<Case> {};

TEST_P(QuantTest, MatchesReferenceBitForBit) {
  auto [mode, inType, outType, m, n, group, packed, count, factor, shuffled] = GetParam();
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::unique_ptr<OpRuntime> &runtime = host.runtime;
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::normal_distribution<float> value(0.f, 3.f);
  int64_t stride = packed ? n : n + 3;
  HostBuffer input(inType, m * stride);
  // Row 4 is all zero; zeros of both signs everywhere (e4m3fn codes keep the sign).
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < stride; ++c) {
      float zero = c % 2 ? -0.f : 0.f;
      input.set(r * stride + c, r % 5 == 4 || c % 29 == 7 ? zero : value(rng) * (c % 17 == 0 ? 8.f : 1.f));
    }
  // The largest magnitude in the last element: an amax that misses the row or column tail fails.
  if (mode != QuantScheme::StaticPerTensor && m % 5 != 0)
    input.set((m - 1) * stride + n - 1, -1000.f);
  std::vector<uint8_t> out(m * stride, 0x7f);
  int64_t scaleCount = mode == QuantScheme::PerGroup ? m * (n / group) : mode == QuantScheme::PerToken ? m : 1;
  std::vector<float> scales(scaleCount, NAN);
  const float staticScale = 0.037f;
  if (mode == QuantScheme::StaticPerTensor)
    scales[0] = staticScale;
  TensorRef o{out.data(), outType, {m, n}, {stride, 1}}, in{input.data(), inType, {m, n}, {stride, 1}};
  const TensorRef countRef = TensorRef::contiguous(&count, DType::i32, {1});
  const RowCount rows{count >= 0 ? &countRef : nullptr, factor};
  // Rows from `quantized` on keep their poisoned outputs and scales.
  const int64_t quantized = count >= 0 ? std::min(m, count * factor) : m;
  bool ok = mode == QuantScheme::DynamicPerTensor
                ? dynamic_per_tensor_quant(*runtime, o, in, TensorRef::contiguous(scales.data(), DType::f32, {1}), &error)
            : mode == QuantScheme::PerToken
                ? dynamic_per_token_scaled_quant(*runtime, o, in, TensorRef::contiguous(scales.data(), DType::f32, {m, 1}),
                                                 &error, rows)
            : mode == QuantScheme::PerGroup
                ? dynamic_per_group_scaled_quant(*runtime, o, in,
                                                 TensorRef::contiguous(scales.data(), DType::f32, {m, n / group}),
                                                 group, &error, MxScaleRound::RoundUp, shuffled, rows)
                : static_per_tensor_quant(*runtime, o, in, TensorRef::contiguous(scales.data(), DType::f32, {1}), &error);
  ASSERT_TRUE(ok) << error;

  const float qmax = float(quantMax(outType));
  float tensorAmax = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c)
      tensorAmax = std::max(tensorAmax, std::abs(input.get(r * stride + c)));
  const int64_t span = mode == QuantScheme::PerGroup ? group : n;
  int64_t bad = 0;
  for (int64_t r = quantized; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c)
      if (out[r * stride + c] != 0x7f && bad++ < 5)
        ADD_FAILURE() << "wrote row " << r << " past the row count " << quantized;
    for (int64_t g = 0; g < scaleCount / m && mode != QuantScheme::StaticPerTensor; ++g)
      if (!std::isnan(scales[r * (scaleCount / m) + g]) && bad++ < 5)
        ADD_FAILURE() << "wrote a scale of row " << r << " past the row count " << quantized;
  }
  for (int64_t r = 0; r < quantized; ++r)
    for (int64_t start = 0; start < n; start += span) {
      float scale = staticScale;
      if (mode != QuantScheme::StaticPerTensor) {
        float amax = 0;
        for (int64_t c = start; c < start + span; ++c)
          amax = std::max(amax, std::abs(input.get(r * stride + c)));
        if (mode == QuantScheme::DynamicPerTensor)
          amax = tensorAmax;
        scale = amax / qmax == 0 ? 1.f : amax / qmax;
        const int64_t g = start / span;
        float got = scales[mode == QuantScheme::PerGroup ? (shuffled ? g * m + r : r * (n / group) + g)
                           : mode == QuantScheme::PerToken ? r
                                                           : 0];
        if (got != scale && bad++ < 5)
          ADD_FAILURE() << "scale of row " << r << " at " << start << " = " << got << ", expected " << scale;
      }
      for (int64_t c = start; c < start + span; ++c) {
        float y = input.get(r * stride + c) / scale;
        uint8_t expected = outType == DType::i8
                               ? uint8_t(int8_t(std::clamp(std::nearbyint(y), -128.f, 127.f)))
                               : encodeFp8(y, outType == DType::f8E4M3FNUZ);
        if (out[r * stride + c] != expected && bad++ < 5)
          ADD_FAILURE() << "out[" << r << ", " << c << "] = " << int(out[r * stride + c]) << ", expected "
                        << int(expected) << " (x / scale = " << y << ")";
      }
    }
  for (int64_t r = 0; r + 1 < m; ++r)
    for (int64_t c = n; c < stride; ++c)
      if (out[r * stride + c] != 0x7f && bad++ < 5)
        ADD_FAILURE() << "wrote padding at row " << r << " column " << c;
  EXPECT_EQ(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Host, QuantTest,
    ::testing::Values(Case{QuantScheme::PerToken, DType::bf16, DType::f8E4M3FN, 9, 4096, 0},
                      Case{QuantScheme::PerToken, DType::f16, DType::f8E4M3FNUZ, 5, 31, 0},
                      Case{QuantScheme::PerToken, DType::f32, DType::i8, 6, 10000, 0},
                      Case{QuantScheme::PerToken, DType::bf16, DType::f8E4M3FN, 2, 20000, 0}, // two passes
                      Case{QuantScheme::PerToken, DType::bf16, DType::i8, 1000, 7, 0},
                      Case{QuantScheme::PerToken, DType::bf16, DType::f8E4M3FN, 1, 1, 0},
                      Case{QuantScheme::PerToken, DType::f16, DType::f8E4M3FN, 3, 65537, 0}, // issue's longest row
                      Case{QuantScheme::PerToken, DType::f32, DType::f8E4M3FNUZ, 5, 5120, 0},
                      Case{QuantScheme::PerGroup, DType::bf16, DType::f8E4M3FN, 7, 7168, 128},
                      Case{QuantScheme::PerGroup, DType::f16, DType::i8, 5, 96, 32},
                      Case{QuantScheme::PerGroup, DType::f32, DType::f8E4M3FNUZ, 3, 320, 64},
                      // Every group size with both outputs, at the row and hidden sizes.
                      Case{QuantScheme::PerGroup, DType::bf16, DType::f8E4M3FN, 1, 4096, 32},
                      Case{QuantScheme::PerGroup, DType::f16, DType::i8, 127, 5120, 64},
                      Case{QuantScheme::PerGroup, DType::bf16, DType::i8, 3, 65536, 128},
                      Case{QuantScheme::PerGroup, DType::f32, DType::f8E4M3FN, 1000, 64, 64},
                      // From kFewQuantRows rows: chunks of 2048 columns, 32 bytes per thread
                      Case{QuantScheme::PerGroup, DType::bf16, DType::f8E4M3FN, 515, 2176, 128},
                      // Shuffled f32 scales: transposed into their [M, N / group] buffer.
                      Case{QuantScheme::PerGroup, DType::bf16, DType::f8E4M3FN, 37, 4096, 128, false, -1, 1, true},
                      Case{QuantScheme::PerGroup, DType::f16, DType::i8, 515, 2176, 32, false, -1, 1, true},
                      Case{QuantScheme::PerGroup, DType::f32, DType::f8E4M3FNUZ, 1, 320, 64, false, -1, 1, true},
                      // A row count read by the kernel (AITER's num_rows * num_rows_factor).
                      Case{QuantScheme::PerToken, DType::bf16, DType::f8E4M3FN, 9, 4096, 0, false, 2, 3},
                      Case{QuantScheme::PerToken, DType::f16, DType::i8, 5, 20000, 0, false, 1, 3},
                      Case{QuantScheme::PerToken, DType::bf16, DType::f8E4M3FN, 4, 31, 0, false, 0, 8},
                      Case{QuantScheme::PerGroup, DType::bf16, DType::f8E4M3FN, 515, 2176, 128, false, 101, 5},
                      Case{QuantScheme::PerGroup, DType::f32, DType::i8, 7, 96, 32, false, 9, 1},
                      // count * factor = 2^32: every row (a 32-bit product would wrap to 0)
                      Case{QuantScheme::PerToken, DType::bf16, DType::f8E4M3FN, 3, 64, 0, false, 1 << 30, 4},
                      Case{QuantScheme::StaticPerTensor, DType::bf16, DType::f8E4M3FN, 5, 5000, 0},
                      Case{QuantScheme::StaticPerTensor, DType::f32, DType::i8, 3, 33, 0},
                      Case{QuantScheme::StaticPerTensor, DType::f16, DType::f8E4M3FNUZ, 3, 4096, 0},
                      Case{QuantScheme::StaticPerTensor, DType::bf16, DType::i8, 1, 65537, 0},
                      Case{QuantScheme::StaticPerTensor, DType::bf16, DType::f8E4M3FN, 1000, 31, 0},
                      // More rows than amax partials: programs reduce several rows each.
                      Case{QuantScheme::DynamicPerTensor, DType::bf16, DType::f8E4M3FN, 1100, 33, 0},
                      Case{QuantScheme::DynamicPerTensor, DType::f16, DType::i8, 3, 20000, 0},
                      Case{QuantScheme::DynamicPerTensor, DType::f32, DType::f8E4M3FNUZ, 1, 7, 0},
                      Case{QuantScheme::DynamicPerTensor, DType::bf16, DType::i8, 127, 31, 0},
                      Case{QuantScheme::DynamicPerTensor, DType::f16, DType::f8E4M3FN, 3, 65537, 0},
                      // One row, or packed rows one program holds: quantized as a single row.
                      Case{QuantScheme::DynamicPerTensor, DType::bf16, DType::f8E4M3FN, 1, 20000, 0},
                      Case{QuantScheme::DynamicPerTensor, DType::bf16, DType::f8E4M3FN, 3, 4096, 0, true},
                      Case{QuantScheme::DynamicPerTensor, DType::f16, DType::i8, 4, 4097, 0, true}),
    [](const auto &info) {
      const Case &c = info.param;
      std::string mode = c.mode == QuantScheme::PerToken   ? "token"
                         : c.mode == QuantScheme::PerGroup ? "group"
                         : c.mode == QuantScheme::StaticPerTensor ? "static"
                                                                  : "tensor";
      std::string rows = c.count >= 0 ? "_rows" + std::to_string(c.count) + "x" + std::to_string(c.factor) : "";
      return mode + "_" + dsl::dtypeName(c.in) + "_to_" + dsl::dtypeName(c.out) + "_" + std::to_string(c.m) + "x" +
             std::to_string(c.n) + rows + (c.shuffled ? "_shuffled" : "");
    });

// Exact halves round to even, and values past int8's range clamp (random inputs almost never
// hit either).
TEST(QuantOp, Int8RoundsHalvesToEvenAndClamps) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::unique_ptr<OpRuntime> &runtime = host.runtime;
  std::vector<float> x;
  for (int k = -12; k <= 12; ++k)
    x.push_back(0.25f * float(k)); // x / 0.5 = k / 2: every other one a half
  x.push_back(300.f);
  x.push_back(-300.f);
  std::vector<int8_t> q(x.size(), 99);
  float scale = 0.5f;
  int64_t n = int64_t(x.size());
  ASSERT_TRUE(static_per_tensor_quant(*runtime, TensorRef::contiguous(q.data(), DType::i8, {1, n}),
                                      TensorRef::contiguous(x.data(), DType::f32, {1, n}),
                                      TensorRef::contiguous(&scale, DType::f32, {1}), &error))
      << error;
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(int(q[i]), int(std::clamp(std::nearbyint(x[i] / scale), -128.f, 127.f))) << "x = " << x[i];
}

// No rows: the per-tensor scale of nothing is 1 (AITER's zero-amax rule), written by the
// one quantizing program, which has no row of its own to write.
// fp8 is e4m3fnuz on gfx942 and e4m3fn elsewhere (gfx950, NVIDIA, the host) unless an op is
// given another.
TEST(QuantOp, DefaultFp8IsTheTargetsOwn) {
  EXPECT_EQ(defaultFp8("gfx942"), DType::f8E4M3FNUZ);
  for (const char *target : {"gfx950", "sm_90", "sm_90a", "host"})
    EXPECT_EQ(defaultFp8(target), DType::f8E4M3FN) << target;
}

TEST(QuantOp, DynamicPerTensorScaleOfNoRowsIsOne) {
  std::string error;
  if (const char *emulated = std::getenv("WAVETILE_TEST_EMULATE"); emulated && *emulated)
    GTEST_SKIP() << "the emulator needs a nonzero extent for every pointer";
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  float input = 5.f, scale = NAN;
  uint8_t out = 0x7f;
  ASSERT_TRUE(dynamic_per_tensor_quant(*host.runtime, TensorRef::contiguous(&out, DType::f8E4M3FN, {0, 1}),
                                       TensorRef::contiguous(&input, DType::f32, {0, 1}),
                                       TensorRef::contiguous(&scale, DType::f32, {1}), &error))
      << error;
  EXPECT_EQ(scale, 1.f);
  EXPECT_EQ(int(out), 0x7f);
}

// A per-tensor scale over one row, or over packed rows one program holds, is that row's
// per-token scale: the op launches the per-token kernel (one launch, one read) and writes
// the same scale and codes. Packed rows past one program's 16384 elements keep the two kernels.
TEST(QuantOp, DynamicPerTensorOfOneRowRunsThePerTokenKernel) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::normal_distribution<float> value(0.f, 2.f);
  for (auto [m, n, kernels] : {std::tuple{1, 300, 1}, std::tuple{4, 4096, 1}, std::tuple{2, 8200, 2}}) {
    HostBuffer input(DType::bf16, m * n);
    for (size_t i = 0; i < input.size(); ++i)
      input.set(i, value(rng));
    std::vector<uint8_t> byToken(m * n, 0x7f), byTensor(m * n, 0x7e);
    float tokenScale = NAN, tensorScale = NAN;
    const size_t before = host.runtime->loadedModules();
    ASSERT_TRUE(dynamic_per_token_scaled_quant(*host.runtime,
                                               TensorRef::contiguous(byToken.data(), DType::f8E4M3FN, {1, m * n}),
                                               TensorRef::contiguous(input.data(), DType::bf16, {1, m * n}),
                                               TensorRef::contiguous(&tokenScale, DType::f32, {1, 1}), &error))
        << error;
    ASSERT_TRUE(dynamic_per_tensor_quant(*host.runtime, TensorRef::contiguous(byTensor.data(), DType::f8E4M3FN, {m, n}),
                                         TensorRef::contiguous(input.data(), DType::bf16, {m, n}),
                                         TensorRef::contiguous(&tensorScale, DType::f32, {1}), &error))
        << error;
    EXPECT_EQ(host.runtime->loadedModules() - before, size_t(kernels)) << m << " x " << n;
    EXPECT_EQ(tensorScale, tokenScale) << m << " x " << n;
    EXPECT_EQ(byTensor, byToken) << m << " x " << n;
  }
}

// An amax propagates NaN and infinity: a row (group, tensor) holding NaN of either sign gets
// a NaN scale even beside a huge value, one holding an infinity an infinite scale; the
// others keep their exact scales. (CDNA3 takes these maxima over the values' bits.)
TEST(QuantOp, NanAndInfinityReachTheScale) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::normal_distribution<float> value(0.f, 2.f);
  const int64_t m = 6, n = 7168, group = 128;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  HostBuffer input(DType::bf16, m * n);
  for (size_t i = 0; i < input.size(); ++i)
    input.set(i, value(rng));
  std::uniform_int_distribution<int64_t> column(0, n - 1);
  const int64_t nanColumn = column(rng), bigColumn = nanColumn ^ 1;
  input.set(1 * n + nanColumn, nan);
  input.set(1 * n + bigColumn, 1e30f); // beside the NaN, in the same group
  input.set(2 * n + column(rng), -nan);
  input.set(3 * n + column(rng), inf);
  input.set(4 * n + column(rng), -inf);
  auto expected = [&](int64_t r, int64_t start, int64_t span) {
    float amax = 0;
    for (int64_t c = start; c < start + span; ++c) {
      const float x = std::abs(input.get(r * n + c));
      amax = std::isnan(x) || std::isnan(amax) ? nan : std::max(amax, x);
    }
    const float scale = amax / float(quantMax(DType::f8E4M3FN));
    return scale == 0 ? 1.f : scale;
  };
  auto same = [](float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  std::vector<uint8_t> out(m * n);
  std::vector<float> scales(m * (n / group), 0.5f);
  TensorRef o = TensorRef::contiguous(out.data(), DType::f8E4M3FN, {m, n}),
            in = TensorRef::contiguous(input.data(), DType::bf16, {m, n});
  ASSERT_TRUE(dynamic_per_token_scaled_quant(*host.runtime, o, in,
                                             TensorRef::contiguous(scales.data(), DType::f32, {m, 1}), &error))
      << error;
  for (int64_t r = 0; r < m; ++r)
    EXPECT_PRED2(same, scales[r], expected(r, 0, n)) << "per-token scale of row " << r;
  EXPECT_TRUE(std::isnan(scales[1]) && std::isnan(scales[2]) && std::isinf(scales[3]) && std::isinf(scales[4]));
  // Over an infinite scale finite values quantize to zeros of their sign (AITER's x / inf), the
  // infinity itself to NaN.
  int64_t bad = 0;
  for (int64_t r : {3, 4})
    for (int64_t c = 0; c < n; ++c) {
      const float x = input.get(r * n + c);
      const int code = out[r * n + c];
      if ((std::isinf(x) ? (code & 0x7f) != 0x7f : code != (std::signbit(x) ? 0x80 : 0)) && bad++ < 5)
        ADD_FAILURE() << "out[" << r << ", " << c << "] = " << code << " for " << x << " / inf";
    }
  EXPECT_EQ(bad, 0);
  std::fill(scales.begin(), scales.end(), 0.5f);
  ASSERT_TRUE(dynamic_per_group_scaled_quant(*host.runtime, o, in,
                                             TensorRef::contiguous(scales.data(), DType::f32, {m, n / group}), group,
                                             &error))
      << error;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t g = 0; g < n / group; ++g)
      EXPECT_PRED2(same, scales[r * (n / group) + g], expected(r, g * group, group)) << "row " << r << " group " << g;
  EXPECT_TRUE(std::isnan(scales[1 * (n / group) + nanColumn / group]));
  // Per tensor (two kernels at these sizes): NaN wins, and infinity without it (rows 3 to 5).
  for (int64_t first : {0, 3}) {
    float scale = 0.5f;
    const int64_t rows = m - first;
    ASSERT_TRUE(dynamic_per_tensor_quant(
        *host.runtime, TensorRef::contiguous(out.data(), DType::f8E4M3FN, {rows, n}),
        TensorRef::contiguous(static_cast<uint16_t *>(input.data()) + first * n, DType::bf16, {rows, n}),
        TensorRef::contiguous(&scale, DType::f32, {1}), &error))
        << error;
    EXPECT_TRUE(first == 0 ? std::isnan(scale) : std::isinf(scale)) << "rows from " << first << ": scale " << scale;
  }
}

// AITER replaces a zero scale by 1, not a zero amax: a row of f32 subnormals whose amax /
// max underflows to 0 gets scale 1 and quantizes to zeros (by a zero scale its quotients
// would be infinite or NaN). A row whose scale is subnormal but not zero keeps it. Per
// token, per group and per tensor (one row; and two kernels over more rows), fp8 and int8.
TEST(QuantOp, ScaleThatUnderflowsBecomesOne) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::uniform_int_distribution<int> subnormalSteps(1, 60); // at most 60 * 2^-149: / 127 underflows
  std::uniform_real_distribution<float> unit(-1.f, 1.f);
  const int64_t m = 3, n = 20000, group = 128;
  std::vector<float> input(m * n);
  for (int64_t c = 0; c < n; ++c) {
    input[c] = (c % 2 ? -1.f : 1.f) * std::ldexp(float(subnormalSteps(rng)), -149);
    input[n + c] = unit(rng) * 1e-37f; // amax / max about 1e-39 or 1e-40: subnormal, not zero
    input[2 * n + c] = unit(rng) * 5.f;
  }
  for (DType outType : {DType::f8E4M3FN, DType::f8E4M3FNUZ, DType::i8}) {
    SCOPED_TRACE(dsl::dtypeName(outType));
    const float qmax = float(quantMax(outType));
    auto expectedScale = [&](int64_t first, int64_t rows, int64_t start, int64_t span) {
      float amax = 0;
      for (int64_t r = first; r < first + rows; ++r)
        for (int64_t c = start; c < start + span; ++c)
          amax = std::max(amax, std::abs(input[r * n + c]));
      return amax / qmax == 0 ? 1.f : amax / qmax;
    };
    auto code = [&](float y) {
      return outType == DType::i8 ? uint8_t(int8_t(std::clamp(std::nearbyint(y), -128.f, 127.f)))
                                  : encodeFp8(y, outType == DType::f8E4M3FNUZ);
    };
    // Checks rows [first, first + rows) quantized with one scale per `span` columns.
    auto check = [&](const std::vector<uint8_t> &out, const std::vector<float> &scales, int64_t first, int64_t rows,
                     int64_t span, bool perTensor) {
      int64_t bad = 0;
      for (int64_t r = first; r < first + rows; ++r)
        for (int64_t start = 0; start < n; start += span) {
          const float scale = perTensor ? expectedScale(first, rows, 0, n) : expectedScale(r, 1, start, span);
          const float got = scales[perTensor ? 0 : (r - first) * (n / span) + start / span];
          if (got != scale && bad++ < 5)
            ADD_FAILURE() << "scale of row " << r << " at " << start << " = " << got << ", expected " << scale;
          for (int64_t c = start; c < std::min(start + span, n); ++c)
            if (out[(r - first) * n + c] != code(input[r * n + c] / scale) && bad++ < 5)
              ADD_FAILURE() << "out[" << r << ", " << c << "] = " << int(out[(r - first) * n + c]) << " for "
                            << input[r * n + c] << " / " << scale;
        }
      EXPECT_EQ(bad, 0);
    };
    std::vector<uint8_t> out(m * n, 0x7f);
    std::vector<float> scales(m * (n / group + 1), NAN);
    auto in = [&](int64_t first, int64_t rows) {
      return TensorRef::contiguous(input.data() + first * n, DType::f32, {rows, n});
    };
    TensorRef o = TensorRef::contiguous(out.data(), outType, {m, n});
    ASSERT_TRUE(dynamic_per_token_scaled_quant(*host.runtime, o, in(0, m),
                                               TensorRef::contiguous(scales.data(), DType::f32, {m, 1}), &error))
        << error;
    check(out, scales, 0, m, n, false);
    EXPECT_EQ(scales[0], 1.f);
    EXPECT_TRUE(scales[1] > 0 && scales[1] < std::numeric_limits<float>::min()) << scales[1];
    // n is not a multiple of the group: per group takes the first 19968 columns as [m, 19968].
    const int64_t grouped = n / group * group;
    std::fill(out.begin(), out.end(), 0x7f);
    ASSERT_TRUE(dynamic_per_group_scaled_quant(
        *host.runtime, TensorRef{out.data(), outType, {m, grouped}, {n, 1}},
        TensorRef{input.data(), DType::f32, {m, grouped}, {n, 1}},
        TensorRef::contiguous(scales.data(), DType::f32, {m, grouped / group}), group, &error))
        << error;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t g = 0; g < grouped / group; ++g) {
        const float want = expectedScale(r, 1, g * group, group);
        ASSERT_EQ(scales[r * (grouped / group) + g], want) << "row " << r << " group " << g;
        for (int64_t c = g * group; c < (g + 1) * group; ++c)
          ASSERT_EQ(out[r * n + c], code(input[r * n + c] / want)) << "row " << r << " column " << c;
      }
    for (int64_t rows : {int64_t(1), int64_t(2)}) { // one row as a row; two rows in two kernels
      float scale = NAN;
      std::fill(out.begin(), out.end(), 0x7f);
      ASSERT_TRUE(dynamic_per_tensor_quant(*host.runtime, TensorRef::contiguous(out.data(), outType, {rows, n}),
                                           in(0, rows), TensorRef::contiguous(&scale, DType::f32, {1}), &error))
          << error;
      check(out, {scale}, 0, rows, n, true);
    }
  }
}

// A program whose amax lies in [2^-100, 2^100] divides it by the largest code with a product
// and one correction (RowQuantizer::programScaleOfAmax) instead of an IEEE division: the
// scale must still be the correctly rounded quotient. Every f32 significand (on an emulated
// GPU every 509th), spread over the exponents of that range, and the rows at its ends.
TEST(QuantOp, PlainScaleIsTheQuotientForEverySignificand) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  const char *emulated = std::getenv("WAVETILE_TEST_EMULATE");
  const int64_t step = emulated && *emulated ? 509 : 1;
  std::vector<float> input;
  for (int64_t i = 0; i < (int64_t(1) << 23); i += step) {
    const float amax = std::ldexp(1.f + std::ldexp(float(i), -23), int(i % 201) - 100);
    input.push_back(i % 2 ? -amax : amax);
  }
  const float least = std::ldexp(1.f, -100), greatest = std::ldexp(1.f, 100);
  for (float edge : {least, std::nextafter(least, 0.f), greatest, std::nextafter(greatest, INFINITY)})
    input.push_back(edge);
  const int64_t m = int64_t(input.size());
  for (DType outType : {DType::f8E4M3FN, DType::f8E4M3FNUZ, DType::i8}) {
    SCOPED_TRACE(dsl::dtypeName(outType));
    const float qmax = float(quantMax(outType));
    std::vector<uint8_t> out(m, 0x7f);
    std::vector<float> scales(m, NAN);
    ASSERT_TRUE(dynamic_per_token_scaled_quant(*host.runtime, TensorRef::contiguous(out.data(), outType, {m, 1}),
                                               TensorRef::contiguous(input.data(), DType::f32, {m, 1}),
                                               TensorRef::contiguous(scales.data(), DType::f32, {m, 1}), &error))
        << error;
    std::map<float, uint8_t> codes; // x / scale takes few values (about ±qmax)
    auto code = [&](float y) {
      if (outType == DType::i8)
        return uint8_t(int8_t(std::clamp(std::nearbyint(y), -128.f, 127.f)));
      auto [it, fresh] = codes.try_emplace(y, 0);
      if (fresh)
        it->second = encodeFp8(y, outType == DType::f8E4M3FNUZ);
      return it->second;
    };
    int64_t bad = 0;
    for (int64_t r = 0; r < m; ++r) {
      const float scale = std::abs(input[r]) / qmax;
      if ((scales[r] != scale || out[r] != code(input[r] / scale)) && bad++ < 5)
        ADD_FAILURE() << "row " << r << ": amax " << std::hexfloat << std::abs(input[r]) << " gave scale "
                      << scales[r] << " (expected " << scale << ") and code " << std::dec << int(out[r]);
    }
    EXPECT_EQ(bad, 0);
  }
}

// dequant of random codes and scales: out = decoded code * scale, rounded once to the
// output dtype. Codes are every byte value (NaN codes excepted), scales random, the MXFP4
// scale bytes include 0 (2^-127) and large exponents.
TEST(DequantOp, DecodesEveryScheme) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scaleValue(0.01f, 3.f);
  const float e2m1[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  struct Scheme {
    DType in, out;
    int64_t m, n, scaleRows, scaleColumns; // scaleColumns 0: a vector [scaleRows]
    bool e8m0 = false;                     // fp8 codes with e8m0 group scales (MXFP8)
  };
  for (Scheme c : {Scheme{DType::f8E4M3FN, DType::bf16, 5, 300, 5, 1}, Scheme{DType::i8, DType::f32, 3, 256, 3, 2},
                   Scheme{DType::f8E4M3FNUZ, DType::f16, 4, 100, 1, 0}, Scheme{DType::i8, DType::bf16, 6, 40, 6, 0},
                   Scheme{DType::f4E2M1FN, DType::bf16, 3, 100, 3, 4}, Scheme{DType::f4E2M1FN, DType::f32, 2, 64, 2, 2},
                   // The row and hidden sizes, each scheme and group size.
                   Scheme{DType::f8E4M3FN, DType::f32, 127, 5120, 127, 40}, Scheme{DType::i8, DType::f16, 1000, 31, 1000, 0},
                   Scheme{DType::f8E4M3FNUZ, DType::bf16, 1, 65537, 1, 0}, Scheme{DType::i8, DType::bf16, 3, 4096, 3, 64},
                   Scheme{DType::i8, DType::f32, 3, 4096, 3, 128}, Scheme{DType::f8E4M3FN, DType::f16, 1, 4096, 1, 64},
                   Scheme{DType::f4E2M1FN, DType::f16, 3, 4096, 3, 128},
                   // MXFP4 rows longer than a program's block: under 512 rows each program
                   // decodes one chunk (the last partial); from 512 rows one program loops over
                   // its row's chunks, reusing the staged codes.
                   Scheme{DType::f4E2M1FN, DType::bf16, 2, 16450, 2, 515},
                   Scheme{DType::f4E2M1FN, DType::bf16, 512, 8258, 512, 259},
                   // MXFP8, groups of 32, 64 and 128.
                   Scheme{DType::f8E4M3FN, DType::bf16, 5, 4096, 5, 128, true},
                   Scheme{DType::f8E4M3FNUZ, DType::f32, 3, 320, 3, 5, true},
                   Scheme{DType::f8E4M3FN, DType::f16, 600, 2048, 600, 16, true}}) {
    SCOPED_TRACE(std::string(dsl::dtypeName(c.in)) + " -> " + dsl::dtypeName(c.out));
    const bool mx = c.in == DType::f4E2M1FN, e8m0 = mx || c.e8m0, fnuz = c.in == DType::f8E4M3FNUZ;
    const int64_t columns = mx ? c.n / 2 : c.n;
    std::vector<uint8_t> codes(c.m * columns), scaleBytes(c.scaleRows * std::max<int64_t>(c.scaleColumns, 1));
    std::vector<float> scales(scaleBytes.size());
    for (auto &b : codes) {
      do
        b = uint8_t(byte(rng));
      while (!mx && c.in != DType::i8 && std::isnan(decodeFp8(b, fnuz)));
    }
    for (size_t i = 0; i < scales.size(); ++i) {
      scales[i] = scaleValue(rng);
      scaleBytes[i] = uint8_t(i == 0 ? 0 : 100 + byte(rng) % 60);
    }
    HostBuffer out(c.out, c.m * c.n);
    out.poison();
    std::vector<int64_t> scaleShape = c.scaleColumns ? std::vector<int64_t>{c.scaleRows, c.scaleColumns}
                                                     : std::vector<int64_t>{c.scaleRows};
    TensorRef scaleRef = e8m0 ? TensorRef::contiguous(scaleBytes.data(), DType::f8E8M0FNU, scaleShape)
                            : TensorRef::contiguous(scales.data(), DType::f32, scaleShape);
    ASSERT_TRUE(dequant(*host.runtime, TensorRef::contiguous(out.data(), c.out, {c.m, c.n}),
                        TensorRef::contiguous(codes.data(), c.in, {c.m, columns}), scaleRef, &error))
        << error;
    int64_t bad = 0;
    for (int64_t r = 0; r < c.m; ++r)
      for (int64_t col = 0; col < c.n; ++col) {
        double value, scale;
        if (mx) {
          uint8_t code = (codes[r * columns + col / 2] >> (col % 2 * 4)) & 15;
          value = (code & 8 ? -1 : 1) * e2m1[code & 7];
          scale = std::ldexp(1.0, int(scaleBytes[r * c.scaleColumns + col / 32]) - 127);
        } else {
          uint8_t code = codes[r * c.n + col];
          value = c.in == DType::i8 ? double(int8_t(code)) : decodeFp8(code, fnuz);
          const int64_t group = c.scaleColumns ? r * c.scaleColumns + col / (c.n / c.scaleColumns) : 0;
          scale = e8m0                 ? std::ldexp(1.0, int(scaleBytes[group]) - 127)
                  : c.scaleColumns > 1 ? scales[group]
                  : c.scaleRows > 1  ? scales[r]
                                     : scales[0];
        }
        float expected = out.round(float(float(value) * float(scale)));
        if (out.get(r * c.n + col) != expected && bad++ < 5)
          ADD_FAILURE() << "out[" << r << ", " << col << "] = " << out.get(r * c.n + col) << ", expected " << expected;
      }
    EXPECT_EQ(bad, 0);
  }
}

TEST(QuantOp, RefusesBadArguments) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::unique_ptr<OpRuntime> &runtime = host.runtime;
  std::vector<float> a(64), s(8);
  std::vector<uint8_t> q(64);
  TensorRef in = TensorRef::contiguous(a.data(), DType::f32, {4, 16});
  auto refuses = [&](bool ok, const std::string &says) { wavetile::test::expectRefused(ok, error, says); };
  refuses(dynamic_per_token_scaled_quant(*runtime, TensorRef::contiguous(q.data(), DType::f16, {4, 16}), in,
                                         TensorRef::contiguous(s.data(), DType::f32, {4}), &error),
          "'out' has dtype f16; expected f8E4M3FN, f8E4M3FNUZ or i8");
  refuses(dynamic_per_token_scaled_quant(*runtime, TensorRef::contiguous(q.data(), DType::i8, {4, 16}), in,
                                         TensorRef::contiguous(s.data(), DType::f32, {3}), &error),
          "'scales' must have shape [4], got [3]");
  refuses(dynamic_per_group_scaled_quant(*runtime, TensorRef::contiguous(q.data(), DType::i8, {4, 16}), in,
                                         TensorRef::contiguous(s.data(), DType::f32, {4, 1}), 48, &error),
          "group_size must be 32, 64 or 128, got 48");
  refuses(dynamic_per_group_scaled_quant(*runtime, TensorRef::contiguous(q.data(), DType::i8, {4, 16}), in,
                                         TensorRef::contiguous(s.data(), DType::f32, {4, 1}), 32, &error),
          "the hidden size 16 is not a multiple of group_size 32");
  const TensorRef out = TensorRef::contiguous(q.data(), DType::i8, {4, 16});
  const TensorRef scales = TensorRef::contiguous(s.data(), DType::f32, {4});
  int64_t wideCount = 2;
  int32_t counts[2] = {2, 2};
  const TensorRef wide = TensorRef::contiguous(&wideCount, DType::i64, {1});
  const TensorRef two = TensorRef::contiguous(counts, DType::i32, {2});
  refuses(dynamic_per_token_scaled_quant(*runtime, out, in, scales, &error, {&wide}),
          "'num_rows' has dtype i64; it must be i32");
  refuses(dynamic_per_token_scaled_quant(*runtime, out, in, scales, &error, {&two}),
          "'num_rows' must hold one element (shape [] or [1]), got [2]");
  const TensorRef one = TensorRef::contiguous(counts, DType::i32, {});
  refuses(dynamic_per_token_scaled_quant(*runtime, out, in, scales, &error, {&one, -1}),
          "num_rows_factor must be in [0, 2^31), got -1");
  // Shuffled f32 group scales are one block of M x N/group floats, written transposed.
  std::vector<float> wideScales(16);
  refuses(dynamic_per_group_scaled_quant(*runtime, TensorRef::contiguous(q.data(), DType::i8, {2, 32}),
                                         TensorRef::contiguous(a.data(), DType::f32, {2, 32}),
                                         TensorRef{wideScales.data(), DType::f32, {2, 1}, {8, 2}}, 32, &error,
                                         MxScaleRound::RoundUp, true),
          "shuffled f32 'scales' must be one contiguous block of M x N/group_size floats, got strides [8, 2]");
  refuses(dynamic_per_group_scaled_quant(*runtime, TensorRef::contiguous(q.data(), DType::i8, {2, 32}),
                                         TensorRef::contiguous(a.data(), DType::f32, {2, 32}),
                                         TensorRef::contiguous(s.data(), DType::f32, {2, 1}), 32, &error,
                                         MxScaleRound::RoundUp, true, {&one}),
          "num_rows is not supported with shuffled (transposed) f32 scales");
  const TensorRef dequantOut = TensorRef::contiguous(a.data(), DType::f32, {2, 32});
  refuses(dequant(*runtime, dequantOut, TensorRef::contiguous(q.data(), DType::i8, {2, 32}),
                  TensorRef::contiguous(q.data(), DType::f8E8M0FNU, {2, 1}), &error),
          "e8m0 'scales' go with fp8 (MXFP8) or f4E2M1FN (MXFP4) input, not i8");
  refuses(dequant(*runtime, dequantOut, TensorRef::contiguous(q.data(), DType::f8E4M3FN, {2, 32}),
                  TensorRef::contiguous(q.data(), DType::f8E8M0FNU, {2, 2}), &error),
          "e8m0 'scales' of fp8 input must be [M, N / G] with G = 32, 64 or 128, got [2, 2]");
  refuses(dequant(*runtime, dequantOut, TensorRef::contiguous(q.data(), DType::f8E4M3FN, {2, 32}),
                  TensorRef::contiguous(q.data(), DType::f16, {2, 1}), &error),
          "'scales' has dtype f16; expected f32 (or f8E8M0FNU for MXFP8)");
  EXPECT_EQ(runtime->loadedModules(), 0u);
}

} // namespace
