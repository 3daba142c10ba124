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
  bool packed = false; // rows back to back (the kernel with implicit rows and fixed strides)
};

class NormQuantTest : public ::testing::TestWithParam<Case> {};

/// Bytes of a [rows, cols] tensor of `elementBytes`-byte elements, poisoned.
std::vector<uint8_t> poisoned(int64_t elements, int64_t elementBytes) {
  return std::vector<uint8_t>(size_t(elements * elementBytes), 0xa5);
}

/// A norm's operands: rows of input and residual [m, n] with row stride `stride`, and the
/// weight [n], fresh random values of `dtype`.
struct NormOperands {
  HostBuffer input, residual, weight;
  TensorRef in, res, w;
  NormOperands(DType dtype, int64_t m, int64_t n, int64_t stride)
      : input(dtype, m * stride), residual(dtype, m * stride), weight(dtype, n),
        in{input.data(), dtype, {m, n}, {stride, 1}}, res{residual.data(), dtype, {m, n}, {stride, 1}},
        w(TensorRef::contiguous(weight.data(), dtype, {n})) {
    std::mt19937_64 rng = wavetile::test::freshGenerator();
    std::normal_distribution<float> value(0.f, 2.f);
    for (size_t i = 0; i < input.size(); ++i) {
      input.set(i, value(rng));
      residual.set(i, value(rng));
    }
    for (int64_t i = 0; i < n; ++i)
      weight.set(i, value(rng));
  }
};

TEST_P(NormQuantTest, EqualsNormThenQuantization) {
  Case c = GetParam();
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  OpRuntime &rt = *host.runtime;
  const int64_t m = c.m, n = c.n, stride = c.packed ? n : n + 5;
  NormOperands operands(c.in, m, n, stride);
  const TensorRef &in = operands.in, &res = operands.res, &w = operands.w;
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
  if (c.withAdd) {
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col)
        ASSERT_EQ(residualOut.get(r * stride + col), residualOut2.get(r * stride + col)) << r << ", " << col;
  }
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
                      Case{DType::f32, DType::f8E4M3FN, kManyNormRows, 300, 0, false, false, false},
                      // The row and hidden sizes not above, and per-group 64.
                      Case{DType::bf16, DType::i8, 1, 1, 0, false, false, false},
                      Case{DType::f16, DType::f8E4M3FN, 127, 31, 0, true, false, false},
                      Case{DType::bf16, DType::f8E4M3FN, 3, 5120, 64, false, false, false},
                      Case{DType::bf16, DType::i8, 3, 65537, 0, true, false, false},
                      Case{DType::f32, DType::i8, 3, 4096, 64, true, false, false},
                      // Packed rows; shuffled MXFP4 scales launch padded rows, so strided kernels.
                      Case{DType::bf16, DType::f8E4M3FN, 5, 4096, 0, true, false, false, true},
                      Case{DType::bf16, DType::f8E4M3FNUZ, 4, 7168, 128, true, true, false, true},
                      Case{DType::bf16, DType::f4E2M1FN, 7, 4096, 32, true, false, false, true},
                      Case{DType::bf16, DType::f4E2M1FN, 33, 96, 32, false, false, true, true},
                      Case{DType::f16, DType::i8, 3, 20000, 0, false, false, false, true},
                      // 32 elements a thread: on NVIDIA the residual's sum stays in f32.
                      Case{DType::bf16, DType::f8E4M3FN, 3, 12289, 0, true, false, false, true},
                      Case{DType::bf16, DType::i8, 3, 12288, 128, true, false, false, true}),
    [](const auto &info) {
      const Case &c = info.param;
      return std::string(dsl::dtypeName(c.in)) + "_to_" + dsl::dtypeName(c.out) + "_" + std::to_string(c.m) + "x" +
             std::to_string(c.n) + "_g" + std::to_string(c.group) + (c.withAdd ? "_add" : "") + (c.t5 ? "_t5" : "") +
             (c.shuffle ? "_shuffled" : "") + (c.packed ? "_packed" : "");
    });

// The kernel for kManyNormRows rows or more, launched over a few (the emulator cannot afford
// thousands), MXFP4 of bf16 with the fused add. With bf16 pairs it holds a whole scale group a
// thread, so its row sums run in another order than plain RMSNorm's: a normalized value may
// round to the other neighbouring bf16, which moves its code by at most one step, or (where
// it is its group's amax) its group's scale by one. Everything else equals the composed ops.
TEST(NormQuantOp, ManyRowsMxfp4KernelEqualsTheComposedOps) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  OpRuntime &rt = *host.runtime;
  const int64_t m = 21, n = 4160, stride = n + 8, groups = n / 32; // n: a partly filled block
  NormOperands operands(DType::bf16, m, n, stride);
  const TensorRef &in = operands.in, &res = operands.res, &w = operands.w;

  NormSpec spec{NormKind::RMS, DType::bf16, n, /*withAdd=*/true};
  spec.quant = RowQuant{QuantScheme::Mx, DType::f4E2M1FN, 32};
  spec.setTarget(rt.target());
  spec.manyRows = true;
  spec.vectorAligned = true;
  std::vector<uint8_t> out = poisoned(m * n / 2, 1), scales = poisoned(m * groups, 1);
  HostBuffer residualOut(DType::bf16, m * stride);
  residualOut.poison();
  NamedArgs args;
  args.tensor("input", in)
      .tensor("weight", w)
      .f32("epsilon", 1e-5f)
      .tensor("out", TensorRef::contiguous(out.data(), DType::i8, {m, n / 2}))
      .tensor("scales", TensorRef::contiguous(scales.data(), DType::i8, {m, groups}))
      .tensor("residual_in", res)
      .tensor("residual_out", {residualOut.data(), DType::bf16, {m, n}, {stride, 1}});
  ASSERT_TRUE(rt.launch(spec.key(), [&](std::string *e) { return buildNorm(spec, e); }, spec.name(),
                        {uint32_t(m), 1, 1}, args, &error))
      << error;

  HostBuffer normalized(DType::bf16, m * n), residualOut2(DType::bf16, m * stride);
  TensorRef norm = TensorRef::contiguous(normalized.data(), DType::bf16, {m, n});
  ASSERT_TRUE(rmsnorm2d_fwd_with_add(rt, norm, in, res, {residualOut2.data(), DType::bf16, {m, n}, {stride, 1}}, w,
                                     1e-5f, false, 0, &error))
      << error;
  std::vector<uint8_t> out2 = poisoned(m * n / 2, 1), scales2 = poisoned(m * groups, 1);
  ASSERT_TRUE(dynamic_per_group_scaled_quant(rt, TensorRef::contiguous(out2.data(), DType::f4E2M1FN, {m, n / 2}),
                                             norm, TensorRef::contiguous(scales2.data(), DType::f8E8M0FNU, {m, groups}),
                                             32, &error))
      << error;

  // Codes as signed steps along e2m1's magnitudes (0, 0.5, 1, ... 6).
  auto step = [](uint8_t byte, int nibble) {
    int code = (byte >> (4 * nibble)) & 15;
    return code & 8 ? -(code & 7) : code;
  };
  int64_t movedScales = 0, movedCodes = 0, bad = 0;
  for (int64_t g = 0; g < m * groups; ++g) {
    if (scales[g] != scales2[g]) {
      if (std::abs(int(scales[g]) - int(scales2[g])) > 1 && bad++ < 5)
        ADD_FAILURE() << "scale " << g << " = " << int(scales[g]) << ", composed " << int(scales2[g]);
      ++movedScales;
      continue;
    }
    for (int64_t i = g * 16; i < g * 16 + 16; ++i)
      for (int nibble = 0; nibble < 2; ++nibble) {
        int distance = std::abs(step(out[i], nibble) - step(out2[i], nibble));
        movedCodes += distance != 0;
        if (distance > 1 && bad++ < 5)
          ADD_FAILURE() << "code " << 2 * i + nibble << " = " << step(out[i], nibble) << ", composed "
                        << step(out2[i], nibble);
      }
  }
  EXPECT_EQ(bad, 0);
  // A rounding the other way is rare (about one value in 2^16 has its f32 norm that near a
  // bf16 midpoint): many moved codes or scales mean a wrong kernel, not a summation order.
  EXPECT_LE(movedCodes, 16);
  EXPECT_LE(movedScales, 2);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < n; ++col)
      ASSERT_EQ(residualOut.get(r * stride + col), residualOut2.get(r * stride + col)) << r << ", " << col;
}

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
  // Shuffled scales are the MXFP4 ones here (the quantization op also transposes f32 ones).
  refuses(rmsnorm2d_fwd_with_dynamicquant(*host.runtime, TensorRef::contiguous(q.data(), DType::i8, {3, 64}), in,
                                          TensorRef::contiguous(s.data(), DType::f32, {3, 2}),
                                          TensorRef::contiguous(w.data(), DType::f32, {64}), 1e-5f, 0, 32, true,
                                          &error),
          "shuffled scales are MXFP4's (an f4E2M1FN 'out' with group_size 32)");
  refuses(rmsnorm2d_fwd_with_dynamicquant(*host.runtime, TensorRef::contiguous(q.data(), DType::f8E4M3FN, {3, 64}),
                                          in, TensorRef::contiguous(q.data(), DType::f8E8M0FNU, {3, 2}),
                                          TensorRef::contiguous(w.data(), DType::f32, {64}), 1e-5f, 0, 32, false,
                                          &error),
          "e8m0 'yscale' goes with MXFP4 (an f4E2M1FN 'out'); MXFP8 is dynamic_per_group_scaled_quant's");
  EXPECT_EQ(host.runtime->loadedModules(), 0u);
}

} // namespace
