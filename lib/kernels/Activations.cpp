//===- Activations.cpp - gated activation kernels and their dispatch ------===//

#include "wavetile/ops/Activations.h"

#include "Checks.h"
#include "RowKernels.h"

#include <cmath>

using namespace wavetile;
using namespace wavetile::dsl;
using namespace wavetile::ops;

namespace {
/// Columns one program covers: the output width up to 2048, as a power of two. Wider rows
/// that 2048 does not divide take the largest power of two from 512 up that does, so that no
/// program is partly masked (d=7168: 1024-column programs instead of every fourth program
/// half empty).
int64_t columnBlock(int64_t width) {
  constexpr int64_t kWidest = 2048;
  if (width <= kWidest)
    return powerOfTwoAtLeast(width);
  const int64_t dividing = dividingBlock(width, 512, kWidest);
  return dividing ? dividing : kWidest;
}
} // namespace

const char *wavetile::ops::gatedActivationName(GatedActivation kind) {
  switch (kind) {
  case GatedActivation::Silu:
    return "silu_and_mul";
  case GatedActivation::Gelu:
    return "gelu_and_mul";
  case GatedActivation::GeluTanh:
    return "gelu_tanh_and_mul";
  case GatedActivation::Swiglu:
    return "swiglu";
  }
  return "?";
}

std::string GatedActivationSpec::key() const {
  std::string k = std::string(gatedActivationName(kind)) + "/" + dtypeName(dtype) + "/d" + std::to_string(width);
  if (kind == GatedActivation::Swiglu)
    k += "/limit" + std::to_string(limit) + "/alpha" + std::to_string(alpha);
  return k + "/w" + std::to_string(warpSize) + (vectorAligned ? "/a16" : "") + (within2GiB ? "" : "/far");
}

std::unique_ptr<Module> wavetile::ops::buildGatedActivation(const GatedActivationSpec &spec, std::string *error) {
  const int64_t d = spec.width, block = columnBlock(d);
  ModuleBuilder mb;
  {
    KernelOptions options;
    // 16 bytes per thread, at most 8 warps.
    options.numWarps = int(std::clamp<int64_t>(block * (bitWidth(spec.dtype) / 8) / 16 / spec.warpSize, 1, 8));
    auto k = mb.kernel(gatedActivationName(spec.kind), options);
    k.param("BLOCK", block);
    const DType dt = spec.dtype;
    const Reach reach = spec.within2GiB ? Reach::within2GiB : Reach::unbounded;
    Tensor out = k.tensor("out", dt, {Dim::dynamic(), Dim::fixed(d)}, /*contiguous=*/false, reach);
    Tensor input = k.tensor("input", dt, {Dim::dynamic(), Dim::fixed(2 * d)}, /*contiguous=*/false, reach);
    if (spec.vectorAligned)
      for (const Tensor *t : {&out, &input}) {
        k.assumeAligned(t->pointer, 16);
        k.assumeDivisible(t->stride(0), 16 / (bitWidth(dt) / 8));
      }
    Value row = programId(0);
    Value c = programId(1) * block + arange(0, block);
    Value g = load(input, {row, c}).to(DType::f32);
    Value up = load(input, {row, c + d}).to(DType::f32);
    // The reciprocal instruction's rounding (1 ulp) instead of a division's: the gate's
    // sigmoid feeds a product rounded to the output dtype. For 16-bit outputs exp's own
    // product rounding (|x|·2^-24 relative) is as negligible, and its correction was a third
    // of the instructions (silu_and_mul d=7168 on sm_90a: 231 SASS instructions per thread,
    // 183 without).
    const bool roundedTo16Bits = bitWidth(dt) == 16;
    auto sigmoid = [&](Value x) {
      return approximateReciprocal(1.0 + (roundedTo16Bits ? approximateExp(-x) : exp(-x)));
    };
    Value y;
    switch (spec.kind) {
    case GatedActivation::Silu:
      y = g * sigmoid(g) * up;
      break;
    case GatedActivation::Gelu:
      y = 0.5 * g * (1.0 + erf(g * M_SQRT1_2)) * up; // as torch: 1 + erf cancels for g << 0
      break;
    case GatedActivation::GeluTanh:
      // (1 + tanh(u)) / 2 = sigmoid(2u), without 1 + tanh's cancellation for negative g.
      y = g * sigmoid(2.0 * std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g)) * up;
      break;
    case GatedActivation::Swiglu: {
      Value gate = minimum(g, double(spec.limit));
      Value clamped = maximum(minimum(up, double(spec.limit)), -double(spec.limit));
      y = gate * sigmoid(double(spec.alpha) * gate) * (clamped + 1.0);
      break;
    }
    }
    store(out, {row, c}, y.to(dt));
  }
  return mb.finish(error);
}

namespace {

bool launchGated(OpRuntime &rt, GatedActivationSpec spec, const TensorRef &out, const TensorRef &input,
                 std::string *error) {
  const char *op = gatedActivationName(spec.kind);
  ArgumentChecker check(op, error);
  if (!check.rows("input", input, kNormDTypes))
    return false;
  if (input.shape[1] % 2)
    return opError(error, op, "'input' must have an even number of columns (gate, then up), got " +
                                  std::to_string(input.shape[1]));
  if (!check.shaped("out", out, input.dtype, {input.shape[0], input.shape[1] / 2}) || !check.written("out", out))
    return false;
  int64_t m = input.shape[0], d = input.shape[1] / 2;
  if (m == 0)
    return true;
  if (m > INT32_MAX)
    return opError(error, op, "'input' has more than 2^31 - 1 rows");
  spec.dtype = input.dtype;
  spec.width = d;
  spec.vectorAligned = vectorAligned({&out, &input});
  spec.within2GiB = within2GiB({&out, &input});
  spec.warpSize = rt.warpSize();
  int64_t block = columnBlock(d);
  NamedArgs args;
  args.tensor("out", out).tensor("input", input);
  std::string launchError;
  if (!rt.launch(spec.key(), [&](std::string *e) { return buildGatedActivation(spec, e); }, op,
                 {uint32_t(m), uint32_t((d + block - 1) / block), 1}, args, &launchError))
    return opError(error, op, launchError);
  return true;
}

} // namespace

bool wavetile::ops::silu_and_mul(OpRuntime &rt, const TensorRef &out, const TensorRef &input, std::string *error) {
  return launchGated(rt, {GatedActivation::Silu}, out, input, error);
}
bool wavetile::ops::gelu_and_mul(OpRuntime &rt, const TensorRef &out, const TensorRef &input, std::string *error) {
  return launchGated(rt, {GatedActivation::Gelu}, out, input, error);
}
bool wavetile::ops::gelu_tanh_and_mul(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                      std::string *error) {
  return launchGated(rt, {GatedActivation::GeluTanh}, out, input, error);
}
bool wavetile::ops::swiglu(OpRuntime &rt, const TensorRef &out, const TensorRef &input, float limit, float alpha,
                           std::string *error) {
  if (!(limit > 0))
    return opError(error, "swiglu", "'limit' must be positive, got " + std::to_string(limit));
  GatedActivationSpec spec{GatedActivation::Swiglu};
  spec.limit = limit;
  spec.alpha = alpha;
  return launchGated(rt, spec, out, input, error);
}
