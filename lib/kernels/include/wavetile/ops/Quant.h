//===- Quant.h - dynamic and static quantization with AITER's names -*- C++ -*-===//
//
// `input` [M, N] (f32, f16 or bf16, unit stride along rows) becomes `out` [M, N] of fp8
// (f8E4M3FN: max 448, or f8E4M3FNUZ: max 240, as the out tensor's dtype says) or int8
// (max 127), with f32 scales such that input ≈ out * scale:
//   dynamic_per_token_scaled_quant   scales [M] (or [M, 1]): scale = amax(row) / max
//   dynamic_per_group_scaled_quant   scales [M, N / group] (group 32, 64 or 128 dividing N):
//                                    scale = amax(group) / max; with shuffleScale (AITER's
//                                    shuffle of f32 scales) transposed in that block of
//                                    memory: (row m, group g) at g * M + m
//   dynamic_per_tensor_quant         scale [1] written: scale = amax(input) / max
//   static_per_tensor_quant          scale [1] given: out = quantize(x / scale)
// A zero scale becomes 1 (AITER's rule), so all-zero rows quantize to zeros. Quantizing
// is x / scale in f32, then fp8 round-to-nearest-even with saturation, or int8
// round-half-to-even clamped to [-128, 127].
//
// MXFP4 (dynamic_per_group_scaled_quant with an f4E2M1FN `out`, group 32): `out` [M, N/2]
// holds e2m1 codes two per byte, element 2i in the low nibble (torch.float4_e2m1fn_x2);
// `scales` (f8E8M0FNU, one byte 2^(byte - 127) per 32 elements) are [M, ceil(N/32)], or,
// shuffled, AITER's e8m0_shuffle layout of [roundup(M, 256), roundup(ceil(N/32), 8)] bytes
// with zeros in the padding of the first roundup(M, 32) rows. The byte of a group's amax is
// computed as AITER does for each MxScaleRound mode; the group is multiplied by the inverse
// scale (exact) and rounded to e2m1 to nearest even, saturating at ±6, the sign kept (so
// negative values that round to 0 give code 8; NaN elements give 7 or 15). Byte 0 divides
// by 2^-127, as AITER's e8m0_to_f32 decodes it; byte 255 (a NaN or infinite amax) multiplies
// by 0. N even.
//
// MXFP8 (dynamic_per_group_scaled_quant with an fp8 `out` and f8E8M0FNU `scales`; AITER's
// emit_e8m0_scale path): fp8 codes [M, N] with one e8m0 scale per group of 32, 64 or 128
// (dividing N), [M, N / group]; shuffled, group 32 takes the e8m0_shuffle layout above and
// groups of 64 and 128 are transposed as shuffled f32 scales are. The byte follows the same
// MxScaleRound formulas with the fp8 format's constants (largest value 448 or 240, largest
// power of two 256 or 128; Even rounds amax at its fourth mantissa bit); the group is
// multiplied by the inverse scale (exact) and rounded to fp8 to nearest even, saturating.
// Byte 255 gives NaN codes (x / NaN, as AITER's reference).
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_OPS_QUANT_H
#define WAVETILE_OPS_QUANT_H

#include "wavetile/ops/OpRuntime.h"

namespace wavetile::ops {

/// How an MX group's e8m0 scale is rounded (AITER's MxScaleRoundMode, same values), for MXFP4
/// (fp8: 448 or 240 for 6, 256 or 128 for 4, amax rounded at 1.0625):
///   RoundDown  floor_pow2(amax) / 4 (OCP)       RoundUp  ceil_pow2(amax / 6) (the default)
///   Even       round_pow2(amax at 1.75) / 4     Ceil     ceil_pow2(amax) / 4
enum class MxScaleRound { RoundDown = 0, RoundUp = 1, Even = 2, Ceil = 3 };

/// How many leading rows to quantize, read on the device (AITER's num_rows and
/// num_rows_factor): `count` is an int32 tensor of one element and the kernel quantizes rows
/// below count[0] * factor, so a CUDA graph captured over a padded batch quantizes the rows its
/// replay's count says. The rows after them, in `out` and `scales`, are left as they were.
/// Without `count`, every row.
struct RowCount {
  const TensorRef *count = nullptr;
  int64_t factor = 1;
};

bool dynamic_per_token_scaled_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                    const TensorRef &scales, std::string *error, const RowCount &rows = {});
bool dynamic_per_group_scaled_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                    const TensorRef &scales, int64_t groupSize, std::string *error,
                                    MxScaleRound round = MxScaleRound::RoundUp, bool shuffleScale = false,
                                    const RowCount &rows = {});
bool dynamic_per_tensor_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &scale,
                              std::string *error);
bool static_per_tensor_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &scale,
                             std::string *error);

/// The inverse: `out` [M, N] (f32, f16 or bf16) = input * scale, rounded once. `input` is
/// fp8 or int8 [M, N] with f32 `scales` of shape [1] (per tensor), [M] or [M, 1] (per
/// token) or [M, N / G] (per group of G = 32, 64, 128), or MXFP4 (f4E2M1FN [M, N/2] packed,
/// f8E8M0FNU scales [M, ceil(N/32)]), or MXFP8 (fp8 [M, N], f8E8M0FNU scales [M, N / G]). An
/// e8m0 byte 0 is 2^-127 and 255 NaN, as AITER decodes them.
bool dequant(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &scales,
             std::string *error);

enum class QuantScheme { PerToken, PerGroup, Mx, StaticPerTensor, DynamicPerTensor };

/// How rows are quantized: what a quantization op or a quantizing norm writes.
struct RowQuant {
  QuantScheme scheme = QuantScheme::PerToken;
  DType out = DType::f8E4M3FN; // f8E4M3FN, f8E4M3FNUZ or i8; Mx: f4E2M1FN (MXFP4) or fp8 (MXFP8)
  int64_t group = 0;           // PerGroup and MXFP8: 32, 64 or 128; MXFP4: 32
  MxScaleRound round = MxScaleRound::RoundUp;
  bool shuffleScales = false; // Mx and PerGroup
  /// A plain divisor's reciprocal is the hardware's estimate refined by one Newton step
  /// (OpRuntime::refinesReciprocalEstimate); otherwise a division.
  bool refinedReciprocal = false;
  std::string key() const;
  /// MXFP4: e2m1 codes packed two per byte.
  bool packedFp4() const { return scheme == QuantScheme::Mx && out == DType::f4E2M1FN; }
  /// Shuffled e8m0 scales of groups of 32: AITER's 32-row by 8-group tiles (other shuffled
  /// scales are transposed).
  bool tiledScales() const { return scheme == QuantScheme::Mx && shuffleScales && group == 32; }
};

struct QuantSpec {
  RowQuant quant;
  DType input;
  int64_t hidden;
  int64_t warpSize = 32;
  bool vectorAligned = false, within2GiB = true;
  /// Launched over fewer than kFewQuantRows rows: schemes quantizing chunks of a row give
  /// each program 1024 columns and each thread 16 bytes instead of 2048 and 32, so a short
  /// launch spreads over more multiprocessors with half the work per thread.
  bool fewRows = false;
  /// The kernel reads a row count ("num_rows", int32 [1]) and a factor ("num_rows_factor")
  /// and quantizes only rows below their product (RowCount). Per token and per group.
  bool rowCount = false;
  /// MXFP4 codes of bf16 input computed in bf16 pair arithmetic (two elements an instruction;
  /// exact, since the scaled input is itself a bf16 value): NVIDIA targets, which have it.
  bool bf16Pairs = false;
  /// Sets what depends on the target: the warp size and `bf16Pairs` (after `quant` and `input`).
  void setTarget(std::string_view target);
  std::string name() const;
  std::string key() const;
  /// Columns of a row each program quantizes (a grid [rows, chunks]); 0: programs take
  /// whole rows (per token, dynamic per tensor).
  int64_t columnsPerProgram() const;
};
/// Rows below which a chunked quantization launches the QuantSpec::fewRows kernel.
constexpr int64_t kFewQuantRows = 512;
/// The quantization kernel; DynamicPerTensor modules also hold "<name>_amax", which writes
/// the partial amaxes the quantization kernel reads.
std::unique_ptr<Module> buildQuant(const QuantSpec &spec, std::string *error);

/// The dequantization kernel: `quant` says the input's scheme and dtype (PerToken,
/// PerGroup, StaticPerTensor for a given scale, Mx), `input` the output dtype.
struct DequantSpec {
  RowQuant quant;
  DType output;
  int64_t hidden;
  int64_t warpSize = 32;
  bool vectorAligned = false, within2GiB = true;
  /// Each program decodes 1024 columns of a row (a grid [rows, chunks]), one 16-byte store
  /// a thread, instead of looping over the whole row: fp8 and int8 at every row count,
  /// MXFP4 (whose row programs stage codes in LDS) below kFewQuantRows rows. fp8/int8 on
  /// 64-lane waves take 2048 columns, 16 codes (one 128-bit load) a thread.
  bool chunkPrograms = false;
  std::string key() const;
  /// Columns each program decodes: the whole row (in chunks) unless `chunkPrograms`.
  int64_t columnsPerProgram() const;
};
std::unique_ptr<Module> buildDequant(const DequantSpec &spec, std::string *error);

/// The shape of shuffled MXFP4 scales for [rows, groups] scales: rows padded to 256,
/// groups to 8.
int64_t shuffledScaleRows(int64_t rows);
int64_t shuffledScaleColumns(int64_t groups);

/// The largest finite value of a quantized dtype (448, 240, 127, 6 for f4E2M1FN); 0 for
/// other dtypes.
double quantMax(DType dtype);

/// The fp8 dtype library ops default to on a target: f8E4M3FNUZ on gfx942 (what its
/// hardware converts), f8E4M3FN elsewhere.
DType defaultFp8(std::string_view target);

} // namespace wavetile::ops

#endif
