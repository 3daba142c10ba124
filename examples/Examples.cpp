//===- Examples.cpp - vector add, softmax, RMSNorm, GEMM in the C++ DSL ---===//

#include "Examples.h"
#include "Numerics.h"

#include "wavetile/dsl/DSL.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

using namespace wavetile;
using namespace wavetile::dsl;
using namespace wavetile::examples;

namespace {

double seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Runs a launch, timing it; a launch error fails the report.
bool timedLaunch(const HostExecutable &exe, const std::string &kernel, std::array<uint32_t, 3> grid,
                 const std::vector<KernelArg> &args, CheckReport &report) {
  std::string error;
  auto start = std::chrono::steady_clock::now();
  bool ok = exe.launch(kernel, grid, args, &error);
  report.runSeconds = seconds(start);
  if (!ok)
    report.summary = "launch failed: " + error;
  return ok;
}

std::string format(const char *fmt, double a, double b, size_t n) {
  char text[160];
  std::snprintf(text, sizeof text, fmt, a, b, n);
  return text;
}

uint32_t ceilDiv(int64_t a, int64_t b) { return uint32_t((a + b - 1) / b); }

//===----------------------------------------------------------------------===//
// vector_add: out = x + y over n elements, one 256-element block per program.
//===----------------------------------------------------------------------===//

constexpr int kAddBlock = 256;

std::unique_ptr<Module> buildVectorAdd(std::string *error) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("vector_add");
    Pointer x = k.pointer("x", DType::f32), y = k.pointer("y", DType::f32), out = k.pointer("out", DType::f32);
    Value n = k.scalar("n", DType::i32);
    Value offsets = programId(0) * kAddBlock + arange(0, kAddBlock);
    Value inBounds = offsets < n;
    store(out, offsets, load(x, offsets, inBounds) + load(y, offsets, inBounds), inBounds);
  }
  return mb.finish(error);
}

CheckReport checkVectorAdd(const HostExecutable &exe, const std::vector<int64_t> &shape, uint64_t seed) {
  CheckReport report;
  size_t n = shape[0];
  // One guard element past the end: inputs have it readable, the output must keep it.
  auto x = randomFloats(n + 1, seed), y = randomFloats(n + 1, seed + 1);
  std::vector<float> out(n + 1, poisonF32());
  out[n] = 12345.f;
  if (!timedLaunch(exe, "vector_add", {ceilDiv(n, kAddBlock), 1, 1},
                   {KernelArg::ptr(x.data(), "f32"), KernelArg::ptr(y.data(), "f32"), KernelArg::ptr(out.data(), "f32"),
                    KernelArg::fromI32(int32_t(n))},
                   report))
    return report;
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i)
    wrong += !(out[i] == x[i] + y[i]); // f32 addition is exact to compare bitwise
  report.passed = wrong == 0 && out[n] == 12345.f;
  report.summary = std::to_string(wrong) + " of " + std::to_string(n) + " elements differ from x + y (exact)" +
                   (out[n] == 12345.f ? "" : "; wrote past the end");
  return report;
}

//===----------------------------------------------------------------------===//
// softmax: one program per row, three passes over column blocks (any row length).
//===----------------------------------------------------------------------===//

constexpr int kSoftmaxBlock = 128;

std::unique_ptr<Module> buildSoftmax(std::string *error) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("softmax");
    Pointer x = k.pointer("x", DType::f32), out = k.pointer("out", DType::f32);
    Value nCols = k.scalar("n_cols", DType::i32), rowStride = k.scalar("row_stride", DType::i32);
    Value rowStart = programId(0) * rowStride;
    Value columns = arange(0, kSoftmaxBlock);
    auto loadBlock = [&](Value c0) {
      Value c = c0 + columns;
      return std::pair{c, load(x, rowStart + c, c < nCols, -INFINITY)};
    };
    Value blockMax = forRange(0, nCols, kSoftmaxBlock, {full({kSoftmaxBlock}, -INFINITY, DType::f32)},
                              [&](Value c0, const std::vector<Value> &m) {
                                return std::vector<Value>{maximum(m[0], loadBlock(c0).second)};
                              })[0];
    Value rowMax = blockMax.max(0);
    Value blockSum = forRange(0, nCols, kSoftmaxBlock, {zeros({kSoftmaxBlock}, DType::f32)},
                              [&](Value c0, const std::vector<Value> &s) {
                                return std::vector<Value>{s[0] + exp(loadBlock(c0).second - rowMax)};
                              })[0];
    Value denominator = blockSum.sum(0);
    forRange(0, nCols, kSoftmaxBlock, {}, [&](Value c0, const std::vector<Value> &) {
      auto [c, v] = loadBlock(c0);
      store(out, rowStart + c, exp(v - rowMax) / denominator, c < nCols);
      return std::vector<Value>{};
    });
  }
  return mb.finish(error);
}

CheckReport checkSoftmax(const HostExecutable &exe, const std::vector<int64_t> &shape, uint64_t seed) {
  CheckReport report;
  size_t m = shape[0], n = shape[1], stride = n + 3; // padded rows: the kernel must honour the stride
  auto x = randomFloats(m * stride, seed, -8.f, 8.f);
  std::vector<float> out(m * stride, poisonF32());
  if (!timedLaunch(exe, "softmax", {uint32_t(m), 1, 1},
                   {KernelArg::ptr(x.data(), "f32"), KernelArg::ptr(out.data(), "f32"),
                    KernelArg::fromI32(int32_t(n)), KernelArg::fromI32(int32_t(stride))},
                   report))
    return report;
  double worst = 0;
  bool paddingIntact = true;
  for (size_t r = 0; r < m; ++r) {
    const float *row = &x[r * stride];
    double rowMax = *std::max_element(row, row + n), sum = 0;
    for (size_t c = 0; c < n; ++c)
      sum += std::exp(double(row[c]) - rowMax);
    for (size_t c = 0; c < n; ++c) {
      double ref = std::exp(double(row[c]) - rowMax) / sum;
      double err = std::abs(out[r * stride + c] - ref) / ref;
      worst = std::isnan(err) ? INFINITY : std::max(worst, err);
    }
    for (size_t c = n; c < stride; ++c)
      paddingIntact &= std::isnan(out[r * stride + c]);
  }
  const double limit = 2e-6 * std::log2(double(n) + 2); // exp and f32 summation over n terms
  report.passed = worst <= limit && paddingIntact;
  report.summary = format("max rel err %.2e (limit %.2e) over %zu elements", worst, limit, m * n) +
                   (paddingIntact ? "" : "; wrote into row padding");
  return report;
}

//===----------------------------------------------------------------------===//
// rmsnorm: y = x / sqrt(mean(x^2) + eps) * w, bf16 in and out, f32 math.
//===----------------------------------------------------------------------===//

constexpr int kNormBlock = 256;

std::unique_ptr<Module> buildRmsNorm(std::string *error) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("rmsnorm");
    Pointer x = k.pointer("x", DType::bf16), weight = k.pointer("weight", DType::bf16),
            out = k.pointer("out", DType::bf16);
    Value n = k.scalar("n", DType::i32), rowStride = k.scalar("row_stride", DType::i32);
    Value eps = k.scalar("eps", DType::f32);
    Value rowStart = programId(0) * rowStride;
    Value columns = arange(0, kNormBlock);
    Value squares = forRange(0, n, kNormBlock, {zeros({kNormBlock}, DType::f32)},
                             [&](Value c0, const std::vector<Value> &acc) {
                               Value c = c0 + columns;
                               Value v = load(x, rowStart + c, c < n, 0.0).to(DType::f32);
                               return std::vector<Value>{acc[0] + v * v};
                             })[0];
    Value invRms = rsqrt(squares.sum(0) / n.to(DType::f32) + eps);
    forRange(0, n, kNormBlock, {}, [&](Value c0, const std::vector<Value> &) {
      Value c = c0 + columns;
      Value v = load(x, rowStart + c, c < n, 0.0).to(DType::f32);
      Value w = load(weight, c, c < n, 0.0).to(DType::f32);
      store(out, rowStart + c, (v * invRms * w).to(DType::bf16), c < n);
      return std::vector<Value>{};
    });
  }
  return mb.finish(error);
}

/// Distance between two bf16 values in units in the last place of `ref`.
double bf16Ulps(uint16_t got, float ref) {
  if (std::isnan(fromBF16(got)))
    return INFINITY;
  int exponent;
  std::frexp(ref == 0 ? 1e-38f : ref, &exponent);
  double ulp = std::ldexp(1.0, exponent - 8); // bf16 keeps 8 significant bits
  return std::abs(double(fromBF16(got)) - ref) / ulp;
}

CheckReport checkRmsNorm(const HostExecutable &exe, const std::vector<int64_t> &shape, uint64_t seed) {
  CheckReport report;
  size_t m = shape[0], n = shape[1], stride = n + 5;
  const float eps = 1e-6f;
  auto xf = randomFloats(m * stride, seed, -3.f, 3.f), wf = randomFloats(n, seed + 7, 0.5f, 1.5f);
  std::vector<uint16_t> x(xf.size()), w(n), out(m * stride, kPoisonBF16);
  std::transform(xf.begin(), xf.end(), x.begin(), toBF16);
  std::transform(wf.begin(), wf.end(), w.begin(), toBF16);
  if (!timedLaunch(exe, "rmsnorm", {uint32_t(m), 1, 1},
                   {KernelArg::ptr(x.data(), "bf16"), KernelArg::ptr(w.data(), "bf16"),
                    KernelArg::ptr(out.data(), "bf16"), KernelArg::fromI32(int32_t(n)),
                    KernelArg::fromI32(int32_t(stride)), KernelArg::fromF32(eps)},
                   report))
    return report;
  double worst = 0;
  bool paddingIntact = true;
  for (size_t r = 0; r < m; ++r) {
    double sumSquares = 0;
    for (size_t c = 0; c < n; ++c)
      sumSquares += double(fromBF16(x[r * stride + c])) * fromBF16(x[r * stride + c]);
    double inv = 1.0 / std::sqrt(sumSquares / double(n) + eps);
    for (size_t c = 0; c < n; ++c) {
      float ref = float(fromBF16(x[r * stride + c]) * inv * fromBF16(w[c]));
      worst = std::max(worst, bf16Ulps(out[r * stride + c], ref));
    }
    for (size_t c = n; c < stride; ++c)
      paddingIntact &= out[r * stride + c] == kPoisonBF16;
  }
  // The exact result rounds to bf16 once; f32 intermediate math may move it across one boundary.
  report.passed = worst <= 1.0 && paddingIntact;
  report.summary = format("max error %.2f bf16 ulp (limit %.0f) over %zu elements", worst, 1.0, m * n) +
                   (paddingIntact ? "" : "; wrote into row padding");
  return report;
}

//===----------------------------------------------------------------------===//
// gemm: C[M,N] (f32) = A[M,K] (bf16) * B[K,N] (bf16), 32x32 output tiles, K in steps of 16.
//===----------------------------------------------------------------------===//

constexpr int kTileM = 32, kTileN = 32, kTileK = 16;

std::unique_ptr<Module> buildGemm(std::string *error) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("gemm");
    Pointer a = k.pointer("a", DType::bf16), b = k.pointer("b", DType::bf16), c = k.pointer("c", DType::f32);
    Value m = k.scalar("M", DType::i32), n = k.scalar("N", DType::i32), kk = k.scalar("K", DType::i32);
    Value lda = k.scalar("lda", DType::i32), ldb = k.scalar("ldb", DType::i32), ldc = k.scalar("ldc", DType::i32);
    Value rows = programId(0) * kTileM + arange(0, kTileM);
    Value cols = programId(1) * kTileN + arange(0, kTileN);
    Value kRange = arange(0, kTileK);
    Value acc = forRange(0, kk, kTileK, {zeros({kTileM, kTileN}, DType::f32)},
                         [&](Value k0, const std::vector<Value> &sum) {
                           Value ks = k0 + kRange;
                           Value aTile = load(a, rows.expand(1) * lda + ks.expand(0),
                                              (rows < m).expand(1) & (ks < kk).expand(0), 0.0);
                           Value bTile = load(b, ks.expand(1) * ldb + cols.expand(0),
                                              (ks < kk).expand(1) & (cols < n).expand(0), 0.0);
                           return std::vector<Value>{dot(aTile, bTile, sum[0])};
                         })[0];
    store(c, rows.expand(1) * ldc + cols.expand(0), acc, (rows < m).expand(1) & (cols < n).expand(0));
  }
  return mb.finish(error);
}

CheckReport checkGemm(const HostExecutable &exe, const std::vector<int64_t> &shape, uint64_t seed) {
  CheckReport report;
  size_t m = shape[0], n = shape[1], k = shape[2];
  size_t lda = k + 1, ldb = n + 2, ldc = n + 3; // padded leading dimensions
  auto af = randomFloats(m * lda, seed), bf = randomFloats(k * ldb, seed + 3);
  std::vector<uint16_t> a(af.size()), b(bf.size());
  std::transform(af.begin(), af.end(), a.begin(), toBF16);
  std::transform(bf.begin(), bf.end(), b.begin(), toBF16);
  std::vector<float> c(m * ldc, poisonF32());
  if (!timedLaunch(exe, "gemm", {ceilDiv(m, kTileM), ceilDiv(n, kTileN), 1},
                   {KernelArg::ptr(a.data(), "bf16"), KernelArg::ptr(b.data(), "bf16"), KernelArg::ptr(c.data(), "f32"),
                    KernelArg::fromI32(int32_t(m)), KernelArg::fromI32(int32_t(n)), KernelArg::fromI32(int32_t(k)),
                    KernelArg::fromI32(int32_t(lda)), KernelArg::fromI32(int32_t(ldb)), KernelArg::fromI32(int32_t(ldc))},
                   report))
    return report;
  // Products of bf16 values are exact in f32; f32 accumulation of k terms errs at most
  // k * 2^-24 * sum |a*b| (standard summation bound), checked per element.
  double worstRatio = 0;
  bool paddingIntact = true;
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      double ref = 0, magnitude = 0;
      for (size_t p = 0; p < k; ++p) {
        double prod = double(fromBF16(a[i * lda + p])) * fromBF16(b[p * ldb + j]);
        ref += prod;
        magnitude += std::abs(prod);
      }
      double bound = double(k) * std::ldexp(1.0, -24) * magnitude + 1e-30;
      double ratio = std::abs(c[i * ldc + j] - ref) / bound;
      worstRatio = std::isnan(ratio) ? INFINITY : std::max(worstRatio, ratio);
    }
    for (size_t j = n; j < ldc; ++j)
      paddingIntact &= std::isnan(c[i * ldc + j]);
  }
  report.passed = worstRatio <= 1.0 && paddingIntact;
  report.summary = format("max error %.3f of the f32 summation bound (limit %.0f) over %zu elements", worstRatio, 1.0,
                          m * n) +
                   (paddingIntact ? "" : "; wrote into row padding");
  return report;
}

} // namespace

const std::vector<Example> &wavetile::examples::allExamples() {
  static const std::vector<Example> examples = {
      {"vector_add", "out = x + y, f32, ragged tail", {"N"}, {{1}, {255}, {257}, {1000}, {4099}},
       buildVectorAdd, checkVectorAdd},
      {"softmax", "row softmax, f32, any row length", {"M", "N"}, {{1, 1}, {3, 127}, {7, 129}, {5, 1000}},
       buildSoftmax, checkSoftmax},
      {"rmsnorm", "RMSNorm, bf16 in/out, f32 math", {"M", "N"}, {{1, 1}, {3, 31}, {4, 257}, {2, 5120}},
       buildRmsNorm, checkRmsNorm},
      {"gemm", "C = A*B, bf16 inputs, f32 accumulate, K loop", {"M", "N", "K"},
       {{1, 1, 1}, {17, 33, 15}, {45, 70, 50}, {64, 32, 48}, {130, 75, 33}},
       buildGemm, checkGemm},
  };
  return examples;
}

const Example *wavetile::examples::findExample(const std::string &name) {
  for (const Example &e : allExamples())
    if (e.name == name)
      return &e;
  return nullptr;
}
