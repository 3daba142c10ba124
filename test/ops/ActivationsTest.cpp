//===- ActivationsTest.cpp - gated activations on the host against a reference ----===//
//
// References in double precision from the definitions in Activations.h (AITER's silu,
// exact and tanh GELU, and the MoE Swiglu with its clamps); fresh random inputs (wide enough
// to reach the Swiglu clamps), padded rows, poisoned outputs.
//
//===----------------------------------------------------------------------===//

#include "HostBuffer.h"

#include "wavetile/ops/Activations.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace wavetile;
using namespace wavetile::ops;
using wavetile::test::HostBuffer;

namespace {

double reference(GatedActivation kind, double g, double up, double limit, double alpha) {
  auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  switch (kind) {
  case GatedActivation::Silu:
    return g * sigmoid(g) * up;
  case GatedActivation::Gelu:
    return 0.5 * g * (1.0 + std::erf(g / std::sqrt(2.0))) * up;
  case GatedActivation::GeluTanh:
    return 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g))) * up;
  case GatedActivation::Swiglu: {
    double gate = std::min(g, limit), clamped = std::clamp(up, -limit, limit);
    return gate * sigmoid(alpha * gate) * (clamped + 1.0);
  }
  }
  return NAN;
}

struct Case {
  GatedActivation kind;
  DType dtype;
  int64_t m, d;
};

class GatedActivationTest : public ::testing::TestWithParam<Case> {};

TEST_P(GatedActivationTest, MatchesReference) {
  auto [kind, dtype, m, d] = GetParam();
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::unique_ptr<OpRuntime> &runtime = host.runtime;
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::uniform_real_distribution<float> value(-9.f, 9.f);
  int64_t inStride = 2 * d + 5, outStride = d + 3;
  HostBuffer input(dtype, m * inStride), out(dtype, m * outStride);
  for (size_t i = 0; i < input.size(); ++i)
    input.set(i, value(rng));
  out.poison();
  const float limit = 7.0f, alpha = 1.702f;
  TensorRef in{input.data(), dtype, {m, 2 * d}, {inStride, 1}}, o{out.data(), dtype, {m, d}, {outStride, 1}};
  bool ok = kind == GatedActivation::Silu       ? silu_and_mul(*runtime, o, in, &error)
            : kind == GatedActivation::Gelu     ? gelu_and_mul(*runtime, o, in, &error)
            : kind == GatedActivation::GeluTanh ? gelu_tanh_and_mul(*runtime, o, in, &error)
                                                : swiglu(*runtime, o, in, limit, alpha, &error);
  ASSERT_TRUE(ok) << error;
  int64_t bad = 0, inexact = 0;
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < d; ++c) {
      double expected = reference(kind, input.get(r * inStride + c), input.get(r * inStride + d + c), limit, alpha);
      double got = out.get(r * outStride + c);
      // f32: the f32 math library's error; rounded dtypes: one unit in their last place.
      double tolerance = (dtype == DType::f32 ? 4e-6 : out.ulp()) * std::max(1.0, std::abs(expected));
      if (!(std::abs(got - expected) <= tolerance) && bad++ < 5)
        ADD_FAILURE() << "out[" << r << ", " << c << "] = " << got << ", expected " << expected;
      // Exactness is counted where 1 + erf(g) does not cancel (outputs of magnitude >= 1).
      inexact += dtype != DType::f32 && std::abs(expected) >= 1 && float(got) != out.round(float(expected));
    }
    for (int64_t c = d; c < outStride && r + 1 < m; ++c)
      if (!std::isnan(out.get(r * outStride + c)) && bad++ < 5)
        ADD_FAILURE() << "wrote padding at row " << r << " column " << c;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_LE(inexact, m * d / 100 + 4) << "outputs differing from the rounded reference";
}

INSTANTIATE_TEST_SUITE_P(
    Host, GatedActivationTest,
    ::testing::Values(
        Case{GatedActivation::Silu, DType::bf16, 3, 1}, Case{GatedActivation::Silu, DType::f16, 17, 4097},
        Case{GatedActivation::Silu, DType::f32, 5, 14336}, Case{GatedActivation::Gelu, DType::bf16, 9, 2050},
        Case{GatedActivation::Gelu, DType::f32, 2, 31}, Case{GatedActivation::GeluTanh, DType::f16, 4, 3000},
        Case{GatedActivation::GeluTanh, DType::bf16, 1000, 7}, Case{GatedActivation::Swiglu, DType::bf16, 6, 2880},
        Case{GatedActivation::Swiglu, DType::f32, 3, 127},
        // Widths 2048 does not divide but 1024 and 512 do: unmasked narrower programs.
        Case{GatedActivation::Silu, DType::bf16, 7, 7168}, Case{GatedActivation::Swiglu, DType::f16, 3, 2560},
        // The row and hidden sizes not above: one row, 127 rows, and widths past 65536.
        Case{GatedActivation::Gelu, DType::bf16, 1, 4096}, Case{GatedActivation::GeluTanh, DType::f16, 127, 5120},
        Case{GatedActivation::Silu, DType::bf16, 2, 65537}, Case{GatedActivation::Swiglu, DType::f32, 1, 65537}),
    [](const auto &info) {
      return std::string(gatedActivationName(info.param.kind)) + "_" + dsl::dtypeName(info.param.dtype) + "_" +
             std::to_string(info.param.m) + "x" + std::to_string(info.param.d);
    });

TEST(GatedActivationOp, RefusesBadArguments) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::unique_ptr<OpRuntime> &runtime = host.runtime;
  std::vector<float> a(64), b(64);
  auto refuses = [&](bool ok, const std::string &says) { wavetile::test::expectRefused(ok, error, says); };
  refuses(silu_and_mul(*runtime, TensorRef::contiguous(b.data(), DType::f32, {4, 4}),
                       TensorRef::contiguous(a.data(), DType::f32, {4, 7}), &error),
          "silu_and_mul: 'input' must have an even number of columns");
  refuses(gelu_and_mul(*runtime, TensorRef::contiguous(b.data(), DType::f32, {4, 8}),
                       TensorRef::contiguous(a.data(), DType::f32, {4, 8}), &error),
          "gelu_and_mul: 'out' has shape [4, 8]; expected [4, 4]");
  refuses(swiglu(*runtime, TensorRef::contiguous(b.data(), DType::f32, {4, 4}),
                 TensorRef::contiguous(a.data(), DType::f32, {4, 8}), -1.f, 1.702f, &error),
          "swiglu: 'limit' must be positive");
  EXPECT_EQ(runtime->loadedModules(), 0u);
}

} // namespace
