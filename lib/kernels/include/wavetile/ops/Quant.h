//===- Quant.h - dynamic and static quantization with AITER's names -*- C++ -*-===//
//
// `input` [M, N] (f32, f16 or bf16, unit stride along rows) becomes `out` [M, N] of fp8
// (f8E4M3FN: max 448, or f8E4M3FNUZ: max 240, as the out tensor's dtype says) or int8
// (max 127), with f32 scales such that input ≈ out * scale:
//   dynamic_per_token_scaled_quant   scales [M] (or [M, 1]): scale = amax(row) / max
//   dynamic_per_group_scaled_quant   scales [M, N / group] (group 32, 64 or 128 dividing N):
//                                    scale = amax(group) / max
//   static_per_tensor_quant          scale [1] given: out = quantize(x / scale)
// A zero amax gives scale 1 (AITER's rule), so all-zero rows quantize to zeros. Quantizing
// is x / scale in f32, then fp8 round-to-nearest-even with saturation, or int8
// round-half-to-even clamped to [-128, 127].
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_OPS_QUANT_H
#define WAVETILE_OPS_QUANT_H

#include "wavetile/ops/OpRuntime.h"

namespace wavetile::ops {

bool dynamic_per_token_scaled_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                    const TensorRef &scales, std::string *error);
bool dynamic_per_group_scaled_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                    const TensorRef &scales, int64_t groupSize, std::string *error);
bool static_per_tensor_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &scale,
                             std::string *error);

enum class QuantMode { PerToken, PerGroup, StaticPerTensor };

struct QuantSpec {
  QuantMode mode;
  DType input, output;
  int64_t hidden, group = 0; // group: PerGroup only
  int64_t warpSize = 32;
  bool vectorAligned = false, within2GiB = true;
  std::string name() const;
  std::string key() const;
};
std::unique_ptr<Module> buildQuant(const QuantSpec &spec, std::string *error);

/// The largest finite value of a quantized dtype (448, 240, 127); 0 for other dtypes.
double quantMax(DType dtype);

} // namespace wavetile::ops

#endif
