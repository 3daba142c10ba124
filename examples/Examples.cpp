//===- Examples.cpp - vector add, softmax, RMSNorm, GEMM in the C++ DSL ---===//

#include "Examples.h"
#include "Numerics.h"

#include "wavetile/dsl/DSL.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>

using namespace wavetile;
using namespace wavetile::dsl;
using namespace wavetile::examples;

namespace {

uint32_t ceilDiv(int64_t a, int64_t b) { return uint32_t((a + b - 1) / b); }

std::string format(const char *fmt, double a, double b, size_t n) {
  char text[160];
  std::snprintf(text, sizeof text, fmt, a, b, n);
  return text;
}

LaunchArg buffer(const std::string &name, const std::string &elementType, std::vector<uint8_t> data,
                 bool isOutput = false) {
  LaunchArg a{name, ArgKind::Pointer, elementType, std::move(data), isOutput};
  return a;
}

template <typename T> std::vector<uint8_t> bytesOf(const std::vector<T> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<uint16_t> toBF16(const std::vector<float> &values) {
  std::vector<uint16_t> out(values.size());
  std::transform(values.begin(), values.end(), out.begin(), [](float f) { return examples::toBF16(f); });
  return out;
}

LaunchArg i32(const std::string &name, int64_t v) {
  LaunchArg a{name, ArgKind::I32, "i32", {}};
  a.i32 = int32_t(v);
  return a;
}

LaunchArg f32(const std::string &name, float v) {
  LaunchArg a{name, ArgKind::F32, "f32", {}};
  a.f32 = v;
  return a;
}

/// Every example's tensors are smaller than 2 GiB (inference-sized operands), which lets
/// CDNA address them through buffer resources.
constexpr Reach kReach = Reach::within2GiB;

//===----------------------------------------------------------------------===//
// vector_add: out = x + y over n elements, one 1024-element block per program.
//===----------------------------------------------------------------------===//

constexpr int kAddBlock = 1024;

std::unique_ptr<Module> buildVectorAdd(std::string *error) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("vector_add");
    Pointer x = k.pointer("x", DType::f32, kReach), y = k.pointer("y", DType::f32, kReach),
            out = k.pointer("out", DType::f32, kReach);
    Value n = k.scalar("n", DType::i32);
    Value offsets = programId(0) * kAddBlock + arange(0, kAddBlock);
    Value inBounds = offsets < n;
    store(out, offsets, load(x, offsets, inBounds) + load(y, offsets, inBounds), inBounds);
  }
  return mb.finish(error);
}

LaunchPlan prepareVectorAdd(const std::vector<int64_t> &shape, uint64_t seed) {
  size_t n = shape[0];
  // One guard element past the end: inputs have it readable, the output must keep it.
  std::vector<float> out(n + 1, poisonF32());
  out[n] = 12345.f;
  return {"vector_add", {ceilDiv(n, kAddBlock), 1, 1},
          {buffer("x", "f32", bytesOf(randomFloats(n + 1, seed))), buffer("y", "f32", bytesOf(randomFloats(n + 1, seed + 1))),
           buffer("out", "f32", bytesOf(out), true), i32("n", n)},
          shape, seed, /*rtol=*/0, /*atol=*/0};
}

CheckReport verifyVectorAdd(const LaunchPlan &plan) {
  CheckReport report;
  size_t n = plan.shape[0];
  const float *x = plan.arg("x").as<float>(), *y = plan.arg("y").as<float>(), *out = plan.arg("out").as<float>();
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i)
    wrong += !(out[i] == x[i] + y[i]); // f32 addition is exact to compare bitwise
  report.passed = wrong == 0 && out[n] == 12345.f;
  report.summary = std::to_string(wrong) + " of " + std::to_string(n) + " elements differ from x + y (exact)" +
                   (out[n] == 12345.f ? "" : "; wrote past the end");
  return report;
}

/// The arguments of the row-wise examples (one program per row of a padded matrix), in
/// launch order, and where this program's row starts.
struct RowArguments {
  Pointer x, out;
  Value nCols, rowStart;
  RowArguments(KernelBuilder &kernel, DType dtype)
      : x(kernel.pointer("x", dtype, kReach)), out(kernel.pointer("out", dtype, kReach)), nCols(kernel.scalar("n_cols", DType::i32)),
        rowStart(programId(0) * kernel.scalar("row_stride", DType::i32)) {}
};

//===----------------------------------------------------------------------===//
// softmax: one program per row, three passes over column blocks (any row length).
//===----------------------------------------------------------------------===//

constexpr int kSoftmaxBlock = 1024;

std::unique_ptr<Module> buildSoftmax(std::string *error) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("softmax");
    auto [x, out, nCols, rowStart] = RowArguments(k, DType::f32);
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

/// Relative error allowed against the exact softmax: exp and f32 sums over n terms.
double softmaxLimit(size_t n) { return 2e-6 * std::log2(double(n) + 2); }

LaunchPlan prepareSoftmax(const std::vector<int64_t> &shape, uint64_t seed) {
  size_t m = shape[0], n = shape[1], stride = n + 3; // padded rows: the kernel must honour the stride
  return {"softmax", {uint32_t(m), 1, 1},
          {buffer("x", "f32", bytesOf(randomFloats(m * stride, seed, -8.f, 8.f))),
           buffer("out", "f32", bytesOf(std::vector<float>(m * stride, poisonF32())), true), i32("n_cols", n),
           i32("row_stride", stride)},
          // Both sides are within the verify limit of the exact result, so of each other within twice it.
          shape, seed, /*rtol=*/2 * softmaxLimit(n), /*atol=*/1e-12};
}

CheckReport verifySoftmax(const LaunchPlan &plan) {
  CheckReport report;
  size_t m = plan.shape[0], n = plan.shape[1], stride = size_t(plan.arg("row_stride").i32);
  const float *x = plan.arg("x").as<float>(), *out = plan.arg("out").as<float>();
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
  const double limit = softmaxLimit(n);
  report.passed = worst <= limit && paddingIntact;
  report.summary = format("max rel err %.2e (limit %.2e) over %zu elements", worst, limit, m * n) +
                   (paddingIntact ? "" : "; wrote into row padding");
  return report;
}

//===----------------------------------------------------------------------===//
// rmsnorm: y = x / sqrt(mean(x^2) + eps) * w, bf16 in and out, f32 math.
//===----------------------------------------------------------------------===//

constexpr int kNormBlock = 2048;

std::unique_ptr<Module> buildRmsNorm(std::string *error) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("rmsnorm");
    const int block = int(k.param("BLOCK", kNormBlock));
    // Rows may be padded: x and out are strided; the weight is a contiguous vector.
    Tensor x = k.tensor("x", DType::bf16, {Dim::dynamic(), Dim::dynamic()}, /*contiguous=*/false, kReach);
    Tensor weight = k.tensor("weight", DType::bf16, {Dim::dynamic()}, /*contiguous=*/true, kReach);
    Tensor out = k.tensor("out", DType::bf16, {Dim::dynamic(), Dim::dynamic()}, /*contiguous=*/false, kReach);
    Value eps = k.scalar("eps", DType::f32);
    Value row = programId(0), n = x.size(1);
    Value columns = arange(0, block);
    Value squares = forRange(0, n, block, {zeros({block}, DType::f32)},
                             [&](Value c0, const std::vector<Value> &acc) {
                               Value v = load(x, {row, c0 + columns}).to(DType::f32);
                               return std::vector<Value>{acc[0] + v * v};
                             })[0];
    Value invRms = rsqrt(squares.sum(0) / n.to(DType::f32) + eps);
    forRange(0, n, block, {}, [&](Value c0, const std::vector<Value> &) {
      Value c = c0 + columns;
      Value v = load(x, {row, c}).to(DType::f32);
      Value w = load(weight, {c}).to(DType::f32);
      store(out, {row, c}, (v * invRms * w).to(DType::bf16));
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

LaunchPlan prepareRmsNorm(const std::vector<int64_t> &shape, uint64_t seed) {
  size_t m = shape[0], n = shape[1], stride = n + 5;
  return {"rmsnorm", {uint32_t(m), 1, 1},
          {buffer("x", "bf16", bytesOf(toBF16(randomFloats(m * stride, seed, -3.f, 3.f)))), i32("x_size0", m),
           i32("x_size1", n), i32("x_stride0", stride),
           buffer("weight", "bf16", bytesOf(toBF16(randomFloats(n, seed + 7, 0.5f, 1.5f)))), i32("weight_size0", n),
           buffer("out", "bf16", bytesOf(std::vector<uint16_t>(m * stride, kPoisonBF16)), true), i32("out_size0", m),
           i32("out_size1", n), i32("out_stride0", stride), f32("eps", 1e-6f)},
          // Another machine may round the f32 result to the neighbouring bf16 value.
          shape, seed, /*rtol=*/1.0 / 128, /*atol=*/0};
}

CheckReport verifyRmsNorm(const LaunchPlan &plan) {
  CheckReport report;
  size_t m = plan.shape[0], n = plan.shape[1], stride = size_t(plan.arg("x_stride0").i32);
  const uint16_t *x = plan.arg("x").as<uint16_t>(), *w = plan.arg("weight").as<uint16_t>(),
                 *out = plan.arg("out").as<uint16_t>();
  float eps = plan.arg("eps").f32;
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
// cumsum: per row, the inclusive prefix sum of i32 values (wrapping, so exact in any order),
// any row length: column blocks are scanned in turn, each offset by the sum of the blocks
// before it.
//===----------------------------------------------------------------------===//

constexpr int kCumsumBlock = 2048;
constexpr int32_t kPoisonI32 = INT32_MIN + 7;

std::unique_ptr<Module> buildCumsum(std::string *error) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("cumsum");
    auto [x, out, nCols, rowStart] = RowArguments(k, DType::i32);
    Value columns = arange(0, kCumsumBlock);
    forRange(0, nCols, kCumsumBlock, {constant(0, DType::i32)}, [&](Value c0, const std::vector<Value> &carry) {
      Value c = c0 + columns;
      Value v = load(x, rowStart + c, c < nCols, 0);
      store(out, rowStart + c, v.cumsum(0) + carry[0], c < nCols);
      return std::vector<Value>{carry[0] + v.sum(0)};
    });
  }
  return mb.finish(error);
}

LaunchPlan prepareCumsum(const std::vector<int64_t> &shape, uint64_t seed) {
  size_t m = shape[0], n = shape[1], stride = n + 5; // padded rows: the kernel must honour the stride
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> values(-100000, 100000);
  std::vector<int32_t> x(m * stride);
  for (int32_t &v : x)
    v = values(rng);
  return {"cumsum", {uint32_t(m), 1, 1},
          {buffer("x", "i32", bytesOf(x)), buffer("out", "i32", bytesOf(std::vector<int32_t>(m * stride, kPoisonI32)), true),
           i32("n_cols", n), i32("row_stride", stride)},
          shape, seed, /*rtol=*/0, /*atol=*/0};
}

CheckReport verifyCumsum(const LaunchPlan &plan) {
  CheckReport report;
  size_t m = plan.shape[0], n = plan.shape[1], stride = size_t(plan.arg("row_stride").i32);
  const int32_t *x = plan.arg("x").as<int32_t>(), *out = plan.arg("out").as<int32_t>();
  size_t wrong = 0;
  bool paddingIntact = true;
  for (size_t r = 0; r < m; ++r) {
    uint32_t sum = 0; // two's-complement wrap, as i32 addition on the device
    for (size_t c = 0; c < n; ++c) {
      sum += uint32_t(x[r * stride + c]);
      wrong += out[r * stride + c] != int32_t(sum);
    }
    for (size_t c = n; c < stride; ++c)
      paddingIntact &= out[r * stride + c] == kPoisonI32;
  }
  report.passed = wrong == 0 && paddingIntact;
  report.summary = format("%.0f of %.0f prefix sums differ from the exact ones (over %zu elements)", double(wrong),
                          double(m * n), m * n) +
                   (paddingIntact ? "" : "; wrote into row padding");
  return report;
}

//===----------------------------------------------------------------------===//
// gemm: C[M,N] (f32) = A[M,K] (bf16) * B[K,N] (bf16), 64x64 output tiles, K in steps of 32.
// gemm_fp8: C = A * W^T with fp8 (e4m3) A [M,K] and weights W [N,K] (AITER's layout, K
// contiguous in both), K in steps of 64 (the same bytes per step); the W tile is transposed
// for the dot, which the compiler turns into a read of W's stage in the transposed operand
// layout.
// A and B are read through buffer views: rows past M (and anything past the end) read 0;
// the K tail is masked because it lies inside the padded rows. The loop is written without
// any staging; the compiler pipelines it (kGemmStages-deep shared ring, tile-pipeline-loops).
//===----------------------------------------------------------------------===//

constexpr int kTileM = 64, kTileN = 64, kTileK = 32;
/// gemm's K loop is written plainly; tile-pipeline-loops prefetches it this many steps deep.
constexpr int kGemmStages = 3;

/// One input format of the plain GEMM: its element type, its K step, and its host encoding.
struct GemmInput {
  const char *kernel;
  DType dtype;
  const char *typeName; // element type of the launch buffers
  int tileK;
  bool weightsNByK; // B given as W = B^T, [N, K] with row stride ldb
  uint8_t bytes;
  std::function<std::vector<uint8_t>(size_t count, uint64_t seed)> random;
  std::function<double(const uint8_t *data, size_t index)> decode;
  int tileM = kTileM, tileN = kTileN, numWarps = 4;
};

const GemmInput kBF16Input{"gemm", DType::bf16, "bf16", kTileK, false, 2,
                           [](size_t count, uint64_t seed) { return bytesOf(toBF16(randomFloats(count, seed))); },
                           [](const uint8_t *data, size_t i) {
                             uint16_t h;
                             std::memcpy(&h, data + 2 * i, 2);
                             return double(fromBF16(h));
                           }};
const GemmInput kFP8Input{"gemm_fp8", DType::f8E4M3FN, "f8E4M3FN", 2 * kTileK, true, 1, randomE4M3,
                          [](const uint8_t *data, size_t i) { return double(fromE4M3(data[i])); }};
/// The bf16 GEMM with 128x128 output tiles over 8 warps: its stages and epilogue need 64 KiB
/// of shared memory, past sm_90's 48 KiB of static shared memory (dynamic there).
const GemmInput kLargeTileInput = [] {
  GemmInput input = kBF16Input;
  input.kernel = "gemm_large";
  input.tileM = input.tileN = 128;
  input.numWarps = 8;
  return input;
}();

/// The GEMM kernels' arguments, in launch order.
struct GemmArguments {
  Pointer a, b, c;
  Value m, n, k, lda, ldb, ldc;
  GemmArguments(KernelBuilder &kernel, DType input)
      : a(kernel.pointer("a", input)), b(kernel.pointer("b", input)), c(kernel.pointer("c", DType::f32, kReach)),
        m(kernel.scalar("M", DType::i32)), n(kernel.scalar("N", DType::i32)), k(kernel.scalar("K", DType::i32)),
        lda(kernel.scalar("lda", DType::i32)), ldb(kernel.scalar("ldb", DType::i32)),
        ldc(kernel.scalar("ldc", DType::i32)) {}
};

std::unique_ptr<Module> buildGemm(const GemmInput &input, std::string *error) {
  ModuleBuilder mb;
  {
    auto kernel = mb.kernel(input.kernel, {.numWarps = input.numWarps, .numStages = kGemmStages});
    auto [a, b, c, m, n, kk, lda, ldb, ldc] = GemmArguments(kernel, input.dtype);
    Buffer aView = makeBuffer(a, m * lda), bView = makeBuffer(b, (input.weightsNByK ? n : kk) * ldb);
    Value rows = programId(0) * input.tileM + arange(0, input.tileM);
    Value cols = programId(1) * input.tileN + arange(0, input.tileN);
    Value kRange = arange(0, input.tileK);
    Value acc = forRange(0, kk, input.tileK, {zeros({input.tileM, input.tileN}, DType::f32)},
                         [&](Value k0, const std::vector<Value> &sum) {
                           Value ks = k0 + kRange;
                           Value aTile = load(aView, rows.expand(1) * lda + ks.expand(0), (ks < kk).expand(0));
                           Value bTile =
                               input.weightsNByK
                                   ? load(bView, cols.expand(1) * ldb + ks.expand(0), (ks < kk).expand(0)).trans()
                                   : load(bView, ks.expand(1) * ldb + cols.expand(0),
                                          (ks < kk).expand(1) & (cols < n).expand(0));
                           return std::vector<Value>{dot(aTile, bTile, sum[0])};
                         })[0];
    store(c, rows.expand(1) * ldc + cols.expand(0), acc, (rows < m).expand(1) & (cols < n).expand(0));
  }
  return mb.finish(error);
}

//===----------------------------------------------------------------------===//
// gemm_pipelined: the same product with the K loop software-pipelined in the DSL. Step k+1's
// tiles are copied into the other half of double-buffered shared memory (asynchronously where
// the target can, cp.async on sm_90) while step k's are multiplied.
//===----------------------------------------------------------------------===//

constexpr int kStages = 2;

std::unique_ptr<Module> buildGemmPipelined(std::string *error) {
  ModuleBuilder mb;
  {
    auto kernel = mb.kernel("gemm_pipelined");
    auto [a, b, c, m, n, kk, lda, ldb, ldc] = GemmArguments(kernel, DType::bf16);
    Value rows = programId(0) * kTileM + arange(0, kTileM);
    Value cols = programId(1) * kTileN + arange(0, kTileN);
    Value kRange = arange(0, kTileK);
    Shared aStages = sharedAlloc({kStages, kTileM, kTileK}, DType::bf16);
    Shared bStages = sharedAlloc({kStages, kTileK, kTileN}, DType::bf16);
    // Masked-off elements of a copy become 0: rows past M, columns past N, the K tail, and
    // whole tiles past K (the copy issued during the last step).
    auto issue = [&](Value k0, Value stage) {
      Value ks = k0 + kRange;
      asyncCopy(a, rows.expand(1) * lda + ks.expand(0), sharedSlice(aStages, stage),
                (rows < m).expand(1) & (ks < kk).expand(0));
      asyncCopy(b, ks.expand(1) * ldb + cols.expand(0), sharedSlice(bStages, stage),
                (ks < kk).expand(1) & (cols < n).expand(0));
    };
    issue(constant(0, DType::i32), constant(0, DType::i32));
    Value acc = forRange(0, kk, kTileK, {zeros({kTileM, kTileN}, DType::f32)},
                         [&](Value k0, const std::vector<Value> &sum) {
                           Value step = k0 / kTileK;
                           Value stage = step % kStages;
                           issue(k0 + kTileK, (step + 1) % kStages);
                           asyncWait({}, /*pending=*/2); // this step's two copies are done
                           barrier();
                           Value aTile = sharedLoad(sharedSlice(aStages, stage));
                           Value bTile = sharedLoad(sharedSlice(bStages, stage));
                           Value next = dot(aTile, bTile, sum[0]);
                           barrier(); // everyone has read this stage before it is refilled
                           return std::vector<Value>{next};
                         })[0];
    store(c, rows.expand(1) * ldc + cols.expand(0), acc, (rows < m).expand(1) & (cols < n).expand(0));
  }
  return mb.finish(error);
}

LaunchPlan prepareGemm(const GemmInput &input, const std::vector<int64_t> &shape, uint64_t seed) {
  size_t m = shape[0], n = shape[1], k = shape[2];
  size_t lda = k + 1, ldc = n + 3; // padded leading dimensions
  size_t ldb = input.weightsNByK ? k + 2 : n + 2, bRows = input.weightsNByK ? n : k;
  // Exact products, f32 sums in another order: within 2 * K * 2^-24 * sum|a*b|, which for
  // these shapes and magnitudes (|x| < 1 bf16, < 2 fp8) is below atol.
  double atol = input.dtype == DType::bf16 ? 1e-4 : 2e-3;
  return {input.kernel, {ceilDiv(m, input.tileM), ceilDiv(n, input.tileN), 1},
          {buffer("a", input.typeName, input.random(m * lda, seed)),
           buffer("b", input.typeName, input.random(bRows * ldb, seed + 3)),
           buffer("c", "f32", bytesOf(std::vector<float>(m * ldc, poisonF32())), true), i32("M", m), i32("N", n),
           i32("K", k), i32("lda", lda), i32("ldb", ldb), i32("ldc", ldc)},
          shape, seed, /*rtol=*/1e-5, atol};
}

CheckReport verifyGemm(const GemmInput &input, const LaunchPlan &plan) {
  CheckReport report;
  size_t m = plan.shape[0], n = plan.shape[1], k = plan.shape[2];
  size_t lda = plan.arg("lda").i32, ldb = plan.arg("ldb").i32, ldc = plan.arg("ldc").i32;
  const uint8_t *a = plan.arg("a").data.data(), *b = plan.arg("b").data.data();
  const float *c = plan.arg("c").as<float>();
  // Products of bf16 (or fp8) values are exact in f32; f32 accumulation of k terms errs at
  // most k * 2^-24 * sum |a*b| (standard summation bound), checked per element.
  double worstRatio = 0;
  bool paddingIntact = true;
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      double ref = 0, magnitude = 0;
      for (size_t p = 0; p < k; ++p) {
        double prod = input.decode(a, i * lda + p) * input.decode(b, input.weightsNByK ? j * ldb + p : p * ldb + j);
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

LaunchArg &LaunchPlan::arg(const std::string &name) {
  for (LaunchArg &a : args)
    if (a.name == name)
      return a;
  fprintf(stderr, "launch plan of %s has no argument '%s'\n", kernel.c_str(), name.c_str());
  abort();
}

const LaunchArg &LaunchPlan::arg(const std::string &name) const { return const_cast<LaunchPlan *>(this)->arg(name); }

std::optional<std::vector<KernelArg>> wavetile::examples::argumentsOf(LaunchPlan &plan, std::string *error) {
  std::vector<KernelArg> args;
  for (LaunchArg &a : plan.args) {
    switch (a.kind) {
    case ArgKind::Pointer:
      args.push_back(KernelArg::ptr(a.data.data(), a.elementType, a.data.size()));
      break;
    case ArgKind::I32:
      args.push_back(KernelArg::fromI32(a.i32));
      break;
    case ArgKind::F32:
      args.push_back(KernelArg::fromF32(a.f32));
      break;
    default:
      *error = "launch plans carry pointers, i32 and f32 only";
      return std::nullopt;
    }
  }
  return args;
}

bool wavetile::examples::runOnHost(const HostExecutable &exe, LaunchPlan &plan, CheckReport &report) {
  auto args = argumentsOf(plan, &report.summary);
  if (!args)
    return false;
  std::string error;
  auto start = std::chrono::steady_clock::now();
  bool ok = exe.launch(plan.kernel, plan.grid, *args, &error);
  report.runSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!ok)
    report.summary = "launch failed: " + error;
  return ok;
}

CheckReport wavetile::examples::checkOnHost(const Example &example, const HostExecutable &exe,
                                            const std::vector<int64_t> &shape, uint64_t seed) {
  LaunchPlan plan = example.prepare(shape, seed);
  CheckReport launch;
  if (!runOnHost(exe, plan, launch))
    return launch;
  CheckReport report = example.verify(plan);
  report.runSeconds = launch.runSeconds;
  return report;
}

static bool writeFile(const std::string &path, const std::vector<uint8_t> &data, std::string *error) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(data.data()), std::streamsize(data.size()));
  if (!out)
    *error = "cannot write " + path;
  return bool(out);
}

bool wavetile::examples::saveLaunch(const LaunchPlan &before, const LaunchPlan &after, const std::string &dir,
                                    std::string *error, const std::string &reference) {
  const LaunchPlan &plan = before;
  std::string json = "{\n  \"kernel\": \"" + plan.kernel + "\",\n  \"reference\": \"" + reference +
                     "\",\n  \"grid\": [" + std::to_string(plan.grid[0]) + ", " +
                     std::to_string(plan.grid[1]) + ", " + std::to_string(plan.grid[2]) + "],\n  \"seed\": " +
                     std::to_string(plan.seed) + ",\n  \"rtol\": " + format("%.9g", plan.rtol, 0, 0) +
                     ",\n  \"atol\": " + format("%.9g", plan.atol, 0, 0) + ",\n  \"args\": [\n";
  for (size_t i = 0; i < plan.args.size(); ++i) {
    const LaunchArg &a = plan.args[i];
    json += "    {\"name\": \"" + a.name + "\", \"kind\": \"" + argKindName(a.kind) + "\", \"type\": \"" +
            a.elementType + "\"";
    if (a.kind == ArgKind::Pointer) {
      std::string file = plan.kernel + "." + a.name + ".bin";
      if (!writeFile(dir + "/" + file, a.data, error))
        return false;
      json += ", \"file\": \"" + file + "\"";
      if (a.isOutput) {
        std::string host = plan.kernel + "." + a.name + ".host.bin";
        if (!writeFile(dir + "/" + host, after.args[i].data, error))
          return false;
        json += ", \"host\": \"" + host + "\"";
      }
    } else {
      json += ", \"value\": " + (a.kind == ArgKind::I32 ? std::to_string(a.i32) : format("%.9g", a.f32, 0, 0));
    }
    json += i + 1 < plan.args.size() ? "},\n" : "}\n";
  }
  json += "  ]\n}\n";
  std::ofstream out(dir + "/" + plan.kernel + ".json");
  out << json;
  if (!out) {
    *error = "cannot write " + dir + "/" + plan.kernel + ".json";
    return false;
  }
  return true;
}

const std::vector<Example> &wavetile::examples::allExamples() {
  static const std::vector<Example> examples = {
      {"vector_add", "out = x + y, f32, ragged tail", {"N"}, {{1}, {255}, {1025}, {4099}, {70000}},
       buildVectorAdd, prepareVectorAdd, verifyVectorAdd},
      {"softmax", "row softmax, f32, any row length", {"M", "N"}, {{1, 1}, {3, 127}, {7, 1029}, {5, 3000}},
       buildSoftmax, prepareSoftmax, verifySoftmax},
      {"rmsnorm", "RMSNorm, bf16 in/out, f32 math", {"M", "N"}, {{1, 1}, {3, 31}, {4, 257}, {2, 5120}},
       buildRmsNorm, prepareRmsNorm, verifyRmsNorm},
      {"cumsum", "row-wise inclusive prefix sum, i32, any row length", {"M", "N"},
       {{1, 1}, {3, 7}, {2, 2048}, {5, 3000}, {2, 5000}},
       buildCumsum, prepareCumsum, verifyCumsum},
      {"gemm", "C = A*B, bf16 inputs, f32 accumulate, K loop pipelined by the compiler", {"M", "N", "K"},
       // K = 161: six steps, so the three-slot ring wraps around.
       {{1, 1, 1}, {17, 33, 15}, {45, 70, 50}, {64, 32, 48}, {130, 75, 33}, {70, 45, 161}},
       [](std::string *error) { return buildGemm(kBF16Input, error); },
       [](const std::vector<int64_t> &shape, uint64_t seed) { return prepareGemm(kBF16Input, shape, seed); },
       [](const LaunchPlan &plan) { return verifyGemm(kBF16Input, plan); }},
      {"gemm_pipelined", "the GEMM with a double-buffered, asynchronously filled K loop", {"M", "N", "K"},
       {{1, 1, 1}, {17, 33, 15}, {45, 70, 50}, {64, 32, 96}, {130, 75, 97}},
       buildGemmPipelined,
       [](const std::vector<int64_t> &shape, uint64_t seed) {
         LaunchPlan plan = prepareGemm(kBF16Input, shape, seed);
         plan.kernel = "gemm_pipelined";
         return plan;
       },
       [](const LaunchPlan &plan) { return verifyGemm(kBF16Input, plan); }},
      {"gemm_large", "the bf16 GEMM with 128x128 tiles over 8 warps (64 KiB of shared memory)", {"M", "N", "K"},
       {{1, 1, 1}, {130, 75, 33}, {200, 260, 161}},
       [](std::string *error) { return buildGemm(kLargeTileInput, error); },
       [](const std::vector<int64_t> &shape, uint64_t seed) { return prepareGemm(kLargeTileInput, shape, seed); },
       [](const LaunchPlan &plan) { return verifyGemm(kLargeTileInput, plan); }},
      {"gemm_fp8", "C = A*W^T, fp8 e4m3 A [M,K] and W [N,K], f32 accumulate, pipelined K loop", {"M", "N", "K"},
       // K = 321: six steps of 64, so the three-slot ring wraps around.
       {{1, 1, 1}, {17, 33, 15}, {45, 70, 100}, {64, 32, 64}, {130, 75, 65}, {70, 45, 321}},
       [](std::string *error) { return buildGemm(kFP8Input, error); },
       [](const std::vector<int64_t> &shape, uint64_t seed) { return prepareGemm(kFP8Input, shape, seed); },
       [](const LaunchPlan &plan) { return verifyGemm(kFP8Input, plan); }},
  };
  return examples;
}

const Example *wavetile::examples::findExample(const std::string &name) {
  for (const Example &e : allExamples())
    if (e.name == name)
      return &e;
  return nullptr;
}
