//===- GemmTest.cpp - gemm_a16w16 on the host against a double reference --===//
//
// Y = X·Wᵀ (+ bias) with W [N, K]: shapes whose M, N and K are not multiples of any tile,
// every dtype combination, default and explicit configurations (split-K included), fresh
// random inputs, poisoned padded outputs. Tolerance: the output dtype's rounding plus the
// f32 accumulation error, 2e-5 of sum |x·w|.
//
//===----------------------------------------------------------------------===//

#include "HostBuffer.h"

#include "wavetile/ops/Gemm.h"
#include "wavetile/ops/Quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <latch>
#include <random>
#include <set>
#include <sstream>
#include <thread>

using namespace wavetile;
using namespace wavetile::ops;
using wavetile::test::decodeFp8;
using wavetile::test::HostBuffer;

namespace {

/// The op refused its configuration because the target lacks the shared memory for it.
bool refusedForSharedMemory(const std::string &error) { return error.find("may use at most") != std::string::npos; }

struct Case {
  DType in, out;
  int64_t m, n, k;
  bool bias;
  std::optional<GemmConfig> config;
  bool oddStrides = true; // rows not 16-byte aligned (false: x and w contiguous, out padded by 16 bytes)
};

GemmConfig config(int64_t bm, int64_t bn, int64_t bk, int64_t stages, int64_t warps, int64_t split) {
  return GemmConfig{bm, bn, bk, stages, warps, split};
}

GemmConfig skinny(int64_t bm, int64_t bn, int64_t bk, int64_t split) {
  GemmConfig c{bm, bn, bk, 1, 4, split};
  c.skinny = true;
  return c;
}

/// y [m, n] (f32) against the double product of bf16 x [m, k] and w [n, k] (Y = X·Wᵀ).
void expectBf16Product(const HostBuffer &x, const HostBuffer &w, const HostBuffer &y, int64_t m, int64_t n, int64_t k,
                       const std::string &what) {
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < n; ++col) {
      double ref = 0, magnitude = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        double p = double(x.get(r * k + kk)) * double(w.get(col * k + kk));
        ref += p;
        magnitude += std::abs(p);
      }
      ASSERT_NEAR(y.get(r * n + col), ref, 2e-5 * magnitude + 1e-6) << what << " at " << r << ", " << col;
    }
}

class GemmTest : public ::testing::TestWithParam<Case> {};

TEST_P(GemmTest, MatchesDoubleReference) {
  const Case c = GetParam();
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::normal_distribution<float> value(0.f, 1.f);
  const int64_t ldx = c.k + (c.oddStrides ? 5 : 0), ldw = c.k + (c.oddStrides ? 3 : 0),
                ldo = c.n + (c.oddStrides ? 2 : 8);
  HostBuffer x(c.in, c.m * ldx), w(c.in, c.n * ldw), bias(c.out, c.n), out(c.out, c.m * ldo);
  for (size_t i = 0; i < x.size(); ++i)
    x.set(i, value(rng));
  for (size_t i = 0; i < w.size(); ++i)
    w.set(i, value(rng));
  for (int64_t i = 0; i < c.n; ++i)
    bias.set(i, value(rng));
  out.poison();
  TensorRef b = TensorRef::contiguous(bias.data(), c.out, {c.n});
  ASSERT_TRUE(gemm_a16w16(*host.runtime, {out.data(), c.out, {c.m, c.n}, {ldo, 1}},
                          {x.data(), c.in, {c.m, c.k}, {ldx, 1}}, {w.data(), c.in, {c.n, c.k}, {ldw, 1}},
                          c.bias ? &b : nullptr, &error, c.config))
      << error;
  int64_t bad = 0;
  for (int64_t r = 0; r < c.m; ++r)
    for (int64_t col = 0; col < ldo; ++col) {
      float got = out.get(r * ldo + col);
      if (col >= c.n) { // padding stays poisoned
        if (!std::isnan(got) && bad++ < 5)
          ADD_FAILURE() << "wrote padding at " << r << ", " << col;
        continue;
      }
      double ref = c.bias ? double(bias.get(col)) : 0.0, magnitude = 0;
      for (int64_t kk = 0; kk < c.k; ++kk) {
        double p = double(x.get(r * ldx + kk)) * double(w.get(col * ldw + kk));
        ref += p;
        magnitude += std::abs(p);
      }
      double tolerance = out.ulp() * std::abs(ref) + 2e-5 * magnitude + 1e-6;
      if (!(std::abs(got - ref) <= tolerance) && bad++ < 5)
        ADD_FAILURE() << "out[" << r << ", " << col << "] = " << got << ", expected " << ref << " ± " << tolerance;
    }
  EXPECT_EQ(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Host, GemmTest,
    ::testing::Values(Case{DType::bf16, DType::bf16, 1, 100, 72, false, std::nullopt},
                      Case{DType::bf16, DType::f32, 3, 257, 300, true, std::nullopt},
                      Case{DType::f16, DType::f16, 17, 130, 200, true, std::nullopt},
                      Case{DType::f16, DType::f32, 130, 70, 96, false, std::nullopt},
                      Case{DType::bf16, DType::bf16, 130, 129, 257, true, config(64, 64, 32, 3, 4, 1)},
                      Case{DType::bf16, DType::f32, 3, 200, 1100, true, config(16, 64, 64, 2, 4, 3)},
                      // 3 row blocks x 10 column blocks: two groups of column blocks, the second partial
                      Case{DType::f16, DType::f16, 130, 600, 96, false, config(64, 64, 32, 2, 4, 1)},
                      // Aligned rows, K a multiple of 8 but not of the K step: the ring's copies
                      // mask whole 16-byte groups (known before run time)
                      Case{DType::bf16, DType::bf16, 70, 72, 200, true, config(64, 64, 64, 3, 4, 1), false},
                      Case{DType::f16, DType::bf16, 17, 64, 64, false, config(32, 32, 16, 1, 2, 2)},
                      // An 8-deep ring (48 KB: every target's shared memory holds it), 9 K steps a
                      // split, the last partial: the ring's prologue nearly covers a split
                      Case{DType::bf16, DType::bf16, 5, 100, 1100, true, config(16, 32, 64, 8, 4, 2)},
                      Case{DType::bf16, DType::f16, 2, 96, 2048, true, std::nullopt}, // default splits K
                      Case{DType::f16, DType::bf16, 1, 70, 4100, true, std::nullopt}, // skinny default, split
                      Case{DType::bf16, DType::f32, 1, 100, 300, true, skinny(1, 16, 256, 1)},
                      Case{DType::f16, DType::bf16, 3, 70, 1000, false, skinny(4, 16, 128, 2)},
                      Case{DType::bf16, DType::bf16, 13, 33, 96, true, skinny(16, 8, 64, 1)},
                      // sm_90a wgmma (tiles that fit every target's shared memory): two warpgroups,
                      // 64-byte swizzle, every dimension a tail; two 64-row blocks per warpgroup;
                      // the m64n128 instruction
                      Case{DType::bf16, DType::bf16, 130, 300, 200, true, config(128, 64, 32, 2, 8, 1)},
                      Case{DType::f16, DType::f32, 200, 130, 96, false, config(128, 64, 32, 2, 4, 1)},
                      Case{DType::bf16, DType::f32, 70, 260, 136, true, config(64, 128, 32, 2, 4, 1)}),
    [](const auto &info) {
      const Case &c = info.param;
      return std::string(dsl::dtypeName(c.in)) + "_to_" + dsl::dtypeName(c.out) + "_" + std::to_string(c.m) + "x" +
             std::to_string(c.n) + "x" + std::to_string(c.k) + (c.bias ? "_bias" : "") +
             (c.oddStrides ? "" : "_aligned") +
             (c.config ? "_" + std::to_string(c.config->blockM) + "x" + std::to_string(c.config->blockN) + "x" +
                             std::to_string(c.config->blockK) + "_split" + std::to_string(c.config->splitK) +
                             (c.config->skinny ? "_skinny" : "")
                       : "_default");
    });

TEST(GemmOp, DefaultSplitsDecodeShapesOverTheMultiprocessors) {
  const DType fp8 = DType::f8E4M3FN, mx = DType::f4E2M1FN;
  // Other decode sizes: 16/32/64-row tiles; on NVIDIA 3-stage rings of 128-byte K steps,
  // elsewhere streamed through registers, which every target compiles cleanly.
  GemmConfig decode = defaultGemmConfig(1, 8192, 16384, 132, fp8, "sm_90a");
  EXPECT_FALSE(decode.skinny);
  EXPECT_EQ(decode.blockM, 16);
  EXPECT_EQ(decode.stages, 3);
  EXPECT_EQ(decode.blockK, 128);
  // One row of the target's own fp8 with K up to 8192: a skinny 1x8 tile of 512-code steps.
  GemmConfig fp8Row = defaultGemmConfig(1, 8192, 8192, 132, fp8, "sm_90a");
  EXPECT_TRUE(fp8Row.skinny);
  EXPECT_EQ(fp8Row.blockN, 8);
  EXPECT_EQ(fp8Row.blockK, 512);
  EXPECT_TRUE(defaultGemmConfig(1, 8192, 8192, 304, DType::f8E4M3FNUZ, "gfx942").skinny);
  EXPECT_FALSE(defaultGemmConfig(1, 8192, 8192, 132, DType::f8E4M3FNUZ, "sm_90a").skinny);
  EXPECT_FALSE(defaultGemmConfig(1, 8192, 8192, 132, fp8, "sm_90a", /*blockScaled=*/true).skinny);
  GemmConfig bf16Rows = defaultGemmConfig(16, 8192, 8192, 132, DType::bf16, "sm_90");
  EXPECT_EQ(bf16Rows.blockM, 16);
  EXPECT_EQ(bf16Rows.blockK, 64);
  EXPECT_EQ(bf16Rows.stages, 3);
  EXPECT_EQ(defaultGemmConfig(33, 8192, 8192, 132, DType::i8, "sm_90a").blockM, 64);
  GemmConfig amdRows = defaultGemmConfig(16, 8192, 8192, 304, fp8, "gfx942");
  EXPECT_EQ(amdRows.stages, 1);
  EXPECT_EQ(amdRows.blockK, 64);
  // 64 tiles: the ring splits 8 ways, the register-streamed loop 16.
  EXPECT_EQ(defaultGemmConfig(16, 4096, 14336, 132, DType::bf16, "sm_90a").splitK, 8);
  EXPECT_EQ(defaultGemmConfig(16, 4096, 14336, 132, DType::bf16, "gfx942").splitK, 16);
  // 160 tiles of 64 columns: split until 132 multiprocessors have four tiles each.
  EXPECT_EQ(defaultGemmConfig(1, 10240, 16384, 132, fp8, "sm_90a").splitK, 4);
  // Each split keeps at least 256 of K: 1024 splits in four, 1000 in two.
  EXPECT_EQ(defaultGemmConfig(1, 64, 1024, 132, DType::f8E4M3FNUZ, "sm_90a").splitK, 4);
  EXPECT_EQ(defaultGemmConfig(1, 64, 1000, 132, fp8, "gfx942").splitK, 2);
  GemmConfig large = defaultGemmConfig(4096, 4096, 4096, 132, DType::bf16, "sm_90a");
  EXPECT_EQ(large.splitK, 1);
  EXPECT_GT(large.stages, 1);
  // One row of bf16, f16 or int8: skinny tiles of 8 columns in 512-element K steps on every
  // target, K split to four programs a multiprocessor while each split keeps 2048 of K.
  for (DType input : {DType::bf16, DType::f16, DType::i8}) {
    GemmConfig row = defaultGemmConfig(1, 8192, 8192, 132, input, "sm_90a");
    EXPECT_TRUE(row.skinny);
    EXPECT_EQ(row.blockM, 1);
    EXPECT_EQ(row.blockN, 8);
    EXPECT_EQ(row.blockK, 512);
    EXPECT_EQ(row.splitK, 1); // 1024 tiles
    EXPECT_TRUE(row.problem().empty()) << row.problem();
    EXPECT_TRUE(defaultGemmConfig(1, 8192, 8192, 304, input, "gfx942").skinny);
    EXPECT_FALSE(defaultGemmConfig(2, 8192, 8192, 132, input, "sm_90a").skinny);
  }
  EXPECT_EQ(defaultGemmConfig(1, 4096, 7168, 132, DType::bf16, "sm_90a").splitK, 2); // 512 tiles
  EXPECT_EQ(defaultGemmConfig(1, 64, 16384, 132, DType::i8, "sm_90a").splitK, 8);
  EXPECT_EQ(defaultGemmConfig(1, 64, 3000, 132, DType::bf16, "sm_90a").splitK, 1);
  // gemm_a4w4 decoding MXFP4 in registers: one row skinny, 2 to 16 a ring; K splits keep a K
  // step each; CDNA's ring is half as wide; gfx950 takes the ordinary default. NVIDIA, summing
  // integer products, takes skinny tiles up to 4 rows: 8 columns in 2048-code steps for 1
  // and 2 rows (32 in 512-code steps under 2048 of K), 32 columns split 4 ways for 3 and 4.
  GemmConfig mxRow = defaultGemmConfig(1, 8192, 8192, 304, mx, "gfx942");
  EXPECT_TRUE(mxRow.skinny);
  EXPECT_EQ(mxRow.splitK, 16);
  EXPECT_EQ(mxRow.blockK, 512);
  EXPECT_FALSE(defaultGemmConfig(1, 8192, 8192, 256, mx, "gfx950").skinny); // its block-scaled MFMA
  EXPECT_EQ(defaultGemmConfig(1, 64, 2048, 304, mx, "gfx942").splitK, 4);
  EXPECT_FALSE(defaultGemmConfig(2, 8192, 8192, 304, mx, "gfx942").skinny);
  for (int64_t m : {1, 2}) {
    GemmConfig rows = defaultGemmConfig(m, 8192, 8192, 132, mx, "sm_90a");
    EXPECT_TRUE(rows.skinny);
    EXPECT_EQ(rows.blockM, m);
    EXPECT_EQ(rows.blockN, 8);
    EXPECT_EQ(rows.blockK, 2048);
    EXPECT_EQ(rows.splitK, 1);
  }
  EXPECT_EQ(defaultGemmConfig(2, 24576, 1536, 132, mx, "sm_90").blockK, 512);
  GemmConfig fourRows = defaultGemmConfig(3, 8192, 8192, 132, mx, "sm_90");
  EXPECT_TRUE(fourRows.skinny);
  EXPECT_EQ(fourRows.blockM, 4);
  EXPECT_EQ(fourRows.splitK, 4);
  EXPECT_FALSE(defaultGemmConfig(5, 8192, 8192, 132, mx, "sm_90a").skinny);
  GemmConfig mxRows = defaultGemmConfig(16, 8192, 8192, 132, mx, "sm_90a");
  EXPECT_FALSE(mxRows.skinny);
  EXPECT_EQ(mxRows.stages, 3);
  EXPECT_EQ(mxRows.splitK, 8);
  EXPECT_EQ(defaultGemmConfig(16, 8192, 8192, 304, mx, "gfx942").blockN, mxRows.blockN / 2);
  EXPECT_EQ(defaultGemmConfig(16, 8192, 1024, 132, mx, "sm_90a").splitK, 8);
  EXPECT_EQ(defaultGemmConfig(16, 8192, 512, 132, mx, "sm_90a").splitK, 4);
  // 17 to 64 rows on NVIDIA: 32x128 and 64x256 (8 warps) rings split 4 ways; CDNA takes the
  // ordinary default there.
  GemmConfig mx32 = defaultGemmConfig(17, 8192, 8192, 132, mx, "sm_90");
  EXPECT_EQ(mx32.blockM, 32);
  EXPECT_EQ(mx32.blockN, 128);
  EXPECT_EQ(mx32.splitK, 4);
  GemmConfig mx64 = defaultGemmConfig(64, 8192, 8192, 132, mx, "sm_90a");
  EXPECT_EQ(mx64.blockN, 256);
  EXPECT_EQ(mx64.warps, 8);
  EXPECT_EQ(mx64.stages, 3);
  EXPECT_EQ(defaultGemmConfig(64, 8192, 256, 132, mx, "sm_90a").splitK, 2);
  EXPECT_EQ(defaultGemmConfig(17, 8192, 8192, 304, mx, "gfx942").blockM,
            defaultGemmConfig(17, 8192, 8192, 304, DType::bf16, "gfx942").blockM);
  EXPECT_EQ(defaultGemmConfig(65, 8192, 8192, 132, mx, "sm_90").blockM,
            defaultGemmConfig(65, 8192, 8192, 132, DType::bf16, "sm_90").blockM);
}

TEST(GemmOp, ShippedTablesParseAndHoldValidConfigurations) {
  for (const char *op : {"gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_a4w4"}) {
    const char *text = shippedTable(op);
    ASSERT_TRUE(text) << op;
    std::istringstream in(text);
    std::string error;
    auto table = TunedConfigs::parse(in, op, gemmTuningKeys(), &error);
    ASSERT_TRUE(table) << error;
    EXPECT_GT(table->size(), 0u) << op;
    for (const TunedRow &row : table->rows()) {
      EXPECT_TRUE(row.at("target") == "sm_90" || row.at("target") == "sm_90a") << row.at("target");
      EXPECT_TRUE(gemmConfigOf(row, &error)) << op << ": " << error;
    }
  }
  EXPECT_EQ(shippedTable("rmsnorm2d_fwd"), nullptr);
}

TEST(GemmOp, RefusesBadArguments) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::vector<float> a(64 * 64);
  auto refuses = [&](bool ok, const std::string &says) { wavetile::test::expectRefused(ok, error, says); };
  TensorRef x = TensorRef::contiguous(a.data(), DType::bf16, {4, 32}), w = TensorRef::contiguous(a.data(), DType::bf16, {8, 32});
  TensorRef out = TensorRef::contiguous(a.data(), DType::f32, {4, 8});
  refuses(gemm_a16w16(*host.runtime, out, x, TensorRef::contiguous(a.data(), DType::bf16, {8, 16}), nullptr, &error),
          "'w' is [N, K] = 8 x 16 but 'x' has K = 32");
  refuses(gemm_a16w16(*host.runtime, out, TensorRef::contiguous(a.data(), DType::f32, {4, 32}), w, nullptr, &error),
          "'x' has dtype f32; expected one of bf16, f16");
  refuses(gemm_a16w16(*host.runtime, TensorRef::contiguous(a.data(), DType::i8, {4, 8}), x, w, nullptr, &error),
          "'out' has dtype i8; expected bf16, f16 or f32");
  refuses(gemm_a16w16(*host.runtime, out, x, w, nullptr, &error, GemmConfig{48, 64, 32, 3, 4, 1}),
          "tile sizes and warps must be powers of two");
  // An empty output, of no rows of x or none of w, has nothing to compute: no kernel is built.
  EXPECT_TRUE(gemm_a16w16(*host.runtime, TensorRef::contiguous(a.data(), DType::f32, {0, 8}),
                          TensorRef::contiguous(a.data(), DType::bf16, {0, 32}), w, nullptr, &error))
      << error;
  EXPECT_TRUE(gemm_a16w16(*host.runtime, TensorRef::contiguous(a.data(), DType::f32, {4, 0}), x,
                          TensorRef::contiguous(a.data(), DType::bf16, {0, 32}), nullptr, &error))
      << error;
  EXPECT_EQ(host.runtime->loadedModules(), 0u);
}

// The tuner compiles its candidates ahead on several threads: precompile loads what the calls
// would launch (once per specialization, an invalid one left out) and runs nothing; another
// thread's launch meanwhile runs as usual; the real calls then launch the loaded kernels
// without compiling again.
TEST(OpRuntime, PrecompileLoadsWhatCallsWouldLaunchWithoutRunningThem) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  const int64_t m = 5, n = 70, k = 200;
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1, 1);
  wavetile::test::HostBuffer x(DType::bf16, m * k), w(DType::bf16, n * k), out(DType::f32, m * n),
      other(DType::f32, m * n);
  for (int64_t i = 0; i < m * k; ++i)
    x.set(i, value(rng));
  for (int64_t i = 0; i < n * k; ++i)
    w.set(i, value(rng));
  TensorRef tx = TensorRef::contiguous(x.data(), DType::bf16, {m, k});
  TensorRef tw = TensorRef::contiguous(w.data(), DType::bf16, {n, k});
  auto expectProduct = [&](const HostBuffer &y, const std::string &what) { expectBf16Product(x, w, y, m, n, k, what); };
  const std::vector<GemmConfig> configs{{16, 32, 32, 1, 4, 1}, {16, 64, 64, 3, 4, 2}, {16, 32, 32, 1, 4, 1}};
  out.poison();
  other.poison();
  bool invalidRefused = false, otherRan = false;
  size_t loaded = host.runtime->precompile(
      [&] {
        std::thread([&] {
          otherRan = gemm_a16w16(*host.runtime, TensorRef::contiguous(other.data(), DType::f32, {m, n}), tx, tw,
                                 nullptr, &error, GemmConfig{16, 32, 64, 1, 4, 1});
        }).join();
        for (const GemmConfig &c : configs)
          EXPECT_TRUE(gemm_a16w16(*host.runtime, TensorRef::contiguous(out.data(), DType::f32, {m, n}), tx, tw, nullptr,
                                  &error, c))
              << error;
        invalidRefused = !gemm_a16w16(*host.runtime, TensorRef::contiguous(out.data(), DType::f32, {m, n}), tx, tw,
                                      nullptr, &error, GemmConfig{24, 32, 32, 1, 4, 1});
      },
      2);
  EXPECT_TRUE(invalidRefused);
  ASSERT_TRUE(otherRan) << error;
  expectProduct(other, "the other thread's launch");
  EXPECT_EQ(loaded, 2u);
  EXPECT_EQ(host.runtime->loadedModules(), 3u);
  for (int64_t i = 0; i < m * n; ++i)
    ASSERT_TRUE(std::isnan(out.get(i))) << "precompile ran a kernel: out[" << i << "] = " << out.get(i);
  for (const GemmConfig &c : configs) {
    out.poison();
    ASSERT_TRUE(
        gemm_a16w16(*host.runtime, TensorRef::contiguous(out.data(), DType::f32, {m, n}), tx, tw, nullptr, &error, c))
        << error;
    expectProduct(out, c.key());
  }
  EXPECT_EQ(host.runtime->loadedModules(), 3u); // nothing compiled after precompile
}

// Split K reduces in the GEMM's own launch: the last split of each tile to arrive sums the
// partials and clears the tile's arrival counter. Calls in a row, with fresh inputs each (a
// count left behind would keep the next call's tiles unwritten: poison), and after the
// workspace and the counters grew, all match the product, and the counters read back zero.
TEST(GemmOp, SplitKCountsArrivalsAndLeavesTheCountersZero) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  const int64_t m = 19, n = 70, k = 300;
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::uniform_real_distribution<float> value(-1, 1);
  HostBuffer x(DType::bf16, m * k), w(DType::bf16, n * k), out(DType::f32, m * n);
  // 2 x 2 tiles split 4, then 2 x 3 tiles split 3: more tiles, a larger workspace.
  for (const GemmConfig &c : {GemmConfig{16, 64, 32, 1, 4, 4}, GemmConfig{16, 32, 64, 2, 4, 3}})
    for (int call = 0; call < 2; ++call) {
      for (int64_t i = 0; i < m * k; ++i)
        x.set(i, value(rng));
      for (int64_t i = 0; i < n * k; ++i)
        w.set(i, value(rng));
      out.poison();
      ASSERT_TRUE(gemm_a16w16(*host.runtime, TensorRef::contiguous(out.data(), DType::f32, {m, n}),
                              TensorRef::contiguous(x.data(), DType::bf16, {m, k}),
                              TensorRef::contiguous(w.data(), DType::bf16, {n, k}), nullptr, &error, c))
          << error;
      expectBf16Product(x, w, out, m, n, k, c.key() + " call " + std::to_string(call));
    }
  TensorRef counters = host.runtime->arrivalCounters(6, &error);
  ASSERT_TRUE(counters.data) << error;
  std::vector<int32_t> seen(6, -1);
  ASSERT_TRUE(host.device->copyToHost(seen.data(), counters.data, seen.size() * sizeof(int32_t), &error)) << error;
  EXPECT_EQ(seen, std::vector<int32_t>(6, 0));
}

// A workspace asked for more grows to a new buffer; the outgrown one stays allocated with its
// contents (a CUDA graph captured with it, or a kernel still running, keeps using it). On
// the host a freed block's first bytes would hold the allocator's links.
TEST(OpRuntimeBuffers, AnOutgrownWorkspaceStaysAllocated) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  const TensorRef small = host.runtime->workspace(256, &error);
  ASSERT_TRUE(small.data) << error;
  const std::vector<uint8_t> pattern(256, 0xA5);
  ASSERT_TRUE(host.device->copyToDevice(small.data, pattern.data(), pattern.size(), &error)) << error;
  const TensorRef larger = host.runtime->workspace(300, &error);
  ASSERT_TRUE(larger.data) << error;
  EXPECT_NE(larger.data, small.data);
  EXPECT_EQ(host.runtime->workspace(512, &error).data, larger.data); // grown to twice 256
  std::vector<uint8_t> seen(256);
  ASSERT_TRUE(host.device->copyToHost(seen.data(), small.data, seen.size(), &error)) << error;
  EXPECT_EQ(seen, pattern);
}

// Ops on two streams may run at once: each stream has its own workspace and arrival counters,
// and a stream gets the same ones back. The stream handles are never launched on here.
TEST(OpRuntimeBuffers, EachStreamHasItsOwnWorkspaceAndCounters) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  int handles[2];
  std::vector<void *> workspaces, counters;
  for (void *stream : {static_cast<void *>(nullptr), static_cast<void *>(&handles[0]), static_cast<void *>(&handles[1])}) {
    host.runtime->setStream(stream);
    workspaces.push_back(host.runtime->workspace(64, &error).data);
    counters.push_back(host.runtime->arrivalCounters(4, &error).data);
    ASSERT_TRUE(workspaces.back() && counters.back()) << error;
  }
  EXPECT_EQ(std::set<void *>(workspaces.begin(), workspaces.end()).size(), 3u);
  EXPECT_EQ(std::set<void *>(counters.begin(), counters.end()).size(), 3u);
  host.runtime->setStream(&handles[0]);
  EXPECT_EQ(host.runtime->workspace(64, &error).data, workspaces[1]);
  EXPECT_EQ(host.runtime->arrivalCounters(4, &error).data, counters[1]);
  host.runtime->setStream(nullptr);
  EXPECT_EQ(host.runtime->workspace(64, &error).data, workspaces[0]);
}

// The host and emulated devices run each launch on the calling thread, so two threads' ops
// (on the default stream both) would overwrite each other's partials: each thread has its
// own workspace and counters there, and gets the same ones back.
TEST(OpRuntimeBuffers, OffGpusEachThreadHasItsOwnWorkspaceAndCounters) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::latch bothAsked(2);
  std::vector<void *> workspaces(2), counters(2), again(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      std::string e;
      workspaces[t] = host.runtime->workspace(64, &e).data;
      counters[t] = host.runtime->arrivalCounters(4, &e).data;
      bothAsked.arrive_and_wait();
      again[t] = host.runtime->workspace(64, &e).data;
    });
  for (std::thread &thread : threads)
    thread.join();
  ASSERT_TRUE(workspaces[0] && workspaces[1] && counters[0] && counters[1]);
  EXPECT_NE(workspaces[0], workspaces[1]);
  EXPECT_NE(counters[0], counters[1]);
  EXPECT_EQ(again, workspaces);
}

// Threads sharing a runtime (Python threads, each on its own torch stream) keep their own
// streams: one setting its stream never moves another's launches. A new thread, and the
// same thread in another runtime, start on the default stream.
TEST(OpRuntime, EachThreadLaunchesOnItsOwnStream) {
  wavetile::test::HostOps host, other;
  ASSERT_TRUE(host.runtime && other.runtime);
  int handles[2];
  std::latch bothSet(2);
  std::vector<void *> seen(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      host.runtime->setStream(&handles[t]);
      bothSet.arrive_and_wait();
      seen[t] = host.runtime->stream();
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(seen, (std::vector<void *>{&handles[0], &handles[1]}));
  EXPECT_EQ(host.runtime->stream(), nullptr);
  host.runtime->setStream(&handles[0]);
  EXPECT_EQ(other.runtime->stream(), nullptr);
  EXPECT_EQ(host.runtime->stream(), &handles[0]);
}

// Two threads inside precompile at once (both past their start before either launches):
// each collects and loads its own launches, nothing runs, and the real calls afterwards
// compile nothing.
TEST(OpRuntime, PrecompileOnTwoThreadsAtOnceCollectsEachThreadsLaunches) {
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  const int64_t m = 3, n = 40, k = 96;
  wavetile::test::HostBuffer x(DType::bf16, m * k), w(DType::bf16, n * k);
  TensorRef tx = TensorRef::contiguous(x.data(), DType::bf16, {m, k});
  TensorRef tw = TensorRef::contiguous(w.data(), DType::bf16, {n, k});
  const std::vector<std::vector<GemmConfig>> perThread{{{16, 32, 32, 1, 4, 1}, {16, 64, 32, 1, 4, 1}},
                                                       {{16, 32, 64, 1, 4, 1}}};
  std::vector<wavetile::test::HostBuffer> outs;
  for (size_t t = 0; t < perThread.size(); ++t) {
    outs.emplace_back(DType::f32, m * n);
    outs.back().poison();
  }
  std::latch bothCollecting(2);
  std::vector<size_t> loaded(perThread.size());
  std::vector<std::string> errors(perThread.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < perThread.size(); ++t)
    threads.emplace_back([&, t] {
      loaded[t] = host.runtime->precompile([&] {
        bothCollecting.arrive_and_wait();
        for (const GemmConfig &c : perThread[t])
          EXPECT_TRUE(gemm_a16w16(*host.runtime, TensorRef::contiguous(outs[t].data(), DType::f32, {m, n}), tx, tw,
                                  nullptr, &errors[t], c))
              << errors[t];
      });
    });
  for (std::thread &thread : threads)
    thread.join();
  for (size_t t = 0; t < perThread.size(); ++t) {
    EXPECT_EQ(loaded[t], perThread[t].size()) << "thread " << t;
    for (int64_t i = 0; i < m * n; ++i)
      ASSERT_TRUE(std::isnan(outs[t].get(i))) << "thread " << t << "'s precompile ran a kernel";
  }
  EXPECT_EQ(host.runtime->loadedModules(), 3u);
  for (size_t t = 0; t < perThread.size(); ++t)
    for (const GemmConfig &c : perThread[t])
      ASSERT_TRUE(gemm_a16w16(*host.runtime, TensorRef::contiguous(outs[t].data(), DType::f32, {m, n}), tx, tw, nullptr,
                              &errors[t], c))
          << errors[t];
  EXPECT_EQ(host.runtime->loadedModules(), 3u);
}

} // namespace

#include "wavetile/ops/GemmTuner.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

/// A fresh directory for tuned tables, named by WAVETILE_TUNED_DIR while alive.
struct TunedDir {
  std::filesystem::path path;
  TunedDir() {
    path = std::filesystem::temp_directory_path() / ("wavetile-tuned-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path);
    setenv("WAVETILE_TUNED_DIR", path.c_str(), 1);
  }
  ~TunedDir() {
    unsetenv("WAVETILE_TUNED_DIR");
    std::filesystem::remove_all(path);
  }
};

/// Writes the results' table at `path` and reads it back; nullopt, with a test failure, when
/// either step fails.
std::optional<TunedConfigs> writtenTable(const std::string &path, OpRuntime &rt, const GemmTuneOptions &options,
                                         const std::vector<GemmTuneResult> &results) {
  std::string error;
  if (!writeGemmTable(path, rt, options, results, &error)) {
    ADD_FAILURE() << error;
    return std::nullopt;
  }
  std::optional<TunedConfigs> loaded = TunedConfigs::load(path, gemmTuningKeys(), &error);
  if (!loaded)
    ADD_FAILURE() << error;
  return loaded;
}

// The tuner drops candidates that cannot run (an invalid configuration here), keeps the
// fastest correct one, and writes the table gemm_a16w16 then reads for that shape.
TEST(GemmTuner, WritesTheFastestCorrectCandidateAndTheOpUsesIt) {
  TunedDir dir;
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  GemmTuneOptions options;
  options.output = DType::f32;
  options.bias = true;
  options.warmup = 0;
  options.repetitions = 1;
  options.candidates = {GemmConfig{16, 32, 32, 1, 4, 1}, GemmConfig{16, 32, 32, 1, 4, 2}, GemmConfig{24, 32, 32, 1, 4, 1}};
  std::vector<GemmTuneResult> results;
  ASSERT_TRUE(tuneGemm(*host.runtime, {{3, 40, 96}}, options, &results, &error)) << error;
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].tried, 3);
  EXPECT_EQ(results[0].failed, 1);
  EXPECT_NE(results[0].firstFailure.find("powers of two"), std::string::npos) << results[0].firstFailure;
  EXPECT_EQ(results[0].wrong, 0);
  ASSERT_TRUE(results[0].best);
  std::string table = (dir.path / "gemm_a16w16.csv").string();
  auto loaded = writtenTable(table, *host.runtime, options, results);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->size(), 1u);

  // A fresh runtime reads the table: a row made invalid by hand shows it is used.
  {
    std::ofstream(table) << "target,cu_num,M,N,K,dtype,out_dtype,bias,block_m,block_n,block_k,stages,warps,split_k,us\n"
                         << host.runtime->target() << "," << host.device->multiprocessors()
                         << ",3,40,96,bf16,f32,1,16,32,x,1,4,1,1.0\n";
  }
  wavetile::test::HostOps fresh;
  std::vector<float> out(3 * 40), bias(40);
  std::vector<uint16_t> x(3 * 96), w(40 * 96);
  TensorRef b = TensorRef::contiguous(bias.data(), DType::f32, {40});
  wavetile::test::expectRefused(
      gemm_a16w16(*fresh.runtime, TensorRef::contiguous(out.data(), DType::f32, {3, 40}),
                  TensorRef::contiguous(x.data(), DType::bf16, {3, 96}),
                  TensorRef::contiguous(w.data(), DType::bf16, {40, 96}), &b, &error),
      error, "tuned configuration: column 'block_k' is 'x', not an integer");
  // M = 2 pads to 16, which has no row: the default runs.
  EXPECT_TRUE(gemm_a16w16(*fresh.runtime, TensorRef::contiguous(out.data(), DType::f32, {2, 40}),
                          TensorRef::contiguous(x.data(), DType::bf16, {2, 96}),
                          TensorRef::contiguous(w.data(), DType::bf16, {40, 96}), &b, &error))
      << error;
}

GemmConfig skinny(GemmConfig c) {
  c.skinny = true;
  return c;
}

/// Tuner options for `op` on `input` trying `candidates`, each run once untimed beforehand.
GemmTuneOptions runOnce(const std::string &op, DType input, std::vector<GemmConfig> candidates) {
  GemmTuneOptions options;
  options.op = op;
  options.input = input;
  options.warmup = 0;
  options.repetitions = 1;
  options.candidates = std::move(candidates);
  return options;
}

// A candidate whose kernel returns without writing leaves the poisoned output: the tuner
// counts it wrong, names why, keeps the correct one, and writes no row for a shape where
// every candidate was wrong. The fault: an emulated device on which launches of at least
// `skippedFrom` programs do nothing.
TEST(GemmTuner, DropsWrongCandidatesAndNeverWritesThem) {
  TunedDir dir;
  std::string error;
  std::unique_ptr<Device> device = openEmulatedDevice("gfx942", &error);
  ASSERT_TRUE(device) << error;
  static const EmulatorHooks *emulator = registeredEmulator();
  static uint32_t skippedFrom = 0;
  static const EmulatorHooks faulty{
      emulator->load, emulator->unload,
      [](void *module, std::string_view kernel, std::array<uint32_t, 3> grid, const KernelArg *args, size_t count,
         std::string *error) {
        return grid[0] * grid[1] * grid[2] >= skippedFrom || emulator->launch(module, kernel, grid, args, count, error);
      }};
  registerEmulator(&faulty);
  struct Restore {
    ~Restore() { registerEmulator(emulator); }
  } restore;
  std::unique_ptr<OpRuntime> rt = OpRuntime::create(*device, &error);
  ASSERT_TRUE(rt) << error;
  // 40 columns: two programs of 32 columns, one of 64.
  GemmTuneOptions options =
      runOnce("gemm_a16w16", DType::bf16, {GemmConfig{16, 32, 32, 1, 4, 1}, GemmConfig{16, 64, 32, 1, 4, 1}});
  std::vector<GemmTuneResult> results;
  skippedFrom = 2;
  ASSERT_TRUE(tuneGemm(*rt, {{3, 40, 96}}, options, &results, &error)) << error;
  skippedFrom = 1;
  ASSERT_TRUE(tuneGemm(*rt, {{5, 40, 96}}, options, &results, &error)) << error;
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].tried, 2);
  EXPECT_EQ(results[0].failed, 0) << results[0].firstFailure;
  EXPECT_EQ(results[0].wrong, 1);
  EXPECT_NE(results[0].firstFailure.find("16x32x32/s1/w4/k1: output differs from the reference"), std::string::npos)
      << results[0].firstFailure;
  ASSERT_TRUE(results[0].best);
  EXPECT_EQ(results[0].best->blockN, 64);
  EXPECT_EQ(results[1].wrong, 2);
  EXPECT_FALSE(results[1].best);
  auto loaded = writtenTable((dir.path / "gemm_a16w16.csv").string(), *rt, options, results);
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ(loaded->rows()[0].at("M"), "3");
  EXPECT_EQ(loaded->rows()[0].at("block_n"), "64");
}

// gemm_a4w4's tuner: random packed codes and e8m0 scales, every candidate checked against the
// double reference of the scaled codes (a mis-decoded reference would drop both), and the
// table keyed by f4E2M1FN.
TEST(GemmTuner, TunesGemmA4W4AgainstTheScaledCodes) {
  TunedDir dir;
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  GemmTuneOptions options =
      runOnce("gemm_a4w4", DType::f4E2M1FN, {GemmConfig{16, 32, 64, 3, 4, 1}, skinny({4, 8, 128, 1, 4, 2})});
  std::vector<GemmTuneResult> results;
  ASSERT_TRUE(tuneGemm(*host.runtime, {{3, 40, 320}}, options, &results, &error)) << error;
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].tried, 2);
  EXPECT_EQ(results[0].failed, 0) << results[0].firstFailure;
  EXPECT_EQ(results[0].wrong, 0) << results[0].firstFailure;
  ASSERT_TRUE(results[0].best);
  auto loaded = writtenTable((dir.path / "gemm_a4w4.csv").string(), *host.runtime, options, results);
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ(loaded->rows()[0].at("dtype"), "f4E2M1FN");
  EXPECT_EQ(loaded->rows()[0].at("out_dtype"), "bf16");

  std::vector<GemmTuneResult> none;
  EXPECT_FALSE(tuneGemm(*host.runtime, {{3, 40, 80}}, options, &none, &error));
  EXPECT_NE(error.find("K a multiple of 32"), std::string::npos) << error;
}

// gemm_a8w8_blockscale's tuner: fp8 codes with f32 scales per 1x128 of X and 128x128 of W
// (K 300 ends in a partial block, N 200 in a partial block row), each block's sum scaled in
// the double reference; every candidate takes K steps of a block, none is skinny.
TEST(GemmTuner, TunesBlockScaledGemmsPerScaleBlock) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  GemmTuneOptions options = runOnce("gemm_a8w8_blockscale", DType::f8E4M3FN,
                                    {GemmConfig{16, 32, 32, 1, 4, 1}, GemmConfig{16, 32, 128, 1, 4, 2},
                                     skinny({4, 8, 128, 1, 4, 1})});
  std::vector<GemmTuneResult> results;
  ASSERT_TRUE(tuneGemm(*host.runtime, {{3, 200, 300}}, options, &results, &error)) << error;
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].tried, 2); // the skinny one is dropped
  EXPECT_EQ(results[0].failed, 0) << results[0].firstFailure;
  EXPECT_EQ(results[0].wrong, 0) << results[0].firstFailure;
  ASSERT_TRUE(results[0].best);
  EXPECT_EQ(results[0].best->blockK, 128);
  options.bias = true;
  EXPECT_FALSE(tuneGemm(*host.runtime, {{3, 200, 300}}, options, &results, &error));
  EXPECT_EQ(error, "gemm_a8w8_blockscale takes no bias");
}

// The swept MXFP4 configurations are valid, decode-sized for M <= 64 (skinny only for a few
// rows, the ring otherwise), with K steps the packed codes fill.
TEST(GemmTuner, MxCandidatesAreValid) {
  for (int64_t m : {1, 2, 5, 16, 64, 300}) {
    std::vector<GemmConfig> candidates = gemmCandidates({m, 8192, 8192}, DType::f4E2M1FN);
    ASSERT_FALSE(candidates.empty()) << m;
    for (const GemmConfig &c : candidates) {
      EXPECT_EQ(c.problem(), "") << m;
      EXPECT_GE(c.blockK, 64) << c.key();
      EXPECT_TRUE(!c.skinny || m <= 8) << c.key();
      EXPECT_TRUE(m > 64 || c.skinny || c.stages == 3) << c.key();
    }
    EXPECT_EQ(std::count_if(candidates.begin(), candidates.end(), [](const GemmConfig &c) { return c.skinny; }) > 0,
              m <= 8)
        << m;
  }
}

// Decode rings deeper than 4 stages are swept only where a split's K fills them and they fit
// sm_90's shared memory; they are there for long K, absent for short K.
TEST(GemmTuner, DeepRingsFitTheirSplitAndSharedMemory) {
  for (DType input : {DType::bf16, DType::f8E4M3FN})
    for (GemmShape shape : {GemmShape{64, 4096, 4096}, GemmShape{16, 8192, 1024}, GemmShape{32, 4096, 256}}) {
      const std::vector<GemmConfig> candidates = gemmCandidates(shape, input);
      int64_t deep = 0;
      for (const GemmConfig &c : candidates) {
        EXPECT_EQ(c.problem(), "") << c.key();
        if (c.skinny || c.stages <= 4)
          continue;
        ++deep;
        EXPECT_GE(shape.k / c.splitK, c.stages * c.blockK) << c.key();
        EXPECT_LE(c.stages * (c.blockM + c.blockN) * c.blockK * dsl::bitWidth(input) / 8, 200 << 10) << c.key();
      }
      EXPECT_EQ(deep > 0, shape.k >= 1024) << dsl::dtypeName(input) << " K " << shape.k; // 6 x 64 > 256
    }
}

TEST(GemmTuner, AMalformedTableIsReportedByTheOp) {
  TunedDir dir;
  std::ofstream(dir.path / "gemm_a16w16.csv") << "target,M,N\nhost,1,2\n";
  std::string error;
  wavetile::test::HostOps host;
  std::vector<float> out(8);
  std::vector<uint16_t> x(64), w(64);
  wavetile::test::expectRefused(gemm_a16w16(*host.runtime, TensorRef::contiguous(out.data(), DType::f32, {1, 2}),
                                            TensorRef::contiguous(x.data(), DType::bf16, {1, 32}),
                                            TensorRef::contiguous(w.data(), DType::bf16, {2, 32}), nullptr, &error),
                                error, "gemm_a16w16.csv:1: the header has no key column 'cu_num'");
}

} // namespace

namespace {

/// `count` random 8-bit codes of `dtype` without NaNs (fn: S.1111.111; fnuz: 0x80).
std::vector<uint8_t> randomCodes(std::mt19937_64 &rng, DType dtype, int64_t count) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> codes(count);
  for (auto &b : codes)
    do
      b = uint8_t(byte(rng));
    while (dtype == DType::f8E4M3FNUZ ? b == 0x80 : dtype == DType::f8E4M3FN && (b & 0x7f) == 0x7f);
  return codes;
}

struct ScaledCase {
  DType in, out;
  int64_t m, n, k;
  bool perToken, perChannel, bias;
  int64_t split;
  std::optional<GemmConfig> config = std::nullopt; // else the default, or 16x32x32 tiles when splitting
  bool preshuffled = false;                        // gemm_a8w8_bpreshuffle
};

/// W [N, K] of 8-bit codes as AITER's shuffle_weight(w, layout=(16, 16)) leaves it: viewed
/// as [N/16, 16, K/32, 2, 16] and permuted to (0, 2, 3, 1, 4).
std::vector<uint8_t> shuffleWeight(const std::vector<uint8_t> &w, int64_t n, int64_t k) {
  std::vector<uint8_t> shuffled;
  shuffled.reserve(w.size());
  for (int64_t nb = 0; nb < n / 16; ++nb)
    for (int64_t kb = 0; kb < k / 32; ++kb)
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t row = 0; row < 16; ++row)
          for (int64_t e = 0; e < 16; ++e)
            shuffled.push_back(w[(nb * 16 + row) * k + kb * 32 + half * 16 + e]);
  return shuffled;
}

class GemmA8W8Test : public ::testing::TestWithParam<ScaledCase> {};

TEST_P(GemmA8W8Test, MatchesDoubleReference) {
  const ScaledCase c = GetParam();
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::uniform_real_distribution<float> scale(0.001f, 0.1f);
  const bool fnuz = c.in == DType::f8E4M3FNUZ;
  auto value = [&](uint8_t b) { return c.in == DType::i8 ? double(int8_t(b)) : decodeFp8(b, fnuz); };
  std::vector<uint8_t> x = randomCodes(rng, c.in, c.m * c.k), w = randomCodes(rng, c.in, c.n * c.k);
  std::vector<float> xs(c.perToken ? c.m : 1), ws(c.perChannel ? c.n : 1);
  for (float &s : xs)
    s = scale(rng);
  for (float &s : ws)
    s = scale(rng);
  HostBuffer bias(c.out, c.n), out(c.out, c.m * c.n);
  for (int64_t i = 0; i < c.n; ++i)
    bias.set(i, scale(rng) * 10);
  out.poison();
  TensorRef b = TensorRef::contiguous(bias.data(), c.out, {c.n});
  std::optional<GemmConfig> config = c.config;
  if (!config && c.split > 1)
    config = GemmConfig{16, 32, 32, 2, 4, c.split};
  std::vector<uint8_t> wArgument = c.preshuffled ? shuffleWeight(w, c.n, c.k) : w;
  ASSERT_TRUE((c.preshuffled ? gemm_a8w8_bpreshuffle : gemm_a8w8)(
      *host.runtime, TensorRef::contiguous(out.data(), c.out, {c.m, c.n}),
      TensorRef::contiguous(x.data(), c.in, {c.m, c.k}), TensorRef::contiguous(wArgument.data(), c.in, {c.n, c.k}),
      TensorRef::contiguous(xs.data(), DType::f32, c.perToken ? std::vector<int64_t>{c.m, 1} : std::vector<int64_t>{1}),
      TensorRef::contiguous(ws.data(), DType::f32,
                            c.perChannel ? std::vector<int64_t>{1, c.n} : std::vector<int64_t>{1}),
      c.bias ? &b : nullptr, &error, config))
      << error;
  int64_t bad = 0;
  for (int64_t r = 0; r < c.m; ++r)
    for (int64_t col = 0; col < c.n; ++col) {
      double sum = 0, magnitude = 0;
      for (int64_t i = 0; i < c.k; ++i) {
        double p = value(x[r * c.k + i]) * value(w[col * c.k + i]);
        sum += p;
        magnitude += std::abs(p);
      }
      double s = double(xs[c.perToken ? r : 0]) * double(ws[c.perChannel ? col : 0]);
      double ref = sum * s + (c.bias ? double(bias.get(col)) : 0.0);
      // int8 sums are exact in i32: only the f32 scaling may round, far below one unit.
      double tolerance = out.ulp() * std::abs(ref) + (c.in == DType::i8 ? 1e-7 : 2e-5) * magnitude * s + 1e-6;
      double got = out.get(r * c.n + col);
      if (!(std::abs(got - ref) <= tolerance) && bad++ < 5)
        ADD_FAILURE() << "out[" << r << ", " << col << "] = " << got << ", expected " << ref << " ± " << tolerance;
    }
  EXPECT_EQ(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Host, GemmA8W8Test,
    ::testing::Values(
        ScaledCase{DType::i8, DType::bf16, 3, 100, 130, true, true, true, 1},
        ScaledCase{DType::f8E4M3FN, DType::bf16, 17, 70, 96, true, true, false, 1},
        ScaledCase{DType::f8E4M3FNUZ, DType::f32, 2, 64, 200, false, false, true, 1},
        ScaledCase{DType::i8, DType::f16, 130, 33, 64, false, true, false, 1},
        // The rest of the fp8 inputs by outputs.
        ScaledCase{DType::f8E4M3FN, DType::f16, 1, 37, 150, true, false, true, 1},
        ScaledCase{DType::f8E4M3FNUZ, DType::bf16, 17, 45, 130, false, true, true, 1},
        ScaledCase{DType::f8E4M3FNUZ, DType::f16, 130, 29, 70, true, true, false, 1},
        // int8 skinny: exact i32 sums of byte products (dp4a on NVIDIA), tails in N and K
        ScaledCase{DType::i8, DType::bf16, 5, 70, 200, true, true, true, 2, GemmConfig{8, 16, 64, 1, 4, 2, true}},
        ScaledCase{DType::i8, DType::f32, 1, 33, 520, true, false, false, 1, GemmConfig{1, 32, 256, 1, 4, 1, true}},
        ScaledCase{DType::i8, DType::bf16, 1, 75, 4200, true, true, true, 1}, // the default: skinny, K split 2
        ScaledCase{DType::f8E4M3FN, DType::f32, 5, 40, 500, true, false, true, 3},
        // fp8 skinny: OCP e4m3 widened in pairs (one instruction a pair on NVIDIA), tails in N and K
        ScaledCase{DType::f8E4M3FN, DType::bf16, 3, 70, 300, true, true, true, 2, GemmConfig{4, 16, 64, 1, 4, 2, true}},
        // sm_90a wgmma: 128-byte fp8 rows, and 32-byte rows
        ScaledCase{DType::f8E4M3FN, DType::bf16, 130, 200, 320, true, true, true, 1, GemmConfig{64, 64, 128, 2, 4, 1}},
        ScaledCase{DType::f8E4M3FN, DType::f32, 70, 64, 96, false, true, false, 1, GemmConfig{64, 64, 32, 2, 4, 1}},
        ScaledCase{DType::i8, DType::bf16, 130, 200, 320, true, true, true, 1, GemmConfig{64, 64, 128, 3, 4, 1}},
        // W preshuffled: the defaults (int8 one row: skinny), a pipelined tile, the
        // skinny kernel split over K, a wgmma tile on sm_90a
        ScaledCase{DType::f8E4M3FN, DType::bf16, 17, 64, 96, true, true, true, 1, std::nullopt, true},
        ScaledCase{DType::i8, DType::f32, 1, 48, 4160, true, false, false, 1, std::nullopt, true},
        ScaledCase{DType::i8, DType::f16, 130, 48, 160, false, true, false, 1, GemmConfig{64, 64, 64, 2, 4, 1}, true},
        ScaledCase{DType::f8E4M3FNUZ, DType::f32, 3, 96, 256, true, false, true, 2,
                   GemmConfig{4, 32, 64, 2, 4, 2, true}, true},
        ScaledCase{DType::f8E4M3FN, DType::bf16, 130, 208, 320, true, true, true, 1, GemmConfig{64, 64, 128, 2, 4, 1},
                   true}),
    [](const auto &info) {
      const ScaledCase &c = info.param;
      return std::string(dsl::dtypeName(c.in)) + "_to_" + dsl::dtypeName(c.out) + "_" + std::to_string(c.m) + "x" +
             std::to_string(c.n) + "x" + std::to_string(c.k) + (c.perToken ? "_token" : "_tensor") +
             (c.perChannel ? "_channel" : "") + (c.bias ? "_bias" : "") + "_split" + std::to_string(c.split) +
             (c.config ? "_bk" + std::to_string(c.config->blockK) : "") +
             (c.config && c.config->skinny ? "_skinny" : "") + (c.preshuffled ? "_bpreshuffle" : "");
    });

TEST(GemmA8W8Op, RefusesBadScales) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::vector<float> a(256);
  std::vector<int8_t> q(256);
  TensorRef x = TensorRef::contiguous(q.data(), DType::i8, {4, 32}), w = TensorRef::contiguous(q.data(), DType::i8, {8, 32});
  TensorRef out = TensorRef::contiguous(a.data(), DType::f32, {4, 8});
  auto refuses = [&](bool ok, const std::string &says) { wavetile::test::expectRefused(ok, error, says); };
  refuses(gemm_a8w8(*host.runtime, out, x, w, TensorRef::contiguous(a.data(), DType::f32, {3}),
                    TensorRef::contiguous(a.data(), DType::f32, {8}), nullptr, &error),
          "'x_scale' has 3 elements; expected 4 (one per row) or 1 (per tensor)");
  // x's scales run down its rows: torch would broadcast a [1, M] one along the output's columns.
  std::vector<float> scales(16, 1.0f);
  refuses(gemm_a8w8(*host.runtime, out, x, w, TensorRef::contiguous(scales.data(), DType::f32, {1, 4}),
                    TensorRef::contiguous(scales.data() + 8, DType::f32, {8}), nullptr, &error),
          "'x_scale' has shape [1, 4]; one scale per row is [M] or [M, 1], M = 4");
  // W's may be [N, 1] (AITER's) as well as [1, N] (torch._scaled_mm's).
  EXPECT_TRUE(gemm_a8w8(*host.runtime, out, x, w, TensorRef::contiguous(scales.data(), DType::f32, {4, 1}),
                        TensorRef::contiguous(scales.data() + 8, DType::f32, {8, 1}), nullptr, &error))
      << error;
  refuses(gemm_a8w8(*host.runtime, out, x, TensorRef::contiguous(q.data(), DType::f8E4M3FN, {8, 32}),
                    TensorRef::contiguous(a.data(), DType::f32, {4}), TensorRef::contiguous(a.data(), DType::f32, {8}),
                    nullptr, &error),
          "'w' has dtype f8E4M3FN; expected one of i8");
  refuses(gemm_a8w8(*host.runtime, out, x, w, TensorRef::contiguous(a.data(), DType::f32, {4}),
                    TensorRef::contiguous(a.data(), DType::bf16, {8}), nullptr, &error),
          "'w_scale' has dtype bf16; expected f32");
  // A preshuffled W comes in whole 16-row blocks and 32-column tiles, contiguous.
  TensorRef ones = TensorRef::contiguous(a.data(), DType::f32, {1});
  refuses(gemm_a8w8_bpreshuffle(*host.runtime, TensorRef::contiguous(a.data(), DType::f32, {4, 8}), x, w, ones, ones,
                                nullptr, &error),
          "gemm_a8w8_bpreshuffle: a preshuffled 'w' needs N a multiple of 16 and K of 32, got [8, 32]");
  refuses(gemm_a8w8_bpreshuffle(*host.runtime, TensorRef::contiguous(a.data(), DType::f32, {2, 16}),
                                TensorRef::contiguous(q.data(), DType::i8, {2, 32}),
                                TensorRef{q.data(), DType::i8, {16, 32}, {40, 1}}, ones, ones, nullptr, &error),
          "gemm_a8w8_bpreshuffle: a preshuffled 'w' must be contiguous, got strides 40, 1");
}

} // namespace

namespace {

struct BlockCase {
  DType in, out;
  int64_t m, n, k, split;
  int64_t stages = 2; // with split > 1 (or stages > 2): 16x32 tiles (32x64 with more rows)
  bool xScaleKBlockMajor = false; // x_scale [M, K/128] stored with unit stride along M
  int64_t tileN = 0;              // 64-row tiles this wide (64: wgmma on sm_90a; 256: two scale blocks)
  std::optional<GemmConfig> config = std::nullopt; // instead of the above
};

/// Runs `c` against the double reference; false (with the reason in *skipped) where the
/// target's shared memory cannot hold the tile.
bool checkBlockScale(const BlockCase &c, std::string *skipped) {
  std::string error;
  wavetile::test::HostOps host;
  EXPECT_TRUE(host.runtime);
  if (!host.runtime)
    return true;
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::uniform_real_distribution<float> scale(0.001f, 0.1f);
  const bool fnuz = c.in == DType::f8E4M3FNUZ;
  const int64_t kb = (c.k + 127) / 128, nb = (c.n + 127) / 128;
  std::vector<uint8_t> x = randomCodes(rng, c.in, c.m * c.k), w = randomCodes(rng, c.in, c.n * c.k);
  std::vector<float> xs(c.m * kb), ws(nb * kb);
  for (float &s : xs)
    s = scale(rng);
  for (float &s : ws)
    s = scale(rng);
  HostBuffer out(c.out, c.m * c.n);
  out.poison();
  std::vector<float> kBlockMajor(c.m * kb); // xs[r, b] at b * M + r
  for (int64_t r = 0; r < c.m; ++r)
    for (int64_t b = 0; b < kb; ++b)
      kBlockMajor[b * c.m + r] = xs[r * kb + b];
  TensorRef xScale = c.xScaleKBlockMajor ? TensorRef{kBlockMajor.data(), DType::f32, {c.m, kb}, {1, c.m}}
                                         : TensorRef::contiguous(xs.data(), DType::f32, {c.m, kb});
  std::optional<GemmConfig> config = c.config;
  if (!config && c.tileN)
    config = GemmConfig{64, c.tileN, 128, c.stages, 4, c.split};
  else if (!config && (c.split > 1 || c.stages > 2))
    config = c.m > 16 ? GemmConfig{32, 64, 128, c.stages, 4, c.split} : GemmConfig{16, 32, 128, c.stages, 4, c.split};
  const bool ok = gemm_a8w8_blockscale(*host.runtime, TensorRef::contiguous(out.data(), c.out, {c.m, c.n}),
                                       TensorRef::contiguous(x.data(), c.in, {c.m, c.k}),
                                       TensorRef::contiguous(w.data(), c.in, {c.n, c.k}), xScale,
                                       TensorRef::contiguous(ws.data(), DType::f32, {nb, kb}), &error, config);
  if (!ok && refusedForSharedMemory(error)) {
    *skipped = error;
    return false;
  }
  EXPECT_TRUE(ok) << error;
  if (!ok)
    return true;
  int64_t bad = 0;
  for (int64_t r = 0; r < c.m; ++r)
    for (int64_t col = 0; col < c.n; ++col) {
      double ref = 0, magnitude = 0;
      for (int64_t b = 0; b < kb; ++b) {
        double block = 0, size = 0;
        for (int64_t i = b * 128; i < std::min(c.k, (b + 1) * 128); ++i) {
          double p = decodeFp8(x[r * c.k + i], fnuz) * decodeFp8(w[col * c.k + i], fnuz);
          block += p;
          size += std::abs(p);
        }
        double s = double(xs[r * kb + b]) * double(ws[(col / 128) * kb + b]);
        ref += block * s;
        magnitude += size * s;
      }
      double tolerance = out.ulp() * std::abs(ref) + 2e-5 * magnitude + 1e-6;
      double got = out.get(r * c.n + col);
      if (!(std::abs(got - ref) <= tolerance) && bad++ < 5)
        ADD_FAILURE() << "out[" << r << ", " << col << "] = " << got << ", expected " << ref << " ± " << tolerance;
    }
  EXPECT_EQ(bad, 0);
  return true;
}

class GemmBlockScaleTest : public ::testing::TestWithParam<BlockCase> {};

TEST_P(GemmBlockScaleTest, MatchesDoubleReference) {
  std::string skipped;
  // gfx942's 64 KiB of LDS cannot hold two 64x256 K steps.
  if (!checkBlockScale(GetParam(), &skipped)) {
    EXPECT_TRUE(GetParam().tileN > 128 && wavetile::test::HostOps().runtime->target() == "gfx942") << skipped;
    GTEST_SKIP() << skipped;
  }
}

INSTANTIATE_TEST_SUITE_P(Host, GemmBlockScaleTest,
                         ::testing::Values(BlockCase{DType::f8E4M3FN, DType::bf16, 5, 200, 300, 1},
                                           BlockCase{DType::f8E4M3FNUZ, DType::f32, 3, 130, 512, 2},
                                           BlockCase{DType::f8E4M3FN, DType::f16, 70, 64, 128, 1},
                                           BlockCase{DType::f8E4M3FNUZ, DType::bf16, 1, 150, 260, 1},
                                           BlockCase{DType::f8E4M3FN, DType::bf16, 1, 300, 200, 1},
                                           BlockCase{DType::f8E4M3FNUZ, DType::f16, 17, 90, 200, 1},
                                           // Deeper rings: the scales prefetched with the operands
                                           // and broadcast into the accumulator's layout from the
                                           // ring; tails in M, N and K (70x64x128 above: wgmma on
                                           // sm_90a with a 2-deep ring)
                                           BlockCase{DType::f8E4M3FN, DType::bf16, 70, 200, 700, 1, 3},
                                           BlockCase{DType::f8E4M3FN, DType::f32, 9, 130, 600, 2, 4},
                                           // AITER's K-block-major x_scale, default and ring
                                           BlockCase{DType::f8E4M3FN, DType::bf16, 5, 200, 300, 1, 2, true},
                                           BlockCase{DType::f8E4M3FNUZ, DType::f16, 70, 200, 700, 1, 3, true},
                                           // wgmma on sm_90a over a 6-step K loop, its
                                           // scales read from the ring; tails
                                           BlockCase{DType::f8E4M3FN, DType::bf16, 130, 200, 700, 1, 2, false, 64},
                                           // tiles wider than a scale block read a scale per column
                                           BlockCase{DType::f8E4M3FN, DType::f32, 70, 300, 400, 1, 2, false, 256}),
                         [](const auto &info) {
                           const BlockCase &c = info.param;
                           return std::string(dsl::dtypeName(c.in)) + "_to_" + dsl::dtypeName(c.out) + "_" +
                                  std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) +
                                  "_split" + std::to_string(c.split) + "_stages" + std::to_string(c.stages) +
                                  (c.xScaleKBlockMajor ? "_xs_kmajor" : "") +
                                  (c.tileN ? "_64x" + std::to_string(c.tileN) : "");
                         });

TEST(GemmBlockScaleOp, RefusesMisshapenScales) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::vector<float> a(1024);
  std::vector<uint8_t> q(4096);
  wavetile::test::expectRefused(
      gemm_a8w8_blockscale(*host.runtime, TensorRef::contiguous(a.data(), DType::f32, {4, 8}),
                           TensorRef::contiguous(q.data(), DType::f8E4M3FN, {4, 256}),
                           TensorRef::contiguous(q.data(), DType::f8E4M3FN, {8, 256}),
                           TensorRef::contiguous(a.data(), DType::f32, {4, 1}),
                           TensorRef::contiguous(a.data(), DType::f32, {1, 2}), &error),
      error, "'x_scale' has shape [4, 1]; expected [4, 2]");
  // Neither row-major nor K-block-major.
  wavetile::test::expectRefused(gemm_a8w8_blockscale(*host.runtime, TensorRef::contiguous(a.data(), DType::f32, {4, 8}),
                                                     TensorRef::contiguous(q.data(), DType::f8E4M3FN, {4, 256}),
                                                     TensorRef::contiguous(q.data(), DType::f8E4M3FN, {8, 256}),
                                                     TensorRef{a.data(), DType::f32, {4, 2}, {3, 2}},
                                                     TensorRef::contiguous(a.data(), DType::f32, {1, 2}), &error),
                                error, "'x_scale' must have unit stride along its last dimension, got strides [3, 2]");
}

} // namespace

namespace {

/// The configurations of `op`'s shipped table, each once: rows that differ only in shape
/// share one entry, rows whose `variant` (e.g. the operand dtype) differs do not.
std::vector<std::pair<TunedRow, GemmConfig>>
distinctShippedConfigs(const char *op, const std::function<std::string(const TunedRow &)> &variant = {}) {
  std::istringstream in(shippedTable(op));
  std::string error;
  auto table = TunedConfigs::parse(in, op, gemmTuningKeys(), &error);
  EXPECT_TRUE(table) << error;
  std::vector<std::pair<TunedRow, GemmConfig>> distinct;
  std::set<std::string> seen;
  for (const TunedRow &row : table ? table->rows() : std::vector<TunedRow>{}) {
    std::optional<GemmConfig> config = gemmConfigOf(row, &error);
    EXPECT_TRUE(config) << op << ": " << error;
    if (config && seen.insert((variant ? variant(row) + "/" : "") + config->key()).second)
      distinct.emplace_back(row, *config);
  }
  return distinct;
}

// Every configuration the shipped tables name runs (on small shapes with tails: one K step
// per split plus 8) against the double reference, with the table's op: gemm_a16w16 from
// bf16, gemm_a8w8 from the row's int8 or the device's fp8 with per-token and per-channel
// scales. Under
// WAVETILE_TEST_EMULATE this runs each as the GPU target's kernel; configurations whose
// shared memory the target lacks (the 128x128 tiles on gfx942) are reported and skipped.
TEST(GemmOp, ShippedConfigurationsMatchTheReference) {
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::normal_distribution<float> value(0.f, 1.f);
  const DType fp8 = defaultFp8(host.runtime->target());
  int ran = 0;
  for (const char *op : {"gemm_a16w16", "gemm_a8w8"}) {
    const bool quantized = std::string(op) == "gemm_a8w8";
    std::string error;
    for (const auto &[row, config] :
         distinctShippedConfigs(op, [](const TunedRow &row) { return row.at("dtype") == "i8" ? "i8" : ""; })) {
      const DType codes8 = quantized && row.at("dtype") == "i8" ? DType::i8 : fp8;
      SCOPED_TRACE(std::string(op) + " " + (quantized ? dsl::dtypeName(codes8) : "bf16") + " " + config.key());
      const int64_t m = config.blockM + 3, n = config.blockN + 5, k = config.blockK * config.splitK + 8;
      std::vector<double> xv(m * k), wv(n * k);
      HostBuffer x(DType::bf16, m * k), w(DType::bf16, n * k), out(DType::f32, m * n);
      std::vector<uint8_t> x8(m * k), w8(n * k);
      std::vector<float> xs(m), ws(n);
      auto fill = [&](std::vector<double> &values, HostBuffer &h, std::vector<uint8_t> &codes) {
        if (quantized)
          codes = randomCodes(rng, codes8, int64_t(values.size()));
        for (size_t i = 0; i < values.size(); ++i) {
          if (!quantized)
            h.set(i, value(rng));
          values[i] = !quantized               ? h.get(i)
                      : codes8 == DType::i8 ? double(int8_t(codes[i]))
                                            : decodeFp8(codes[i], fp8 == DType::f8E4M3FNUZ);
        }
      };
      fill(xv, x, x8);
      fill(wv, w, w8);
      for (float &s : xs)
        s = std::uniform_real_distribution<float>(0.01f, 0.1f)(rng);
      for (float &s : ws)
        s = std::uniform_real_distribution<float>(0.01f, 0.1f)(rng);
      out.poison();
      TensorRef tout = TensorRef::contiguous(out.data(), DType::f32, {m, n});
      bool ok = quantized ? gemm_a8w8(*host.runtime, tout, TensorRef::contiguous(x8.data(), codes8, {m, k}),
                                      TensorRef::contiguous(w8.data(), codes8, {n, k}),
                                      TensorRef::contiguous(xs.data(), DType::f32, {m, 1}),
                                      TensorRef::contiguous(ws.data(), DType::f32, {1, n}), nullptr, &error, config)
                          : gemm_a16w16(*host.runtime, tout, TensorRef::contiguous(x.data(), DType::bf16, {m, k}),
                                        TensorRef::contiguous(w.data(), DType::bf16, {n, k}), nullptr, &error, config);
      if (!ok && refusedForSharedMemory(error)) {
        std::printf("skipped %s %s on %s: %s\n", op, config.key().c_str(), host.runtime->target().c_str(),
                    error.c_str());
        continue;
      }
      ASSERT_TRUE(ok) << error;
      ++ran;
      int bad = 0;
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; ++c) {
          double ref = 0, magnitude = 0;
          for (int64_t i = 0; i < k; ++i) {
            double p = xv[r * k + i] * wv[c * k + i];
            ref += p;
            magnitude += std::abs(p);
          }
          const double s = quantized ? double(xs[r]) * double(ws[c]) : 1.0;
          const double exactness = codes8 == DType::i8 ? 1e-7 : 2e-5; // int8 sums exactly
          if (!(std::abs(out.get(r * n + c) - ref * s) <= exactness * magnitude * s + 1e-6) && bad++ < 3)
            ADD_FAILURE() << "out[" << r << ", " << c << "] = " << out.get(r * n + c) << ", expected " << ref * s;
        }
      EXPECT_EQ(bad, 0);
    }
  }
  EXPECT_GT(ran, 10);
}

// MXFP4 × MXFP4 against a double reference that decodes e2m1 from its own table: random codes,
// e8m0 scale bytes drawn from the given ranges; written as `outType`, with a random bias if asked.
void checkA4W4(int64_t m, int64_t n, int64_t k, std::optional<GemmConfig> config, std::pair<int, int> xExponents,
               std::pair<int, int> wExponents, DType outType = DType::f32, bool withBias = false) {
  SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " -> " +
               dsl::dtypeName(outType) + (withBias ? " with bias" : ""));
  const float e2m1[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::uniform_int_distribution<int> byte(0, 255), xExponent(xExponents.first, xExponents.second),
      wExponent(wExponents.first, wExponents.second);
  std::vector<uint8_t> x(m * k / 2), w(n * k / 2), xs(m * k / 32), ws(n * k / 32);
  for (auto &b : x)
    b = uint8_t(byte(rng));
  for (auto &b : w)
    b = uint8_t(byte(rng));
  for (auto &b : xs)
    b = uint8_t(xExponent(rng));
  for (auto &b : ws)
    b = uint8_t(wExponent(rng));
  auto value = [&](const std::vector<uint8_t> &packed, const std::vector<uint8_t> &scales, int64_t row, int64_t i) {
    uint8_t code = (packed[row * k / 2 + i / 2] >> (i % 2 * 4)) & 15;
    double v = (code & 8 ? -1 : 1) * e2m1[code & 7];
    return v * std::ldexp(1.0, int(scales[row * k / 32 + i / 32]) - 127);
  };
  HostBuffer out(outType, m * n), bias(outType, n);
  std::uniform_real_distribution<float> biasValue(-4.f, 4.f);
  for (int64_t c = 0; c < n; ++c)
    bias.set(c, biasValue(rng));
  const TensorRef biasRef = TensorRef::contiguous(bias.data(), outType, {n});
  out.poison();
  const bool ok = gemm_a4w4(*host.runtime, TensorRef::contiguous(out.data(), outType, {m, n}),
                            TensorRef::contiguous(x.data(), DType::f4E2M1FN, {m, k / 2}),
                            TensorRef::contiguous(w.data(), DType::f4E2M1FN, {n, k / 2}),
                            TensorRef::contiguous(xs.data(), DType::f8E8M0FNU, {m, k / 32}),
                            TensorRef::contiguous(ws.data(), DType::f8E8M0FNU, {n, k / 32}),
                            withBias ? &biasRef : nullptr, &error, config);
  // gfx942's 64 KiB of LDS cannot hold the H200's 64x256 ring (its epilogue's layout change
  // alone takes 64 KiB).
  if (!ok && refusedForSharedMemory(error)) {
    EXPECT_TRUE(host.runtime->target() == "gfx942" && config && config->blockN >= 256) << error;
    std::printf("not on %s: %s\n", host.runtime->target().c_str(), error.c_str());
    return;
  }
  ASSERT_TRUE(ok) << error;
  int64_t bad = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double ref = 0, magnitude = 0;
      for (int64_t i = 0; i < k; ++i) {
        double p = value(x, xs, r, i) * value(w, ws, c, i);
        ref += p;
        magnitude += std::abs(p);
      }
      if (withBias)
        ref += bias.get(c);
      double got = out.get(r * n + c);
      if (!(std::abs(got - ref) <= out.ulp() * std::abs(ref) + 2e-5 * magnitude + 1e-6) && bad++ < 5)
        ADD_FAILURE() << "out[" << r << ", " << c << "] = " << got << ", expected " << ref;
    }
  EXPECT_EQ(bad, 0);
}

// Scales around 2^0.
TEST(GemmA4W4Op, MatchesDoubleReference) {
  // Decode defaults, split-K, and 64×64 tiles (the block-scaled MFMA on gfx950 through the
  // emulator) without and (off gfx950) with a 3-stage ring, which carries the packed bytes
  // and scales to be decoded after it; 70 rows take the large-M default (a ring off gfx950).
  // The H200's M = 64 rings: 64x128 (4 warps) and 64x256 (8 warps, split 3 ways), each warp
  // on its own columns, so X is decoded once over all warps and shared, W in place; both
  // with row and column tails.
  // Skinny tiles decode in f32 (on NVIDIA to i8 codes whose products are summed exactly in
  // i32, W once for all rows, each row of X on its own), with tails in M, N and K and a
  // split; one row takes them by default off gfx950 (K 1056 in steps of 512, split two ways
  // off NVIDIA, a tail in the last step); two rows take the ring off NVIDIA (K 1088 in
  // 128-code steps split 8 ways) and a 2-row skinny tile on it.
  using Config = std::optional<GemmConfig>;
  for (auto [m, n, k, config] : {std::tuple<int64_t, int64_t, int64_t, Config>{3, 40, 128, std::nullopt},
                                 {1, 48, 1056, std::nullopt},
                                 {2, 24, 1088, std::nullopt},
                                 {17, 70, 96, std::nullopt},
                                 {2, 64, 256, GemmConfig{16, 32, 64, 1, 4, 2}},
                                 {33, 72, 320, GemmConfig{64, 64, 64, 1, 4, 1}},
                                 {40, 48, 192, GemmConfig{64, 64, 64, 3, 4, 1}},
                                 {50, 136, 256, GemmConfig{64, 128, 128, 3, 4, 1}},
                                 {37, 264, 384, GemmConfig{64, 256, 128, 3, 8, 3}},
                                 {70, 40, 128, std::nullopt},
                                 {1, 72, 320, skinny({1, 16, 256, 1, 4, 1})},
                                 {5, 40, 384, skinny({8, 16, 128, 1, 4, 2})},
                                 {6, 44, 384, skinny({8, 8, 256, 1, 4, 2})}})
    checkA4W4(m, n, k, config, {122, 132}, {122, 132});
}

// 16-bit outputs and a bias, after the product's scaling: the decode default, a ring, and 130
// rows (the large-M default). Scales up to 2^1 keep sums inside f16's range.
TEST(GemmA4W4Op, WritesSixteenBitOutputsWithABias) {
  checkA4W4(3, 40, 128, std::nullopt, {120, 128}, {120, 128}, DType::bf16, true);
  checkA4W4(17, 70, 96, GemmConfig{16, 32, 64, 3, 4, 1}, {120, 128}, {120, 128}, DType::f16, true);
  checkA4W4(130, 36, 160, std::nullopt, {120, 128}, {120, 128}, DType::bf16, true);
  checkA4W4(1, 72, 320, std::nullopt, {120, 128}, {120, 128}, DType::f16, false);
}

// X's scales at bf16's smallest (byte 0 is the denormal 2^-127, so decoded values reach the
// denormal 2^-128) and W's near its largest (up to 6 * 2^125): the products stay near 1, so a
// decode that flushed denormals or overflowed would miss the reference. Tiles of 16, 32 and 64
// rows in a ring (the decode the H200 tables use), and the skinny f32 decode.
TEST(GemmA4W4Op, DecodesScalesAtTheEdgesOfBf16) {
  using Config = std::optional<GemmConfig>;
  for (auto [m, n, k, config] :
       {std::tuple<int64_t, int64_t, int64_t, Config>{3, 40, 256, GemmConfig{16, 32, 128, 3, 4, 1}},
        {20, 64, 256, GemmConfig{32, 64, 128, 3, 4, 1}},
        {40, 48, 192, GemmConfig{64, 64, 64, 3, 4, 1}},
        {1, 72, 320, skinny({1, 16, 256, 1, 4, 1})}})
    checkA4W4(m, n, k, config, {0, 2}, {250, 252});
}

// Every configuration of the shipped block-scaled and MXFP4 tables runs against the double
// reference (as ShippedConfigurationsMatchTheReference runs the others): small shapes with
// tails, one K step per split plus a tail, the device's fp8 for block scales, bf16 out. The
// tables are the H200's (sm_90a rows): their skinny MXFP4 tiles sum i8 products, which only
// NVIDIA targets build (elsewhere skinny tiles decode to f32 and hold fewer products).
TEST(GemmOp, ShippedScaledConfigurationsMatchTheReference) {
  const std::string target = wavetile::test::HostOps().runtime->target();
  const DType fp8 = defaultFp8(target);
  int ran = 0;
  for (const char *op : {"gemm_a8w8_blockscale", "gemm_a4w4"}) {
    const bool mx = std::string(op) == "gemm_a4w4";
    for (const auto &[row, config] : distinctShippedConfigs(op)) {
      SCOPED_TRACE(std::string(op) + " " + config.key());
      const int64_t m = config.blockM + 3, n = config.blockN + 5, k = config.blockK * config.splitK + 32;
      if (mx && config.skinny && !target.starts_with("sm_")) {
        std::printf("skipped %s %s: skinny MXFP4 tiles of i8 products are NVIDIA's\n", op, config.key().c_str());
        continue;
      }
      if (mx) {
        checkA4W4(m, n, k, config, {122, 132}, {122, 132}, DType::bf16);
      } else {
        BlockCase c{fp8, DType::bf16, m, n, k, config.splitK};
        c.config = config;
        std::string skipped;
        if (!checkBlockScale(c, &skipped)) {
          std::printf("skipped %s %s: %s\n", op, config.key().c_str(), skipped.c_str());
          continue;
        }
      }
      ++ran;
    }
  }
  EXPECT_GT(ran, 10);
}

TEST(GemmA4W4Op, RefusesAKThatIsNotAMultipleOf32) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::vector<uint8_t> q(1024);
  std::vector<float> out(64);
  wavetile::test::expectRefused(gemm_a4w4(*host.runtime, TensorRef::contiguous(out.data(), DType::f32, {2, 4}),
                                          TensorRef::contiguous(q.data(), DType::f4E2M1FN, {2, 24}),
                                          TensorRef::contiguous(q.data(), DType::f4E2M1FN, {4, 24}),
                                          TensorRef::contiguous(q.data(), DType::f8E8M0FNU, {2, 1}),
                                          TensorRef::contiguous(q.data(), DType::f8E8M0FNU, {4, 1}), nullptr, &error),
                                error, "K = 48 is not a multiple of 32");
}

} // namespace
