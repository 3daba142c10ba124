//===- GemmTuner.cpp - tuning GEMMs on the current device -----------------===//

#include "wavetile/ops/GemmTuner.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <thread>

using namespace wavetile;
using namespace wavetile::ops;

namespace {

/// f32 to bf16 or f16 bits, round to nearest even (finite inputs).
uint16_t encode(float f, DType dtype) {
  if (dtype == DType::f16)
    return std::bit_cast<uint16_t>(static_cast<_Float16>(f));
  uint32_t bits = std::bit_cast<uint32_t>(f);
  return uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

float decode(uint16_t h, DType dtype) {
  if (dtype == DType::f16)
    return float(std::bit_cast<_Float16>(h));
  return std::bit_cast<float>(uint32_t(h) << 16);
}

float decodeOutput(const std::vector<uint8_t> &bytes, size_t i, DType dtype) {
  if (dtype == DType::f32) {
    float f;
    std::memcpy(&f, bytes.data() + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, bytes.data() + 2 * i, 2);
  return decode(h, dtype);
}

size_t bytesOf(DType dtype) { return size_t(dsl::bitWidth(dtype) / 8); }

/// A random 8-bit code of `dtype` (i8, e4m3fn, e4m3fnuz) that is not a NaN, and its value.
uint8_t randomCode(std::mt19937_64 &rng, DType dtype) {
  std::uniform_int_distribution<int> byte(0, 255);
  for (;;) {
    uint8_t b = uint8_t(byte(rng));
    if (dtype == DType::i8 || (dtype == DType::f8E4M3FNUZ ? b != 0x80 : (b & 0x7f) != 0x7f))
      return b;
  }
}

double decodeCode(uint8_t code, DType dtype) {
  if (dtype == DType::i8)
    return double(int8_t(code));
  const bool fnuz = dtype == DType::f8E4M3FNUZ;
  int exponent = (code >> 3) & 15, mantissa = code & 7;
  double magnitude = exponent == 0 ? std::ldexp(mantissa / 8.0, fnuz ? -7 : -6)
                                   : std::ldexp(1 + mantissa / 8.0, exponent - (fnuz ? 8 : 7));
  return (code & 0x80) ? -magnitude : magnitude;
}

/// Runs body(chunk, begin, end) for 64 equal chunks of [0, count) on the host's cores. Fixed
/// chunks (not one per core) keep per-chunk random streams, and so the inputs, the same on
/// every machine; decode-sized weights (up to 10^9 values) would take minutes on one core.
void forChunks(size_t count, const std::function<void(size_t, size_t, size_t)> &body) {
  constexpr size_t chunks = 64;
  const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, chunks);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < workers; ++t)
    threads.emplace_back([&, t] {
      for (size_t c = t; c < chunks; c += workers)
        body(c, count * c / chunks, count * (c + 1) / chunks);
    });
  for (std::thread &thread : threads)
    thread.join();
}

/// More bytes than any GPU's last-level cache (the H200's L2 holds 50 MiB, the MI300X's
/// Infinity Cache 256 MiB): what the weights timed in turn add up to.
constexpr size_t kColdWeightBytes = size_t(320) << 20;

/// Device memory released with it.
struct DeviceBuffer {
  const Device &device;
  void *data = nullptr;
  DeviceBuffer(const Device &device, size_t bytes, std::string *error) : device(device) {
    data = device.allocate(std::max<size_t>(bytes, 1), error);
  }
  ~DeviceBuffer() {
    std::string ignored;
    if (data)
      device.release(data, &ignored);
  }
};

} // namespace

std::vector<GemmConfig> wavetile::ops::gemmCandidates(const GemmShape &shape, DType input) {
  std::vector<GemmConfig> candidates;
  const bool mx = input == DType::f4E2M1FN;
  if (shape.m <= 64) {
    // K steps of 128 and 256 bytes: streaming W needs bytes in flight, and 8-bit steps of 64
    // held half of bf16's (fp8 decode streamed W at 2.1-2.9 TB/s, bf16 at 3.1-4.4); bf16 steps
    // of 128 then beat the tuned 64-element rows by 4-14% at M = 16-64 of Llama-3-8B's layers
    // (H100, bench/gemm-notes.md v28). The async-copy ring has won every decode shape since its
    // copies lost their per-element masks; 4 stages keep a third more in flight, and 6 or 8
    // (where a split's K fills the ring and it stays within sm_90's 227 KB of shared memory)
    // as much as cuBLAS holds (a 213 KB ring, bench/gemm-notes.md v28). Block M up to twice M:
    // on sm_90a 64-row tiles run on wgmma.
    // MXFP4 decodes each step in registers, which bounds the step: 128 and 256 codes (64 and
    // 128 bytes) through 3 stages won its sweeps (bench/gemm-notes.md v12).
    const std::vector<int64_t> steps =
        mx ? std::vector<int64_t>{128, 256} : std::vector<int64_t>{128 / int64_t(bytesOf(input)), 256 / int64_t(bytesOf(input))};
    const std::vector<int64_t> depths = mx ? std::vector<int64_t>{3} : std::vector<int64_t>{3, 4, 6, 8};
    // MXFP4 splits K at most 8 ways: its candidates compile slowest, and its sweeps won with 1 to 4.
    const std::vector<int64_t> splits = mx ? std::vector<int64_t>{1, 2, 4, 8} : std::vector<int64_t>{1, 2, 4, 8, 16};
    // Rows up to twice M; each split keeps a K step and at least 128 of K.
    // A longer K step only where K holds one.
    auto fits = [&](int64_t bm, int64_t bk, int64_t split) {
      return bm <= 2 * std::max<int64_t>(shape.m, 8) && (bk == steps.front() || bk <= shape.k) &&
             (split == 1 || shape.k / split >= std::max<int64_t>(bk, 128));
    };
    auto deepRingFits = [&](int64_t bm, int64_t bn, int64_t bk, int64_t split, int64_t stages) {
      return stages <= 4 || (shape.k / split >= stages * bk &&
                             stages * (bm + bn) * bk * int64_t(bytesOf(input)) <= (200 << 10));
    };
    for (int64_t bm : {16, 32, 64})
      for (int64_t bn : {32, 64, 128})
        for (int64_t bk : steps)
          for (int64_t split : splits)
            for (int64_t stages : depths)
              if (fits(bm, bk, split) && deepRingFits(bm, bn, bk, split, stages))
                candidates.push_back({bm, bn, bk, stages, 4, split});
    // MXFP4 decodes X once spread over all warps and W in place, each warp its own columns:
    // eight warps split X's decode over twice the threads (and, on 128 columns, W's).
    if (mx)
      for (int64_t bm : {32, 64})
        for (int64_t bn : {128, 256})
          for (int64_t split : splits)
            if (fits(bm, 128, split))
              candidates.push_back({bm, bn, 128, 3, 8, split});
    // Skinny kernels: rows rounded up to a power of two, no matrix-instruction padding. MXFP4
    // decodes X again for every row a thread holds, so only few rows, with the long K steps
    // its one- and two-row sweeps chose (steps of at least 4096 products amortize each step's
    // sum across lanes). Where it sums integer products (NVIDIA) the limits are a row's, else
    // the tile's (tuneGemm drops what the target's variant refuses).
    const int64_t rows = int64_t(std::bit_ceil(uint64_t(shape.m)));
    const std::vector<int64_t> widths = mx ? std::vector<int64_t>{4, 8, 16, 32} : std::vector<int64_t>{8, 16, 32};
    const std::vector<int64_t> skinnySteps =
        mx ? std::vector<int64_t>{256, 512, 1024, 2048} : std::vector<int64_t>{128, 256, 512};
    for (int64_t bn : widths)
      for (int64_t bk : skinnySteps)
        for (int64_t split : {1, 4, 16})
          if (rows <= (mx ? 8 : 16) && (mx ? bn * bk : rows * bn * bk) <= 16384 && (!mx || rows * bn * bk >= 4096) &&
              (split == 1 || shape.k / split >= bk)) {
            GemmConfig c{rows, bn, bk, 1, 4, split};
            c.skinny = true;
            candidates.push_back(c);
          }
    return candidates;
  }
  // Block tiles with their warps (warp tiles up to 64x64): 128x256 and 256x128 load a third
  // fewer operand bytes per MMA from global memory than 128x128.
  struct Tile {
    int64_t m, n, warps;
  };
  // K steps of 64 and 128 bytes of the input; 8-bit inputs also 128 elements (wgmma's 128-byte
  // swizzle rows).
  std::vector<int64_t> steps{32, 64};
  if (dsl::bitWidth(input) == 8)
    steps.push_back(128);
  if (mx) // at least 64 codes a step (fitGemmConfig)
    steps = {64, 128};
  for (Tile tile : {Tile{64, 64, 4}, Tile{64, 128, 4}, Tile{128, 64, 4}, Tile{128, 128, 4}, Tile{128, 128, 8},
                    Tile{128, 256, 8}, Tile{256, 128, 8}})
    for (int64_t bk : steps)
      for (int64_t stages : {2, 3, 4})
        candidates.push_back({tile.m, tile.n, bk, stages, tile.warps, 1});
  return candidates;
}

bool wavetile::ops::tuneGemm(OpRuntime &rt, const std::vector<GemmShape> &shapes, const GemmTuneOptions &options,
                             std::vector<GemmTuneResult> *results, std::string *error) {
  const Device &device = rt.device();
  std::mt19937_64 rng(options.seed);
  std::normal_distribution<float> value(0.f, 1.f);
  for (const GemmShape &shape : shapes) {
    GemmTuneResult result{shape};
    const auto [m, n, k] = shape;
    // Inputs in the device dtype (16-bit values, 8-bit codes, or packed MXFP4 codes with
    // e8m0 scales per 32), their exact values for the reference, and f32 scales: gemm_a8w8's
    // per token and channel, gemm_a8w8_blockscale's per 1x128 of X and 128x128 of W.
    const bool quantized = options.op == "gemm_a8w8", mx = options.op == "gemm_a4w4",
               blockScaled = options.op == "gemm_a8w8_blockscale";
    const int64_t kBlocks = (k + 127) / 128, nBlocks = (n + 127) / 128;
    if (blockScaled && options.bias) {
      *error = "gemm_a8w8_blockscale takes no bias";
      return false;
    }
    if (mx && (options.input != DType::f4E2M1FN || k % 32)) {
      *error = "gemm_a4w4 is tuned with f4E2M1FN inputs and K a multiple of 32, got " +
               std::string(dsl::dtypeName(options.input)) + " and K = " + std::to_string(k);
      return false;
    }
    // Bytes per stored unit: an element, or for MXFP4 a byte of two codes.
    const size_t unitBytes = mx ? 1 : bytesOf(options.input), perUnit = mx ? 2 : 1;
    std::vector<uint8_t> x(m * k / perUnit * unitBytes), w(n * k / perUnit * unitBytes);
    std::vector<double> xv(m * k), wv(n * k);
    // e8m0 exponents around 2^0: products stay normal in f32 and bf16.
    std::uniform_int_distribution<int> exponent(120, 130);
    std::vector<uint8_t> xGroupScales(mx ? m * k / 32 : 0), wGroupScales(mx ? n * k / 32 : 0);
    for (auto *scales : {&xGroupScales, &wGroupScales})
      for (uint8_t &e : *scales)
        e = uint8_t(exponent(rng));
    auto fill = [&](std::vector<uint8_t> &bytes, std::vector<double> &values, const std::vector<uint8_t> &groupScales) {
      const uint64_t stream = rng();
      forChunks(values.size() / perUnit, [&](size_t chunk, size_t begin, size_t end) {
        std::mt19937_64 chunkRng(stream + chunk);
        std::normal_distribution<float> chunkValue(0.f, 1.f);
        std::uniform_int_distribution<int> byte(0, 255);
        for (size_t i = begin; i < end; ++i) {
          if (mx) { // every byte is two codes (low nibble first)
            static constexpr double kE2M1[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
            bytes[i] = uint8_t(byte(chunkRng));
            for (size_t e = 2 * i; e < 2 * i + 2; ++e) {
              const int code = (bytes[i] >> (4 * (e - 2 * i))) & 15;
              values[e] = (code & 8 ? -1 : 1) * std::ldexp(kE2M1[code & 7], int(groupScales[e / 32]) - 127);
            }
          } else if (quantized || blockScaled) {
            uint8_t code = randomCode(chunkRng, options.input);
            bytes[i] = code;
            values[i] = decodeCode(code, options.input);
          } else {
            uint16_t h = encode(chunkValue(chunkRng), options.input);
            std::memcpy(bytes.data() + 2 * i, &h, 2);
            values[i] = decode(h, options.input);
          }
        }
      });
    };
    fill(x, xv, xGroupScales);
    fill(w, wv, wGroupScales);
    std::uniform_real_distribution<float> scale(0.001f, 0.1f);
    std::vector<float> xs(quantized     ? m
                          : blockScaled ? m * kBlocks
                                        : 0),
        ws(quantized     ? n
           : blockScaled ? nBlocks * kBlocks
                         : 0);
    for (float &v : xs)
      v = scale(rng);
    for (float &v : ws)
      v = scale(rng);
    std::vector<uint8_t> biasBytes(n * bytesOf(options.output));
    std::vector<double> biasValues(n, 0.0);
    for (int64_t i = 0; options.bias && i < n; ++i) {
      float b = value(rng);
      if (options.output == DType::f32) {
        std::memcpy(biasBytes.data() + 4 * i, &b, 4);
        biasValues[i] = b;
      } else {
        uint16_t h = encode(b, options.output);
        std::memcpy(biasBytes.data() + 2 * i, &h, 2);
        biasValues[i] = decode(h, options.output);
      }
    }
    std::vector<double> reference(m * n), magnitude(m * n);
    forChunks(size_t(n), [&](size_t, size_t begin, size_t end) {
      for (int64_t r = 0; r < m; ++r)
        for (size_t c = begin; c < end; ++c) {
          // Each scale block's products (all of K but for block scales) in four partial
          // sums: independent chains the compiler can keep in flight.
          const int64_t block = blockScaled ? 128 : k;
          const double *xRow = &xv[r * k], *wRow = &wv[c * k];
          double total = 0, size = 0;
          for (int64_t b0 = 0; b0 < k; b0 += block) {
            double sum[4] = {}, abs[4] = {};
            const int64_t end = std::min(b0 + block, k);
            for (int64_t i = b0; i < end; i += 4)
              for (int64_t j = 0; j < 4 && i + j < end; ++j) {
                double p = xRow[i + j] * wRow[i + j];
                sum[j] += p;
                abs[j] += std::abs(p);
              }
            const double s =
                blockScaled ? double(xs[r * kBlocks + b0 / 128]) * double(ws[int64_t(c) / 128 * kBlocks + b0 / 128])
                : quantized ? double(xs[r]) * double(ws[c])
                            : 1.0;
            total += (sum[0] + sum[1] + sum[2] + sum[3]) * s;
            size += (abs[0] + abs[1] + abs[2] + abs[3]) * s;
          }
          reference[r * n + c] = total + biasValues[c];
          magnitude[r * n + c] = size;
        }
    });
    const size_t outBytes = m * n * bytesOf(options.output);
    // The scales' bytes: gemm_a8w8's f32 per token and channel, or gemm_a4w4's e8m0 per group.
    auto scaleBytes = [&](const std::vector<float> &f32, const std::vector<uint8_t> &e8m0) {
      std::vector<uint8_t> bytes(mx ? e8m0 : std::vector<uint8_t>(f32.size() * 4));
      if (!mx)
        std::memcpy(bytes.data(), f32.data(), bytes.size());
      return bytes;
    };
    const std::vector<uint8_t> xScaleBytes = scaleBytes(xs, xGroupScales), wScaleBytes = scaleBytes(ws, wGroupScales);
    DeviceBuffer dx(device, x.size(), error), dw(device, w.size(), error), dout(device, outBytes, error),
        dbias(device, biasBytes.size(), error), dxs(device, xScaleBytes.size(), error),
        dws(device, wScaleBytes.size(), error);
    if (!dx.data || !dw.data || !dout.data || !dbias.data || !dxs.data || !dws.data ||
        !device.copyToDevice(dx.data, x.data(), x.size(), error) ||
        !device.copyToDevice(dw.data, w.data(), w.size(), error) ||
        (options.bias && !device.copyToDevice(dbias.data, biasBytes.data(), biasBytes.size(), error)) ||
        ((quantized || mx || blockScaled) &&
         (!device.copyToDevice(dxs.data, xScaleBytes.data(), xScaleBytes.size(), error) ||
          !device.copyToDevice(dws.data, wScaleBytes.data(), wScaleBytes.size(), error))))
      return false;
    TensorRef txs = mx            ? TensorRef::contiguous(dxs.data, DType::f8E8M0FNU, {m, k / 32})
                    : blockScaled ? TensorRef::contiguous(dxs.data, DType::f32, {m, kBlocks})
                                  : TensorRef::contiguous(dxs.data, DType::f32, {m, 1});
    TensorRef tws = mx            ? TensorRef::contiguous(dws.data, DType::f8E8M0FNU, {n, k / 32})
                    : blockScaled ? TensorRef::contiguous(dws.data, DType::f32, {nBlocks, kBlocks})
                                  : TensorRef::contiguous(dws.data, DType::f32, {1, n});
    // Timed calls take turns among copies of W and its scales that together outsize the
    // last-level cache (kColdWeightBytes), as decoding reads each layer's weights from memory:
    // timed on one copy, a W that fits the H200's 50 MiB L2 ran a third faster than in turn.
    const size_t weightBytes = w.size() + (mx || blockScaled ? wScaleBytes.size() : 0);
    const size_t copies = std::clamp<size_t>((kColdWeightBytes + weightBytes - 1) / weightBytes, 1, 16);
    std::vector<std::unique_ptr<DeviceBuffer>> wCopies, wScaleCopies;
    for (size_t i = 1; i < copies; ++i) {
      wCopies.push_back(std::make_unique<DeviceBuffer>(device, w.size(), error));
      wScaleCopies.push_back(std::make_unique<DeviceBuffer>(device, wScaleBytes.size(), error));
      if (!wCopies.back()->data || !wScaleCopies.back()->data ||
          !device.copyToDevice(wCopies.back()->data, w.data(), w.size(), error) ||
          !device.copyToDevice(wScaleCopies.back()->data, wScaleBytes.data(), wScaleBytes.size(), error))
        return false;
    }
    TensorRef tx = TensorRef::contiguous(dx.data, options.input, {m, k / int64_t(perUnit)});
    TensorRef tw = TensorRef::contiguous(dw.data, options.input, {n, k / int64_t(perUnit)});
    TensorRef tout = TensorRef::contiguous(dout.data, options.output, {m, n});
    TensorRef tbias = TensorRef::contiguous(dbias.data, options.output, {n});
    const double ulp = options.output == DType::f32 ? 0 : options.output == DType::f16 ? 1.0 / 1024 : 1.0 / 128;
    // Of the sum of |products|: f32 accumulation, int8's exact sums scaled in f32, or for fp8
    // inputs 2^-10. Hopper's fp8 wgmma
    // sums each instruction's products to about 13 bits of the largest (on the H200, errors up
    // to 1.3e-4 of the sum of |products| at K = 128 with uniformly random codes); a wrong
    // configuration misses by orders of magnitude more.
    const bool fp8 = options.input == DType::f8E4M3FN || options.input == DType::f8E4M3FNUZ;
    const double accumulation = fp8 ? 1.0 / 1024 : options.input == DType::i8 ? 1e-6 : 2e-5;
    std::vector<GemmConfig> candidates =
        options.candidates.empty() ? gemmCandidates(shape, options.input) : options.candidates;
    if (blockScaled) // the skinny kernel: one scale per row
      std::erase_if(candidates, [](const GemmConfig &c) { return c.skinny; });
    if (mx) // skinny tiles within a row's limits, which only the integer variant takes
      std::erase_if(candidates, [&](const GemmConfig &c) {
        GemmSpec spec;
        spec.mx = true;
        spec.input = options.input;
        spec.config = c;
        fitGemmConfig(spec, rt.target());
        return !spec.problem().empty();
      });
    if (blockScaled) { // its K steps are the 128-wide scale blocks
      for (GemmConfig &c : candidates)
        c.blockK = 128;
      std::vector<GemmConfig> distinct;
      for (const GemmConfig &c : candidates)
        if (std::none_of(distinct.begin(), distinct.end(), [&](const GemmConfig &d) { return d.key() == c.key(); }))
          distinct.push_back(c);
      candidates = distinct;
    }
    // NaN in every output dtype: a candidate that leaves elements unwritten cannot pass on
    // the previous one's results.
    const std::vector<uint8_t> poison(outBytes, 0xff);
    std::vector<uint8_t> got(outBytes);
    auto run = [&](const GemmConfig &config, std::string *why, size_t copy = 0) {
      const TensorRef *bias = options.bias ? &tbias : nullptr;
      TensorRef w = tw, ws = tws;
      if (copy > 0) {
        w.data = wCopies[copy - 1]->data;
        ws.data = wScaleCopies[copy - 1]->data;
      }
      return mx            ? gemm_a4w4(rt, tout, tx, w, txs, ws, bias, why, config)
             : quantized   ? gemm_a8w8(rt, tout, tx, w, txs, ws, bias, why, config)
             : blockScaled ? gemm_a8w8_blockscale(rt, tout, tx, w, txs, ws, why, config)
                           : gemm_a16w16(rt, tout, tx, w, bias, why, config);
    };
    // Compiling a candidate takes about a second, timing it milliseconds: all of them compile
    // first, on every core.
    const auto compileStart = std::chrono::steady_clock::now();
    rt.precompile(
        [&] {
          for (const GemmConfig &config : candidates) {
            std::string ignored; // reported by the candidate's real run below
            run(config, &ignored);
          }
        },
        options.compileThreads);
    result.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - compileStart).count();
    for (const GemmConfig &config : candidates) {
      ++result.tried;
      if (!device.copyToDevice(dout.data, poison.data(), outBytes, error))
        return false;
      std::string why;
      auto call = [&] { return run(config, &why); };
      rt.takeLaunchedLocalMemoryBytes();
      bool ran = call() && device.synchronize(&why);
      // Shipped configurations must not spill (issue 6's code-object checks): a kernel with
      // local memory is dropped, however fast.
      if (int64_t local = ran ? rt.takeLaunchedLocalMemoryBytes() : 0; local > 0) {
        why = "spills (" + std::to_string(local) + " bytes of local memory a thread)";
        ran = false;
      }
      if (!ran) {
        if (result.firstFailure.empty())
          result.firstFailure = config.key() + ": " + why;
        ++result.failed;
        continue;
      }
      if (!device.copyToHost(got.data(), dout.data, outBytes, error))
        return false;
      int64_t worst = -1; // the element furthest past its bound
      double worstExcess = 1;
      for (int64_t i = 0; i < m * n; ++i) {
        double excess = std::abs(double(decodeOutput(got, i, options.output)) - reference[i]) /
                        (ulp * std::abs(reference[i]) + accumulation * magnitude[i] + 1e-6);
        if (!(excess <= worstExcess)) { // NaN counts
          worst = i;
          worstExcess = excess;
        }
      }
      if (worst >= 0) {
        if (result.firstFailure.empty()) {
          char detail[200];
          std::snprintf(detail, sizeof detail,
                        " (worst at row %lld column %lld: %.6g, reference %.6g, sum of |products| %.6g)",
                        (long long)(worst / n), (long long)(worst % n),
                        double(decodeOutput(got, worst, options.output)), reference[worst], magnitude[worst]);
          result.firstFailure = config.key() + ": output differs from the reference" + detail;
        }
        ++result.wrong;
        continue;
      }
      for (int i = 0; i < options.warmup; ++i)
        run(config, &why, i % copies);
      void *start = device.createEvent(error), *end = device.createEvent(error);
      if (!start || !end || !device.recordEvent(start, rt.stream(), error))
        return false;
      for (int i = 0; i < options.repetitions; ++i)
        run(config, &why, (options.warmup + i) % copies);
      float ms = 0;
      if (!device.recordEvent(end, rt.stream(), error) || !device.elapsedMilliseconds(start, end, &ms, error) ||
          !device.destroyEvent(start, error) || !device.destroyEvent(end, error))
        return false;
      double us = 1000.0 * ms / options.repetitions;
      if (!result.best || us < result.microseconds) {
        result.best = config;
        result.microseconds = us;
      }
    }
    results->push_back(result);
  }
  return true;
}

bool wavetile::ops::writeGemmTable(const std::string &path, OpRuntime &rt, const GemmTuneOptions &options,
                                   const std::vector<GemmTuneResult> &results, std::string *error) {
  // Existing rows (other shapes, targets) are kept; tuned shapes replace theirs.
  std::map<TuningKey, TunedRow> rows;
  if (std::filesystem::exists(path)) {
    auto existing = TunedConfigs::load(path, gemmTuningKeys(), error);
    if (!existing)
      return false;
    for (const TunedRow &row : existing->rows())
      rows[existing->keyOf(row)] = row;
  }
  for (const GemmTuneResult &r : results) {
    if (!r.best)
      continue;
    TuningKey key = gemmTuningKey(rt.target(), rt.device().multiprocessors(), r.shape.m, r.shape.n, r.shape.k,
                                  options.input, options.output, options.bias);
    TunedRow row;
    for (size_t i = 0; i < key.size(); ++i)
      row[gemmTuningKeys()[i]] = key[i];
    const GemmConfig &c = *r.best;
    row["block_m"] = std::to_string(c.blockM);
    row["block_n"] = std::to_string(c.blockN);
    row["block_k"] = std::to_string(c.blockK);
    row["stages"] = std::to_string(c.stages);
    row["warps"] = std::to_string(c.warps);
    row["split_k"] = std::to_string(c.splitK);
    row["skinny"] = c.skinny ? "1" : "0";
    char us[32];
    std::snprintf(us, sizeof(us), "%.2f", r.microseconds);
    row["us"] = us;
    rows[key] = row;
  }
  std::vector<std::string> columns = gemmTuningKeys();
  for (const char *c : {"block_m", "block_n", "block_k", "stages", "warps", "split_k", "skinny", "us"})
    columns.push_back(c);
  std::ofstream out(path);
  for (size_t i = 0; i < columns.size(); ++i)
    out << (i ? "," : "") << columns[i];
  out << "\n";
  for (const auto &[key, row] : rows) {
    for (size_t i = 0; i < columns.size(); ++i) {
      auto it = row.find(columns[i]);
      out << (i ? "," : "") << (it == row.end() ? "" : it->second);
    }
    out << "\n";
  }
  if (!out) {
    *error = path + ": cannot be written";
    return false;
  }
  return true;
}
