//===- NormQuantTest.cpp - quantizing RMSNorm against its two-op form -----===//
//
// rmsnorm2d_fwd[_with_add]_dynamicquant is defined as rmsnorm2d_fwd[_with_add] followed by
// the quantization op, and must equal that composition byte for byte (both ops have their
// own reference tests). Fresh random rows, padded strides, poisoned outputs; every scheme:
// per token (one pass and chunked), per group of 128, MXFP4 plain and shuffled.
//
//===----------------------------------------------------------------------===//

#include "HostBuffer.h"

#include "wavetile/ops/Norms.h"

#include <cstring>
#include <gtest/gtest.h>

#include <random>

using namespace wavetile;
using namespace wavetile::ops;
using wavetile::test::HostBuffer;

namespace {

struct Case {
  DType in, out;
  int64_t m, n, group;
  bool withAdd, t5, shuffle;
};

class NormQuantTest : public ::testing::TestWithParam<Case> {};

/// Bytes of a [rows, cols] tensor of `elementBytes`-byte elements, poisoned.
std::vector<uint8_t> poisoned(int64_t elements, int64_t elementBytes) {
  return std::vector<uint8_t>(size_t(elements * elementBytes), 0xa5);
}

TEST_P(NormQuantTest, EqualsNormThenQuantization) {
  Case c = GetParam();
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  OpRuntime &rt = *host.runtime;
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::normal_distribution<float> value(0.f, 2.f);
  const int64_t m = c.m, n = c.n, stride = n + 5;
  HostBuffer input(c.in, m * stride), residual(c.in, m * stride), weight(c.in, n);
  for (size_t i = 0; i < input.size(); ++i) {
    input.set(i, value(rng));
    residual.set(i, value(rng));
  }
  for (int64_t i = 0; i < n; ++i)
    weight.set(i, value(rng));
  const bool mx = c.out == DType::f4E2M1FN;
  const int64_t outColumns = mx ? n / 2 : n, groups = mx ? (n + 31) / 32 : c.group ? n / c.group : 1;
  const int64_t scaleRows = c.shuffle ? shuffledScaleRows(m) : m;
  const int64_t scaleColumns = c.shuffle ? shuffledScaleColumns(groups) : c.group ? groups : 1;
  const int64_t scaleBytes = mx ? 1 : 4;
  const DType scaleType = mx ? DType::f8E8M0FNU : DType::f32;
  auto outRef = [&](std::vector<uint8_t> &bytes) { return TensorRef::contiguous(bytes.data(), c.out, {m, outColumns}); };
  auto scaleRef = [&](std::vector<uint8_t> &bytes) {
    return c.group ? TensorRef::contiguous(bytes.data(), scaleType, {scaleRows, scaleColumns})
                   : TensorRef::contiguous(bytes.data(), scaleType, {m});
  };
  TensorRef in{input.data(), c.in, {m, n}, {stride, 1}}, res{residual.data(), c.in, {m, n}, {stride, 1}},
      w = TensorRef::contiguous(weight.data(), c.in, {n});

  // Fused.
  std::vector<uint8_t> out = poisoned(m * outColumns, 1), scales = poisoned(scaleRows * scaleColumns, scaleBytes);
  HostBuffer residualOut(c.in, m * stride);
  residualOut.poison();
  TensorRef resOut{residualOut.data(), c.in, {m, n}, {stride, 1}};
  bool ok = c.withAdd ? rmsnorm2d_fwd_with_add_dynamicquant(rt, outRef(out), in, res, resOut, scaleRef(scales), w,
                                                            1e-5f, c.t5, c.group, c.shuffle, &error)
                      : rmsnorm2d_fwd_with_dynamicquant(rt, outRef(out), in, scaleRef(scales), w, 1e-5f, c.t5, c.group,
                                                        c.shuffle, &error);
  ASSERT_TRUE(ok) << error;

  // Composed.
  HostBuffer normalized(c.in, m * n), residualOut2(c.in, m * stride);
  residualOut2.poison();
  TensorRef norm = TensorRef::contiguous(normalized.data(), c.in, {m, n});
  ok = c.withAdd ? rmsnorm2d_fwd_with_add(rt, norm, in, res, {residualOut2.data(), c.in, {m, n}, {stride, 1}}, w,
                                          1e-5f, false, c.t5, &error)
                 : rmsnorm2d_fwd(rt, norm, in, w, 1e-5f, c.t5, &error);
  ASSERT_TRUE(ok) << error;
  std::vector<uint8_t> out2 = poisoned(m * outColumns, 1), scales2 = poisoned(scaleRows * scaleColumns, scaleBytes);
  ok = c.group ? dynamic_per_group_scaled_quant(rt, outRef(out2), norm, scaleRef(scales2), c.group, &error,
                                                MxScaleRound::RoundUp, c.shuffle)
               : dynamic_per_token_scaled_quant(rt, outRef(out2), norm, scaleRef(scales2), &error);
  ASSERT_TRUE(ok) << error;

  auto firstDifference = [](const std::vector<uint8_t> &a, const std::vector<uint8_t> &b) {
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i])
        return int64_t(i);
    return int64_t(-1);
  };
  if (rt.target() == "host" || mx) {
    EXPECT_EQ(firstDifference(out, out2), -1) << "quantized outputs differ";
    EXPECT_EQ(firstDifference(scales, scales2), -1) << "scales differ";
  } else {
    // A GPU kernel's layout decides the order of its row sums, and the fused kernel's
    // follows its quantized output: a norm output may round the other way, its row's scale
    // move by that rounding and its code by one step (sign and magnitude, or int8 value).
    const double rounding = c.in == DType::f32 ? 0x1p-20 : 0x1p-7;
    int64_t bad = 0;
    for (size_t i = 0; i < scales.size(); i += 4) {
      float got, want;
      std::memcpy(&got, &scales[i], 4);
      std::memcpy(&want, &scales2[i], 4);
      if (std::abs(got - want) > rounding * std::abs(want) && bad++ < 5)
        ADD_FAILURE() << "scale " << i / 4 << " = " << got << ", composed " << want;
    }
    auto step = [&](uint8_t code) {
      return c.out == DType::i8 ? int(int8_t(code)) : (code & 0x80 ? -1 : 1) * int(code & 0x7f);
    };
    for (size_t i = 0; i < out.size(); ++i)
      if (std::abs(step(out[i]) - step(out2[i])) > 1 && bad++ < 5)
        ADD_FAILURE() << "code " << i << " = " << int(out[i]) << ", composed " << int(out2[i]);
    EXPECT_EQ(bad, 0);
  }
  if (c.withAdd)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col)
        ASSERT_EQ(residualOut.get(r * stride + col), residualOut2.get(r * stride + col)) << r << ", " << col;
}

INSTANTIATE_TEST_SUITE_P(
    Host, NormQuantTest,
    ::testing::Values(Case{DType::bf16, DType::f8E4M3FN, 5, 4096, 0, false, false, false},
                      Case{DType::f16, DType::i8, 3, 20000, 0, true, false, false}, // chunked rows
                      Case{DType::bf16, DType::f8E4M3FNUZ, 4, 7168, 128, true, true, false},
                      Case{DType::f32, DType::i8, 2, 96, 32, false, false, false},
                      Case{DType::bf16, DType::f4E2M1FN, 7, 4096, 32, true, false, false},
                      Case{DType::bf16, DType::f4E2M1FN, 33, 96, 32, false, false, true},
                      Case{DType::f16, DType::f4E2M1FN, 2, 17000, 32, false, true, true},
                      Case{DType::bf16, DType::f4E2M1FN, 2, 17000, 32, true, false, false}, // chunked bf16 pairs
                      // kManyNormRows rows or more: 64 bytes per thread.
                      Case{DType::f32, DType::f8E4M3FN, kManyNormRows, 300, 0, false, false, false}),
    [](const auto &info) {
      const Case &c = info.param;
      return std::string(dsl::dtypeName(c.in)) + "_to_" + dsl::dtypeName(c.out) + "_" + std::to_string(c.m) + "x" +
             std::to_string(c.n) + "_g" + std::to_string(c.group) + (c.withAdd ? "_add" : "") + (c.t5 ? "_t5" : "") +
             (c.shuffle ? "_shuffled" : "");
    });

TEST(NormQuantOp, RefusesBadArguments) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::vector<float> a(64 * 3), w(64), s(8);
  std::vector<uint8_t> q(256);
  TensorRef in = TensorRef::contiguous(a.data(), DType::f32, {3, 64});
  auto refuses = [&](bool ok, const std::string &says) { wavetile::test::expectRefused(ok, error, says); };
  refuses(rmsnorm2d_fwd_with_dynamicquant(*host.runtime, TensorRef::contiguous(q.data(), DType::i8, {3, 64}), in,
                                          TensorRef::contiguous(s.data(), DType::f32, {3}),
                                          TensorRef::contiguous(w.data(), DType::f32, {64}), 1e-5f, 0, 16, false,
                                          &error),
          "group_size must be 0 (per token), 32, 64 or 128, got 16");
  refuses(rmsnorm2d_fwd_with_dynamicquant(*host.runtime, TensorRef::contiguous(q.data(), DType::f16, {3, 64}), in,
                                          TensorRef::contiguous(s.data(), DType::f32, {3}),
                                          TensorRef::contiguous(w.data(), DType::f32, {64}), 1e-5f, 0, 0, false,
                                          &error),
          "'out' has dtype f16; expected f8E4M3FN, f8E4M3FNUZ or i8");
  EXPECT_EQ(host.runtime->loadedModules(), 0u);
}

} // namespace
