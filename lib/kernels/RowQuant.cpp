//===- RowQuant.cpp - quantizing rows held in registers -------------------===//

#include "RowQuant.h"

#include "Checks.h"

#include <bit>
#include <cmath>
#include <limits>

using namespace wavetile;
using namespace wavetile::dsl;
using namespace wavetile::ops;

namespace {
constexpr int64_t kMxGroup = 32;
constexpr int32_t kF32Mantissa = 0x7FFFFF;
/// Divisors whose magnitude lies in [kLeastPlainDivisor, kGreatestPlainDivisor] have a normal,
/// finite reciprocal; the rest are scaled by a power of two first (divisorOf).
constexpr double kLeastPlainDivisor = 0x1p-126, kGreatestPlainDivisor = 0x1p126;
/// Amaxes in [kLeastPlainAmax, kGreatestPlainAmax] give scales (amax / at most 448) and
/// reciprocals well inside the normal range: a program whose amax lies there divides without
/// rescaling or special cases. Every finite bf16 or f16 row not near either end is there.
constexpr double kLeastPlainAmax = 0x1p-100, kGreatestPlainAmax = 0x1p100;
} // namespace

int64_t wavetile::ops::shuffledScaleRows(int64_t rows) { return (rows + 255) / 256 * 256; }
int64_t wavetile::ops::shuffledScaleColumns(int64_t groups) { return (groups + 7) / 8 * 8; }

Value wavetile::ops::e8m0ScaleOf(Value amax, MxScaleRound round, DType element) {
  // The biased exponent of `v` (f32), one up when `ceil` and any mantissa bit is set (not
  // past 255, the NaN byte).
  auto exponentOf = [](Value v, bool ceil) {
    Value bits = v.bitcast(DType::i32);
    Value exponent = (bits >> 23) & 0xFF;
    if (!ceil)
      return exponent;
    return where((exponent < 0xFF) & ((bits & kF32Mantissa) != 0), exponent + 1, exponent);
  };
  // AITER's MxDtypeConfig: the element's largest value (RoundUp divides by it, as the f32
  // multiply by its rounded reciprocal AITER's kernels do), the exponent of its largest power
  // of two (the other modes divide by that), and where Even rounds amax's mantissa (half a
  // step of the element's mantissa: e2m1 rounds 1.75 up, fp8 1.0625).
  const bool fp4 = element == DType::f4E2M1FN;
  const int32_t largestPowerOfTwo = fp4 ? 2 : element == DType::f8E4M3FNUZ ? 7 : 8;
  const int32_t evenHalfStep = fp4 ? 0x200000 : 0x80000;
  const double byLargestPowerOfTwo = std::ldexp(1.0, -largestPowerOfTwo);
  switch (round) {
  case MxScaleRound::RoundUp:
    return exponentOf(amax * double(1.0f / float(quantMax(element))), true);
  case MxScaleRound::RoundDown:
    return exponentOf(amax * byLargestPowerOfTwo, false);
  case MxScaleRound::Ceil:
    return exponentOf(amax * byLargestPowerOfTwo, true);
  case MxScaleRound::Even: {
    // Round amax's mantissa at the half step, drop it, divide by the power of two. An exponent
    // of 255 (rounded past the largest float, infinity or NaN) stays 255 (infinity divided).
    Value rounded = ((amax.bitcast(DType::i32) + evenHalfStep) >> 23) & 0xFF;
    return where(rounded == 0xFF, rounded,
                 where(rounded >= largestPowerOfTwo, rounded - largestPowerOfTwo, 0));
  }
  }
  return amax;
}

namespace {
/// `v` [..., n] (integers) broadcast over a new last dimension of 2, shifted right by 0 and
/// by `shift`: each value's two parts, [..., n, 2].
Value twoParts(Value v, int32_t shift) {
  Shape shape = v.shape(), pairs = shape;
  pairs.push_back(2);
  Value shifts = (arange(0, 2) * shift).to(v.dtype());
  for (size_t d = 0; d < shape.size(); ++d)
    shifts = shifts.expand(0);
  return v.expand(int(shape.size())).broadcastTo(pairs) >> shifts.broadcastTo(pairs);
}

Shape doubledLast(Shape shape) {
  shape.back() *= 2;
  return shape;
}

/// bf16 pairs of 32-bit words: [..., n] (i32) -> [..., 2n], element 2i from the low half;
/// lowers to reinterpreting the registers.
Value bf16Pairs(Value words) {
  return twoParts(words, 16).to(DType::i16).bitcast(DType::bf16).reshape(doubledLast(words.shape()));
}
} // namespace

Value wavetile::ops::groupedColumns(int64_t groups, int64_t width) {
  return arange(0, int32_t(groups)).expand(1) * int32_t(width) + arange(0, int32_t(width)).expand(0);
}

Value wavetile::ops::e2m1Codes(Value bytes) {
  return (twoParts(bytes.to(DType::i32) & 0xFF, 4) & 15).reshape(doubledLast(bytes.shape()));
}

Value wavetile::ops::e2m1Value(Value code) {
  // The code's exponent and mantissa bits at f32's lowest exponent bit and highest mantissa
  // bit, its sign at f32's: 2^-126 times the value (for exponent 0 a denormal, kept by every
  // target's f32 multiply), scaled back exactly by one multiply.
  Value bits = ((code & 7) << 22) | ((code & 8) << 28);
  return bits.bitcast(DType::f32) * std::ldexp(1.0, 126);
}

Value wavetile::ops::e2m1Bf16Pairs(Value bytes) {
  // As e2m1Value, at bf16's lowest exponent bit and highest mantissa bit (bits 6-8 of each half)
  // and its sign bit, both nibbles at once: the low one's magnitude moves up 6 bits and its sign
  // 12, the high one's 18 and 24. The multiply by 2^126 is exact (bf16 arithmetic keeps
  // denormals).
  Value b = bytes.to(DType::i32) & 0xFF;
  Value word = (((b << 6) | (b << 18)) & 0x01C001C0) | (((b << 12) | (b << 24)) & int32_t(0x80008000));
  return bf16Pairs(word) * std::ldexp(1.0, 126);
}

Value wavetile::ops::e2m1Twice(Value bytes) {
  // Both nibbles of a byte at once into a 16-bit pair, taken apart as two bytes in registers
  // (the caller reshapes [..., B, 2] as it needs: one reshape keeps them in registers).
  static constexpr std::array<int8_t, 16> kTwice{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  return twoParts(lookupNibbles(bytes, kTwice), 8).to(DType::i8);
}

Value wavetile::ops::e8m0Value(Value bytes) {
  Value b = bytes.to(DType::i32) & 0xFF;
  return ((b << 23) | where(b == 0, 0x400000, where(b == 255, 1, 0))).bitcast(DType::f32);
}

namespace {
// e2m1 codes (sign in bit 3) of y rounded to nearest even, saturating at 6 (NaN too: the
// clamp ignores it, and code 7 is what the normal path gives 6).

/// From f32 bits: below 1 an add of 2^22 rounds to halves (the code is the count of them);
/// from 1 the exponent is rebiased and the mantissa rounded at its top bit, ties to even.
Value e2m1CodesOfF32(Value y) {
  Value a = minimumNumber(abs(y), 6.0);
  Value bits = a.bitcast(DType::i32);
  Value belowOne = ((a + 4194304.0).bitcast(DType::i32) - (149 << 23));
  Value normal = (bits + ((-126 << 23) + (1 << 21) - 1) + ((bits >> 22) & 1)) >> 22;
  return where(a < 1.0, belowOne, normal) | ((y.bitcast(DType::i32) >> 28) & 8);
}

/// Bytes of codes [n] (integers): element 2i in the low nibble of byte i.
Value nibblePairs(Value code) {
  if (!code.valid()) // an earlier error, which the module reports
    return code;
  Shape shape = code.shape(), pairs = shape;
  pairs.back() /= 2;
  pairs.push_back(2);
  Value shifts = (arange(0, 2) * 4).to(code.dtype());
  for (size_t d = 0; d + 1 < pairs.size(); ++d)
    shifts = shifts.expand(0);
  return (code.reshape(pairs) << shifts.broadcastTo(pairs)).sum(int(pairs.size()) - 1);
}

/// MXFP4 codes (i16) of bf16 y in bf16 pair arithmetic and 16-bit lane operations, two
/// elements an instruction. a + 64p (p = 1, 2 or 4 as a is below 2, below 4, or up to 6)
/// rounds once, to nearest even, onto e2m1's grid there (exact: a has 8 significant bits),
/// and its low bits count the steps from 64p (whose low nibble is 0). The codes below p's
/// range (2k = 0, 2 or 4) are the low nibble of min(2p + 126, p + 128). Checked against the
/// f32 form for every bf16 input and scale byte.
Value e2m1CodesOfBf16(Value y) {
  Value a = minimumNumber(abs(y), 6.0);
  Value power = maximum(a, 1.0).bitcast(DType::i16) & 0x7F80;
  Value p = power.bitcast(DType::bf16);
  Value steps = (a + (power + (6 << 7)).bitcast(DType::bf16)).bitcast(DType::i16);
  Value below = minimumNumber(fma(p, 2.0, 126.0), p + 128.0).bitcast(DType::i16);
  // The sign bit (bit 15, -32768 alone) as bit 3: a maximum with -8 keeps it (-8) or not (0).
  Value sign = maximum(y.bitcast(DType::i16) & -32768, -8);
  return ((steps + below) & 7) | (sign & 8);
}
} // namespace

RowQuantizer::RowQuantizer(KernelBuilder &k, const RowQuant &quant, int64_t hidden, Reach reach, bool aligned,
                           bool packed)
    : quant_(quant), hidden_(hidden) {
  const bool fp4 = quant.packedFp4();
  const Dim rows = packed ? Dim::implicit() : Dim::dynamic();
  // MXFP4 packs two codes per byte: the output is [M, N/2] bytes.
  out_ = k.tensor("out", fp4 ? DType::i8 : quant.out, {rows, Dim::fixed(fp4 ? hidden / 2 : hidden)}, packed, reach);
  if (aligned) {
    k.assumeAligned(out_.pointer, 16);
    if (!packed)
      k.assumeDivisible(out_.stride(0), 16);
  }
  switch (quant.scheme) {
  case QuantScheme::PerToken:
    scales_ = k.tensor("scales", DType::f32, {rows}, /*contiguous=*/true, reach);
    break;
  case QuantScheme::PerGroup:
  case QuantScheme::Mx: {
    const DType element = quant.scheme == QuantScheme::Mx ? DType::i8 : DType::f32;
    const Dim groups = Dim::fixed((hidden + quant.group - 1) / quant.group);
    if (quant.tiledScales()) // addressed by the tile formula
      scales_ = k.tensor("scales", element, {Dim::dynamic()}, /*contiguous=*/true, reach);
    else if (quant.shuffleScales) // AITER's transposing shuffle: [groups, M], M from the launch
      scales_ = k.tensor("scales", element, {groups, Dim::dynamic()}, false, reach);
    else
      scales_ = k.tensor("scales", element, {rows, groups}, packed, reach);
    break;
  }
  case QuantScheme::StaticPerTensor:
    scales_ = k.tensor("scale", DType::f32, {Dim::fixed(1)}, /*contiguous=*/true, reach);
    break;
  case QuantScheme::DynamicPerTensor:
    scales_ = k.tensor("scale", DType::f32, {Dim::fixed(1)}, /*contiguous=*/true, reach);
    partials_ = k.tensor("partials", DType::f32, {Dim::fixed(kAmaxPartials)}, /*contiguous=*/true, reach);
    break;
  }
}

Value RowQuantizer::scaleOfAmax(Value amax) const {
  // AITER's rule: a zero scale becomes 1, so all-zero rows quantize to zeros; so do rows of
  // f32 subnormals whose amax / max underflows (their quotients by a zero scale would
  // saturate). NaN and infinity stay in the scale, as in AITER's reference (torch.amax
  // propagates NaN).
  Value scale = amax / quantMax(quant_.out);
  return where(scale == 0.0, 1.0, scale);
}

ProgramScale RowQuantizer::programScaleOfAmax(Value amax) const {
  // A plain amax divides by the largest code as the PTX compiler's IEEE division by a
  // constant does behind its operand check: exactQuotient by the rounded reciprocal, which
  // rounds correctly where nothing underflows or overflows. Testing the amax instead of the
  // quotient lets the test run beside the division, and one branch replaces the division's
  // check, the zero-scale rule and the reciprocal's range test on the way to the quotients.
  const double largest = quantMax(quant_.out);
  Value plain = (amax >= kLeastPlainAmax) & (amax <= kGreatestPlainAmax);
  Value scale = ifThenElse(
                    plain,
                    [&] {
                      Divisor byLargest{constant(largest, DType::f32), constant(1.0 / largest, DType::f32), {}};
                      return std::vector<Value>{exactQuotient(amax, byLargest, /*mayOverflow=*/false)};
                    },
                    [&] { return std::vector<Value>{scaleOfAmax(amax)}; })
                    .front();
  return {scale, plain};
}

ProgramScale RowQuantizer::rowScale(Value row, Value amax) {
  ProgramScale scale = programScaleOfAmax(amax);
  store(*scales_, {row + arange(0, 1)}, full({1}, scale.scale, DType::f32));
  return scale;
}

ProgramScale RowQuantizer::tensorScale() {
  Value index = arange(0, quant_.scheme == QuantScheme::DynamicPerTensor ? int32_t(kAmaxPartials) : 1);
  if (quant_.scheme == QuantScheme::StaticPerTensor) {
    Value scale = load(*scales_, {index}).sum(0);
    // The reciprocal's estimate and its Newton step need a normal reciprocal (below 2^126).
    return {scale, (scale >= kLeastPlainDivisor) & (scale < kGreatestPlainDivisor)};
  }
  ProgramScale scale = programScaleOfAmax(load(*partials_, {index}).max(0));
  Value first = programId(0) == 0;
  ifThen(first, [&] { store(*scales_, {arange(0, 1)}, full({1}, scale.scale, DType::f32)); });
  return scale;
}

namespace {
/// 1/d rounded: a division, or where `refined` (refinesReciprocalEstimate: correctly rounded
/// for normal d below 2^126) the estimate and one Newton step, without the division's range
/// test and slow path.
Value reciprocalOf(Value d, bool refined) {
  if (!refined)
    return 1.0 / d;
  Value estimate = approximateReciprocal(d);
  return fma(estimate, fma(-d, estimate, 1.0), estimate);
}
} // namespace

Divisor wavetile::ops::divisorOf(Value d, bool refined) {
  // Below 2^-126 d's reciprocal overflows (or is barely finite), past 2^126 it is subnormal
  // and inexact: there d and x are scaled by 2^64 or 2^-64, exactly, which leaves x / d as
  // it is (a subnormal scale is an amax / max of f32 subnormals; AITER divides by it).
  Value magnitude = abs(d);
  Value factor =
      where(magnitude < kLeastPlainDivisor, 0x1p64, where(magnitude > kGreatestPlainDivisor, 0x1p-64, 1.0));
  // An infinite d (an amax of infinity) takes finite x to ±0, as AITER's x / inf: as the
  // largest float its reciprocal is tiny and the remainder finite (with infinity it is NaN).
  const double largest = std::numeric_limits<float>::max();
  Value scaled = maximum(minimum(d * factor, largest), -largest);
  // scaled is normal and below 2^126, or the largest float (an infinite d), whose reciprocal
  // a refined estimate flushes to 0: finite x / inf is still ±0 (the remainder is x, times 0)
  // and inf / inf NaN.
  return {scaled, reciprocalOf(scaled, refined), factor};
}

Value wavetile::ops::exactQuotient(Value x, const Divisor &d, bool mayOverflow) {
  // Markstein: q = x * RN(1/d) is within an ulp; with the exact remainder e = x - q * d (one
  // fma) q + e * RN(1/d) rounds to x / d. The remainder is computed negated, q * d - x, and
  // subtracted: where it is zero it is +0 and -0 is added, which keeps q's sign when q is
  // ±0 (adding +0 would turn -0 into +0). Kept as q where q overflows (the remainder would
  // be NaN); results that underflow round to 0 downstream.
  if (d.factor.valid())
    x = x * d.factor;
  Value q = x * d.reciprocal;
  Value negatedRemainder = fma(q, d.scaled, -x);
  Value quotient = fma(-negatedRemainder, d.reciprocal, q);
  if (!mayOverflow)
    return quotient;
  return where(abs(q) > double(std::numeric_limits<float>::max()), q, quotient);
}

Value RowQuantizer::quantized(Value x, const ProgramScale &scale) const {
  // Only a given (static) scale can take x / scale past the f32 range.
  const bool mayOverflow = quant_.scheme == QuantScheme::StaticPerTensor;
  // Small launches are issue-bound after the row's reduction (quant-notes, sessions 37 and
  // 38): a plain scale takes its quotients from the reciprocal alone, every other one
  // rescales them (divisorOf).
  Value y = ifThenElse(
                scale.plain,
                [&] {
                  Value reciprocal = reciprocalOf(scale.scale, quant_.refinedReciprocal);
                  return std::vector<Value>{exactQuotient(x, {scale.scale, reciprocal, {}}, mayOverflow)};
                },
                [&] {
                  // A given scale may be 0, whose reciprocal must be the division's infinity.
                  return std::vector<Value>{
                      exactQuotient(x, divisorOf(scale.scale, /*refined=*/false), mayOverflow)};
                })
                .front();
  return encoded(y);
}

Value RowQuantizer::encoded(Value y) const {
  if (quant_.out != DType::i8)
    return y.to(quant_.out, /*saturate=*/true);
  // Round half to even, then clamp (out-of-range f32 -> i8 conversions are undefined).
  Value r = floor(y + 0.5);
  Value halfway = (r - y) == 0.5;
  Value odd = (r - 2.0 * floor(r * 0.5)) == 1.0;
  r = where(halfway & odd, r - 1.0, r);
  return minimum(maximum(r, -128.0), 127.0).to(DType::i8);
}

void RowQuantizer::storeChunk(Value row, Value c0, Value columns, Value x, std::optional<ProgramScale> scale) {
  int64_t block = 1;
  for (int64_t d : x.shape())
    block *= d;
  if (quant_.scheme == QuantScheme::Mx)
    return storeMx(row, c0, x, block);
  x = x.to(DType::f32);
  if (quant_.scheme == QuantScheme::PerGroup)
    return storeGroups(row, c0, columns, x, block);
  store(out_, {row, c0 + columns}, quantized(x, *scale));
}

void RowQuantizer::storeGroups(Value row, Value c0, Value columns, Value x, int64_t block) {
  const int64_t group = quant_.group, groups = block / group;
  Value amax = abs(x).reshape({groups, group}).max(1);
  Value scale = scaleOfAmax(amax);
  Value g = c0 / group + arange(0, int32_t(groups));
  store(*scales_, quant_.shuffleScales ? std::vector<Operand>{g, row} : std::vector<Operand>{row, g}, scale);
  auto perElement = [&](Value v) { return v.expand(1).broadcastTo({groups, group}).reshape({block}); };
  Divisor perGroup = divisorOf(scale, quant_.refinedReciprocal);
  Divisor divisor{perElement(perGroup.scaled), perElement(perGroup.reciprocal), perElement(perGroup.factor)};
  Value y = exactQuotient(x, divisor, /*mayOverflow=*/false);
  store(out_, {row, c0 + columns}, encoded(y));
}

void RowQuantizer::storeMx(Value row, Value c0, Value x, int64_t block) {
  const bool fp4 = quant_.packedFp4();
  const int64_t group = quant_.group, groups = block / group, perByte = fp4 ? 2 : 1;
  if (!fp4) // fp8 codes are converted from f32
    x = x.to(DType::f32);
  // x is [block] or already [groups, group].
  const bool grouped = x.shape().size() == 2;
  Value inGroups = grouped ? x : x.reshape({groups, group});
  // bf16's amax is exact in bf16, and widening it is too.
  Value exponent = e8m0ScaleOf(abs(inGroups).max(1).to(DType::f32), quant_.round, quant_.out);
  // x is divided by 2^(exponent - 127) by multiplying with its inverse, exact: a power of two
  // from 2^127 (byte 0 stands for 2^-127) down to 2^-126 (no rounding mode gives byte 254 for
  // a finite amax; bf16 has f32's exponent range). Byte 255 multiplies MXFP4 by 0 and MXFP8 by
  // NaN (AITER's x / NaN; e2m1 has no NaN).
  Value inverse = where(exponent == 255, fp4 ? 0.0 : std::numeric_limits<double>::quiet_NaN(),
                        ((254 - exponent) << 23).bitcast(DType::f32));
  Value perElement = inverse.to(x.dtype()).expand(1).broadcastTo({groups, group});
  Value y = x * (grouped ? perElement : perElement.reshape({block}));
  Value codes = !fp4                     ? encoded(y)
                : x.dtype() == DType::bf16 ? nibblePairs(e2m1CodesOfBf16(y)).to(DType::i8)
                                           : nibblePairs(e2m1CodesOfF32(y)).to(DType::i8);
  Value offsets = grouped ? groupedColumns(groups, group / perByte) : arange(0, int32_t(block / perByte));
  store(out_, {row, c0 / int32_t(perByte) + offsets}, codes);

  Value g = c0 / group + arange(0, int32_t(groups));
  Value byte = exponent.to(DType::i8);
  if (quant_.tiledScales())
    storeTiledScales(row, g, byte);
  else
    store(*scales_, quant_.shuffleScales ? std::vector<Operand>{g, row} : std::vector<Operand>{row, g}, byte);
}

void RowQuantizer::storeTiledScales(Value row, Value g, Value bytes) {
  // AITER's e8m0_shuffle: 32-row by 8-group tiles of 256 bytes. Rows past M and groups past
  // N/32 hold zeros (their amax is 0, or finishRow writes them).
  const int64_t paddedGroups = shuffledScaleColumns((hidden_ + kMxGroup - 1) / kMxGroup);
  Value index = (row / 32) * int32_t(paddedGroups * 32) + (g / 8) * 256 + (g % 4) * 64 + (row % 16) * 4 +
                ((g % 8) / 4) * 2 + (row % 32) / 16;
  store(scales_->pointer, index, bytes, g < int32_t(paddedGroups));
}

void RowQuantizer::finishRow(Value row, int64_t block) {
  if (!quant_.tiledScales())
    return;
  const int64_t covered = (hidden_ + block - 1) / block * block / kMxGroup;
  const int64_t padded = shuffledScaleColumns((hidden_ + kMxGroup - 1) / kMxGroup);
  if (covered >= padded)
    return;
  const int64_t count = int64_t(std::bit_ceil(uint64_t(padded - covered)));
  storeTiledScales(row, int32_t(covered) + arange(0, int32_t(count)), zeros({count}, DType::i8));
}

/// The [groups, M] view of transposed shuffled group scales (f32, or e8m0 of groups of 64 and
/// 128): AITER writes the scale of (row r, group g) at g * M + r of their [M, groups] buffer
/// (the K-block-major x_scale of blockscale GEMMs).
static TensorRef transposedScales(const TensorRef &scales) {
  TensorRef asLaidOut = scales;
  asLaidOut.strides = {1, scales.shape[0]};
  return transposed(asLaidOut);
}

/// Transposed shuffled scales: [M, groups] of `dtype`, one block of memory read row-major (as
/// AITER allocates it) or as the transpose of a [groups, M] buffer, which is the same memory.
static bool checkTransposedScales(const ArgumentChecker &check, const std::string &op, const TensorRef &scales,
                                  DType dtype, int64_t m, int64_t groups, std::string *error) {
  if (scales.dtype != dtype || scales.shape != std::vector<int64_t>{m, groups})
    return check.shaped("scales", scales, dtype, {m, groups});
  auto strideIs = [&](int dim, int64_t stride) { return scales.shape[dim] == 1 || scales.strides[dim] == stride; };
  const bool f32 = dtype == DType::f32;
  if (!(strideIs(0, groups) && strideIs(1, 1)) && !(strideIs(0, 1) && strideIs(1, m)))
    return opError(error, op, std::string("shuffled ") + (f32 ? "f32" : "e8m0") +
                                  " 'scales' must be one contiguous block of M x N/group_size " +
                                  (f32 ? "floats" : "bytes") + ", got strides " + shapeText(scales.strides));
  return check.written("scales", transposedScales(scales));
}

/// Group scales of `quant` over [m, n]: [m, groups] of `dtype`, or shuffled (tiled or
/// transposed).
static bool checkGroupScales(const ArgumentChecker &check, const std::string &op, const RowQuant &quant,
                             const TensorRef &scales, DType dtype, int64_t m, int64_t n, std::string *error) {
  const int64_t groups = (n + quant.group - 1) / quant.group;
  if (quant.tiledScales())
    return check.shaped("scales", scales, dtype, {shuffledScaleRows(m), shuffledScaleColumns(groups)}) &&
           (scales.strides[0] == scales.shape[1] || opError(error, op, "shuffled 'scales' must be contiguous")) &&
           check.written("scales", scales);
  if (quant.shuffleScales)
    return checkTransposedScales(check, op, scales, dtype, m, groups, error);
  return check.shaped("scales", scales, dtype, {m, groups}) && check.written("scales", scales);
}

/// MX outputs: e2m1 codes packed two per byte (MXFP4, groups of 32) or fp8 codes (MXFP8,
/// groups of 32, 64 or 128 dividing N), with e8m0 group scales.
static bool checkMxOutputs(const ArgumentChecker &check, const std::string &op, RowQuant &quant,
                           const TensorRef &out, int64_t m, int64_t n, const TensorRef &scales, std::string *error) {
  const bool fp4 = out.dtype == DType::f4E2M1FN;
  if (!fp4 && out.dtype != DType::f8E4M3FN && out.dtype != DType::f8E4M3FNUZ)
    return opError(error, op, std::string("'out' has dtype ") + dsl::dtypeName(out.dtype) +
                                  "; e8m0 scales go with f4E2M1FN (MXFP4, packed two per byte) or fp8 (MXFP8) "
                                  "codes");
  quant.out = out.dtype;
  if (fp4 && quant.group != 32)
    return opError(error, op, "MXFP4 quantizes groups of 32, got group_size " + std::to_string(quant.group));
  if (!fp4 && quant.group != 32 && quant.group != 64 && quant.group != 128)
    return opError(error, op, "MXFP8 quantizes groups of 32, 64 or 128, got group_size " + std::to_string(quant.group));
  if (fp4 && n % 2)
    return opError(error, op, "MXFP4 packs pairs of elements; the hidden size " + std::to_string(n) + " is odd");
  if (!fp4 && n % quant.group)
    return opError(error, op, "the hidden size " + std::to_string(n) + " is not a multiple of group_size " +
                                  std::to_string(quant.group));
  return check.shaped("out", out, out.dtype, {m, fp4 ? n / 2 : n}) && check.written("out", out) &&
         checkGroupScales(check, op, quant, scales, DType::f8E8M0FNU, m, n, error);
}

/// Checks `out` and `scales` (or `scale`) for `quant` over `input` [M, N]; fills in the
/// scheme's dtype from `out`, and MX from packed fp4 `out` or e8m0 `scales`.
bool wavetile::ops::checkQuantOutputs(const ArgumentChecker &check, const std::string &op, RowQuant &quant, const TensorRef &out,
                       const TensorRef &input, const TensorRef &scales, std::string *error) {
  int64_t m = input.shape[0], n = input.shape[1];
  if (quant.scheme == QuantScheme::PerGroup && (out.dtype == DType::f4E2M1FN || scales.dtype == DType::f8E8M0FNU))
    quant.scheme = QuantScheme::Mx;
  if (quant.scheme == QuantScheme::Mx)
    return checkMxOutputs(check, op, quant, out, m, n, scales, error);
  if (quant.shuffleScales && quant.scheme != QuantScheme::PerGroup)
    return opError(error, op, "shuffled scales are MXFP4's or per group's");
  if (quantMax(out.dtype) == 0 || out.dtype == DType::f4E2M1FN)
    return opError(error, op, std::string("'out' has dtype ") + dsl::dtypeName(out.dtype) +
                                  "; expected f8E4M3FN, f8E4M3FNUZ or i8");
  quant.out = out.dtype;
  if (!check.shaped("out", out, out.dtype, input.shape) || !check.written("out", out))
    return false;
  switch (quant.scheme) {
  case QuantScheme::PerGroup:
    if (quant.group != 32 && quant.group != 64 && quant.group != 128)
      return opError(error, op, "group_size must be 32, 64 or 128, got " + std::to_string(quant.group));
    if (n % quant.group)
      return opError(error, op, "the hidden size " + std::to_string(n) + " is not a multiple of group_size " +
                                    std::to_string(quant.group));
    return checkGroupScales(check, op, quant, scales, DType::f32, m, n, error);
  case QuantScheme::PerToken: {
    TensorRef flat = scales;
    if (flat.rank() == 2 && flat.shape[1] == 1) {
      flat.shape = {scales.shape[0]};
      flat.strides = {scales.strides[0]};
    }
    return check.vector("scales", flat, DType::f32, m) && check.written("scales", flat);
  }
  default: // a static scale is read, a dynamic one written
    return check.vector("scale", scales, DType::f32, 1) &&
           (quant.scheme == QuantScheme::StaticPerTensor || check.written("scale", scales));
  }
}

/// The launch arguments of the outputs `checkQuantOutputs` accepted.
void wavetile::ops::quantOutputArgs(NamedArgs &args, const RowQuant &quant, const TensorRef &out, const TensorRef &scales) {
  args.tensor("out", quant.packedFp4() ? TensorRef{out.data, DType::i8, out.shape, out.strides} : out);
  if (quant.scheme == QuantScheme::PerToken) {
    args.tensor("scales", {scales.data, DType::f32, {out.shape[0]}, {scales.strides[0]}});
    return;
  }
  // e8m0 scales are bytes to the kernel.
  TensorRef s = quant.scheme == QuantScheme::Mx ? TensorRef{scales.data, DType::i8, scales.shape, scales.strides}
                                                : scales;
  if (quant.tiledScales())
    s = {scales.data, DType::i8, {scales.numel()}, {1}};
  else if (quant.shuffleScales)
    s = transposedScales(s);
  args.tensor(quant.scheme == QuantScheme::PerGroup || quant.scheme == QuantScheme::Mx ? "scales" : "scale", s);
}

/// Rows a quantizing kernel's grid covers: tiled e8m0 scales pad rows to 32.
uint32_t wavetile::ops::quantRows(const RowQuant &quant, int64_t m) {
  return uint32_t(quant.tiledScales() ? (m + 31) / 32 * 32 : m);
}
