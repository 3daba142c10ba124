//===- Norms.cpp - RMSNorm and LayerNorm kernels and their dispatch -------===//

#include "wavetile/ops/Norms.h"

#include "Checks.h"
#include "RowKernels.h"
#include "RowQuant.h"

#include <bit>
#include <functional>
#include <optional>

using namespace wavetile;
using namespace wavetile::dsl;
using namespace wavetile::ops;

namespace {

/// Rows up to this many elements are read once and kept in registers (at most 512 threads,
/// 32 elements each); longer rows are walked in chunks, once per statistic and once for the
/// output (the later passes mostly hit L2).
constexpr int64_t kSinglePassElements = 16384;

} // namespace

std::string NormSpec::name() const {
  return std::string(kind == NormKind::RMS ? "rmsnorm2d_fwd" : "layernorm2d_fwd") + (withAdd ? "_with_add" : "") +
         (quant ? "_dynamicquant" : "");
}

void NormSpec::setTarget(std::string_view target) {
  warpSize = OpRuntime::warpSizeOf(target);
  sequentialReductions = target == "host";
  if (quant)
    quant->refinedReciprocal = OpRuntime::refinesReciprocalEstimate(target);
  bf16Pairs = quant && quant->packedFp4() && dtype == DType::bf16 && OpRuntime::hasBf16PairArithmetic(target);
}

std::string NormSpec::key() const {
  return name() + "/" + dtypeName(dtype) + "/n" + std::to_string(hidden) + (gemma ? "/gemma" : "") +
         (modelSensitive ? "/t5" : "") + "/w" + std::to_string(warpSize) + (vectorAligned ? "/a16" : "") +
         (within2GiB ? "" : "/far") + (sequentialReductions ? "/seq" : "") + (quant ? "/" + quant->key() : "") +
         (xBias ? "/x_bias" : "") + (manyRows ? "/rows=many" : "") + (bf16Pairs ? "/bf16x2" : "") +
         (packed ? "/packed" : "");
}

std::unique_ptr<Module> wavetile::ops::buildNorm(const NormSpec &spec, std::string *error) {
  const int64_t n = spec.hidden;
  const std::optional<RowQuant> &quant = spec.quant;
  const bool singlePass = n <= kSinglePassElements;
  // Chunks of long rows are half a single pass: their accumulators stay in registers.
  const int64_t block =
      std::max(singlePass ? powerOfTwoAtLeast(n) : kSinglePassElements / 2, quant ? quant->group : int64_t(0));
  const bool layer = spec.kind == NormKind::Layer;
  ModuleBuilder mb;
  {
    KernelOptions options; // one program per row
    const int64_t bytesPerThread = spec.manyRows ? 64 : 32;
    options.numWarps = rowWarps(block, spec.dtype, spec.warpSize, bytesPerThread);
    const int64_t threads = int64_t(options.numWarps) * spec.warpSize;
    // Threads hold more of the row where the 512-thread cap binds (N = 16384 in 16 bits).
    const bool capped = block * (bitWidth(spec.dtype) / 8) > bytesPerThread * threads;
    // The fused add quantizing to fp8 or int8 keeps its residual's sum in f32 where a thread
    // holds 32 or more of the row's elements. Narrowed to bf16 pair adds there, on an H100, per
    // token took 2-18% more time (16384 columns) and per group of 128 up to 10% more (4096 rows of
    // 4096), but 0.5-3.5% less per token with 16 elements a thread. MXFP4, which rounds in bf16
    // pairs anyway, was 0-4% faster narrowed.
    options.narrowRoundedSums =
        !(spec.withAdd && quant && !quant->packedFp4() && block / threads >= 32);
    auto k = mb.kernel(spec.name(), options);
    k.param("BLOCK", block);
    const DType dt = spec.dtype;
    const Reach reach = spec.within2GiB ? Reach::within2GiB : Reach::unbounded;
    const int64_t elementsPer16Bytes = 16 / (bitWidth(dt) / 8);
    auto rows = [&](const std::string &name) {
      const Dim rowsDim = spec.packed ? Dim::implicit() : Dim::dynamic();
      Tensor t = k.tensor(name, dt, {rowsDim, Dim::fixed(n)}, spec.packed, reach);
      if (spec.vectorAligned) {
        k.assumeAligned(t.pointer, 16);
        if (!spec.packed)
          k.assumeDivisible(t.stride(0), elementsPer16Bytes);
      }
      return t;
    };
    auto vector = [&](const std::string &name) {
      Tensor t = k.tensor(name, dt, {Dim::fixed(n)}, /*contiguous=*/true, reach);
      if (spec.vectorAligned)
        k.assumeAligned(t.pointer, 16);
      return t;
    };
    // A quantizing norm writes the quantizer's outputs instead of `out` in the dtype.
    std::optional<RowQuantizer> quantizer;
    std::optional<Tensor> out;
    if (quant)
      quantizer.emplace(k, *quant, n, reach, spec.vectorAligned, spec.packed);
    else
      out = rows("out");
    Tensor input = rows("input");
    std::optional<Tensor> residualIn, residualOut, bias, xBias;
    if (spec.withAdd) {
      residualIn = rows("residual_in");
      residualOut = rows("residual_out");
    }
    Tensor weight = vector("weight");
    if (layer)
      bias = vector("bias");
    if (spec.xBias)
      xBias = vector("x_bias");
    Value epsilon = k.scalar("epsilon", DType::f32);
    Value row = programId(0);
    // MXFP4 in bf16 pairs over many rows reads a row held in registers as [groups, 32], as the
    // quantization op does: each group stays whole in a thread (64 bytes) from its load to its
    // scale. Chunks of long rows stay 1-D (accumulated over the chunks, their sums took 30%
    // more instructions grouped), and so do few rows, whose sums keep plain RMSNorm's order.
    const bool wholeGroups = spec.bf16Pairs && spec.manyRows && singlePass;
    Value columns = wholeGroups ? groupedColumns(block / quant->group, quant->group) : arange(0, block);
    // A row's sum over all its axes, and its sum of squares (each square fused into the
    // running sum: one rounding and one instruction fewer an element).
    auto sumAll = [](Value v) { return v.shape().size() == 2 ? v.sum(1).sum(0) : v.sum(0); };
    auto sumOfSquares = [](Value v) {
      Value inner = sumOfProducts(v, v, int(v.shape().size()) - 1);
      return v.shape().size() == 2 ? inner.sum(0) : inner;
    };

    // The row's values in f32; the fused add writes its rounded sum and continues with it.
    // x_bias (LayerNorm) is added first; sums are rounded to the dtype, as the two-op form.
    auto readRow = [&](Value c, bool writeResidual) {
      if (spec.withAdd && !writeResidual)
        return load(*residualOut, {row, c}).to(DType::f32);
      Value x = load(input, {row, c}).to(DType::f32);
      if (xBias)
        x = x + load(*xBias, {c}).to(DType::f32);
      if (spec.withAdd)
        x = x + load(*residualIn, {row, c}).to(DType::f32);
      if (!xBias && !spec.withAdd)
        return x;
      Value rounded = x.to(dt);
      if (spec.withAdd)
        store(*residualOut, {row, c}, rounded);
      return rounded.to(DType::f32);
    };
    // The weight (and bias) at columns c, as stored.
    struct Affine {
      Value weight;
      std::optional<Value> bias;
    };
    auto affineAt = [&](Value c) {
      return Affine{load(weight, {c}), bias ? std::optional(load(*bias, {c})) : std::nullopt};
    };
    // (x - mean) * scale * w (+ b) rounded to the dtype, in f32: RMSNorm has no mean.
    auto normalized = [&](const Affine &a, Value x, std::optional<Value> mean, Value scale) {
      Value y = (mean ? x - *mean : x) * scale;
      if (spec.modelSensitive)
        y = y.to(dt).to(DType::f32);
      Value w = a.weight.to(DType::f32);
      if (spec.gemma)
        w = w + 1.0;
      // One rounding for the weight and bias: more accurate, and an instruction less.
      y = a.bias ? fma(y, w, a.bias->to(DType::f32)) : y * w;
      return y.to(dt).to(spec.bf16Pairs ? dt : DType::f32);
    };
    // Writes the normalized chunk at c0: in the dtype, or quantized (per token with the
    // row's `tokenScale`).
    auto emit = [&](Value c0, Value y, std::optional<ProgramScale> tokenScale) {
      if (quantizer)
        quantizer->storeChunk(row, c0, columns, y, tokenScale);
      else
        store(*out, {row, c0 + columns}, y.to(dt));
    };
    // The whole row in registers: per-token quantization takes its amax first. The weights
    // are read with the row, so their latency overlaps the row's (one DRAM round trip fewer:
    // -0.1 to -0.5 us per call at M = 1 on the H200), except with a bias or a quantized
    // output by the kernel for many rows or where threads hold more than their share: there
    // the registers held across the reductions cost more occupancy than that gains
    // (LayerNorm N=16384 lost 35% at M = 32768; 112 instead of 58 registers at few rows).
    std::optional<Affine> rowAffine;
    auto normalize = [&](Value x, std::optional<Value> mean, Value scale) {
      Value y = normalized(rowAffine ? *rowAffine : affineAt(columns), x, mean, scale);
      std::optional<ProgramScale> tokenScale;
      if (quantizer && quantizer->needsRowScale())
        tokenScale = quantizer->rowScale(row, abs(y).max(0));
      emit(constant(0, DType::i32), y, tokenScale);
    };
    // RMSNorm: scale = rsqrt(mean(x^2) + eps). LayerNorm: a first mean m0, then the
    // deviations d = x - m0 of the columns inside the row (padding lanes read 0, so their d
    // is not 0 and must not count). Where reductions run sequentially (the host) and for
    // long rows (chunked sums), the corrected two-pass formulas mean = m0 + sum(d)/n,
    // var = (sum(d^2) - sum(d)^2/n)/n remove the first mean's rounding error; a GPU's tree
    // reduction of a row in registers has little, and a third reduction costs time.
    auto deviation = [&](Value c, Value x, const std::optional<Value> &m0) {
      return where(c < n, x - *m0, 0.0);
    };
    auto statistics = [&](Value sumD, Value sumD2) {
      Value mean = sumD / double(n);
      return std::make_pair(mean, rsqrt((sumD2 / double(n) - mean * mean) + epsilon));
    };
    if (singlePass) {
      Value x = readRow(columns, true);
      if ((!spec.manyRows && !capped) || (!layer && !quantizer))
        rowAffine = affineAt(columns);
      if (!layer) {
        normalize(x, std::nullopt, rsqrt(sumOfSquares(x) / double(n) + epsilon));
      } else {
        std::optional<Value> m0 = sumAll(x) / double(n);
        Value d = deviation(columns, x, m0);
        if (spec.sequentialReductions) {
          auto [shift, scale] = statistics(sumAll(d), sumOfSquares(d));
          normalize(x, *m0 + shift, scale);
        } else {
          normalize(x, m0, rsqrt(sumOfSquares(d) / double(n) + epsilon));
        }
      }
    } else {
      // Long rows: for LayerNorm the first mean, then the sums, then the output.
      std::optional<Value> m0;
      if (layer)
        m0 = forRange(0, n, block, {zeros({block}, DType::f32)},
                      [&](Value c0, const std::vector<Value> &acc) {
                        return std::vector<Value>{acc[0] + readRow(c0 + columns, true)};
                      })[0]
                 .sum(0) /
             double(n);
      // RMSNorm sums x^2; LayerNorm sums d^2 and d.
      std::vector<Value> init{zeros({block}, DType::f32)};
      if (layer)
        init.push_back(zeros({block}, DType::f32));
      auto sums = forRange(0, n, block, init, [&](Value c0, const std::vector<Value> &acc) {
        Value c = c0 + columns;
        Value x = readRow(c, !layer);
        if (!layer)
          return std::vector<Value>{acc[0] + x * x};
        Value d = deviation(c, x, m0);
        return std::vector<Value>{acc[0] + d * d, acc[1] + d};
      });
      std::optional<Value> mean;
      Value scale;
      if (layer) {
        auto [shift, s] = statistics(sums[1].sum(0), sums[0].sum(0));
        mean = *m0 + shift;
        scale = s;
      } else {
        scale = rsqrt(sums[0].sum(0) / double(n) + epsilon);
      }
      // Per-token quantization walks the output once more for its amax.
      std::optional<ProgramScale> tokenScale;
      if (quantizer && quantizer->needsRowScale()) {
        Value amax = forRange(0, n, block, {zeros(columns.shape(), DType::f32)},
                              [&](Value c0, const std::vector<Value> &acc) {
                                Value c = c0 + columns;
                                Value y = normalized(affineAt(c), readRow(c, false), mean, scale);
                                return std::vector<Value>{maximum(acc[0], abs(y))};
                              })[0]
                         .max(0);
        tokenScale = quantizer->rowScale(row, amax);
      }
      forRange(0, n, block, {}, [&](Value c0, const std::vector<Value> &) {
        Value c = c0 + columns;
        emit(c0, normalized(affineAt(c), readRow(c, false), mean, scale), tokenScale);
        return std::vector<Value>{};
      });
    }
    if (quantizer)
      quantizer->finishRow(row, block);
  }
  return mb.finish(error);
}

namespace {

/// Whether m rows take the kernel of 64 bytes a thread (NormSpec::manyRows) rather than 32.
/// Measured exceptions (an H100, 4096 rows against 4095 in one process; norms-notes, sessions
/// 38 and 40): plain LayerNorm rows of a power of two up to 4096 elements (the wider kernel
/// 1-10% slower at 4096 and 32768 rows, 25% faster at 5120), and the quantizing fused-add
/// RMSNorm up to 8192 (6-13% slower a row at 4096 rows, where 64 bytes a thread take it from 40
/// to 52-64 registers; measured per token, the other schemes keep the wider kernel).
bool takesManyRowKernel(const NormSpec &spec, int64_t m) {
  if (m < kManyNormRows)
    return false;
  if (spec.kind == NormKind::Layer && !spec.withAdd)
    return !(spec.hidden <= 4096 && std::has_single_bit(uint64_t(spec.hidden)));
  const bool perTokenWithAdd = spec.withAdd && spec.quant && spec.quant->scheme == QuantScheme::PerToken;
  return !(perTokenWithAdd && spec.hidden <= 8192);
}

bool launchNorm(OpRuntime &rt, NormSpec spec, const TensorRef &out, const TensorRef &input,
                const TensorRef *residualIn, const TensorRef *residualOut, const TensorRef &weight,
                const TensorRef *bias, float epsilon, std::string *error, const TensorRef *yscale = nullptr,
                const TensorRef *xBias = nullptr) {
  if (!ArgumentChecker(spec.name(), error).nonNegative("epsilon", epsilon))
    return false;
  int64_t m = input.shape[0];
  if (m == 0)
    return true;
  std::vector<const TensorRef *> tensors{&out, &input, &weight};
  for (const TensorRef *t : {residualIn, residualOut, bias, xBias})
    if (t)
      tensors.push_back(t);
  spec.setTarget(rt.target());
  spec.manyRows = takesManyRowKernel(spec, m);
  // Scales are written element by element: their alignment does not matter.
  spec.vectorAligned = vectorAligned(tensors);
  if (yscale)
    tensors.push_back(yscale);
  spec.within2GiB = within2GiB(tensors);
  NamedArgs args;
  args.tensor("input", input).tensor("weight", weight).f32("epsilon", epsilon);
  if (spec.quant)
    quantOutputArgs(args, *spec.quant, out, *yscale);
  else
    args.tensor("out", out);
  if (residualIn)
    args.tensor("residual_in", *residualIn).tensor("residual_out", *residualOut);
  if (bias)
    args.tensor("bias", *bias);
  if (xBias)
    args.tensor("x_bias", *xBias);
  spec.xBias = xBias != nullptr;
  std::string launchError;
  uint32_t programs = spec.quant ? quantRows(*spec.quant, m) : uint32_t(m);
  spec.packed = programs == m && contiguous(tensors);
  if (!rt.launch(spec.key(), [&](std::string *e) { return buildNorm(spec, e); }, spec.name(), {programs, 1, 1},
                 args, &launchError))
    return opError(error, spec.name(), launchError);
  return true;
}

/// The checks every norm makes: rows in, rows out like them (unless quantized), a weight
/// (and bias) vector, residuals like the input for the fused add.
bool checkNorm(const ArgumentChecker &check, const TensorRef &out, const TensorRef &input,
               const TensorRef *residualIn, const TensorRef *residualOut, const TensorRef &weight,
               const TensorRef *bias, bool quantized = false) {
  if (!check.rows("input", input, kNormDTypes) ||
      (!quantized && (!check.sameAs("out", out, input) || !check.written("out", out))))
    return false;
  if (residualIn &&
      (!check.sameAs("residual_in", *residualIn, input) || !check.sameAs("residual_out", *residualOut, input) ||
       !check.written("residual_out", *residualOut)))
    return false;
  return check.vector("weight", weight, input.dtype, input.shape[1]) &&
         (!bias || check.vector("bias", *bias, input.dtype, input.shape[1]));
}

} // namespace

bool wavetile::ops::rmsnorm2d_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                  const TensorRef &weight, float epsilon, int useModelSensitiveRmsnorm,
                                  std::string *error, bool gemmaNorm) {
  ArgumentChecker check("rmsnorm2d_fwd", error);
  if (!checkNorm(check, out, input, nullptr, nullptr, weight, nullptr) ||
      !check.flag("use_model_sensitive_rmsnorm", useModelSensitiveRmsnorm))
    return false;
  NormSpec spec{NormKind::RMS, input.dtype, input.shape[1], false, gemmaNorm, useModelSensitiveRmsnorm == 1};
  return launchNorm(rt, spec, out, input, nullptr, nullptr, weight, nullptr, epsilon, error);
}

bool wavetile::ops::rmsnorm2d_fwd_with_add(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                           const TensorRef &residualIn, const TensorRef &residualOut,
                                           const TensorRef &weight, float epsilon, bool gemmaNorm,
                                           int useModelSensitiveRmsnorm, std::string *error) {
  ArgumentChecker check("rmsnorm2d_fwd_with_add", error);
  if (!checkNorm(check, out, input, &residualIn, &residualOut, weight, nullptr) ||
      !check.flag("use_model_sensitive_rmsnorm", useModelSensitiveRmsnorm))
    return false;
  NormSpec spec{NormKind::RMS, input.dtype, input.shape[1], true, gemmaNorm, useModelSensitiveRmsnorm == 1};
  return launchNorm(rt, spec, out, input, &residualIn, &residualOut, weight, nullptr, epsilon, error);
}

bool wavetile::ops::layernorm2d_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                    const TensorRef &weight, const TensorRef &bias, float epsilon, std::string *error,
                                    const TensorRef *xBias) {
  ArgumentChecker check("layernorm2d_fwd", error);
  if (!checkNorm(check, out, input, nullptr, nullptr, weight, &bias) ||
      (xBias && !check.vector("x_bias", *xBias, input.dtype, input.shape[1])))
    return false;
  NormSpec spec{NormKind::Layer, input.dtype, input.shape[1]};
  return launchNorm(rt, spec, out, input, nullptr, nullptr, weight, &bias, epsilon, error, nullptr, xBias);
}

bool wavetile::ops::layernorm2d_fwd_with_add(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                             const TensorRef &residualIn, const TensorRef &residualOut,
                                             const TensorRef &weight, const TensorRef &bias, float epsilon,
                                             std::string *error, const TensorRef *xBias) {
  ArgumentChecker check("layernorm2d_fwd_with_add", error);
  if (!checkNorm(check, out, input, &residualIn, &residualOut, weight, &bias) ||
      (xBias && !check.vector("x_bias", *xBias, input.dtype, input.shape[1])))
    return false;
  NormSpec spec{NormKind::Layer, input.dtype, input.shape[1], true};
  return launchNorm(rt, spec, out, input, &residualIn, &residualOut, weight, &bias, epsilon, error, nullptr, xBias);
}

namespace {

bool launchQuantizingRmsNorm(const std::string &op, OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                             const TensorRef *residualIn, const TensorRef *residualOut, const TensorRef &yscale,
                             const TensorRef &weight, float epsilon, int useModelSensitiveRmsnorm, int64_t groupSize,
                             bool shuffleScale, MxScaleRound round, std::string *error) {
  ArgumentChecker check(op, error);
  if (!checkNorm(check, out, input, residualIn, residualOut, weight, nullptr, /*quantized=*/true) ||
      !check.flag("use_model_sensitive_rmsnorm", useModelSensitiveRmsnorm))
    return false;
  RowQuant quant{groupSize == 0 ? QuantScheme::PerToken : QuantScheme::PerGroup};
  quant.group = groupSize;
  quant.round = round;
  quant.shuffleScales = shuffleScale;
  if (groupSize != 0 && groupSize != 32 && groupSize != 64 && groupSize != 128)
    return opError(error, op, "group_size must be 0 (per token), 32, 64 or 128, got " + std::to_string(groupSize));
  if (shuffleScale && out.dtype != DType::f4E2M1FN)
    return opError(error, op, "shuffled scales are MXFP4's (an f4E2M1FN 'out' with group_size 32)");
  if (yscale.dtype == DType::f8E8M0FNU && out.dtype != DType::f4E2M1FN) // as AITER's norms
    return opError(error, op, "e8m0 'yscale' goes with MXFP4 (an f4E2M1FN 'out'); MXFP8 is "
                              "dynamic_per_group_scaled_quant's");
  if (!checkQuantOutputs(check, op, quant, out, input, yscale, error))
    return false;
  NormSpec spec{NormKind::RMS, input.dtype, input.shape[1], residualIn != nullptr, false,
                useModelSensitiveRmsnorm == 1};
  spec.quant = quant;
  return launchNorm(rt, spec, out, input, residualIn, residualOut, weight, nullptr, epsilon, error, &yscale);
}

} // namespace

bool wavetile::ops::rmsnorm2d_fwd_with_dynamicquant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                                    const TensorRef &yscale, const TensorRef &weight, float epsilon,
                                                    int useModelSensitiveRmsnorm, int64_t groupSize,
                                                    bool shuffleScale, std::string *error, MxScaleRound round) {
  return launchQuantizingRmsNorm("rmsnorm2d_fwd_with_dynamicquant", rt, out, input, nullptr, nullptr, yscale, weight,
                                 epsilon, useModelSensitiveRmsnorm, groupSize, shuffleScale, round, error);
}

bool wavetile::ops::rmsnorm2d_fwd_with_add_dynamicquant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                                        const TensorRef &residualIn, const TensorRef &residualOut,
                                                        const TensorRef &yscale, const TensorRef &weight,
                                                        float epsilon, int useModelSensitiveRmsnorm, int64_t groupSize,
                                                        bool shuffleScale, std::string *error, MxScaleRound round) {
  return launchQuantizingRmsNorm("rmsnorm2d_fwd_with_add_dynamicquant", rt, out, input, &residualIn, &residualOut,
                                 yscale, weight, epsilon, useModelSensitiveRmsnorm, groupSize, shuffleScale, round,
                                 error);
}
