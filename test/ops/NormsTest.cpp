//===- NormsTest.cpp - RMSNorm ops on the host device against a reference -===//
//
// The reference is written here from AITER's definition (aiter-notes §2-§3), in double
// precision: rms over the row in f32 inputs, the T5 rounding, Gemma's weight + 1, and the
// fused add rounded to the dtype before it is normalized. Inputs are fresh random values
// every run (the seed is printed), outputs are poisoned before each launch, rows are strided.
//
//===----------------------------------------------------------------------===//

#include "HostBuffer.h"

#include "wavetile/ops/Norms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace wavetile;
using namespace wavetile::ops;
using dsl::dtypeName;
using Buffer = wavetile::test::HostBuffer;

namespace {

struct Case {
  int64_t m, n;
  DType dtype;
  bool packed = false; // rows back to back (the kernel with implicit rows and fixed strides)
};

class RmsNormTest : public ::testing::TestWithParam<Case> {
protected:
  void SetUp() override {
    std::string error;
    device = wavetile::test::openTestDevice(&error);
    ASSERT_TRUE(device) << error;
    runtime = OpRuntime::create(*device, &error);
    ASSERT_TRUE(runtime) << error;
    seed = std::random_device{}();
    std::printf("seed %llu\n", (unsigned long long)seed);
  }

  /// Runs one variant on fresh data and compares every element with the reference.
  void check(bool withAdd, bool gemma, bool t5, bool layer = false) {
    auto [m, n, dtype, packed] = GetParam();
    int64_t stride = packed ? n : n + 3; // padded rows: the kernel must use the stride
    std::mt19937_64 rng(seed);
    // LayerNorm inputs sit on an offset, which a mean/variance cancellation would expose.
    std::uniform_real_distribution<float> value(layer ? 1.f : -2.f, layer ? 5.f : 2.f), scale(0.5f, 1.5f);
    Buffer input(dtype, m * stride), residualIn(dtype, m * stride), weight(dtype, n), bias(dtype, n);
    for (size_t i = 0; i < input.size(); ++i) {
      input.set(i, value(rng));
      residualIn.set(i, value(rng));
    }
    for (size_t i = 0; i < weight.size(); ++i) {
      weight.set(i, gemma ? value(rng) * 0.25f : scale(rng));
      bias.set(i, scale(rng) - 1.f);
    }
    Buffer out(dtype, m * stride), residualOut(dtype, m * stride);
    out.poison();
    residualOut.poison();
    auto rows = [&](Buffer &b) { return TensorRef{b.data(), dtype, {m, n}, {stride, 1}}; };
    const float epsilon = 1e-5f;
    std::string error;
    TensorRef w = TensorRef::contiguous(weight.data(), dtype, {n}), b = TensorRef::contiguous(bias.data(), dtype, {n});
    bool ok = layer && withAdd
                  ? layernorm2d_fwd_with_add(*runtime, rows(out), rows(input), rows(residualIn), rows(residualOut), w,
                                             b, epsilon, &error)
              : layer ? layernorm2d_fwd(*runtime, rows(out), rows(input), w, b, epsilon, &error)
              : withAdd ? rmsnorm2d_fwd_with_add(*runtime, rows(out), rows(input), rows(residualIn), rows(residualOut),
                                                 w, epsilon, gemma, t5 ? 1 : 0, &error)
                        : rmsnorm2d_fwd(*runtime, rows(out), rows(input), w, epsilon, t5 ? 1 : 0, &error, gemma);
    ASSERT_TRUE(ok) << error;

    // f32 outputs are checked to a relative 1e-5 (accumulation order differs); rounded
    // outputs to one unit of their dtype's last place (AITER allows 1e-2 absolute), and
    // all but 2% of them (plus 4, for tiny rows) must equal the reference rounded to the
    // dtype: f32 sums on the host flip roundings of about 1% of f16 LayerNorm outputs, a
    // missing T5 rounding about 25%.
    const double ulp = out.ulp();
    int64_t bad = 0, inexact = 0;
    for (int64_t r = 0; r < m; ++r) {
      std::vector<double> x(n);
      double squares = 0, mean = 0;
      for (int64_t c = 0; c < n; ++c) {
        size_t i = r * stride + c;
        x[c] = input.get(i);
        if (withAdd) {
          x[c] = input.round(float(x[c] + residualIn.get(i)));
          if (residualOut.get(i) != float(x[c]) && bad++ < 5)
            ADD_FAILURE() << "residual_out[" << r << ", " << c << "] = " << residualOut.get(i) << ", expected "
                          << x[c];
        }
        mean += x[c] / double(n);
      }
      if (!layer)
        mean = 0;
      for (int64_t c = 0; c < n; ++c)
        squares += (x[c] - mean) * (x[c] - mean);
      double invRms = 1.0 / std::sqrt(squares / double(n) + epsilon);
      for (int64_t c = 0; c < n; ++c) {
        double y = (x[c] - mean) * invRms;
        if (t5)
          y = input.round(float(y));
        double w = weight.get(c) + (gemma ? 1.0 : 0.0);
        double expected = y * w + (layer ? bias.get(c) : 0.0), got = out.get(r * stride + c);
        double tolerance = dtype == DType::f32 ? 1e-5 * std::max(1.0, std::abs(expected))
                                               : ulp * std::max(1.0, std::abs(expected)) +
                                                     // T5: y's own rounding may flip, scaled by w
                                                     (t5 ? ulp * std::abs(w) * std::max(1.0, std::abs(y)) : 0);
        if (!(std::abs(got - expected) <= tolerance) && bad++ < 5)
          ADD_FAILURE() << "out[" << r << ", " << c << "] = " << got << ", expected " << expected;
        inexact += dtype != DType::f32 && float(got) != out.round(float(expected));
      }
      // Padding between rows stays untouched.
      for (int64_t c = n; c < stride && r + 1 < m; ++c)
        if (!std::isnan(out.get(r * stride + c)) && bad++ < 5)
          ADD_FAILURE() << "wrote padding at row " << r << " column " << c;
    }
    EXPECT_EQ(bad, 0);
    EXPECT_LE(inexact, m * n / 50 + 4) << "outputs differing from the rounded reference";
  }

  std::unique_ptr<Device> device;
  std::unique_ptr<OpRuntime> runtime;
  uint64_t seed = 0;
};

TEST_P(RmsNormTest, Plain) { check(false, false, false); }
TEST_P(RmsNormTest, FusedAdd) { check(true, false, false); }
TEST_P(RmsNormTest, Gemma) { check(false, true, false); }
TEST_P(RmsNormTest, GemmaFusedAdd) { check(true, true, false); }
TEST_P(RmsNormTest, ModelSensitive) { check(false, false, true); }
TEST_P(RmsNormTest, LayerNorm) { check(false, false, false, true); }
TEST_P(RmsNormTest, LayerNormFusedAdd) { check(true, false, false, true); }

// The row and hidden sizes: tails everywhere, one row of 65537 (two-pass).
INSTANTIATE_TEST_SUITE_P(Host, RmsNormTest,
                         ::testing::Values(Case{1, 1, DType::bf16}, Case{3, 31, DType::f16},
                                           Case{127, 4096, DType::bf16}, Case{3, 5120, DType::f32},
                                           Case{1000, 31, DType::bf16}, Case{2, 65537, DType::bf16},
                                           Case{1, 65537, DType::f32}, Case{5, 12289, DType::f16},
                                           // kManyNormRows rows or more: 64 bytes per thread.
                                           Case{kManyNormRows, 300, DType::f32},
                                           Case{127, 4096, DType::bf16, true}, Case{3, 5120, DType::f32, true},
                                           Case{1000, 31, DType::bf16, true}, Case{5, 12289, DType::f16, true}),
                         [](const auto &info) {
                           return std::string(dtypeName(info.param.dtype)) + "_" + std::to_string(info.param.m) + "x" +
                                  std::to_string(info.param.n) + (info.param.packed ? "_packed" : "");
                         });

/// Ops on the host device, for tests that need no fixture.
class RmsNormOp : public ::testing::Test {
protected:
  void SetUp() override {
    device = wavetile::test::openTestDevice(&error);
    ASSERT_TRUE(device) << error;
    runtime = OpRuntime::create(*device, &error);
    ASSERT_TRUE(runtime) << error;
  }
  std::string error;
  std::unique_ptr<Device> device;
  std::unique_ptr<OpRuntime> runtime;
};

TEST_F(RmsNormOp, RefusesBadArguments) {
  std::vector<uint16_t> a(64), b(64), w(8);
  TensorRef x = TensorRef::contiguous(a.data(), DType::bf16, {8, 8});
  TensorRef out = TensorRef::contiguous(b.data(), DType::bf16, {8, 8});
  TensorRef weight = TensorRef::contiguous(w.data(), DType::bf16, {8});
  auto refuses = [&](const TensorRef &o, const TensorRef &in, const TensorRef &wt, int t5, const std::string &says) {
    std::string e;
    wavetile::test::expectRefused(rmsnorm2d_fwd(*runtime, o, in, wt, 1e-5f, t5, &e), e, says);
  };
  refuses(out, TensorRef::contiguous(a.data(), DType::i32, {8, 8}), weight, 0, "'input' has dtype i32");
  refuses(out, TensorRef::contiguous(a.data(), DType::bf16, {64}), weight, 0, "must be 2-D");
  refuses(TensorRef::contiguous(b.data(), DType::bf16, {8, 4}), x, weight, 0, "'out' has shape [8, 4]");
  refuses(out, x, TensorRef::contiguous(w.data(), DType::bf16, {7}), 0, "'weight' must have shape [8]");
  refuses(out, x, TensorRef::contiguous(w.data(), DType::f16, {8}), 0, "'weight' has dtype f16");
  refuses(out, TensorRef{a.data(), DType::bf16, {8, 8}, {1, 8}}, weight, 0, "unit stride");
  refuses(out, x, weight, 2, "use_model_sensitive_rmsnorm");
  refuses(out, TensorRef{a.data(), DType::bf16, {70000, 70000}, {70000, 1}}, weight, 0, "fewer than 2^31 elements");
  // Outputs: every element at its own address, writable; any tensor aligned to its elements.
  refuses(TensorRef{b.data(), DType::bf16, {8, 8}, {0, 1}}, x, weight, 0,
          "'out' has elements that share memory (shape [8, 8], strides [0, 1])");
  refuses(TensorRef{b.data(), DType::bf16, {8, 8}, {7, 1}}, x, weight, 0, "'out' has elements that share memory");
  refuses(TensorRef{b.data(), DType::bf16, {8, 8}, {8, 1}, /*readOnly=*/true}, x, weight, 0, "'out' is read-only");
  refuses(out, TensorRef{reinterpret_cast<char *>(a.data()) + 1, DType::bf16, {8, 7}, {8, 1}}, weight, 0,
          "'input' starts at an address that is not a multiple of its 2-byte elements");
  // A negative, NaN or infinite epsilon would make rows NaN (or zero) without a word.
  for (float eps : {-1e-6f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::string e;
    wavetile::test::expectRefused(rmsnorm2d_fwd(*runtime, out, x, weight, eps, 0, &e), e,
                                  "rmsnorm2d_fwd: 'epsilon' must be finite and >= 0, got ");
  }
  std::vector<uint16_t> sum(64);
  TensorRef residualOut = TensorRef::contiguous(sum.data(), DType::bf16, {8, 8});
  wavetile::test::expectRefused(
      layernorm2d_fwd_with_add(*runtime, out, x, x, residualOut, weight, weight, -0.5f, &error), error,
      "layernorm2d_fwd_with_add: 'epsilon' must be finite and >= 0, got -0.5");
  EXPECT_EQ(runtime->loadedModules(), 0u); // nothing compiled for refused calls
  // A broadcast input (rows of stride 0) is read, not written: allowed.
  EXPECT_TRUE(rmsnorm2d_fwd(*runtime, out, TensorRef{a.data(), DType::bf16, {8, 8}, {0, 1}}, weight, 1e-5f, 0, &error))
      << error;
  // No rows: nothing to do, nothing compiled.
  EXPECT_TRUE(rmsnorm2d_fwd(*runtime, TensorRef::contiguous(b.data(), DType::bf16, {0, 8}),
                            TensorRef::contiguous(a.data(), DType::bf16, {0, 8}), weight, 1e-5f, 0, &error))
      << error;
}

// Rows 2^30 elements apart: the tensors span more than 2 GiB, so the kernel is the
// specialization that addresses them without buffer resources. Only the touched pages of
// the (virtual) allocations are ever mapped.
TEST_F(RmsNormOp, TensorsBeyond2GiB) {
  const int64_t stride = int64_t(1) << 30, n = 8;
  std::unique_ptr<uint16_t[]> x(new uint16_t[stride + n]), y(new uint16_t[stride + n]);
  Buffer row(DType::bf16, 2 * n), weight(DType::bf16, n);
  for (int64_t i = 0; i < 2 * n; ++i)
    row.set(i, 0.25f * float(i + 1) * (i % 3 ? 1.f : -1.f));
  for (int64_t i = 0; i < n; ++i)
    weight.set(i, 1.f + 0.125f * float(i));
  std::memcpy(x.get(), row.data(), 2 * n);
  std::memcpy(x.get() + stride, static_cast<uint8_t *>(row.data()) + 2 * n, 2 * n);
  TensorRef in{x.get(), DType::bf16, {2, n}, {stride, 1}}, out{y.get(), DType::bf16, {2, n}, {stride, 1}};
  ASSERT_GT(in.extentBytes(), uint64_t(INT32_MAX));
  ASSERT_TRUE(rmsnorm2d_fwd(*runtime, out, in, TensorRef::contiguous(weight.data(), DType::bf16, {n}), 1e-5f, 0,
                            &error))
      << error;
  for (int64_t r = 0; r < 2; ++r) {
    double squares = 0;
    for (int64_t c = 0; c < n; ++c)
      squares += double(row.get(r * n + c)) * row.get(r * n + c);
    double invRms = 1 / std::sqrt(squares / n + 1e-5);
    for (int64_t c = 0; c < n; ++c) {
      Buffer got(DType::bf16, 1);
      std::memcpy(got.data(), y.get() + r * stride + c, 2);
      EXPECT_EQ(got.get(0), got.round(float(row.get(r * n + c) * invRms * weight.get(c)))) << r << ", " << c;
    }
  }
}

TEST_F(RmsNormOp, CompilesOncePerSpecialization) {
  std::vector<float> a(40 * 16), b(40 * 16), w(16, 1.f);
  for (int64_t m : {1, 7, 40}) // rows do not specialize
    ASSERT_TRUE(rmsnorm2d_fwd(*runtime, TensorRef::contiguous(b.data(), DType::f32, {m, 16}),
                              TensorRef::contiguous(a.data(), DType::f32, {m, 16}),
                              TensorRef::contiguous(w.data(), DType::f32, {16}), 1e-5f, 0, &error))
        << error;
  EXPECT_EQ(runtime->loadedModules(), 1u);
  ASSERT_TRUE(rmsnorm2d_fwd(*runtime, TensorRef::contiguous(b.data(), DType::f32, {2, 15}),
                            TensorRef::contiguous(a.data(), DType::f32, {2, 15}),
                            TensorRef::contiguous(w.data(), DType::f32, {15}), 1e-5f, 0, &error))
      << error;
  EXPECT_EQ(runtime->loadedModules(), 2u);
}

} // namespace

namespace {

// x_bias is added to the input before the norm: the result must equal LayerNorm of the
// rounded sum (computed here in f32 as the definition says), and the fused add must write
// that sum plus the residual, rounded once.
TEST(LayerNormXBias, EqualsLayerNormOfTheBiasedInput) {
  for (DType dtype : {DType::bf16, DType::f16}) {
    for (bool withAdd : {false, true}) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + (withAdd ? " with add" : ""));
      std::string error;
      wavetile::test::HostOps host;
      ASSERT_TRUE(host.runtime);
      std::mt19937_64 rng = wavetile::test::freshGenerator();
      std::normal_distribution<float> value(1.f, 2.f);
      const int64_t m = 7, n = 1000;
      Buffer input(dtype, m * n), residual(dtype, m * n), weight(dtype, n), bias(dtype, n), xBias(dtype, n);
      for (size_t i = 0; i < input.size(); ++i) {
        input.set(i, value(rng));
        residual.set(i, value(rng));
      }
      for (int64_t i = 0; i < n; ++i) {
        weight.set(i, value(rng));
        bias.set(i, value(rng));
        xBias.set(i, value(rng));
      }
      Buffer out(dtype, m * n), residualOut(dtype, m * n), biased(dtype, m * n), expected(dtype, m * n);
      out.poison();
      residualOut.poison();
      auto ref = [&](Buffer &b) { return TensorRef::contiguous(b.data(), dtype, {m, n}); };
      TensorRef w = TensorRef::contiguous(weight.data(), dtype, {n}), bs = TensorRef::contiguous(bias.data(), dtype, {n});
      TensorRef xb = TensorRef::contiguous(xBias.data(), dtype, {n});
      bool ok = withAdd ? layernorm2d_fwd_with_add(*host.runtime, ref(out), ref(input), ref(residual), ref(residualOut),
                                                   w, bs, 1e-5f, &error, &xb)
                        : layernorm2d_fwd(*host.runtime, ref(out), ref(input), w, bs, 1e-5f, &error, &xb);
      ASSERT_TRUE(ok) << error;
      for (int64_t i = 0; i < m * n; ++i) {
        float sum = input.get(i) + xBias.get(i % n);
        if (withAdd)
          sum += residual.get(i);
        biased.set(i, sum);
        if (withAdd) {
          ASSERT_EQ(residualOut.get(i), biased.get(i)) << "residual_out[" << i << "]";
        }
      }
      ASSERT_TRUE(layernorm2d_fwd(*host.runtime, ref(expected), ref(biased), w, bs, 1e-5f, &error)) << error;
      for (int64_t i = 0; i < m * n; ++i)
        ASSERT_EQ(out.get(i), expected.get(i)) << "out[" << i << "]";
    }
  }
}

TEST(LayerNormXBias, RefusesAMismatchedBias) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::vector<float> a(64), v(16);
  TensorRef x = TensorRef::contiguous(a.data(), DType::f32, {4, 16}), w = TensorRef::contiguous(v.data(), DType::f32, {16});
  TensorRef shortBias = TensorRef::contiguous(v.data(), DType::f32, {8});
  wavetile::test::expectRefused(layernorm2d_fwd(*host.runtime, x, x, w, w, 1e-5f, &error, &shortBias), error,
                                "'x_bias' must have shape [16], got [8]");
}

// A launch's tensor arguments hold at most NamedArgs::kMaxRank dimensions (ops pass 4 at
// most); more is refused with the tensor's name, before anything runs.
TEST(OpRuntime, LaunchRefusesTensorsOfTooManyDimensions) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::vector<float> a(64), v(16);
  NormSpec spec{NormKind::RMS, DType::f32, 16};
  spec.setTarget(host.runtime->target());
  NamedArgs args;
  args.tensor("input", TensorRef::contiguous(a.data(), DType::f32, {4, 16}))
      .tensor("weight", TensorRef::contiguous(v.data(), DType::f32, {16}))
      .tensor("out", TensorRef::contiguous(a.data(), DType::f32, {1, 1, 1, 1, 1, 4, 16}))
      .f32("epsilon", 1e-5f);
  EXPECT_FALSE(host.runtime->launch(spec.key(), [&](std::string *e) { return buildNorm(spec, e); }, spec.name(),
                                    {4, 1, 1}, args, &error));
  EXPECT_EQ(error, "tensor 'out' has 7 sizes and 7 strides; launches take at most 6 dimensions, a stride for each");
}

} // namespace
