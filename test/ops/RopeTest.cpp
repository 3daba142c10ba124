//===- RopeTest.cpp - rotary embedding on the host against AITER's reference -===//
//
// The reference follows AITER's ref_rope_sbhd_fwd in double precision: the rotary part
// first (or last, nope_first), tables repeated (NeoX) or interleaved (GPT-J) when the front
// part is reused, x * cos + rotate_half(x) * sin, the rest copied. Tables hold cos/sin of
// random angles rounded to their dtype; rows come from s, or positions (+ offsets).
// Inputs are strided views (a fused qkv buffer), outputs poisoned; in-place runs too.
//
//===----------------------------------------------------------------------===//

#include "HostBuffer.h"

#include "wavetile/ops/Rope.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

using namespace wavetile;
using namespace wavetile::ops;
using wavetile::test::HostBuffer;

namespace {

struct Case {
  DType dtype, table;
  int64_t s, b, h, d, f;
  RotateStyle style;
  bool reuse, nopeFirst;
  int positions; // 0: rows by s; 1: positions; 2: positions + offsets
  int64_t secondHeads = 0;
  bool inPlace = false;
  /// x and y each in a row-major buffer of their own (the kernel with strides fixed at
  /// compile time), rather than strided views of a fused qkv buffer.
  bool packed = false;
};

/// The reference of one head row `x` (D values) with table rows `c`, `s` (F values each).
std::vector<double> referenceRow(const std::vector<double> &x, const std::vector<double> &cosRow,
                                 const std::vector<double> &sinRow, const Case &k) {
  const int64_t d = k.d, r = k.f * (k.reuse ? 2 : 1), base = k.nopeFirst ? d - r : 0;
  std::vector<double> cosFull(r), sinFull(r), y = x;
  for (int64_t i = 0; i < r; ++i) {
    int64_t f = !k.reuse ? i : k.style == RotateStyle::NeoX ? i % k.f : i / 2;
    cosFull[i] = cosRow[f];
    sinFull[i] = sinRow[f];
  }
  for (int64_t i = 0; i < r; ++i) {
    double rotated;
    if (k.style == RotateStyle::NeoX)
      rotated = i < r / 2 ? -x[base + i + r / 2] : x[base + i - r / 2];
    else
      rotated = i % 2 == 0 ? -x[base + i + 1] : x[base + i - 1];
    y[base + i] = x[base + i] * cosFull[i] + rotated * sinFull[i];
  }
  return y;
}

class RopeTest : public ::testing::TestWithParam<Case> {};

TEST_P(RopeTest, MatchesAitersReference) {
  const Case k = GetParam();
  // The other cases check that each GPU target reads tokens off the grid's axes as the host does.
  if (k.b > 65535 && std::getenv("WAVETILE_TEST_EMULATE"))
    GTEST_SKIP() << "131072 programs take 80 s per emulated target";
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::mt19937_64 rng = wavetile::test::freshGenerator();
  std::normal_distribution<float> value(0.f, 1.f);
  std::uniform_real_distribution<float> angle(-6.f, 6.f);
  // x and y live in one fused buffer per token, as a qkv projection leaves them, or one
  // after the other in it, each row-major (packed).
  const int64_t hy = k.secondHeads, token = (k.h + hy + 2) * k.d;
  HostBuffer qkv(k.dtype, k.s * k.b * (k.packed ? (k.h + hy) * k.d : token));
  for (size_t i = 0; i < qkv.size(); ++i)
    qkv.set(i, value(rng));
  const int64_t tableRows = k.positions ? 50 : k.s;
  HostBuffer cosT(k.table, tableRows * k.f), sinT(k.table, tableRows * k.f);
  for (int64_t i = 0; i < tableRows * k.f; ++i) {
    float a = angle(rng);
    cosT.set(i, std::cos(a));
    sinT.set(i, std::sin(a));
  }
  std::vector<int64_t> positions(k.s * k.b), offsets(k.s * k.b);
  // Rows past either end of the table too: they read its nearest row.
  std::uniform_int_distribution<int64_t> pos(-3, 52), off(0, 20);
  for (int64_t i = 0; i < k.s * k.b; ++i) {
    positions[i] = pos(rng);
    offsets[i] = k.positions == 2 ? off(rng) : 0;
  }
  auto stridesOf = [&](int64_t heads) {
    const int64_t tokenStride = k.packed ? heads * k.d : token;
    return std::vector<int64_t>{k.b * tokenStride, tokenStride, k.d, 1};
  };
  const std::vector<int64_t> xStrides = stridesOf(k.h), yStrides = stridesOf(hy);
  const int64_t yStart = k.packed ? k.s * k.b * k.h * k.d : k.h * k.d; // elements
  TensorRef x{qkv.data(), k.dtype, {k.s, k.b, k.h, k.d}, xStrides};
  TensorRef y{static_cast<char *>(qkv.data()) + yStart * (dsl::bitWidth(k.dtype) / 8), k.dtype, {k.s, k.b, hy, k.d},
              yStrides};
  HostBuffer outX(k.dtype, k.s * k.b * k.h * k.d), outY(k.dtype, k.s * k.b * std::max<int64_t>(hy, 1) * k.d);
  outX.poison();
  outY.poison();
  HostBuffer original = qkv;
  TensorRef ox = k.inPlace ? x : TensorRef::contiguous(outX.data(), k.dtype, {k.s, k.b, k.h, k.d});
  TensorRef oy = k.inPlace ? y : TensorRef::contiguous(outY.data(), k.dtype, {k.s, k.b, hy, k.d});
  TensorRef c = TensorRef::contiguous(cosT.data(), k.table, {tableRows, 1, 1, k.f});
  TensorRef sn = TensorRef::contiguous(sinT.data(), k.table, {tableRows, 1, 1, k.f});
  TensorRef p = TensorRef::contiguous(positions.data(), DType::i64, {k.s, k.b});
  TensorRef o = TensorRef::contiguous(offsets.data(), DType::i64, {k.s, k.b});
  RopeOptions options{k.style, k.reuse, k.nopeFirst};
  bool ok = hy ? rope_cached_positions_2c_fwd(*host.runtime, ox, oy, x, y, c, sn, p, k.positions == 2 ? &o : nullptr,
                                              options, &error)
            : k.positions == 2 ? rope_cached_positions_offsets_fwd(*host.runtime, ox, x, c, sn, p, o, options, &error)
            : k.positions == 1 ? rope_cached_positions_fwd(*host.runtime, ox, x, c, sn, p, options, &error)
                               : rope_cached_fwd(*host.runtime, ox, x, c, sn, options, &error);
  ASSERT_TRUE(ok) << error;

  // One ulp of the output dtype (f32: a few, for the f32 arithmetic before rounding).
  const double ulp = k.dtype == DType::f32 ? 4e-7 : original.ulp();
  int64_t bad = 0;
  for (int64_t si = 0; si < k.s; ++si)
    for (int64_t bi = 0; bi < k.b; ++bi) {
      int64_t row = k.positions ? std::clamp<int64_t>(positions[si * k.b + bi] + offsets[si * k.b + bi], 0,
                                                      tableRows - 1)
                                : si;
      std::vector<double> cosRow(k.f), sinRow(k.f);
      for (int64_t f = 0; f < k.f; ++f) {
        cosRow[f] = cosT.get(row * k.f + f);
        sinRow[f] = sinT.get(row * k.f + f);
      }
      for (int tensor = 0; tensor < (hy ? 2 : 1); ++tensor)
        for (int64_t h = 0; h < (tensor ? hy : k.h); ++h) {
          const std::vector<int64_t> &strides = tensor ? yStrides : xStrides;
          int64_t in = (tensor ? yStart : 0) + si * strides[0] + bi * strides[1] + h * k.d;
          std::vector<double> xs(k.d);
          for (int64_t i = 0; i < k.d; ++i)
            xs[i] = original.get(in + i);
          std::vector<double> expected = referenceRow(xs, cosRow, sinRow, k);
          const HostBuffer &got = k.inPlace ? qkv : tensor ? outY : outX;
          int64_t at = k.inPlace ? in : ((si * k.b + bi) * (tensor ? hy : k.h) + h) * k.d;
          for (int64_t i = 0; i < k.d; ++i) {
            double g = got.get(at + i), e = expected[i];
            if (!(std::abs(g - e) <= ulp * std::max(1.0, std::abs(e))) && bad++ < 6)
              ADD_FAILURE() << "token (" << si << ", " << bi << ") head " << h << (tensor ? " of y" : "")
                            << " column " << i << ": " << g << ", expected " << e;
          }
        }
    }
  EXPECT_EQ(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Host, RopeTest,
    ::testing::Values(Case{DType::bf16, DType::f32, 5, 3, 4, 128, 128, RotateStyle::NeoX, false, false, 0},
                      Case{DType::bf16, DType::bf16, 3, 2, 5, 128, 32, RotateStyle::NeoX, true, false, 1},
                      Case{DType::f16, DType::f32, 2, 3, 3, 128, 64, RotateStyle::NeoX, false, true, 2},
                      Case{DType::f32, DType::f32, 4, 1, 2, 64, 64, RotateStyle::GptJ, false, false, 0},
                      Case{DType::bf16, DType::f16, 3, 2, 3, 80, 20, RotateStyle::GptJ, true, true, 1},
                      Case{DType::f16, DType::f16, 2, 2, 2, 96, 48, RotateStyle::GptJ, false, false, 2},
                      Case{DType::bf16, DType::f32, 1, 2, 40, 128, 64, RotateStyle::NeoX, true, false, 1}, // chunks
                      Case{DType::bf16, DType::f32, 3, 2, 8, 64, 32, RotateStyle::NeoX, false, false, 1, 2},
                      // Two programs per token for x, one of them masked off for y.
                      Case{DType::bf16, DType::f32, 2, 2, 40, 128, 64, RotateStyle::NeoX, true, false, 1, 3},
                      // 512 tokens and more: one program walks a token's chunks, each thread
                      // holding 64 bytes of them up to two chunks, 32 from three.
                      Case{DType::bf16, DType::f32, 256, 2, 40, 128, 64, RotateStyle::NeoX, true, false, 1, 3},
                      Case{DType::f32, DType::f32, 301, 2, 3, 64, 64, RotateStyle::GptJ, false, false, 0},
                      Case{DType::bf16, DType::bf16, 2, 256, 65, 128, 64, RotateStyle::NeoX, true, false, 1},
                      // Few tokens in 1026 programs (one per chunk): 64 bytes per thread.
                      Case{DType::bf16, DType::bf16, 2, 171, 65, 128, 64, RotateStyle::NeoX, true, false, 1},
                      Case{DType::f16, DType::f16, 256, 2, 1, 64, 32, RotateStyle::NeoX, false, false, 1, 0, true},
                      Case{DType::f16, DType::f32, 2, 2, 4, 64, 16, RotateStyle::GptJ, true, true, 2, 1},
                      Case{DType::bf16, DType::bf16, 3, 2, 4, 128, 64, RotateStyle::NeoX, true, false, 1, 1, true},
                      Case{DType::f32, DType::f32, 2, 3, 3, 64, 64, RotateStyle::GptJ, false, false, 0, 0, true},
                      // A batch beyond the grid's y axis (65535): the batch runs along x.
                      Case{DType::f16, DType::f32, 2, 65536, 1, 8, 4, RotateStyle::NeoX, false, false, 1},
                      // Packed: tokens s * B + b, the strides constants.
                      Case{DType::bf16, DType::bf16, 7, 1, 32, 128, 64, RotateStyle::NeoX, true, false, 1, 0, false,
                           true},
                      Case{DType::f16, DType::f32, 3, 5, 3, 96, 32, RotateStyle::GptJ, false, true, 2, 2, false, true},
                      Case{DType::f32, DType::f32, 4, 3, 2, 64, 64, RotateStyle::NeoX, false, false, 0, 0, true, true},
                      Case{DType::bf16, DType::f32, 256, 3, 40, 128, 64, RotateStyle::NeoX, true, false, 1, 3, false,
                           true},
                      Case{DType::bf16, DType::f32, 2, 65536, 1, 8, 4, RotateStyle::GptJ, false, false, 2, 0, false,
                           true}),
    [](const auto &info) {
      const Case &c = info.param;
      return std::string(dsl::dtypeName(c.dtype)) + "_" + std::to_string(c.s * c.b) + "_tokens_" +
             (c.style == RotateStyle::NeoX ? "neox" : "gptj") + "_h" + std::to_string(c.h) +
             (c.secondHeads ? "x" + std::to_string(c.secondHeads) : "") + "_d" + std::to_string(c.d) + "_f" +
             std::to_string(c.f) + (c.reuse ? "_reuse" : "") + (c.nopeFirst ? "_nope_first" : "") +
             (c.positions == 2 ? "_offsets"
              : c.positions    ? "_positions"
                               : "") +
             (c.inPlace ? "_in_place" : "") + (c.packed ? "_packed" : "");
    });

TEST(RopeOp, RefusesBadArguments) {
  std::string error;
  wavetile::test::HostOps host;
  ASSERT_TRUE(host.runtime);
  std::vector<float> a(2 * 2 * 4 * 64), t(64 * 64);
  std::vector<int64_t> p(4);
  TensorRef x = TensorRef::contiguous(a.data(), DType::f32, {2, 2, 4, 64});
  TensorRef cos = TensorRef::contiguous(t.data(), DType::f32, {64, 1, 1, 64});
  auto refuses = [&](bool ok, const std::string &says) { wavetile::test::expectRefused(ok, error, says); };
  refuses(rope_cached_fwd(*host.runtime, x, x, TensorRef::contiguous(t.data(), DType::f32, {64, 1, 1, 48}),
                          TensorRef::contiguous(t.data(), DType::f32, {64, 1, 1, 48}), {RotateStyle::NeoX, true, false},
                          &error),
          "the rotary dimension 96 (from cos/sin's last dimension 48, reused) must be even, positive and at most the "
          "head size 64");
  refuses(rope_cached_fwd(*host.runtime, x, x, cos, TensorRef::contiguous(t.data(), DType::f16, {64, 1, 1, 64}), {},
                          &error),
          "'sin' must have the shape and dtype of 'cos'");
  refuses(rope_cached_positions_fwd(*host.runtime, x, x, cos, cos, TensorRef::contiguous(p.data(), DType::i64, {4}),
                                    {}, &error),
          "'positions' must be 2-D");
  refuses(rope_cached_positions_fwd(*host.runtime, x, x, cos, cos, TensorRef::contiguous(p.data(), DType::f32, {2, 2}),
                                    {}, &error),
          "'positions' has dtype f32; expected one of i32, i64");
  refuses(rope_cached_fwd(*host.runtime, TensorRef::contiguous(a.data(), DType::f32, {2, 2, 2, 128}), x, cos, cos, {},
                          &error),
          "'out' has shape [2, 2, 2, 128] but input has [2, 2, 4, 64]");
  EXPECT_EQ(host.runtime->loadedModules(), 0u);
}

} // namespace
