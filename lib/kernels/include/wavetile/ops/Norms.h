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

#include "wavetile/ops/OpRuntime.h"

namespace wavetile::ops {

bool rmsnorm2d_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &weight,
                   float epsilon, int useModelSensitiveRmsnorm, std::string *error, bool gemmaNorm = false);

bool rmsnorm2d_fwd_with_add(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &residualIn,
                            const TensorRef &residualOut, const TensorRef &weight, float epsilon, bool gemmaNorm,
                            int useModelSensitiveRmsnorm, std::string *error);

bool layernorm2d_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &weight,
                     const TensorRef &bias, float epsilon, std::string *error);

bool layernorm2d_fwd_with_add(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                              const TensorRef &residualIn, const TensorRef &residualOut, const TensorRef &weight,
                              const TensorRef &bias, float epsilon, std::string *error);

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
  /// The op and kernel name ("rmsnorm2d_fwd_with_add", ...).
  std::string name() const;
  std::string key() const;
};
std::unique_ptr<Module> buildNorm(const NormSpec &spec, std::string *error);

} // namespace wavetile::ops

#endif
