//===- Activations.h - gated activations with AITER's names ------*- C++ -*-===//
//
// `input` [M, 2d] holds the gate in columns [0, d) and the up projection in [d, 2d);
// out [M, d] = act(gate) * up, computed in f32 and rounded once to the dtype:
//   silu_and_mul       act(g) = g * sigmoid(g)
//   gelu_and_mul       act(g) = g/2 * (1 + erf(g / sqrt 2))                (exact GELU)
//   gelu_tanh_and_mul  act(g) = g/2 * (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3)))
//                             (computed as g * sigmoid(2 sqrt(2/pi) (...)), which does not cancel)
//   swiglu             g' = min(g, limit), u' = clamp(up, -limit, limit):
//                      out = g' * sigmoid(alpha g') * (u' + 1)       (AITER's MoE Swiglu)
// f32, f16 or bf16; out has the input's dtype; any d from 1 to 2^30.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_OPS_ACTIVATIONS_H
#define WAVETILE_OPS_ACTIVATIONS_H

#include "wavetile/ops/OpRuntime.h"

namespace wavetile::ops {

bool silu_and_mul(OpRuntime &rt, const TensorRef &out, const TensorRef &input, std::string *error);
bool gelu_and_mul(OpRuntime &rt, const TensorRef &out, const TensorRef &input, std::string *error);
bool gelu_tanh_and_mul(OpRuntime &rt, const TensorRef &out, const TensorRef &input, std::string *error);
bool swiglu(OpRuntime &rt, const TensorRef &out, const TensorRef &input, float limit, float alpha,
            std::string *error);

enum class GatedActivation { Silu, Gelu, GeluTanh, Swiglu };

struct GatedActivationSpec {
  GatedActivation kind;
  DType dtype;
  int64_t width;          // d: the output's columns
  int64_t warpSize = 32;  // of the target: blocks give each thread 16 bytes
  float limit = 7.0f, alpha = 1.702f; // Swiglu only
  bool vectorAligned = false;         // 16-byte aligned pointers and rows
  bool within2GiB = true;             // both tensors within 2 GiB (buffer resources on AMD)
  std::string key() const;
};
std::unique_ptr<Module> buildGatedActivation(const GatedActivationSpec &spec, std::string *error);

/// "silu_and_mul", ... (the op and kernel name).
const char *gatedActivationName(GatedActivation kind);

} // namespace wavetile::ops

#endif
