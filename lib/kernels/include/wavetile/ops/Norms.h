//===- Norms.h - RMSNorm and LayerNorm with AITER's names -------*- C++ -*-===//
//
// rows of `input` [M, N] (last stride 1) are normalized in f32:
//   out = x * rsqrt(mean(x^2) + epsilon) * w, in the input's dtype,
// with w = weight, or weight + 1 for the Gemma variant. useModelSensitiveRmsnorm = 1 is the
// T5 variant: x * rsqrt(...) is rounded to the input dtype before the weight multiply. The
// fused-add forms first write residualOut = input + residualIn (rounded to the dtype) and
// normalize that. Inputs are f32, f16 or bf16; weight and outputs have the input's dtype;
// any N from 1 to 2^31 - 1.
//
// LayerNorm: out = (x - mean) * rsqrt(var + epsilon) * weight + bias, with the biased
// variance mean((x - mean)^2), both in f32 (two passes over registers: no cancellation);
// the fused-add form as for RMSNorm. weight and bias have the input's dtype.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_OPS_NORMS_H
#define WAVETILE_OPS_NORMS_H

#include "wavetile/ops/Quant.h"

#include <optional>

namespace wavetile::ops {

bool rmsnorm2d_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &weight,
                   float epsilon, int useModelSensitiveRmsnorm, std::string *error, bool gemmaNorm = false);

bool rmsnorm2d_fwd_with_add(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &residualIn,
                            const TensorRef &residualOut, const TensorRef &weight, float epsilon, bool gemmaNorm,
                            int useModelSensitiveRmsnorm, std::string *error);

/// `xBias` (AITER's x_bias, a vector of N in the input dtype) is added to the input first:
/// x = round(input + x_bias) (+ residual_in, rounded once as residual_out).
bool layernorm2d_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &weight,
                     const TensorRef &bias, float epsilon, std::string *error, const TensorRef *xBias = nullptr);

bool layernorm2d_fwd_with_add(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                              const TensorRef &residualIn, const TensorRef &residualOut, const TensorRef &weight,
                              const TensorRef &bias, float epsilon, std::string *error,
                              const TensorRef *xBias = nullptr);

/// RMSNorm whose output is quantized (AITER's rmsnorm2d_fwd_with_dynamicquant): the
/// normalized rows, rounded to the input dtype, are quantized as the quantization ops do:
/// groupSize 0 per token into `out` [M, N] of f8E4M3FN / f8E4M3FNUZ / i8 with f32 `yscale`
/// [M]; 64 or 128 per group with f32 `yscale` [M, N / group]; 32 with an f4E2M1FN `out`
/// [M, N/2] MXFP4 with f8E8M0FNU `yscale` (shuffled when `shuffleScale`; `round` as for
/// dynamic_per_group_scaled_quant), or per group of 32 into fp8/int8. The result equals
/// rmsnorm2d_fwd followed by the quantization op, bit for bit.
bool rmsnorm2d_fwd_with_dynamicquant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                     const TensorRef &yscale, const TensorRef &weight, float epsilon,
                                     int useModelSensitiveRmsnorm, int64_t groupSize, bool shuffleScale,
                                     std::string *error, MxScaleRound round = MxScaleRound::RoundUp);
/// The same after the fused add of rmsnorm2d_fwd_with_add (residualOut = input + residualIn).
bool rmsnorm2d_fwd_with_add_dynamicquant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                         const TensorRef &residualIn, const TensorRef &residualOut,
                                         const TensorRef &yscale, const TensorRef &weight, float epsilon,
                                         int useModelSensitiveRmsnorm, int64_t groupSize, bool shuffleScale,
                                         std::string *error, MxScaleRound round = MxScaleRound::RoundUp);

enum class NormKind { RMS, Layer };

/// The generated kernel, for tools and tests: what one specialization compiles.
struct NormSpec {
  NormKind kind;
  DType dtype;
  int64_t hidden;
  bool withAdd = false, gemma = false, modelSensitive = false; // the last two: RMSNorm only
  /// Every pointer is 16-byte aligned and every row stride a multiple of 16 bytes (the usual
  /// case): vector accesses need no run-time alignment checks or element-wise fallbacks.
  bool vectorAligned = false;
  bool within2GiB = true; // every tensor within 2 GiB of its start (buffer resources on AMD)
  int64_t warpSize = 32;  // of the target: blocks give each thread 16-byte vectors
  bool sequentialReductions = false; // the host: LayerNorm corrects its first mean
  std::optional<RowQuant> quant;      // the output quantized (RMSNorm)
  bool xBias = false;                 // LayerNorm: x_bias added to the input first
  /// Launched over many rows (kManyNormRows or more): each thread holds 64 bytes of its row
  /// instead of 32, fewer instructions per element where the issue rate, not the latency
  /// of one row, bounds the kernel.
  bool manyRows = false;
  /// An MXFP4-quantizing norm of bf16 keeps its (rounded) output in bf16 for the codes, two
  /// elements an instruction: NVIDIA targets, which have bf16 pair arithmetic. (Per-token
  /// fp8/int8 gains nothing: its quotient is taken in f32.)
  bool bf16Pairs = false;
  /// Every tensor row-major and one program per row: rows are implicit (the grid bounds them)
  /// and strides constants, so the kernel takes pointers and epsilon only, in one 64-byte
  /// line of constant memory.
  bool packed = false;
  /// Sets what depends on the target: warp size, reductions, `bf16Pairs` (after `quant`,
  /// whose scheme the output's dtype has decided).
  void setTarget(std::string_view target);
  /// The op and kernel name ("rmsnorm2d_fwd_with_add", ...).
  std::string name() const;
  std::string key() const;
};
std::unique_ptr<Module> buildNorm(const NormSpec &spec, std::string *error);
/// Rows from which a launch uses the NormSpec::manyRows kernel (except plain LayerNorm rows of
/// a power of two up to 4096 elements, which keep 32 bytes a thread).
constexpr int64_t kManyNormRows = 4096;

} // namespace wavetile::ops

#endif
