//===- Norms.cpp - RMSNorm kernels and their dispatch ---------------------===//

#include "wavetile/ops/Norms.h"

#include "Checks.h"

using namespace wavetile;
using namespace wavetile::dsl;
using namespace wavetile::ops;

namespace {

/// Rows up to this many elements are read once and kept in registers (at most 512 threads,
/// 32 elements each); longer rows are walked twice in chunks of this size (the second pass
/// mostly hits L2).
constexpr int64_t kSinglePassElements = 16384;

int64_t nextPowerOfTwo(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

} // namespace

std::string RmsNormSpec::key() const {
  return std::string("rmsnorm2d/") + dtypeName(dtype) + "/n" + std::to_string(hidden) + (withAdd ? "/add" : "") +
         (gemma ? "/gemma" : "") + (modelSensitive ? "/t5" : "") + "/w" + std::to_string(warpSize) + (vectorAligned ? "/a16" : "") + (within2GiB ? "" : "/far");
}

std::unique_ptr<Module> wavetile::ops::buildRmsNorm(const RmsNormSpec &spec, std::string *error) {
  const int64_t n = spec.hidden;
  const bool singlePass = n <= kSinglePassElements;
  const int64_t block = singlePass ? nextPowerOfTwo(n) : kSinglePassElements;
  ModuleBuilder mb;
  {
    // One program per row; threads enough that each holds two 16-byte vectors (more
    // threads per row measured slower on the H200 at N = 4096), at most 512.
    KernelOptions options;
    options.numWarps = int(std::clamp<int64_t>(block * (bitWidth(spec.dtype) / 8) / 32, spec.warpSize, 512) /
                           spec.warpSize);
    auto k = mb.kernel(spec.withAdd ? "rmsnorm2d_fwd_with_add" : "rmsnorm2d_fwd", options);
    k.param("BLOCK", block);
    const DType dt = spec.dtype;
    const Reach reach = spec.within2GiB ? Reach::within2GiB : Reach::unbounded;
    const int64_t elementsPer16Bytes = 16 / (bitWidth(dt) / 8);
    auto rows = [&](const std::string &name) {
      Tensor t = k.tensor(name, dt, {Dim::dynamic(), Dim::fixed(n)}, /*contiguous=*/false, reach);
      if (spec.vectorAligned) {
        k.assumeAligned(t.pointer, 16);
        k.assumeDivisible(t.stride(0), elementsPer16Bytes);
      }
      return t;
    };
    Tensor out = rows("out"), input = rows("input");
    std::optional<Tensor> residualIn, residualOut;
    if (spec.withAdd) {
      residualIn = rows("residual_in");
      residualOut = rows("residual_out");
    }
    Tensor weight = k.tensor("weight", dt, {Dim::fixed(n)}, /*contiguous=*/true, reach);
    if (spec.vectorAligned)
      k.assumeAligned(weight.pointer, 16);
    Value epsilon = k.scalar("epsilon", DType::f32);
    Value row = programId(0);
    Value columns = arange(0, block);

    // The row's values in f32; the fused add writes its rounded sum and continues with it.
    auto readRow = [&](Value c, bool writeResidual) {
      if (!spec.withAdd)
        return load(input, {row, c}).to(DType::f32);
      if (!writeResidual)
        return load(*residualOut, {row, c}).to(DType::f32);
      Value sum = (load(input, {row, c}).to(DType::f32) + load(*residualIn, {row, c}).to(DType::f32)).to(dt);
      store(*residualOut, {row, c}, sum);
      return sum.to(DType::f32);
    };
    auto normalize = [&](Value c, Value x, Value invRms) {
      Value y = x * invRms;
      if (spec.modelSensitive)
        y = y.to(dt).to(DType::f32);
      Value w = load(weight, {c}).to(DType::f32);
      if (spec.gemma)
        w = w + 1.0;
      store(out, {row, c}, (y * w).to(dt));
    };
    auto invRmsOf = [&](Value squares) {
      return rsqrt(squares.sum(0) / double(n) + epsilon);
    };
    if (singlePass) {
      Value x = readRow(columns, true);
      normalize(columns, x, invRmsOf(x * x));
    } else {
      Value squares = forRange(0, n, block, {zeros({block}, DType::f32)},
                               [&](Value c0, const std::vector<Value> &acc) {
                                 Value x = readRow(c0 + columns, true);
                                 return std::vector<Value>{acc[0] + x * x};
                               })[0];
      Value invRms = invRmsOf(squares);
      forRange(0, n, block, {}, [&](Value c0, const std::vector<Value> &) {
        Value c = c0 + columns;
        normalize(c, readRow(c, false), invRms);
        return std::vector<Value>{};
      });
    }
  }
  return mb.finish(error);
}

namespace {

bool launchRmsNorm(OpRuntime &rt, const char *op, RmsNormSpec spec, const TensorRef &out,
                   const TensorRef &input, const TensorRef *residualIn, const TensorRef *residualOut,
                   const TensorRef &weight, float epsilon, std::string *error) {
  int64_t m = input.shape[0];
  if (m == 0)
    return true;
  spec.warpSize = rt.warpSize();
  spec.vectorAligned = residualIn ? vectorAligned({&out, &input, &weight, residualIn, residualOut})
                                  : vectorAligned({&out, &input, &weight});
  spec.within2GiB = residualIn ? within2GiB({&out, &input, &weight, residualIn, residualOut})
                               : within2GiB({&out, &input, &weight});
  NamedArgs args;
  args.tensor("out", out).tensor("input", input).tensor("weight", weight).f32("epsilon", epsilon);
  if (residualIn)
    args.tensor("residual_in", *residualIn).tensor("residual_out", *residualOut);
  std::string launchError;
  if (!rt.launch(spec.key(), [&](std::string *e) { return buildRmsNorm(spec, e); },
                 spec.withAdd ? "rmsnorm2d_fwd_with_add" : "rmsnorm2d_fwd", {uint32_t(m), 1, 1}, args, &launchError))
    return opError(error, op, launchError);
  return true;
}

} // namespace

bool wavetile::ops::rmsnorm2d_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                  const TensorRef &weight, float epsilon, int useModelSensitiveRmsnorm,
                                  std::string *error, bool gemmaNorm) {
  const char *op = "rmsnorm2d_fwd";
  ArgumentChecker check(op, error);
  if (!check.rows("input", input, kNormDTypes) || !check.sameAs("out", out, input) ||
      !check.vector("weight", weight, input.dtype, input.shape[1]) || !check.flag("use_model_sensitive_rmsnorm",
                                                                                   useModelSensitiveRmsnorm))
    return false;
  RmsNormSpec spec{input.dtype, input.shape[1], false, gemmaNorm, useModelSensitiveRmsnorm == 1};
  return launchRmsNorm(rt, op, spec, out, input, nullptr, nullptr, weight, epsilon, error);
}

bool wavetile::ops::rmsnorm2d_fwd_with_add(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                           const TensorRef &residualIn, const TensorRef &residualOut,
                                           const TensorRef &weight, float epsilon, bool gemmaNorm,
                                           int useModelSensitiveRmsnorm, std::string *error) {
  const char *op = "rmsnorm2d_fwd_with_add";
  ArgumentChecker check(op, error);
  if (!check.rows("input", input, kNormDTypes) || !check.sameAs("out", out, input) ||
      !check.sameAs("residual_in", residualIn, input) || !check.sameAs("residual_out", residualOut, input) ||
      !check.vector("weight", weight, input.dtype, input.shape[1]) ||
      !check.flag("use_model_sensitive_rmsnorm", useModelSensitiveRmsnorm))
    return false;
  RmsNormSpec spec{input.dtype, input.shape[1], true, gemmaNorm, useModelSensitiveRmsnorm == 1};
  return launchRmsNorm(rt, op, spec, out, input, &residualIn, &residualOut, weight, epsilon, error);
}
