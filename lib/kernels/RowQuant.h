//===- RowQuant.h - quantizing rows held in registers -----------*- C++ -*-===//
//
// What the quantization ops and the norms that quantize their output share: the output
// tensors of each scheme, scales from an absolute maximum, and the conversion to fp8, int8,
// MXFP4 (e2m1 codes packed two per byte, one e8m0 scale per 32 elements) or MXFP8 (fp8 codes,
// one e8m0 scale per group); and MXFP4's decoding, which dequant and gemm_a4w4 share.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_LIB_KERNELS_ROWQUANT_H
#define WAVETILE_LIB_KERNELS_ROWQUANT_H

#include "wavetile/ops/Quant.h"

#include <optional>

namespace wavetile::ops {

/// Dynamic per-tensor quantization first reduces rows to this many partial amaxes (program p
/// takes rows p, p + kAmaxPartials, ...); every quantizing program then reads all of them.
constexpr int64_t kAmaxPartials = 512;

/// The one scale a program divides by (per token, per tensor). `plain` is set where the
/// scale and its reciprocal are normal numbers away from the range's ends, so the quotient
/// needs neither rescaling nor the division's slow paths.
struct ProgramScale {
  dsl::Value scale, plain;
};

/// Declares a quantizing kernel's outputs ("out", and "scales" or "scale") and writes them.
/// `x` values are f32 chunks [block] of one row, `columns` = arange(0, block). `packed`: the
/// outputs are row-major and the launch has one program per row, so rows are implicit
/// (Dim::implicit) and strides constants.
class RowQuantizer {
public:
  RowQuantizer(dsl::KernelBuilder &k, const RowQuant &quant, int64_t hidden, dsl::Reach reach, bool vectorAligned,
               bool packed = false);

  /// Chunks must hold whole groups (and MXFP4 chunks whole bytes).
  int64_t minimumBlock() const { return quant_.group ? quant_.group : 1; }
  /// Whether the output needs the whole row's amax first (per token).
  bool needsRowScale() const { return quant_.scheme == QuantScheme::PerToken; }
  /// The divisor of per-token quantization for a row's amax; stored for `row`.
  ProgramScale rowScale(dsl::Value row, dsl::Value amax);
  /// The divisor of per-tensor quantization: the given scale (static), or the one the
  /// per-tensor amax partials give (dynamic; program 0 stores it).
  ProgramScale tensorScale();
  /// Quantizes and stores chunk [c0, c0 + block) of `row`: per token and per tensor with
  /// `scale`, per group and MXFP4 with the chunk's group scales (which it stores too). `x` is
  /// f32, or bf16 values where the target has bf16 pair arithmetic (MXFP4 computes with them,
  /// the other schemes widen them).
  void storeChunk(dsl::Value row, dsl::Value c0, dsl::Value columns, dsl::Value x,
                  std::optional<ProgramScale> scale = std::nullopt);

  /// After the chunks of `row` (of `block` elements): zeros for the tiled e8m0 scale columns
  /// they do not reach.
  void finishRow(dsl::Value row, int64_t block);

private:
  dsl::Value scaleOfAmax(dsl::Value amax) const; // amax / the output's largest value; 1 for 0
  ProgramScale programScaleOfAmax(dsl::Value amax) const;
  void storeTiledScales(dsl::Value row, dsl::Value g, dsl::Value bytes);
  dsl::Value quantized(dsl::Value x, const ProgramScale &scale) const; // x / the scale, encoded
  dsl::Value encoded(dsl::Value y) const;                               // in the output dtype
  void storeMx(dsl::Value row, dsl::Value c0, dsl::Value x, int64_t block);
  void storeGroups(dsl::Value row, dsl::Value c0, dsl::Value columns, dsl::Value x, int64_t block);

  RowQuant quant_;
  int64_t hidden_;
  dsl::Tensor out_;
  std::optional<dsl::Tensor> scales_, partials_;
};

class ArgumentChecker;

/// Column offsets [groups, width] of consecutive groups of `width` columns: g * width + j.
dsl::Value groupedColumns(int64_t groups, int64_t width);

/// Checks `out` and `scales` (or `scale`) of `op` quantizing `input` [M, N] as `quant`
/// says; takes the output dtype from `out` (and MXFP4 from an f4E2M1FN `out`).
bool checkQuantOutputs(const ArgumentChecker &check, const std::string &op, RowQuant &quant, const TensorRef &out,
                       const TensorRef &input, const TensorRef &scales, std::string *error);
/// The launch arguments of outputs `checkQuantOutputs` accepted.
void quantOutputArgs(NamedArgs &args, const RowQuant &quant, const TensorRef &out, const TensorRef &scales);
/// Programs (rows) a quantizing kernel's grid needs for M rows: tiled e8m0 scales pad rows
/// to 32.
uint32_t quantRows(const RowQuant &quant, int64_t m);

/// A divisor prepared for exactQuotient, element-wise over d's shape: d times a power of two
/// (`factor`; none: 1) that keeps its reciprocal a normal number, and that reciprocal rounded:
/// a division, or where `refined` (OpRuntime::refinesReciprocalEstimate) the
/// estimate and one Newton step, without the division's range test and slow path.
struct Divisor {
  dsl::Value scaled, reciprocal, factor;
};
Divisor divisorOf(dsl::Value d, bool refined);

/// x / d correctly rounded, from d's correctly rounded reciprocal (cheaper than a division
/// per element on GPUs); `mayOverflow` when x / d can pass the f32 range.
dsl::Value exactQuotient(dsl::Value x, const Divisor &d, bool mayOverflow);

/// MX scales: the e8m0 byte (as i32) of a group's amax under `round`, for codes of `element`
/// (f4E2M1FN, f8E4M3FN or f8E4M3FNUZ).
dsl::Value e8m0ScaleOf(dsl::Value amax, MxScaleRound round, DType element);

/// MXFP4 decoding. The codes (i32, 0-15) of packed bytes [..., B] (i8): [..., 2B], element 2i
/// from byte i's low nibble.
dsl::Value e2m1Codes(dsl::Value bytes);
/// The f32 value of e2m1 codes (i32): sign, 2 exponent bits, 1 mantissa bit.
dsl::Value e2m1Value(dsl::Value code);
/// The bf16 values of the e2m1 codes packed in `bytes` [..., B] (i8): [..., 2B], element 2i
/// from byte i's low nibble, each byte decoded as one 32-bit word of two bf16 (the low nibble's
/// in the low half), which stays one register on targets with bf16 pair arithmetic.
dsl::Value e2m1Bf16Pairs(dsl::Value bytes);
/// Twice the value of the e2m1 codes packed in `bytes` [..., B] (i8), as the integers they
/// are (-12 to 12, i8): [..., B, 2], byte i's low nibble first.
dsl::Value e2m1Twice(dsl::Value bytes);
/// The f32 value of e8m0 scale bytes (i8): 2^(b - 127); byte 0 is the f32 denormal 2^-127,
/// byte 255 a NaN.
dsl::Value e8m0Value(dsl::Value bytes);

} // namespace wavetile::ops

#endif
