//===- Quant.cpp - quantization kernels and their dispatch ----------------===//

#include "wavetile/ops/Quant.h"

#include "Checks.h"
#include "RowKernels.h"

using namespace wavetile;
using namespace wavetile::dsl;
using namespace wavetile::ops;

namespace {
/// Rows up to this many elements are quantized from registers (at most 512 threads, 32
/// elements each, as the norms); longer rows are read twice in chunks of half of it (amax,
/// then the output).
constexpr int64_t kRowElements = 16384;
} // namespace

double wavetile::ops::quantMax(DType dtype) {
  switch (dtype) {
  case DType::f8E4M3FN:
    return 448.0;
  case DType::f8E4M3FNUZ:
    return 240.0;
  case DType::i8:
    return 127.0;
  default:
    return 0.0;
  }
}

std::string QuantSpec::name() const {
  switch (mode) {
  case QuantMode::PerToken:
    return "dynamic_per_token_scaled_quant";
  case QuantMode::PerGroup:
    return "dynamic_per_group_scaled_quant";
  case QuantMode::StaticPerTensor:
    return "static_per_tensor_quant";
  }
  return "?";
}

std::string QuantSpec::key() const {
  return name() + "/" + dtypeName(input) + "->" + dtypeName(output) + "/n" + std::to_string(hidden) + "/g" +
         std::to_string(group) + "/w" + std::to_string(warpSize) + (vectorAligned ? "/a16" : "") +
         (within2GiB ? "" : "/far");
}

std::unique_ptr<Module> wavetile::ops::buildQuant(const QuantSpec &spec, std::string *error) {
  const int64_t n = spec.hidden;
  const bool singlePass = n <= kRowElements;
  int64_t block = powerOfTwoAtLeast(std::min(n, singlePass ? kRowElements : kRowElements / 2));
  const int64_t group = spec.mode == QuantMode::PerGroup ? spec.group : 0;
  if (group)
    block = std::max(block, group);
  const double qmax = quantMax(spec.output);
  ModuleBuilder mb;
  {
    KernelOptions options; // one program per row
    options.numWarps = rowWarps(block, spec.input, spec.warpSize);
    auto k = mb.kernel(spec.name(), options);
    k.param("BLOCK", block);
    const Reach reach = spec.within2GiB ? Reach::within2GiB : Reach::unbounded;
    Tensor out = k.tensor("out", spec.output, {Dim::dynamic(), Dim::fixed(n)}, /*contiguous=*/false, reach);
    Tensor input = k.tensor("input", spec.input, {Dim::dynamic(), Dim::fixed(n)}, /*contiguous=*/false, reach);
    if (spec.vectorAligned) {
      k.assumeAligned(out.pointer, 16);
      k.assumeAligned(input.pointer, 16);
      k.assumeDivisible(input.stride(0), 16 / (bitWidth(spec.input) / 8));
      k.assumeDivisible(out.stride(0), 16);
    }
    std::optional<Tensor> scales;
    if (spec.mode == QuantMode::PerToken)
      scales = k.tensor("scales", DType::f32, {Dim::dynamic()}, /*contiguous=*/true, reach);
    else if (spec.mode == QuantMode::PerGroup)
      scales = k.tensor("scales", DType::f32, {Dim::dynamic(), Dim::fixed(n / group)}, /*contiguous=*/false, reach);
    else
      scales = k.tensor("scale", DType::f32, {Dim::fixed(1)}, /*contiguous=*/true, reach);
    Value row = programId(0);
    Value columns = arange(0, block);

    auto scaleOf = [&](Value amax) { return where(amax > 0.0, amax / qmax, 1.0); };
    auto quantize = [&](Value x, Value scale) {
      Value y = x / scale;
      if (spec.output != DType::i8)
        return y.to(spec.output, /*saturate=*/true);
      // Round half to even, then clamp (out-of-range f32 -> i8 conversions are undefined).
      Value r = floor(y + 0.5);
      Value halfway = (r - y) == 0.5;
      Value odd = (r - 2.0 * floor(r * 0.5)) == 1.0;
      r = where(halfway & odd, r - 1.0, r);
      return minimum(maximum(r, -128.0), 127.0).to(DType::i8);
    };
    auto read = [&](Value c) { return load(input, {row, c}).to(DType::f32); };

    if (spec.mode == QuantMode::StaticPerTensor) {
      Value scale = load(*scales, {arange(0, 1)}).sum(0);
      forRange(0, n, block, {}, [&](Value c0, const std::vector<Value> &) {
        Value c = c0 + columns;
        store(out, {row, c}, quantize(read(c), scale));
        return std::vector<Value>{};
      });
    } else if (group) {
      // Groups are whole inside each block (block is a multiple of the group).
      const int64_t groups = block / group;
      Value groupIndex = arange(0, groups);
      forRange(0, n, block, {}, [&](Value c0, const std::vector<Value> &) {
        Value c = c0 + columns;
        Value x = read(c);
        Value amax = abs(x).reshape({groups, group}).max(1);
        Value scale = scaleOf(amax);
        store(*scales, {row, c0 / group + groupIndex}, scale);
        Value perElement = scale.expand(1).broadcastTo({groups, group}).reshape({block});
        store(out, {row, c}, quantize(x, perElement));
        return std::vector<Value>{};
      });
    } else if (singlePass) {
      Value x = read(columns);
      Value scale = scaleOf(abs(x).max(0));
      store(*scales, {row + arange(0, 1)}, full({1}, scale, DType::f32));
      store(out, {row, columns}, quantize(x, scale));
    } else {
      Value amax = forRange(0, n, block, {zeros({block}, DType::f32)},
                            [&](Value c0, const std::vector<Value> &acc) {
                              return std::vector<Value>{maximum(acc[0], abs(read(c0 + columns)))};
                            })[0]
                       .max(0);
      Value scale = scaleOf(amax);
      store(*scales, {row + arange(0, 1)}, full({1}, scale, DType::f32));
      forRange(0, n, block, {}, [&](Value c0, const std::vector<Value> &) {
        Value c = c0 + columns;
        store(out, {row, c}, quantize(read(c), scale));
        return std::vector<Value>{};
      });
    }
  }
  return mb.finish(error);
}

namespace {

bool launchQuant(OpRuntime &rt, QuantSpec spec, const TensorRef &out, const TensorRef &input,
                 const TensorRef &scales, std::string *error) {
  std::string op = spec.name();
  ArgumentChecker check(op, error);
  if (!check.rows("input", input, kNormDTypes))
    return false;
  if (quantMax(out.dtype) == 0)
    return opError(error, op, std::string("'out' has dtype ") + dsl::dtypeName(out.dtype) +
                                  "; expected f8E4M3FN, f8E4M3FNUZ or i8");
  if (!check.shaped("out", out, out.dtype, input.shape))
    return false;
  int64_t m = input.shape[0], n = input.shape[1];
  if (spec.mode == QuantMode::PerGroup) {
    if (spec.group != 32 && spec.group != 64 && spec.group != 128)
      return opError(error, op, "group_size must be 32, 64 or 128, got " + std::to_string(spec.group));
    if (n % spec.group)
      return opError(error, op, "the hidden size " + std::to_string(n) + " is not a multiple of group_size " +
                                    std::to_string(spec.group));
    if (!check.shaped("scales", scales, DType::f32, {m, n / spec.group}))
      return false;
  } else if (spec.mode == QuantMode::PerToken) {
    TensorRef flat = scales;
    if (flat.rank() == 2 && flat.shape[1] == 1)
      flat = {scales.data, scales.dtype, {scales.shape[0]}, {scales.strides[0]}};
    if (!check.vector("scales", flat, DType::f32, m))
      return false;
  } else if (!check.vector("scale", scales, DType::f32, 1)) {
    return false;
  }
  if (m == 0)
    return true;
  spec.input = input.dtype;
  spec.output = out.dtype;
  spec.hidden = n;
  spec.warpSize = rt.warpSize();
  spec.vectorAligned = vectorAligned({&out, &input});
  spec.within2GiB = within2GiB({&out, &input, &scales});
  NamedArgs args;
  args.tensor("out", out).tensor("input", input);
  if (spec.mode == QuantMode::PerToken)
    args.tensor("scales", {scales.data, DType::f32, {m}, {1}});
  else
    args.tensor(spec.mode == QuantMode::PerGroup ? "scales" : "scale", scales);
  std::string launchError;
  if (!rt.launch(spec.key(), [&](std::string *e) { return buildQuant(spec, e); }, op, {uint32_t(m), 1, 1}, args,
                 &launchError))
    return opError(error, op, launchError);
  return true;
}

} // namespace

bool wavetile::ops::dynamic_per_token_scaled_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                                   const TensorRef &scales, std::string *error) {
  return launchQuant(rt, {QuantMode::PerToken}, out, input, scales, error);
}

bool wavetile::ops::dynamic_per_group_scaled_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                                   const TensorRef &scales, int64_t groupSize, std::string *error) {
  QuantSpec spec{QuantMode::PerGroup};
  spec.group = groupSize;
  return launchQuant(rt, spec, out, input, scales, error);
}

bool wavetile::ops::static_per_tensor_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                            const TensorRef &scale, std::string *error) {
  return launchQuant(rt, {QuantMode::StaticPerTensor}, out, input, scale, error);
}
