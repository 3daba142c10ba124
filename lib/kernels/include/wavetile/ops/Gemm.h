//===- Gemm.h - the GEMM family with AITER's names --------------*- C++ -*-===//
//
// Y = X · Wᵀ (+ bias), AITER's layout: `x` [M, K], `w` [N, K] (both unit stride along K),
// `out` [M, N] bf16, f16 or f32; accumulation in f32 (int8: exactly in i32), scales and bias
// applied in f32, one rounding to out's dtype. The ops (docs/ops.md):
//   gemm_a16w16            x, w bf16 or f16 (one dtype); bias [N] in out's dtype
//   gemm_a8w8              x, w fp8 (e4m3fn or e4m3fnuz) or i8; f32 x_scale per token or
//                          tensor, w_scale per channel or tensor; bias
//   gemm_a8w8_bpreshuffle  gemm_a8w8 with W in shuffle_weight's (16, 16) layout
//   gemm_a8w8_blockscale   fp8; f32 scales per 1x128 block of X and 128x128 of W; no bias
//   gemm_a4w4              MXFP4 x and w (packed e2m1, e8m0 scales per 32 of K); bias
// Kernels are specialized on N, K, the dtypes and a GemmConfig (tile sizes, pipeline stages,
// warps, split-K, skinny), never on M. Split-K writes f32 partials to the runtime's workspace
// and a second kernel sums them (deterministic, no atomics). The configuration is the
// caller's, else the tuned table's row for the shape ($WAVETILE_TUNED_DIR/<op>.csv or the
// tables shipped from lib/kernels/configs; gemm_a8w8_bpreshuffle reads gemm_a8w8's; lookup
// in docs/tuning.md), else defaultGemmConfig. GemmSpec, buildGemm and fitGemmConfig are the
// kernel generator behind the ops, for tools and tests; GemmTuner.h writes the tables.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_OPS_GEMM_H
#define WAVETILE_OPS_GEMM_H

#include "wavetile/ops/OpRuntime.h"

#include <optional>

namespace wavetile::ops {

/// How a GEMM is tiled: output tiles of blockM x blockN, K in steps of blockK through a
/// `stages`-deep pipeline, `warps` per program, K split over `splitK` programs.
struct GemmConfig {
  int64_t blockM = 64, blockN = 64, blockK = 32;
  int64_t stages = 3, warps = 4, splitK = 1;
  /// Skinny (decode) kernel: products and K sums on the vector units, no matrix
  /// instructions, so block M may be as small as M (1 to 16); W streams in blockN×blockK
  /// tiles. gemm_a16w16, gemm_a8w8 (not block-scaled) and gemm_a4w4.
  bool skinny = false;
  std::string key() const;
  /// Why this configuration cannot compile (non-power-of-two tiles, ...), or empty. What
  /// depends on the kernel variant too is GemmSpec::problem's.
  std::string problem() const;
};

/// A default for a shape without a tuned row of `input` operands on `target`: one row of
/// bf16, f16 or int8, or of the target's own fp8 with K <= 8192 unless `blockScaled`
/// (gemm_a8w8_blockscale, which skinny tiles do not take), gets skinny tiles, other
/// decode-sized M narrow matrix-instruction tiles (3-stage rings on NVIDIA), both with
/// enough K splits to give every multiprocessor work; larger M 64x64 tiles. MXFP4
/// (f4E2M1FN) decoded in registers (a target without a block-scaled instruction) has decode
/// sizes of its own.
GemmConfig defaultGemmConfig(int64_t m, int64_t n, int64_t k, int64_t multiprocessors, DType input,
                             std::string_view target, bool blockScaled = false);

/// The key columns of gemm_a16w16's tuned table and a shape's key (docs/tuning.md), and the
/// configuration a row holds (block_m, block_n, block_k, stages, warps, split_k).
const std::vector<std::string> &gemmTuningKeys();
TuningKey gemmTuningKey(const std::string &target, int64_t multiprocessors, int64_t m, int64_t n, int64_t k,
                        DType input, DType output, bool bias);
std::optional<GemmConfig> gemmConfigOf(const TunedRow &row, std::string *error);

/// Without `config`: the tuned row for the shape, else defaultGemmConfig.
bool gemm_a16w16(OpRuntime &rt, const TensorRef &out, const TensorRef &x, const TensorRef &w, const TensorRef *bias,
                 std::string *error, const std::optional<GemmConfig> &config = std::nullopt);

/// Y = (Xq · Wqᵀ) · x_scale · w_scale (+ bias): x, w f8E4M3FN, f8E4M3FNUZ or i8 (one
/// dtype); x_scale f32 of M elements ([M] or [M, 1], per token) or 1, w_scale of N ([N],
/// [1, N]) or 1; out bf16, f16 or f32, bias [N] in out's dtype. Products accumulate exactly
/// in i32 (int8) or in f32 (fp8); the sum is converted to f32, then multiplied by x_scale,
/// then by w_scale, then the bias added, and rounded once.
bool gemm_a8w8(OpRuntime &rt, const TensorRef &out, const TensorRef &x, const TensorRef &w, const TensorRef &xScale,
               const TensorRef &wScale, const TensorRef *bias, std::string *error,
               const std::optional<GemmConfig> &config = std::nullopt);

/// gemm_a8w8 with W as AITER's shuffle_weight(w, layout=(16, 16)) leaves it: [N, K],
/// contiguous, N a multiple of 16 and K of 32, each 16-row block stored as K/32 tiles of two
/// 16x16 halves (16 rows of the first 16 columns, then of the next 16). Tuned rows are
/// gemm_a8w8's.
bool gemm_a8w8_bpreshuffle(OpRuntime &rt, const TensorRef &out, const TensorRef &x, const TensorRef &w,
                           const TensorRef &xScale, const TensorRef &wScale, const TensorRef *bias, std::string *error,
                           const std::optional<GemmConfig> &config = std::nullopt);

/// DeepSeek-style block scales: x, w fp8 (e4m3fn or e4m3fnuz), x_scale f32 [M, ceil(K/128)]
/// (one per row and 128 columns), w_scale f32 [ceil(N/128), ceil(K/128)] (one per 128×128
/// block of W), both row-major; out bf16, f16 or f32:
///   Y[m, n] = Σ_b (Σ_{k in block b} x[m, k]·w[n, k]) · x_scale[m, b] · w_scale[n/128, b]
/// Each block's products sum in f32, are scaled (x first) and added to an f32 total. K steps
/// are the 128-column blocks (blockK 128).
bool gemm_a8w8_blockscale(OpRuntime &rt, const TensorRef &out, const TensorRef &x, const TensorRef &w,
                          const TensorRef &xScale, const TensorRef &wScale, std::string *error,
                          const std::optional<GemmConfig> &config = std::nullopt);

/// MXFP4 on both sides: x [M, K/2], w [N, K/2] packed e2m1 (f4E2M1FN, element 2i in the low
/// nibble), x_scale [M, K/32], w_scale [N, K/32] e8m0 (f8E8M0FNU, row-major, not shuffled);
/// K a multiple of 32; out bf16, f16 or f32, bias [N] in out's dtype:
///   Y[m, n] = Σ_k x[m, k]·2^(x_scale[m, k/32]−127) · w[n, k]·2^(w_scale[n, k/32]−127) (+ bias)
/// in f32 (scaled MFMA on gfx950; elsewhere the scaled operands are formed in registers).
bool gemm_a4w4(OpRuntime &rt, const TensorRef &out, const TensorRef &x, const TensorRef &w, const TensorRef &xScale,
               const TensorRef &wScale, const TensorRef *bias, std::string *error,
               const std::optional<GemmConfig> &config = std::nullopt);

struct GemmSpec {
  DType input, output; // input bf16/f16, or (scaled) fp8 / i8
  int64_t n, k;
  bool bias = false;
  bool scaled = false;                                  // gemm_a8w8: x_scale, w_scale
  bool blockScaled = false;                             // gemm_a8w8_blockscale
  bool xScaleKBlockMajor = false; // its x_scale stored [K/128, M] (AITER's bpreshuffle layout), else [M, K/128]
  bool mx = false; // gemm_a4w4: x, w packed fp4 (k counts elements), e8m0 scales per 32
  // gemm_a4w4 on a target with a block-scaled MMA (gfx950), not skinny; elsewhere the kernel
  // dequantizes both operands in registers and multiplies them on the ordinary matrix
  // instructions (bf16) or, skinny, in f32.
  bool scaledMma = false;
  // Dequantized on matrix instructions, the codes decode and scale as bf16 pairs where the
  // target multiplies them natively (mul.bf16x2 on sm_90), else in f32.
  bool bf16Pairs = false;
  // Skinny MXFP4 on NVIDIA: codes decoded to i8 (twice their value) by byte permutes, each
  // scale group's products summed exactly in i32 (dp4a), then scaled in f32; W decoded once
  // for all the tile's rows, each row summed on its own.
  bool intProducts = false;
  bool wPreshuffled = false;                          // gemm_a8w8_bpreshuffle: W in shuffle_weight's (16, 16) layout
  bool xScalePerRow = false, wScalePerColumn = false; // else one scale for the tensor
  GemmConfig config;
  int64_t warpSize = 32;
  bool vectorAligned = false, within2GiB = true;
  std::string key() const;
  /// The configuration's problem, or what this variant adds: skinny tiles that hold their
  /// products ([rows, cols, K] at once, f32 or int8's i32) at most 16384 of them.
  std::string problem() const;
};
/// The module: "gemm". Split K, it also takes "partials" (f32 [splits, M, N]) and
/// "arrivals" (an i32 counter per output tile, zero before and after the launch): the last
/// split of a tile to finish reduces the tile.
std::unique_ptr<Module> buildGemm(const GemmSpec &spec, std::string *error);
/// Sets what `target` decides in the spec (warpSize, scaledMma, bf16Pairs, intProducts) and what the kernel variant and
/// the target impose on its configuration: block-scaled fp8 steps K by its 128-wide scale
/// blocks; MXFP4 by at least 64 (128 for tiles under 32 rows or columns, which gfx950's
/// 16x16x128 block-scaled MFMA needs), without a prefetch ring where the block-scaled
/// instruction takes the unpacked codes; on 64-lane waves, no more waves than the tile has
/// 16x16 MFMA blocks.
void fitGemmConfig(GemmSpec &spec, std::string_view target);

} // namespace wavetile::ops

#endif
