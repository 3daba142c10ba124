//===- Gemm.cpp - GEMM kernels and their dispatch -------------------------===//

#include "wavetile/ops/Gemm.h"

#include "Checks.h"
#include "RowQuant.h"

#include "wavetile/Atoms/AtomTable.h"

#include <algorithm>
#include <bit>
#include <charconv>

using namespace wavetile;
using namespace wavetile::dsl;
using namespace wavetile::ops;

std::string GemmConfig::key() const {
  return std::to_string(blockM) + "x" + std::to_string(blockN) + "x" + std::to_string(blockK) + "/s" +
         std::to_string(stages) + "/w" + std::to_string(warps) + "/k" + std::to_string(splitK) +
         (skinny ? "/skinny" : "");
}

std::string GemmConfig::problem() const {
  for (int64_t v : {blockM, blockN, blockK, warps})
    if (v < 1 || !std::has_single_bit(uint64_t(v)))
      return "tile sizes and warps must be powers of two, got " + key();
  if (skinny ? blockM > 16 || blockN * blockK > 16384 : blockM < 16 || blockN < 16 || blockK < 16)
    return skinny ? "skinny tiles hold at most 16 rows and 16384 products a row, got " + key()
                  : "tiles must be at least 16 in each dimension (matrix instructions), got " + key();
  if (stages < 1 || stages > 8 || splitK < 1 || splitK > 64)
    return "stages must be 1 to 8 and split-K 1 to 64, got " + key();
  if (warps > 16)
    return "at most 16 warps, got " + key();
  return {};
}

namespace {
/// Whether `target` has a matrix instruction that multiplies MXFP4 operands with their e8m0
/// block scales.
bool hasScaledMxMma(std::string_view target) {
  std::optional<atoms::Target> t = atoms::parseTarget(target);
  if (!t)
    return false;
  auto found = atoms::findAtoms(*t, atoms::ScalarKind::f4E2M1, atoms::ScalarKind::f4E2M1, atoms::ScalarKind::f32);
  return std::any_of(found.begin(), found.end(), [](const atoms::Atom *atom) { return atom->scaleType.has_value(); });
}
} // namespace

GemmConfig wavetile::ops::defaultGemmConfig(int64_t m, int64_t n, int64_t k, int64_t multiprocessors, DType input,
                                            std::string_view target, bool blockScaled) {
  GemmConfig c;
  const bool wave64 = OpRuntime::warpSizeOf(target) == 64;
  if (input == DType::f4E2M1FN && !hasScaledMxMma(target) && (m <= 16 || (!wave64 && m <= 64))) {
    // MXFP4 decoded in registers, as the H200's tuning chose (bench/gemm-notes.md v14, v22,
    // v23): skinny tiles (no matrix instruction to pad) for one row, and on NVIDIA, where they
    // sum exact integer products, for up to 4 rows: 8 columns in K steps of 2048 codes for 1
    // and 2 rows (32x512 under 2048 of K), 32 columns in 512-code steps split 4 ways for 3
    // and 4; elsewhere one row in 512-code steps split 16 ways. More rows take 3-stage rings
    // of 128-code steps: up to 16 rows 128 columns split 8 ways (64 on 64-lane waves, where
    // 128 spills SGPRs on gfx942), up to 32 rows 32x128 tiles and up to 64 rows 64x256 tiles
    // of 8 warps, split 4 ways (on gfx942 the first spills SGPRs and the second exceeds the
    // 64 KiB of LDS).
    const bool integerProducts = target.starts_with("sm_");
    if (integerProducts && m <= 2)
      c = k >= 2048 ? GemmConfig{m, 8, 2048, 1, 4, 1} : GemmConfig{m, 32, 512, 1, 4, 1};
    else if (integerProducts && m <= 4)
      c = GemmConfig{4, 32, 512, 1, 4, 4};
    else if (m == 1)
      c = GemmConfig{1, 32, 512, 1, 4, 16};
    else if (m <= 16)
      c = GemmConfig{16, wave64 ? 64 : 128, 128, 3, 4, 8};
    else
      c = m <= 32 ? GemmConfig{32, 128, 128, 3, 4, 4} : GemmConfig{64, 256, 128, 3, 8, 4};
    c.skinny = m == 1 || (integerProducts && m <= 4);
    while (c.splitK > 1 && k / c.splitK < c.blockK)
      c.splitK /= 2;
    return c;
  }
  // K split (at most `most` ways) until every multiprocessor has four programs, each split
  // keeping `kept` of K.
  auto splitOverMultiprocessors = [&](int64_t kept, int64_t most) {
    const int64_t tiles = ((m + c.blockM - 1) / c.blockM) * ((n + c.blockN - 1) / c.blockN);
    while (c.splitK < most && tiles * c.splitK < 4 * multiprocessors && k / (2 * c.splitK) >= kept)
      c.splitK *= 2;
  };
  // The target's own fp8 widens a pair an instruction: skinny tiles beat the shipped rings
  // at the five M = 1 shapes with K <= 8192 on an H200 and two H100s (3-15%); at K = 16384
  // and 28672 rings matched or won (bench/gemm-notes.md v30 measured).
  const bool skinnyFp8 = !blockScaled && input == defaultFp8(target) && k <= 8192;
  if (m == 1 && (input == DType::bf16 || input == DType::f16 || input == DType::i8 || skinnyFp8)) {
    // One row sums its products without a matrix instruction to pad to 16 rows: the H200's
    // tuning chose skinny tiles at every bf16 and int8 M = 1 shape. 8 columns in
    // 512-element K steps, splits of 2048 or more.
    c = GemmConfig{1, 8, 512, 1, 4, 1};
    c.skinny = true;
    splitOverMultiprocessors(2048, 16);
  } else if (m <= 64) {
    // Decode: W is the stream. Narrow M tiles and K split (each split keeps at least 256 of
    // K): the H200's tuned decode rows have 512 to 2560 programs. On NVIDIA a 3-stage ring of
    // 128-byte K steps split at most 8 ways, what the H200's tuning chose at every decode shape
    // since async copies lost their per-element masks (bench/gemm-notes.md v4, v25b: split 16
    // lost 20% at 16x4096x14336); elsewhere no ring, since the register-streamed loop is what
    // every target compiles cleanly (CDNA3 rings of small tiles spill SGPRs).
    const bool ring = target.starts_with("sm_");
    c.blockM = m <= 16 ? 16 : m <= 32 ? 32 : 64;
    c.blockN = 64;
    c.blockK = ring ? 128 * 8 / bitWidth(input) : 64;
    c.stages = ring ? 3 : 1;
    splitOverMultiprocessors(256, ring ? 8 : 16);
  }
  return c;
}

const std::vector<std::string> &wavetile::ops::gemmTuningKeys() {
  static const std::vector<std::string> keys = {"target", "cu_num", "M", "N", "K", "dtype", "out_dtype", "bias"};
  return keys;
}

TuningKey wavetile::ops::gemmTuningKey(const std::string &target, int64_t multiprocessors, int64_t m, int64_t n,
                                       int64_t k, DType input, DType output, bool bias) {
  return {target, std::to_string(multiprocessors), std::to_string(m), std::to_string(n), std::to_string(k),
          dtypeName(input), dtypeName(output), bias ? "1" : "0"};
}

std::optional<GemmConfig> wavetile::ops::gemmConfigOf(const TunedRow &row, std::string *error) {
  GemmConfig c;
  for (auto [column, field] : {std::pair{"block_m", &c.blockM}, std::pair{"block_n", &c.blockN},
                               std::pair{"block_k", &c.blockK}, std::pair{"stages", &c.stages},
                               std::pair{"warps", &c.warps}, std::pair{"split_k", &c.splitK}}) {
    auto it = row.find(column);
    const std::string text = it == row.end() ? std::string() : it->second;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *field);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
      *error = std::string("column '") + column + "' is '" + text + "', not an integer";
      return std::nullopt;
    }
  }
  if (auto it = row.find("skinny"); it != row.end() && !it->second.empty()) {
    if (it->second != "0" && it->second != "1") {
      *error = "column 'skinny' is '" + it->second + "', not 0 or 1";
      return std::nullopt;
    }
    c.skinny = it->second == "1";
  }
  if (std::string problem = c.problem(); !problem.empty()) {
    *error = problem;
    return std::nullopt;
  }
  return c;
}

std::string GemmSpec::key() const {
  return std::string("gemm/") + dtypeName(input) + "->" + dtypeName(output) + "/n" + std::to_string(n) + "/k" +
         std::to_string(k) + (bias ? "/bias" : "") +
         (scaled ? std::string("/scales_") + (xScalePerRow ? "token" : "tensor") + "_" +
                       (wScalePerColumn ? "channel" : "tensor")
                 : "") +
         (blockScaled ? (xScaleKBlockMajor ? "/blockscale_xs-kmajor" : "/blockscale") : "") +
         (mx ? (scaledMma     ? "/mxfp4"
                : bf16Pairs   ? "/mxfp4-bf16x2"
                : intProducts ? "/mxfp4-i8"
                              : "/mxfp4-bf16")
             : "") +
         (wPreshuffled ? "/bpreshuffle" : "") + "/" + config.key() + "/w" + std::to_string(warpSize) +
         (vectorAligned ? "/a16" : "") + (within2GiB ? "" : "/far");
}

std::string GemmSpec::problem() const {
  if (std::string problem = config.problem(); !problem.empty())
    return problem;
  if (config.skinny && !intProducts && config.blockM * config.blockN * config.blockK > 16384)
    return "skinny tiles hold at most 16384 products a step (rows x cols x K), got " + config.key();
  return {};
}

void wavetile::ops::fitGemmConfig(GemmSpec &spec, std::string_view target) {
  spec.warpSize = OpRuntime::warpSizeOf(target);
  spec.scaledMma = spec.mx && !spec.config.skinny && hasScaledMxMma(target);
  spec.bf16Pairs = spec.mx && !spec.config.skinny && !spec.scaledMma && OpRuntime::hasBf16PairArithmetic(target);
  spec.intProducts = spec.mx && spec.config.skinny && target.starts_with("sm_");
  if (spec.blockScaled) {
    // A K step is a scale block. Where that is longer than asked, the ring keeps the bytes
    // asked for (at least double-buffered): its scales' ring comes on top.
    if (spec.config.blockK < 128 && spec.config.stages > 2)
      spec.config.stages = std::max<int64_t>(2, spec.config.stages * spec.config.blockK / 128);
    spec.config.blockK = 128;
  }
  if (spec.mx) {
    // Whole bytes and scale groups; narrow tiles take K steps the 16x16x128 atom fits.
    const bool narrow = spec.config.blockM < 32 || spec.config.blockN < 32;
    spec.config.blockK = std::max<int64_t>(spec.config.blockK, narrow ? 128 : 64);
    if (spec.scaledMma)
      spec.config.stages = 1; // unpacked operands are not prefetched
  }
  // A wave without an MFMA block of its own would take the tile off the matrix cores
  // (tables tuned for 32-lane warps name 16x32 tiles with 4 warps).
  if (spec.warpSize == 64 && !spec.config.skinny)
    spec.config.warps =
        std::min(spec.config.warps, std::max<int64_t>(1, (spec.config.blockM / 16) * (spec.config.blockN / 16)));
}

std::unique_ptr<Module> wavetile::ops::buildGemm(const GemmSpec &spec, std::string *error) {
  const GemmConfig &c = spec.config;
  const Reach reach = spec.within2GiB ? Reach::within2GiB : Reach::unbounded;
  const bool split = c.splitK > 1;
  // int8 products accumulate exactly in i32; fp8 and 16-bit ones in f32.
  const DType accumulator = spec.input == DType::i8 ? DType::i32 : DType::f32;
  // Each split covers a whole number of K steps.
  const int64_t kSteps = (spec.k + c.blockK - 1) / c.blockK;
  const int64_t kPerSplit = (kSteps + c.splitK - 1) / c.splitK * c.blockK;
  // The epilogue's arguments (on the kernel that writes `out`): bias and scales.
  struct Epilogue {
    std::optional<Tensor> bias, xScale, wScale;
  };
  // Split K, the tensors used after the K loop are addressed where they are used: CDNA's
  // buffer views would hold four SGPRs each through the loop (gfx950 spilled 13 at 64x128).
  const Reach afterLoop = split ? Reach::unbounded : reach;
  auto declareEpilogue = [&](KernelBuilder &k) {
    Epilogue e;
    if (spec.bias)
      e.bias = k.tensor("bias", spec.output, {Dim::fixed(spec.n)}, true, afterLoop);
    if (spec.scaled) {
      e.xScale = k.tensor("x_scale", DType::f32, {Dim::dynamic()}, true, afterLoop);
      e.wScale = k.tensor("w_scale", DType::f32, {Dim::dynamic()}, true, afterLoop);
    }
    return e;
  };
  // y = acc · x_scale[row] · w_scale[col] (+ bias), in f32; `rows` [r, 1] and `cols` [1, c]
  // or [c] index the output.
  auto finish = [&](const Epilogue &e, Value y, Value rows, Value cols) {
    if (e.xScale)
      y = y * (spec.xScalePerRow ? load(*e.xScale, {rows}) : load(*e.xScale, {rows * 0}));
    if (e.wScale)
      y = y * (spec.wScalePerColumn ? load(*e.wScale, {cols}) : load(*e.wScale, {cols * 0}));
    if (e.bias)
      y = y + load(*e.bias, {cols}).to(DType::f32);
    return y.to(spec.output);
  };
  ModuleBuilder mb;
  {
    KernelOptions options;
    options.numWarps = int(c.warps);
    options.numStages = int(c.stages);
    auto k = mb.kernel("gemm", options);
    // MXFP4 operands are bytes of two codes: K/2 of them per row.
    const DType stored = spec.mx ? DType::i8 : spec.input;
    const int64_t storedK = spec.mx ? spec.k / 2 : spec.k;
    Tensor x = k.tensor("x", stored, {Dim::dynamic(), Dim::fixed(storedK)}, false, reach);
    Tensor w = k.tensor("w", stored, {Dim::fixed(spec.n), Dim::fixed(storedK)}, spec.wPreshuffled, reach);
    std::optional<Tensor> partials, arrivals;
    Tensor out = k.tensor("out", spec.output, {Dim::dynamic(), Dim::fixed(spec.n)}, false, afterLoop);
    Epilogue epilogue = declareEpilogue(k);
    if (split) {
      partials = k.tensor("partials", DType::f32, {Dim::dynamic()}, true, afterLoop);
      // One counter per output tile, zero before the launch and left zero after it.
      arrivals = k.tensor("arrivals", DType::i32, {Dim::dynamic()}, true, afterLoop);
    }
    if (spec.vectorAligned) {
      const int64_t perVector = 16 / (bitWidth(stored) / 8);
      k.assumeAligned(x.pointer, 16);
      k.assumeAligned(w.pointer, 16);
      k.assumeDivisible(x.stride(0), perVector);
      if (!spec.wPreshuffled) // else contiguous: its row stride is K, a multiple of 32
        k.assumeDivisible(w.stride(0), perVector);
      k.assumeAligned(out.pointer, 16);
      k.assumeDivisible(out.stride(0), 16 / (bitWidth(spec.output) / 8));
    }
    // The tile of this program. With several row blocks, programs in launch order (axis 0
    // fastest) take groups of kGroupColumns column blocks row block by row block, so the
    // programs resident at once share both operands in L2 (axis by axis, each wave would read
    // all of X for a column block or two of W). On the H200: 8192^3 1.6% (bf16) and 7% (fp8)
    // faster, 4096^3 within noise. Not on CDNA, unmeasured there, where the index arithmetic
    // costs SGPRs that the load-to-LDS copies already use up (gemm_a8w8 on gfx942 spilled 2).
    Value tileM = programId(0), tileN = programId(1);
    if (spec.warpSize == 32 && c.blockM >= 64 && !c.skinny) {
      constexpr int32_t kGroupColumns = 8;
      Value tilesM = numPrograms(0);
      const int32_t tilesN = int32_t((spec.n + c.blockN - 1) / c.blockN);
      Value linear = tileM + tileN * tilesM;
      Value perGroup = tilesM * kGroupColumns;
      Value firstColumn = linear / perGroup * kGroupColumns;
      Value groupColumns = minimum(tilesN - firstColumn, kGroupColumns);
      Value inGroup = linear % perGroup;
      tileM = inGroup / groupColumns;
      tileN = firstColumn + inGroup % groupColumns;
    }
    Value rows = tileM * int32_t(c.blockM) + arange(0, int32_t(c.blockM));
    Value cols = tileN * int32_t(c.blockN) + arange(0, int32_t(c.blockN));
    Value kBegin = programId(2) * int32_t(kPerSplit);
    Value kEnd = minimum(kBegin + int32_t(kPerSplit), int32_t(spec.k));
    Value kRange = arange(0, int32_t(c.blockK));
    // An operand tile [rows, K step], bounds-checked only where a tile can cross a bound.
    // X's rows always (M is known at launch); W's rows only when block N does not divide N
    // (the grid covers N exactly otherwise); K only when block K does not divide it (K steps,
    // and the splits' whole numbers of them, then end on K). Each check left out is a
    // predicate less per copy in the K loop.
    const bool kCovered = spec.k % c.blockK == 0, nCovered = spec.n % c.blockN == 0;
    auto loadOperand = [&](const Tensor &t, Value rowIndex, Value kIndex, bool rowsCovered, Value offsets) {
      Value mask;
      if (!rowsCovered)
        mask = rowIndex < t.size(0);
      if (!kCovered)
        mask = mask.valid() ? mask & (kIndex < t.size(1)) : kIndex < t.size(1);
      return mask.valid() ? load(t.pointer, offsets, mask, constant(0, t.pointer.element)) : load(t.pointer, offsets);
    };
    auto loadX = [&](Value m, Value kIndex) { return loadOperand(x, m, kIndex, false, offsetsOf(x, {m, kIndex})); };
    // W[n, k] for `n` [c, 1] and `k` [1, K]. Preshuffled (AITER's shuffle_weight, layout
    // (16, 16)): rows in blocks of 16, each block's K in tiles of two 16-byte halves, a half
    // being 16 rows of 16 bytes.
    auto loadW = [&](Value n, Value kIndex) {
      if (!spec.wPreshuffled)
        return loadOperand(w, n, kIndex, nCovered, offsetsOf(w, {n, kIndex}));
      // Shifts and masks, not divisions: the compiler proves 16-byte runs through them.
      const int32_t half = int32_t(16 / (bitWidth(stored) / 8)), halfBits = std::countr_zero(uint32_t(half));
      const int32_t tiles = int32_t(spec.k / (2 * half));
      Value tile = (n >> 4) * tiles + (kIndex >> (halfBits + 1));
      Value offsets = (((tile * 2 + ((kIndex >> halfBits) & 1)) * 16 + (n & 15)) * half) + (kIndex & (half - 1));
      return loadOperand(w, n, kIndex, nCovered, offsets);
    };
    std::optional<Tensor> xBlockScale, wBlockScale, xMxScale, wMxScale;
    if (spec.mx) {
      // The scaled instruction takes e8m0 operands; dequantizing decodes the bytes.
      const DType scale = spec.scaledMma ? DType::f8E8M0FNU : DType::i8;
      xMxScale = k.tensor("x_scale", scale, {Dim::dynamic(), Dim::fixed(spec.k / 32)}, false, reach);
      wMxScale = k.tensor("w_scale", scale, {Dim::fixed(spec.n), Dim::fixed(spec.k / 32)}, false, reach);
    }
    if (spec.blockScaled) {
      const int64_t kBlocks = (spec.k + 127) / 128;
      xBlockScale = spec.xScaleKBlockMajor
                        ? k.tensor("x_scale", DType::f32, {Dim::fixed(kBlocks), Dim::dynamic()}, false, reach)
                        : k.tensor("x_scale", DType::f32, {Dim::dynamic(), Dim::fixed(kBlocks)}, false, reach);
      wBlockScale = k.tensor("w_scale", DType::f32, {Dim::fixed((spec.n + 127) / 128), Dim::fixed(kBlocks)}, false,
                             reach);
    }
    // The integer skinny kernel carries each row's sums per column and scale group of a step
    // ([cols, groups], summed over the groups after the loop: no exchange between lanes in
    // it); the others one tile.
    const int64_t groupsPerStep = c.blockK / 32;
    std::vector<Value> initial;
    if (spec.intProducts)
      for (int64_t r = 0; r < c.blockM; ++r)
        initial.push_back(zeros({c.blockN, groupsPerStep}, DType::f32));
    else
      initial.push_back(zeros({c.blockM, c.blockN}, accumulator));
    auto rowIndex = [&](int64_t r) { return full({1, 1}, tileM * int32_t(c.blockM) + int32_t(r), DType::i32); };
    auto sums = forRange(kBegin, kEnd, int32_t(c.blockK), initial,
                         [&](Value k0, const std::vector<Value> &sum) {
                           if (spec.mx) {
                             // Bytes of the step; one scale per 32 of K.
                             Value bytes = (k0 / 2 + arange(0, int32_t(c.blockK / 2))).expand(0);
                             Value groups = (k0 / 32 + arange(0, int32_t(c.blockK / 32))).expand(0);
                             Value wBytes = load(w, {cols.expand(1), bytes});
                             Value ws = load(*wMxScale, {cols.expand(1), groups});
                             if (spec.intProducts) {
                               // Per scale group: the sum of (2x)(2w) in i32, exact, then times
                               // both scales and 1/4 (exact in f32 but at its range's ends). W
                               // is decoded once; each row of X on its own.
                               const Shape grouped{c.blockN, groupsPerStep, 32};
                               Value wi = e2m1Twice(wBytes).reshape(grouped).to(DType::i32);
                               Value wScale = e8m0Value(ws) * 0.25;
                               std::vector<Value> next;
                               for (int64_t r = 0; r < c.blockM; ++r) {
                                 Value row = rowIndex(r);
                                 Value xi = e2m1Twice(load(x, {row, bytes}))
                                                .reshape({1, groupsPerStep, 32})
                                                .broadcastTo(grouped)
                                                .to(DType::i32);
                                 Value xScale = e8m0Value(load(*xMxScale, {row, groups}));
                                 Value groupSums = (xi * wi).sum(2).to(DType::f32);
                                 next.push_back(sum[r] +
                                                groupSums * xScale.broadcastTo({c.blockN, groupsPerStep}) * wScale);
                               }
                               return next;
                             }
                             Value xBytes = load(x, {rows.expand(1), bytes});
                             Value xs = load(*xMxScale, {rows.expand(1), groups});
                             if (spec.scaledMma)
                               return std::vector<Value>{
                                   scaledDot(unpackFp4(xBytes), xs, unpackFp4(wBytes).trans(), ws.trans(), sum[0])};
                             // Each code times its group's scale, exact in f32 and in bf16 (two
                             // significant bits times a power of two): the scaled instruction's
                             // products. Matrix instructions take bf16, skinny tiles sum f32.
                             auto dequantized = [&](Value packed, Value scales, int64_t count) {
                               Value perElement = e8m0Value(scales)
                                                      .to(spec.bf16Pairs ? DType::bf16 : DType::f32)
                                                      .expand(2)
                                                      .broadcastTo({count, c.blockK / 32, 32})
                                                      .reshape({count, c.blockK});
                               Value values = spec.bf16Pairs ? e2m1Bf16Pairs(packed) * perElement
                                                             : e2m1Value(e2m1Codes(packed)) * perElement;
                               return c.skinny ? values : values.to(DType::bf16);
                             };
                             Value xValues = dequantized(xBytes, xs, c.blockM);
                             Value wValues = dequantized(wBytes, ws, c.blockN);
                             if (c.skinny) // [rows, 1, K] x [1, cols, K]: exact products summed in f32
                               return std::vector<Value>{sum[0] + (xValues.expand(1) * wValues.expand(0)).sum(2)};
                             return std::vector<Value>{dot(xValues, wValues.trans(), sum[0])};
                           }
                           Value ks = (k0 + kRange).expand(0);
                           if (c.skinny && spec.input == DType::i8) {
                             // [rows, cols, K] byte products summed in i32, exact (dp4a on NVIDIA:
                             // the bytes widen after the broadcast, where the sum sees them).
                             const Shape products{c.blockM, c.blockN, c.blockK};
                             Value xs = loadX(rows.expand(1), ks).expand(1).broadcastTo(products).to(DType::i32);
                             Value ws = loadW(cols.expand(1), ks).expand(0).broadcastTo(products).to(DType::i32);
                             return std::vector<Value>{sum[0] + (xs * ws).sum(2)};
                           }
                           if (c.skinny) {
                             // [rows, 1, K] x [1, cols, K]: products summed over K in f32.
                             Value xs = loadX(rows.expand(1), ks).to(DType::f32).expand(1);
                             Value ws = loadW(cols.expand(1), ks).to(DType::f32).expand(0);
                             return std::vector<Value>{sum[0] + (xs * ws).sum(2)};
                           }
                           Value xTile = loadX(rows.expand(1), ks);
                           Value wTile = loadW(cols.expand(1), ks).trans();
                           if (!spec.blockScaled)
                             return std::vector<Value>{dot(xTile, wTile, sum[0])};
                           // One 128-column block per step: its sum scaled into the total.
                           Value block = dot(xTile, wTile, zeros({c.blockM, c.blockN}, DType::f32));
                           Value kb = k0 / 128;
                           Value sx = spec.xScaleKBlockMajor ? load(*xBlockScale, {kb, rows.expand(1)})
                                                             : load(*xBlockScale, {rows.expand(1), kb});
                           // A tile inside one 128-column block reads its one scale once.
                           Value swColumns = 128 % c.blockN == 0
                                                 ? full({1, 1}, tileN * int32_t(c.blockN) / 128, DType::i32)
                                                 : (cols / 128).expand(0);
                           Value sw = load(*wBlockScale, {swColumns, kb});
                           // Both scales broadcast into the block's layout, each thread reading its
                           // own rows' scales; their product repeats per row, so one multiply per
                           // row and one fma per element remain.
                           const Shape tile{c.blockM, c.blockN};
                           return std::vector<Value>{fma(block, sx.broadcastTo(tile) * sw.broadcastTo(tile), sum[0])};
                         });
    // Split K, each split's sums go to its slot among the tile's partials, laid out [tiles,
    // splits, block M, block N]: the slots are a constant stride apart. Rows past M are
    // neither written nor read.
    Value tileIndex = programId(0) + programId(1) * numPrograms(0);
    Value tileColumns = arange(0, int32_t(c.blockN)).expand(0);
    auto partialOffsets = [&](Value splitIndex, Value at) {
      Value tileRows = at - tileM * int32_t(c.blockM);
      return ((tileIndex * int32_t(c.splitK) + splitIndex) * int32_t(c.blockM) + tileRows) * int32_t(c.blockN) +
             tileColumns;
    };
    auto inRows = [&](Value at) { return (at + tileColumns * 0) < x.size(0); };
    // Each row's sums, or the tile's: the output, or this split's partial sums.
    auto write = [&](Value acc, Value at) {
      if (split)
        store(partials->pointer, partialOffsets(programId(2), at), acc, inRows(at));
      else
        store(out, {at, cols.expand(0)}, finish(epilogue, acc, at, cols.expand(0)));
    };
    if (spec.intProducts)
      for (int64_t r = 0; r < c.blockM; ++r)
        write(sums[r].sum(1).expand(0), rowIndex(r));
    else
      write(sums[0].to(DType::f32), rows.expand(1));
    if (split) {
      // The tile's last split to arrive sums the partials in split order (the same bits
      // whichever arrives last), applies the epilogue and clears the tile's counter. One
      // launch: no second kernel reads the partials back.
      releaseFence();
      barrier();
      Value arrivalIndex = tileIndex + arange(0, 1);
      Value arrived = atomicAdd(arrivals->pointer, arrivalIndex, full({1}, 1, DType::i32)).sum(0);
      // A few rows at a time: each thread has about 64 partial sums in flight (a whole
      // 64x128 tile's four partials at once held 255 registers and spilled).
      std::vector<Value> reducedRows;
      if (spec.intProducts) {
        for (int64_t r = 0; r < c.blockM; ++r)
          reducedRows.push_back(rowIndex(r));
      } else {
        const int64_t threads = c.warps * spec.warpSize;
        const int64_t perThread = std::max<int64_t>(4, 64 / c.splitK);
        const int64_t chunk = std::clamp<int64_t>(std::bit_floor(uint64_t(threads * perThread / c.blockN)), 1, c.blockM);
        for (int64_t r = 0; r < c.blockM; r += chunk)
          reducedRows.push_back((tileM * int32_t(c.blockM) + int32_t(r) + arange(0, int32_t(chunk))).expand(1));
      }
      ifThen(arrived == int32_t(c.splitK - 1), [&] {
        acquireFence();
        for (Value at : reducedRows) {
          Value sum;
          for (int64_t s = 0; s < c.splitK; ++s) {
            Value part = load(partials->pointer, partialOffsets(constant(double(s), DType::i32), at), inRows(at));
            sum = s == 0 ? part : sum + part;
          }
          store(out, {at, cols.expand(0)}, finish(epilogue, sum, at, cols.expand(0)));
        }
        store(*arrivals, {arrivalIndex}, full({1}, 0, DType::i32));
      });
    }
  }
  return mb.finish(error);
}

namespace {

/// The scales of gemm_a8w8, flattened: x_scale [M] or [1], w_scale [N] or [1].
struct GemmScales {
  TensorRef x, w;
};

/// A scale of `count` elements or of one, flattened. W's scale of N may have any shape of N
/// elements ([N, 1] as AITER's, [1, N] as torch._scaled_mm's); x's of M must run down its first
/// dimension ([M] or [M, 1]): torch would broadcast an [1, M] along the output's columns.
bool scaleOf(const ArgumentChecker &check, const std::string &op, const char *name, const TensorRef &t, int64_t count,
             bool *perElement, TensorRef *flat, std::string *error) {
  const int64_t numel = t.numel();
  const bool perRow = name[0] == 'x';
  if (t.dtype != DType::f32)
    return opError(error, op, std::string("'") + name + "' has dtype " + dsl::dtypeName(t.dtype) + "; expected f32");
  if (numel != count && numel != 1)
    return opError(error, op, std::string("'") + name + "' has " + std::to_string(numel) + " elements; expected " +
                                  std::to_string(count) + " (one per " + (perRow ? "row" : "column") +
                                  ") or 1 (per tensor)");
  *perElement = numel == count && count != 1;
  if (*perElement && perRow && t.shape[0] != count)
    return opError(error, op, std::string("'") + name + "' has shape " + shapeText(t.shape) +
                                  "; one scale per row is [M] or [M, 1], M = " + std::to_string(count));
  // Any shape of `numel` elements with unit stride where it matters: contiguous only.
  int64_t expected = 1;
  for (int64_t d = t.rank() - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected)
      return opError(error, op, std::string("'") + name + "' must be contiguous");
    expected *= t.shape[d];
  }
  *flat = {t.data, DType::f32, {numel}, {1}};
  return check.vector(name, *flat, DType::f32, numel);
}

/// Checks what every GEMM op shares, picks the configuration and launches.
bool runGemm(OpRuntime &rt, const std::string &op, GemmSpec spec, const TensorRef &out, const TensorRef &x,
             const TensorRef &w, const TensorRef *bias, const std::optional<GemmScales> &scales, std::string *error,
             const std::optional<GemmConfig> &config) {
  ArgumentChecker check(op, error);
  const int64_t m = x.shape[0], k = x.shape[1] * (spec.mx ? 2 : 1), n = w.shape[0];
  if (w.shape[1] * (spec.mx ? 2 : 1) != k)
    return opError(error, op, "'w' is [N, K] = " + std::to_string(n) + " x " + std::to_string(w.shape[1]) +
                                  " but 'x' has K = " + std::to_string(k));
  if (out.dtype != DType::bf16 && out.dtype != DType::f16 && out.dtype != DType::f32)
    return opError(error, op, std::string("'out' has dtype ") + dsl::dtypeName(out.dtype) +
                                  "; expected bf16, f16 or f32");
  if (!check.shaped("out", out, out.dtype, {m, n}) || !check.written("out", out) ||
      (bias && !check.vector("bias", *bias, out.dtype, n)))
    return false;
  spec.output = out.dtype;
  spec.n = n;
  spec.k = k;
  spec.bias = bias != nullptr;
  if (config) {
    spec.config = *config;
  } else {
    // A tuned row for the shape (docs/tuning.md), else the heuristic default.
    std::string tableError;
    // A preshuffled W changes the addressing only: gemm_a8w8's rows apply.
    TunedDispatch *table = rt.tuned(spec.wPreshuffled ? "gemm_a8w8" : op, gemmTuningKeys(), &tableError);
    if (!table)
      return opError(error, op, tableError);
    const int64_t multiprocessors = rt.device().multiprocessors();
    auto key = [&](const std::string &target) {
      return gemmTuningKey(target, multiprocessors, m, n, k, x.dtype, out.dtype, bias != nullptr);
    };
    // sm_90a runs every sm_90 kernel: without a row of its own, sm_90's applies.
    std::optional<TuningKey> fallback;
    if (rt.target() == "sm_90a")
      fallback = key("sm_90");
    const TunedRow *row = table->lookup(key(rt.target()), fallback);
    if (row) {
      std::optional<GemmConfig> tuned = gemmConfigOf(*row, &tableError);
      if (!tuned)
        return opError(error, op, "tuned configuration: " + tableError);
      spec.config = *tuned;
    } else {
      spec.config = defaultGemmConfig(m, n, k, multiprocessors > 0 ? multiprocessors : 132, spec.input, rt.target(),
                                      spec.blockScaled);
    }
  }
  if (spec.mx && k % 32)
    return opError(error, op, "K = " + std::to_string(k) + " is not a multiple of 32 (one e8m0 scale per 32)");
  fitGemmConfig(spec, rt.target());
  if (spec.config.skinny && spec.blockScaled)
    return opError(error, op, "the skinny kernel takes per-token/per-tensor scales, not block scales");
  if (std::string problem = spec.problem(); !problem.empty())
    return opError(error, op, problem);
  if (m == 0 || n == 0) // an empty output: nothing to compute
    return true;
  spec.vectorAligned = vectorAligned({&out, &x, &w});
  std::vector<const TensorRef *> tensors{&out, &x, &w};
  if (bias)
    tensors.push_back(bias);
  if (scales) {
    tensors.push_back(&scales->x);
    tensors.push_back(&scales->w);
  }
  spec.within2GiB = within2GiB(tensors);
  const GemmConfig &c = spec.config;
  const uint32_t tilesM = uint32_t((m + c.blockM - 1) / c.blockM), tilesN = uint32_t((n + c.blockN - 1) / c.blockN);
  auto build = [&](std::string *e) { return buildGemm(spec, e); };
  // MXFP4 kernels read packed codes as bytes, and the scales too where they decode them.
  auto bytesIf = [](bool asBytes, const TensorRef &t) {
    return asBytes ? TensorRef{t.data, DType::i8, t.shape, t.strides} : t;
  };
  NamedArgs args;
  args.tensor("x", bytesIf(spec.mx, x)).tensor("w", bytesIf(spec.mx, w));
  args.tensor("out", out);
  if (bias)
    args.tensor("bias", *bias);
  if (scales) {
    const bool decoded = spec.mx && !spec.scaledMma;
    args.tensor("x_scale", bytesIf(decoded, scales->x)).tensor("w_scale", bytesIf(decoded, scales->w));
  }
  std::string launchError;
  if (c.splitK == 1) {
    if (!rt.launch(spec.key(), build, "gemm", {tilesM, tilesN, 1}, args, &launchError))
      return opError(error, op, launchError);
    return true;
  }
  const int64_t partialCount = int64_t(tilesM) * tilesN * c.splitK * c.blockM * c.blockN;
  TensorRef workspace = rt.workspace(size_t(partialCount) * sizeof(float), &launchError);
  if (!workspace.data)
    return opError(error, op, launchError);
  TensorRef arrivals = rt.arrivalCounters(int64_t(tilesM) * tilesN, &launchError);
  if (!arrivals.data)
    return opError(error, op, launchError);
  args.tensor("partials", TensorRef::contiguous(workspace.data, DType::f32, {partialCount}));
  args.tensor("arrivals", arrivals);
  if (!rt.launch(spec.key(), build, "gemm", {tilesM, tilesN, uint32_t(c.splitK)}, args, &launchError)) {
    // A launch that stopped part-way may have left counts behind.
    std::string resetError;
    if (!rt.resetArrivalCounters(&resetError))
      launchError += "; " + resetError;
    return opError(error, op, launchError);
  }
  return true;
}

} // namespace

bool wavetile::ops::gemm_a16w16(OpRuntime &rt, const TensorRef &out, const TensorRef &x, const TensorRef &w,
                                const TensorRef *bias, std::string *error, const std::optional<GemmConfig> &config) {
  ArgumentChecker check("gemm_a16w16", error);
  if (!check.rows("x", x, {DType::bf16, DType::f16}) || !check.rows("w", w, {x.dtype}))
    return false;
  return runGemm(rt, "gemm_a16w16", GemmSpec{x.dtype, out.dtype, 0, 0}, out, x, w, bias, std::nullopt, error, config);
}

namespace {

/// gemm_a8w8 and its preshuffled form.
bool runScaledGemm(OpRuntime &rt, bool wPreshuffled, const TensorRef &out, const TensorRef &x, const TensorRef &w,
                   const TensorRef &xScale, const TensorRef &wScale, const TensorRef *bias, std::string *error,
                   const std::optional<GemmConfig> &config) {
  const std::string op = wPreshuffled ? "gemm_a8w8_bpreshuffle" : "gemm_a8w8";
  ArgumentChecker check(op, error);
  if (!check.rows("x", x, {DType::f8E4M3FN, DType::f8E4M3FNUZ, DType::i8}) || !check.rows("w", w, {x.dtype}))
    return false;
  if (wPreshuffled) {
    const int64_t n = w.shape[0], k = w.shape[1];
    if (n % 16 || k % 32)
      return opError(error, op,
                     "a preshuffled 'w' needs N a multiple of 16 and K of 32, got [" + std::to_string(n) + ", " +
                         std::to_string(k) + "]");
    if (w.strides[0] != k)
      return opError(error, op,
                     "a preshuffled 'w' must be contiguous, got strides " + std::to_string(w.strides[0]) + ", " +
                         std::to_string(w.strides[1]));
  }
  GemmSpec spec{x.dtype, out.dtype, 0, 0};
  spec.scaled = true;
  spec.wPreshuffled = wPreshuffled;
  GemmScales scales;
  if (!scaleOf(check, op, "x_scale", xScale, x.shape[0], &spec.xScalePerRow, &scales.x, error) ||
      !scaleOf(check, op, "w_scale", wScale, w.shape[0], &spec.wScalePerColumn, &scales.w, error))
    return false;
  return runGemm(rt, op, spec, out, x, w, bias, scales, error, config);
}

} // namespace

bool wavetile::ops::gemm_a8w8(OpRuntime &rt, const TensorRef &out, const TensorRef &x, const TensorRef &w,
                              const TensorRef &xScale, const TensorRef &wScale, const TensorRef *bias,
                              std::string *error, const std::optional<GemmConfig> &config) {
  return runScaledGemm(rt, false, out, x, w, xScale, wScale, bias, error, config);
}

bool wavetile::ops::gemm_a8w8_bpreshuffle(OpRuntime &rt, const TensorRef &out, const TensorRef &x, const TensorRef &w,
                                          const TensorRef &xScale, const TensorRef &wScale, const TensorRef *bias,
                                          std::string *error, const std::optional<GemmConfig> &config) {
  return runScaledGemm(rt, true, out, x, w, xScale, wScale, bias, error, config);
}

bool wavetile::ops::gemm_a8w8_blockscale(OpRuntime &rt, const TensorRef &out, const TensorRef &x, const TensorRef &w,
                                         const TensorRef &xScale, const TensorRef &wScale, std::string *error,
                                         const std::optional<GemmConfig> &config) {
  const std::string op = "gemm_a8w8_blockscale";
  ArgumentChecker check(op, error);
  if (!check.rows("x", x, {DType::f8E4M3FN, DType::f8E4M3FNUZ}) || !check.rows("w", w, {x.dtype}))
    return false;
  const int64_t m = x.shape[0], n = w.shape[0], blocks = (x.shape[1] + 127) / 128;
  GemmSpec spec{x.dtype, out.dtype, 0, 0};
  spec.blockScaled = true;
  // x_scale [M, K/128] either row-major or K-block-major (unit stride along M, as AITER's
  // preshuffled-weight kernels take it): the kernel reads the latter as its transpose.
  spec.xScaleKBlockMajor = xScale.shape == std::vector<int64_t>{m, blocks} && kBlockMajor(xScale);
  const TensorRef xScaleRead = spec.xScaleKBlockMajor ? transposed(xScale) : xScale;
  if (!(spec.xScaleKBlockMajor ? check.shaped("x_scale", xScaleRead, DType::f32, {blocks, m})
                               : check.shaped("x_scale", xScale, DType::f32, {m, blocks})) ||
      !check.shaped("w_scale", wScale, DType::f32, {(n + 127) / 128, blocks}))
    return false;
  return runGemm(rt, op, spec, out, x, w, nullptr, GemmScales{xScaleRead, wScale}, error, config);
}

bool wavetile::ops::gemm_a4w4(OpRuntime &rt, const TensorRef &out, const TensorRef &x, const TensorRef &w,
                              const TensorRef &xScale, const TensorRef &wScale, const TensorRef *bias,
                              std::string *error, const std::optional<GemmConfig> &config) {
  const std::string op = "gemm_a4w4";
  ArgumentChecker check(op, error);
  if (!check.rows("x", x, {DType::f4E2M1FN}) || !check.rows("w", w, {DType::f4E2M1FN}))
    return false;
  const int64_t m = x.shape[0], n = w.shape[0], groups = x.shape[1] * 2 / 32;
  if (!check.shaped("x_scale", xScale, DType::f8E8M0FNU, {m, groups}) ||
      !check.shaped("w_scale", wScale, DType::f8E8M0FNU, {n, groups}))
    return false;
  GemmSpec spec{DType::f4E2M1FN, out.dtype, 0, 0};
  spec.mx = true;
  return runGemm(rt, op, spec, out, x, w, bias, GemmScales{xScale, wScale}, error, config);
}
