//===- GemmTuner.h - tuning GEMMs on the current device ---------*- C++ -*-===//
//
// For each shape, every candidate configuration runs on the runtime's device with random
// inputs; its output is checked against a double-precision reference computed on the host
// (candidates that fail to compile, launch or match are dropped, never written), the rest
// are timed with device events, and the fastest is kept. `wavetile tune` drives it and
// writes the tables the GEMM ops read (docs/tuning.md).
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_OPS_GEMMTUNER_H
#define WAVETILE_OPS_GEMMTUNER_H

#include "wavetile/ops/Gemm.h"

namespace wavetile::ops {

struct GemmShape {
  int64_t m, n, k;
};

struct GemmTuneOptions {
  /// gemm_a16w16, gemm_a8w8 (per-token x scales, per-channel w scales),
  /// gemm_a8w8_blockscale (fp8, scales per 1x128 of x and 128x128 of w; no bias) or gemm_a4w4
  /// (input f4E2M1FN: random packed codes with random e8m0 scales per 32).
  std::string op = "gemm_a16w16";
  DType input = DType::bf16, output = DType::bf16;
  bool bias = false;
  std::vector<GemmConfig> candidates; // empty: gemmCandidates(shape, input)
  int warmup = 2, repetitions = 10;
  uint64_t seed = 1;
  unsigned compileThreads = 0; // candidates compile ahead on this many threads (0: one per hardware thread)
};

struct GemmTuneResult {
  GemmShape shape;
  std::optional<GemmConfig> best; // none when every candidate was dropped
  double microseconds = 0;
  int tried = 0, wrong = 0, failed = 0; // failed: did not compile, launch, or spilled
  std::string firstFailure; // why the first dropped candidate was dropped
  double compileSeconds = 0; // compiling the candidates ahead, all threads together (wall time)
};

/// The candidates the tuner sweeps for a shape: decode-sized M (≤ 64) narrow tiles through
/// the async-copy ring (3 to 8 stages) with split-K 1 to 16, and skinny kernels; larger M 64 to 256 tiles, K
/// steps of 32 and 64 (and 128 for 8-bit inputs; 64 and 128 codes for MXFP4), 2 to 4 stages,
/// 4 or 8 warps.
std::vector<GemmConfig> gemmCandidates(const GemmShape &shape, DType input = DType::bf16);

/// Tunes each shape on `rt`'s device; false with an error only when the device itself fails
/// (allocation, copies, events).
bool tuneGemm(OpRuntime &rt, const std::vector<GemmShape> &shapes, const GemmTuneOptions &options,
              std::vector<GemmTuneResult> *results, std::string *error);

/// Adds (or replaces) the results' rows in the table at `path` (created if missing).
bool writeGemmTable(const std::string &path, OpRuntime &rt, const GemmTuneOptions &options,
                    const std::vector<GemmTuneResult> &results, std::string *error);

} // namespace wavetile::ops

#endif
