//===- HostOpsTest.cpp - every tile op on the host, against plain-C++ references ----===//
//
// Each test builds a small kernel, runs it on fresh random inputs (the seed is printed; set
// WAVETILE_SEED=<seed> to replay one), with every output poisoned beforehand, and compares
// with a reference written here from the op's documented semantics -- never derived from
// the compiler. Results must be bit-exact where the math is exact; elsewhere they must stay
// within a stated error bound. A few checks are also run against a deliberately wrong
// reference (or a mutated kernel) to show that they can fail.
//
// Some kernels are tile IR text (Module::parse) rather than DSL: the fp6 formats have no
// pointer type and the DSL no bitcast, so their exhaustive widening runs that way, as does
// every round-toward-zero conversion (the DSL only emits round-to-nearest-even), and scf.if
// returning tiles (the DSL's ifThenElse builds invalid IR). Custom reduce/scan combiners are
// built inside a one-trip forRange to step around a DSL insertion-point bug. Both DSL bugs,
// and two host codegen bugs outside this test's reach, have disabled reproducers at the end
// (run them with --gtest_also_run_disabled_tests).
//
//===----------------------------------------------------------------------===//

#include "wavetile/dsl/DSL.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace wavetile;
using namespace wavetile::dsl;

namespace {

//===----------------------------------------------------------------------===//
// Infrastructure
//===----------------------------------------------------------------------===//

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// Outputs are filled with these before a run, so an element nobody wrote shows.
constexpr uint32_t kPoisonBits = 0x7fa5a5a5; // a NaN no operation produces
float poison() { return floatOf(kPoisonBits); }
constexpr int32_t kPoisonI32 = int32_t(0xa5a5a5a5);
constexpr uint8_t kPoisonByte = 0xa5;
constexpr uint16_t kPoison16 = 0x7da5; // a NaN in f16, a large finite value in bf16

std::string hex(uint64_t v) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%" PRIx64, v);
  return text;
}
std::string show(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g (%a)", v, v);
  return text;
}

/// Fresh per test; WAVETILE_SEED replays one.
uint64_t testSeed() {
  uint64_t seed;
  if (const char *env = std::getenv("WAVETILE_SEED"))
    seed = std::strtoull(env, nullptr, 10);
  else
    seed = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf("[%s.%s] seed %" PRIu64 " (replay: WAVETILE_SEED=%" PRIu64 ")\n", info->test_suite_name(), info->name(),
              seed, seed);
  return seed;
}

/// Counts mismatches, keeping the first few descriptions.
struct Diffs {
  size_t count = 0;
  std::string first;
  void add(const std::string &what) {
    if (count++ < 10)
      first += "    " + what + "\n";
  }
  bool ok() const { return count == 0; }
};
std::ostream &operator<<(std::ostream &os, const Diffs &d) {
  return os << d.count << " mismatch(es), first:\n" << d.first;
}

class HostOps : public ::testing::Test {
protected:
  void SetUp() override {
    seed = testSeed();
    rng.seed(seed);
  }
  int32_t randInt(int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); }
  int64_t randInt64(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  float randFloat(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }
  uint32_t randBits() { return uint32_t(rng()); }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng); }

  uint64_t seed = 0;
  std::mt19937_64 rng;
};

std::unique_ptr<HostExecutable> compileDsl(ModuleBuilder &mb) {
  std::string error;
  auto module = mb.finish(&error);
  if (!module) {
    ADD_FAILURE() << "DSL rejected the kernel:\n" << error;
    return nullptr;
  }
  auto exe = HostExecutable::compile(*module, &error);
  if (!exe)
    ADD_FAILURE() << "host compile failed:\n" << error << "\nof the module:\n" << module->str();
  return exe;
}

std::unique_ptr<HostExecutable> compileText(const std::string &text) {
  std::string error;
  auto module = Module::parse(text, "HostOpsTest", &error);
  if (!module) {
    ADD_FAILURE() << "parse failed:\n" << error << "\n" << text;
    return nullptr;
  }
  auto exe = HostExecutable::compile(*module, &error);
  if (!exe)
    ADD_FAILURE() << "host compile failed:\n" << error;
  return exe;
}

bool launch(const HostExecutable &exe, const std::string &kernel, std::array<uint32_t, 3> grid,
            const std::vector<KernelArg> &args) {
  std::string error;
  bool ok = exe.launch(kernel, grid, args, &error);
  EXPECT_TRUE(ok) << kernel << ": " << error;
  return ok;
}

template <typename T>
KernelArg ptr(std::vector<T> &v, const char *element) {
  return KernelArg::ptr(v.data(), element);
}

uint32_t ceilDiv(size_t a, size_t b) { return uint32_t((a + b - 1) / b); }

/// Stores a tile (or scalar) at the next free offsets of `out`, row-major; records where.
struct Sections {
  std::map<std::string, std::pair<int32_t, int64_t>> at; // name -> offset, element count
  int32_t total = 0;
};
void put(Pointer out, Sections &sections, const std::string &name, Value v) {
  Shape shape = v.shape();
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  Value offsets = arange(sections.total, sections.total + int32_t(n));
  if (shape.size() > 1)
    offsets = offsets.reshape(shape);
  store(out, offsets, v);
  sections.at[name] = {sections.total, n};
  sections.total += int32_t(n);
}

/// Compares one section against expectations: NaN expects NaN; otherwise |got - want| <= tol.
void compareSection(Diffs &diffs, const std::string &name, const float *got, const std::vector<double> &want,
                    const std::vector<double> &tol = {}) {
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got[i], w = want[i], t = tol.empty() ? 0.0 : tol[i];
    bool ok = std::isnan(w) ? std::isnan(g) && bitsOf(got[i]) != kPoisonBits : g == w || std::abs(g - w) <= t;
    if (!ok)
      diffs.add(name + "[" + std::to_string(i) + "]: got " + show(g) + " want " + show(w) + " tol " + show(t));
  }
}
void compareSection(Diffs &diffs, const std::string &name, const int32_t *got, const std::vector<int64_t> &want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (int64_t(got[i]) != want[i])
      diffs.add(name + "[" + std::to_string(i) + "]: got " + std::to_string(got[i]) + " want " +
                std::to_string(want[i]));
}

/// Unit roundoff of f32 and the classic bound gamma_n = n u / (1 - n u) for n roundings.
constexpr double kU32 = 0x1p-24;
double gamma(int n) { return n * kU32 / (1 - n * kU32); }

//===----------------------------------------------------------------------===//
// Float formats, from their definitions (OCP OFP8 / MX v1.0, IEEE 754)
//===----------------------------------------------------------------------===//

enum class Special {
  IEEE,   // all-ones exponent: Inf (mantissa 0) or NaN
  FN,     // no Inf; only S.1111.111 is NaN (f8E4M3FN)
  FNUZ,   // no Inf, no -0; 0x80 is the only NaN
  Finite, // no Inf, no NaN (fp6, fp4)
  E8M0,   // unsigned powers of two 2^(c-127); 0xFF is NaN; no zero
};

struct Format {
  const char *name;
  DType dtype;
  int bits, ebits, mbits, bias;
  Special special;
  bool hasSign() const { return special != Special::E8M0; }
  uint32_t signBit() const { return hasSign() ? 1u << (bits - 1) : 0; }
  uint32_t numCodes() const { return 1u << bits; }
};

const Format kE4M3FN{"f8E4M3FN", DType::f8E4M3FN, 8, 4, 3, 7, Special::FN};
const Format kE5M2{"f8E5M2", DType::f8E5M2, 8, 5, 2, 15, Special::IEEE};
const Format kE4M3FNUZ{"f8E4M3FNUZ", DType::f8E4M3FNUZ, 8, 4, 3, 8, Special::FNUZ};
const Format kE5M2FNUZ{"f8E5M2FNUZ", DType::f8E5M2FNUZ, 8, 5, 2, 16, Special::FNUZ};
const Format kE8M0{"f8E8M0FNU", DType::f8E8M0FNU, 8, 8, 0, 127, Special::E8M0};
const Format kE2M3{"f6E2M3FN", DType::f6E2M3FN, 6, 2, 3, 1, Special::Finite};
const Format kE3M2{"f6E3M2FN", DType::f6E3M2FN, 6, 3, 2, 3, Special::Finite};
const Format kE2M1{"f4E2M1FN", DType::f4E2M1FN, 4, 2, 1, 1, Special::Finite};
const Format kF16{"f16", DType::f16, 16, 5, 10, 15, Special::IEEE};
const Format kBF16{"bf16", DType::bf16, 16, 8, 7, 127, Special::IEEE};

const Format *const kNarrowFormats[] = {&kE4M3FN, &kE5M2, &kE4M3FNUZ, &kE5M2FNUZ,
                                        &kE8M0,   &kE2M3, &kE3M2,     &kE2M1};

/// The value of a code (NaN for NaN codes), exactly.
double decode(const Format &f, uint32_t code) {
  if (f.special == Special::E8M0)
    return code == 0xFF ? NAN : std::ldexp(1.0, int(code) - 127);
  if (f.special == Special::FNUZ && code == f.signBit())
    return NAN;
  bool negative = code & f.signBit();
  uint32_t magnitude = code & (f.signBit() - 1);
  uint32_t e = magnitude >> f.mbits, m = magnitude & ((1u << f.mbits) - 1);
  uint32_t eMax = (1u << f.ebits) - 1, mMax = (1u << f.mbits) - 1;
  if (f.special == Special::IEEE && e == eMax)
    return m == 0 ? (negative ? -INFINITY : INFINITY) : NAN;
  if (f.special == Special::FN && e == eMax && m == mMax)
    return NAN;
  double v = e == 0 ? std::ldexp(double(m), 1 - f.bias - f.mbits)
                    : std::ldexp(double(m + (1u << f.mbits)), int(e) - f.bias - f.mbits);
  return negative ? -v : v;
}

enum class Round { NearestEven, TowardZero, NearestTiesDown /* only for the checks that must fail */ };

/// Rounds by searching the sorted table of representable values; independent of the
/// compiler's bit manipulation. Documented choices it encodes (ExpandFpConvert.cpp):
///  - NaN becomes the format's canonical NaN (E5M2 0x7E, E4M3FN 0x7F, fnuz 0x80, e8m0 0xFF);
///    fp6/fp4 have none and take the largest finite value (positive).
///  - Overflow (a rounded magnitude above the largest finite value, or Inf) becomes the
///    largest finite value with `saturate`; otherwise Inf where the format has it, else
///    NaN (keeping the sign bit in E4M3FN), and the largest finite value in fp6/fp4. With
///    rtz a finite value never overflows (IEEE roundTowardZero): it gives the largest
///    finite value; only Inf takes the overflow code.
///  - fnuz formats map -0 (and negatives that round to 0) to +0.
///  - e8m0 has no sign: it encodes |x|; ties between powers of two round up; values below
///    2^-127 (and 0) give the smallest code.
struct Encoder {
  const Format &f;
  std::vector<std::pair<double, uint32_t>> values; // finite non-negative values, ascending
  double beyond;                                   // next value above the largest, unbounded exponent
  uint32_t maxCode;

  explicit Encoder(const Format &format) : f(format) {
    for (uint32_t c = 0; c < f.numCodes(); ++c) {
      double v = decode(f, c);
      if (!(c & f.signBit()) && std::isfinite(v))
        values.push_back({v, c});
    }
    std::sort(values.begin(), values.end());
    maxCode = values.back().second;
    double max = values.back().first, previous = values[values.size() - 2].first;
    beyond = f.special == Special::E8M0 ? 2 * max : max + (max - previous);
  }
  double maxFinite() const { return values.back().first; }

  uint32_t nanCode() const {
    switch (f.special) {
    case Special::IEEE:
      return (((1u << f.ebits) - 1) << f.mbits) | (1u << (f.mbits - 1));
    case Special::FN:
      return f.signBit() - 1;
    case Special::FNUZ:
      return f.signBit();
    case Special::Finite:
      return maxCode;
    case Special::E8M0:
      return 0xFF;
    }
    return 0;
  }
  uint32_t overflowCode(bool negative, bool saturate) const {
    uint32_t sign = negative ? f.signBit() : 0;
    if (saturate || f.special == Special::Finite)
      return sign | maxCode;
    switch (f.special) {
    case Special::IEEE:
      return sign | (((1u << f.ebits) - 1) << f.mbits);
    case Special::FN:
      return sign | (f.signBit() - 1);
    case Special::FNUZ:
      return f.signBit();
    default:
      return 0xFF;
    }
  }
  uint32_t encode(double x, Round round, bool saturate) const {
    if (std::isnan(x))
      return nanCode();
    bool negative = std::signbit(x) && f.hasSign();
    double a = std::fabs(x);
    if (a >= beyond) { // includes Inf
      if (round == Round::TowardZero && std::isfinite(a))
        return (negative ? f.signBit() : 0) | maxCode;
      return overflowCode(negative, saturate);
    }
    auto above = std::upper_bound(values.begin(), values.end(), a,
                                  [](double v, const std::pair<double, uint32_t> &p) { return v < p.first; });
    bool haveBelow = above != values.begin();
    bool aboveIsBeyond = above == values.end();
    double low = haveBelow ? std::prev(above)->first : 0, high = aboveIsBeyond ? beyond : above->first;
    uint32_t lowCode = haveBelow ? std::prev(above)->second : 0;
    uint32_t highCode = aboveIsBeyond ? maxCode + 1 : above->second;
    bool up;
    if (haveBelow && low == a)
      up = false;
    else if (!haveBelow)
      up = true; // e8m0 below its smallest value
    else if (round == Round::TowardZero)
      up = false;
    else {
      double mid = (low + high) / 2; // exact: neighbours of few significant bits
      if (a != mid)
        up = a > mid;
      else if (round == Round::NearestTiesDown)
        up = false;
      else if (f.special == Special::E8M0)
        up = true;
      else
        up = (highCode & 1) == 0;
    }
    if (up && aboveIsBeyond)
      return overflowCode(negative, saturate);
    uint32_t code = up ? highCode : lowCode;
    if (f.special == Special::FNUZ && code == 0)
      return 0;
    return (negative ? f.signBit() : 0) | code;
  }
};

const Encoder &encoderFor(const Format &f) {
  static std::map<const Format *, std::unique_ptr<Encoder>> cache;
  auto &slot = cache[&f];
  if (!slot)
    slot = std::make_unique<Encoder>(f);
  return *slot;
}

/// Round-to-nearest-even f32 -> f16/bf16 bits (NaN: the canonical quiet NaN).
uint16_t toHalf(const Format &f, float x) { return uint16_t(encoderFor(f).encode(x, Round::NearestEven, false)); }
float fromHalf(const Format &f, uint16_t code) { return float(decode(f, code)); }

/// f32 inputs that probe a format: every value, every midpoint between neighbours (and the
/// one above the largest), the f32 neighbours of both, their negatives, and specials.
std::vector<float> probeInputs(const Format &f) {
  const Encoder &enc = encoderFor(f);
  std::vector<double> points;
  for (size_t i = 0; i < enc.values.size(); ++i) {
    double v = enc.values[i].first;
    double next = i + 1 < enc.values.size() ? enc.values[i + 1].first : enc.beyond;
    points.push_back(v);
    points.push_back((v + next) / 2);
  }
  points.push_back(enc.beyond);
  std::vector<float> inputs;
  for (double p : points) {
    float x = float(p);
    if (double(x) != p || std::isinf(x))
      continue; // not an f32 (e8m0 2^128)
    for (float y : {x, std::nextafter(x, 0.f), std::nextafter(x, INFINITY)})
      for (float s : {y, -y})
        inputs.push_back(s);
  }
  for (uint32_t bits : {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u,
                        0x7fffffffu, 0xff812345u, 0x7f7fffffu, 0xff7fffffu, 0x00800000u, 0x80800000u, 0x00000001u,
                        0x80000001u, 0x007fffffu, 0x00400000u, 0x80400000u, 0x00600000u, 0x005fffffu, 0x00600001u,
                        0x00200000u, 0x00c00000u, 0x00bfffffu, 0x7f400000u, 0x7f3fffffu, 0x7effffffu})
    inputs.push_back(floatOf(bits));
  for (float v : {1e30f, -1e30f, 65504.f, 65536.f, 57344.f, 61440.f, 448.f, 464.f, 480.f, 240.f, 7.5f, 28.f, 6.f})
    inputs.push_back(v);
  return inputs;
}

/// Random f32 values around a format's range (random sign, exponent and mantissa), plus raw
/// random bit patterns.
std::vector<float> randomInputs(std::mt19937_64 &rng, const Format &f, size_t count) {
  const Encoder &enc = encoderFor(f);
  int lo = std::ilogb(enc.values[1].first) - 4, hi = std::ilogb(enc.maxFinite()) + 3;
  std::vector<float> inputs;
  for (size_t i = 0; i < count; ++i) {
    uint32_t r = uint32_t(rng());
    if (i % 4 == 0) {
      inputs.push_back(floatOf(r));
      continue;
    }
    int e = lo + int(rng() % uint64_t(hi - lo + 1));
    float v = std::ldexp(1.0f + float(r & 0x7fffff) * 0x1p-23f, e);
    inputs.push_back((r >> 31) ? -v : v);
  }
  return inputs;
}

//===----------------------------------------------------------------------===//
// 1. program_id / num_programs
//===----------------------------------------------------------------------===//

TEST_F(HostOps, ProgramIdsAndGridSizesOnA3DGrid) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("ids");
    Pointer out = k.pointer("out", DType::i32), count = k.pointer("count", DType::i32);
    Value x = programId(0), y = programId(1), z = programId(2);
    Value gx = numPrograms(0), gy = numPrograms(1), gz = numPrograms(2);
    Value slot = x + gx * (y + gy * z);
    Value i = arange(0, 8);
    Value v = where(i == 0, x, where(i == 1, y, where(i == 2, z, where(i == 3, gx, where(i == 4, gy, gz)))));
    store(out, slot * 8 + i, v, i < 6);
    atomicAdd(count, slot + arange(0, 1), 1);
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);
  std::vector<std::array<uint32_t, 3>> grids{{3, 2, 5}, {1, 1, 1}, {4, 1, 1}, {1, 3, 1}, {1, 1, 7}, {5, 3, 2}};
  for (int extra = 0; extra < 2; ++extra)
    grids.push_back({uint32_t(randInt(1, 6)), uint32_t(randInt(1, 6)), uint32_t(randInt(1, 6))});
  for (auto grid : grids) {
    uint32_t total = grid[0] * grid[1] * grid[2];
    std::vector<int32_t> out(total * 8, kPoisonI32), count(total, 0);
    launch(*exe, "ids", grid, {ptr(out, "i32"), ptr(count, "i32")});
    Diffs diffs;
    for (uint32_t z = 0; z < grid[2]; ++z)
      for (uint32_t y = 0; y < grid[1]; ++y)
        for (uint32_t x = 0; x < grid[0]; ++x) {
          uint32_t slot = x + grid[0] * (y + grid[1] * z);
          int32_t want[8] = {int32_t(x), int32_t(y), int32_t(z), int32_t(grid[0]), int32_t(grid[1]),
                             int32_t(grid[2]), kPoisonI32, kPoisonI32};
          for (int i = 0; i < 8; ++i)
            if (out[slot * 8 + i] != want[i])
              diffs.add("program (" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) +
                        ") field " + std::to_string(i) + ": got " + std::to_string(out[slot * 8 + i]) + " want " +
                        std::to_string(want[i]));
          if (count[slot] != 1)
            diffs.add("program slot " + std::to_string(slot) + " ran " + std::to_string(count[slot]) + " times");
        }
    EXPECT_TRUE(diffs.ok()) << "grid " << grid[0] << "x" << grid[1] << "x" << grid[2] << ": " << diffs;
  }
}

//===----------------------------------------------------------------------===//
// 2. Masked loads and stores
//===----------------------------------------------------------------------===//

TEST_F(HostOps, MaskedLoadsTakeOtherAndMaskedStoresWriteNothing) {
  constexpr int B = 37;
  ModuleBuilder mb;
  {
    auto k = mb.kernel("masked");
    Pointer x = k.pointer("x", DType::f32), y = k.pointer("y", DType::f32), sel = k.pointer("sel", DType::i32);
    Pointer xi = k.pointer("xi", DType::i32);
    Pointer o1 = k.pointer("o1", DType::f32), o2 = k.pointer("o2", DType::f32), o3 = k.pointer("o3", DType::f32);
    Pointer o4 = k.pointer("o4", DType::i32), o5 = k.pointer("o5", DType::f32);
    Value n = k.scalar("n", DType::i32);
    Value offs = programId(0) * B + arange(0, B);
    Value inBounds = offs < n;
    Value m = inBounds & (load(sel, offs, inBounds) != 0);
    // Masked-off lanes point 8 GiB past the data: touching them would fault.
    Value wild = where(m, offs, 0x7fffffff);
    store(o1, offs, load(x, wild, m, -7.25), inBounds);                     // scalar other
    store(o2, offs, load(x, wild, m, load(y, offs, inBounds)), inBounds);  // tile other
    store(o3, wild, load(x, offs, inBounds) * 3.0, m);                      // masked store
    store(o4, offs, load(xi, wild, m, -123), inBounds);                     // integer other
    store(o5, offs, load(x, wild, m), inBounds);                            // default other: 0
  }
  {
    // 2-D tile with tails in both dimensions and a scalar other.
    auto k = mb.kernel("masked2d");
    Pointer x = k.pointer("x", DType::f32), out = k.pointer("out", DType::f32);
    Value rowsN = k.scalar("rows", DType::i32), colsN = k.scalar("cols", DType::i32);
    Value r = programId(1) * 5 + arange(0, 5).expand(1), c = programId(0) * 7 + arange(0, 7).expand(0);
    Value m = (r < rowsN) & (c < colsN);
    Value v = load(x, where(m, r * colsN + c, -0x40000000), m, -1.0);
    store(out, r * (numPrograms(0) * 7) + c, v);
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);

  for (int n : {100, 74, 1, randInt(2, 3 * B)}) {
    size_t padded = size_t(ceilDiv(n, B)) * B;
    std::vector<float> x(padded), y(padded), o1(padded, poison()), o2(padded, poison()), o5(padded, poison());
    std::vector<float> o3(padded);
    std::vector<int32_t> sel(padded), xi(padded), o4(padded, kPoisonI32);
    for (size_t i = 0; i < padded; ++i) {
      sel[i] = coin() ? randInt(1, 1000) : 0;
      bool m = int(i) < n && sel[i];
      // Elements the mask hides are NaN: if read and used, they would show.
      x[i] = m ? randFloat(-100, 100) : NAN;
      xi[i] = m ? int32_t(randBits()) : kPoisonI32;
      y[i] = randFloat(-5, 5);
      o3[i] = randFloat(-1, 1);
    }
    std::vector<float> o3Before = o3;
    launch(*exe, "masked", {ceilDiv(n, B), 1, 1},
           {ptr(x, "f32"), ptr(y, "f32"), ptr(sel, "i32"), ptr(xi, "i32"), ptr(o1, "f32"), ptr(o2, "f32"),
            ptr(o3, "f32"), ptr(o4, "i32"), ptr(o5, "f32"), KernelArg::fromI32(n)});
    Diffs diffs;
    auto expectBits = [&](const char *what, size_t i, float got, float want) {
      if (bitsOf(got) != bitsOf(want))
        diffs.add(std::string(what) + "[" + std::to_string(i) + "]: got " + show(got) + " want " + show(want));
    };
    for (size_t i = 0; i < padded; ++i) {
      bool in = int(i) < n, m = in && sel[i];
      expectBits("o1", i, o1[i], !in ? poison() : m ? x[i] : -7.25f);
      expectBits("o2", i, o2[i], !in ? poison() : m ? x[i] : y[i]);
      expectBits("o3", i, o3[i], m ? x[i] * 3.0f : o3Before[i]);
      expectBits("o5", i, o5[i], !in ? poison() : m ? x[i] : 0.0f);
      int32_t want4 = !in ? kPoisonI32 : m ? xi[i] : -123;
      if (o4[i] != want4)
        diffs.add("o4[" + std::to_string(i) + "]: got " + std::to_string(o4[i]) + " want " + std::to_string(want4));
    }
    EXPECT_TRUE(diffs.ok()) << "n=" << n << ": " << diffs;
  }

  int rows = randInt(6, 10), cols = randInt(8, 13);
  uint32_t gx = ceilDiv(cols, 7), gy = ceilDiv(rows, 5);
  std::vector<float> x(rows * cols), out(gy * 5 * gx * 7, poison());
  for (float &v : x)
    v = randFloat(-3, 3);
  launch(*exe, "masked2d", {gx, gy, 1}, {ptr(x, "f32"), ptr(out, "f32"), KernelArg::fromI32(rows), KernelArg::fromI32(cols)});
  Diffs diffs;
  for (uint32_t r = 0; r < gy * 5; ++r)
    for (uint32_t c = 0; c < gx * 7; ++c) {
      float want = int(r) < rows && int(c) < cols ? x[r * cols + c] : -1.0f;
      float got = out[r * gx * 7 + c];
      if (bitsOf(got) != bitsOf(want))
        diffs.add("(" + std::to_string(r) + "," + std::to_string(c) + "): got " + show(got) + " want " + show(want));
    }
  EXPECT_TRUE(diffs.ok()) << "masked2d " << rows << "x" << cols << ": " << diffs;
}

//===----------------------------------------------------------------------===//
// 3. Buffer views
//===----------------------------------------------------------------------===//

TEST_F(HostOps, BufferViewsReadZeroAndDropStoresOutOfRange) {
  constexpr int B = 64, G = 96; // lanes per program, guard elements on each side
  ModuleBuilder mb;
  {
    auto k = mb.kernel("buffers");
    Pointer x = k.pointer("x", DType::f32), offsP = k.pointer("offs", DType::i32), selP = k.pointer("sel", DType::i32);
    Pointer vals = k.pointer("vals", DType::f32), y = k.pointer("y", DType::f32);
    Pointer bytes = k.pointer("bytes", DType::i8), ybytes = k.pointer("ybytes", DType::i8);
    Pointer o1 = k.pointer("o1", DType::f32), o2 = k.pointer("o2", DType::f32), o3 = k.pointer("o3", DType::i8);
    Value n = k.scalar("n", DType::i32);
    Value i = programId(0) * B + arange(0, B);
    Value off = load(offsP, i);
    Value sel = load(selP, i) != 0;
    Buffer bx = makeBuffer(x, n), by = makeBuffer(y, n), bb = makeBuffer(bytes, n), bby = makeBuffer(ybytes, n);
    store(o1, i, load(bx, off));
    store(o2, i, load(bx, off, sel));
    store(o3, i, load(bb, off));
    store(by, off, load(vals, i), sel);
    store(bby, off, load(vals, i).to(DType::i32).to(DType::i8));
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);

  for (int round = 0; round < 3; ++round) {
    int n = round == 2 ? 0 : randInt(2 * B + 1, 2 * B + 61);
    const int programs = 3, lanes = programs * B;
    // Store offsets in range are distinct (the order of colliding stores is not specified).
    std::vector<int32_t> inRange(std::max(n, 1));
    for (int j = 0; j < n; ++j)
      inRange[j] = j;
    std::shuffle(inRange.begin(), inRange.begin() + n, rng);
    const int32_t specials[] = {-1, -2, -G, INT32_MIN, INT32_MAX, INT32_MIN + 1, n, n + 1, n + G - 1, -n};
    std::vector<int32_t> offs(lanes), sel(lanes);
    int nextInRange = 0;
    for (int l = 0; l < lanes; ++l) {
      int kind = randInt(0, 3);
      if (kind <= 1 && nextInRange < n)
        offs[l] = inRange[nextInRange++];
      else if (kind == 2)
        offs[l] = specials[randInt(0, 9)];
      else
        offs[l] = coin() ? int32_t(randBits()) : randInt(n, n + G - 1);
      sel[l] = coin(0.7);
    }
    // Each view's memory sits between guards: NaN (f32) or 0xA5 (bytes).
    std::vector<float> x(G + n + G, NAN), y(G + n + G, poison()), vals(lanes);
    std::vector<int8_t> bytes(G + n + G, int8_t(kPoisonByte)), ybytes(G + n + G, int8_t(kPoisonByte));
    for (int j = 0; j < n; ++j) {
      x[G + j] = randFloat(-50, 50);
      bytes[G + j] = int8_t(randInt(-128, 127));
    }
    for (float &v : vals)
      v = float(randInt(-100, 100)) + 0.5f;
    std::vector<float> o1(lanes, poison()), o2(lanes, poison());
    std::vector<int8_t> o3(lanes, int8_t(kPoisonByte));
    std::vector<float> xBefore = x;
    std::vector<int8_t> bytesBefore = bytes;
    launch(*exe, "buffers", {programs, 1, 1},
           {KernelArg::ptr(x.data() + G, "f32"), ptr(offs, "i32"), ptr(sel, "i32"), ptr(vals, "f32"),
            KernelArg::ptr(y.data() + G, "f32"), KernelArg::ptr(bytes.data() + G, "i8"),
            KernelArg::ptr(ybytes.data() + G, "i8"), ptr(o1, "f32"), ptr(o2, "f32"), ptr(o3, "i8"),
            KernelArg::fromI32(n)});
    Diffs diffs;
    std::vector<float> yWant(G + n + G, poison());
    std::vector<int8_t> ybWant(G + n + G, int8_t(kPoisonByte));
    for (int l = 0; l < lanes; ++l) {
      bool in = uint32_t(offs[l]) < uint32_t(n);
      float want1 = in ? x[G + offs[l]] : 0.0f, want2 = in && sel[l] ? x[G + offs[l]] : 0.0f;
      if (bitsOf(o1[l]) != bitsOf(want1))
        diffs.add("load lane " + std::to_string(l) + " offset " + std::to_string(offs[l]) + ": got " + show(o1[l]) +
                  " want " + show(want1));
      if (bitsOf(o2[l]) != bitsOf(want2))
        diffs.add("masked load lane " + std::to_string(l) + " offset " + std::to_string(offs[l]) + ": got " +
                  show(o2[l]) + " want " + show(want2));
      int8_t want3 = in ? bytes[G + offs[l]] : 0;
      if (o3[l] != want3)
        diffs.add("byte load lane " + std::to_string(l) + " offset " + std::to_string(offs[l]) + ": got " +
                  std::to_string(o3[l]) + " want " + std::to_string(want3));
      if (in && sel[l])
        yWant[G + offs[l]] = vals[l];
      if (in)
        ybWant[G + offs[l]] = int8_t(int32_t(vals[l]));
    }
    for (int j = 0; j < G + n + G; ++j) {
      if (bitsOf(y[j]) != bitsOf(yWant[j]))
        diffs.add("store y[" + std::to_string(j - G) + "]: got " + show(y[j]) + " want " + show(yWant[j]));
      if (ybytes[j] != ybWant[j])
        diffs.add("byte store [" + std::to_string(j - G) + "]: got " + std::to_string(ybytes[j]) + " want " +
                  std::to_string(ybWant[j]));
      if (bitsOf(x[j]) != bitsOf(xBefore[j]) || bytes[j] != bytesBefore[j])
        diffs.add("a loaded-from array changed at " + std::to_string(j - G));
    }
    EXPECT_TRUE(diffs.ok()) << "n=" << n << ": " << diffs;

    // The check bites: a reference that ignores the bounds would read the NaN guards.
    if (round == 0) {
      size_t wouldDiffer = 0;
      for (int l = 0; l < lanes; ++l)
        if (uint32_t(offs[l]) >= uint32_t(n) && offs[l] >= -G && offs[l] < n + G)
          wouldDiffer += bitsOf(x[G + offs[l]]) != bitsOf(o1[l]);
      EXPECT_GT(wouldDiffer, 0u) << "no lane read next to the view; the guard check proves nothing";
    }
  }
}

//===----------------------------------------------------------------------===//
// 4. atomicAdd
//===----------------------------------------------------------------------===//

/// Order-independent: the (previous, added) pairs of one slot must chain from its initial
/// value to its final value in some order.
bool chains(uint32_t initial, uint32_t final, std::multimap<uint32_t, uint32_t> pairs) {
  uint32_t current = initial;
  while (!pairs.empty()) {
    auto it = pairs.find(current);
    if (it == pairs.end())
      return false;
    current += it->second;
    pairs.erase(it);
  }
  return current == final;
}

TEST_F(HostOps, AtomicAddTotalsAndPreviousValues) {
  constexpr int B = 48, Slots = 13;
  ModuleBuilder mb;
  {
    auto k = mb.kernel("atomics");
    Pointer accF = k.pointer("accF", DType::f32), accI = k.pointer("accI", DType::i32), hits = k.pointer("hits", DType::i32);
    Pointer valsF = k.pointer("valsF", DType::f32), valsI = k.pointer("valsI", DType::i32);
    Pointer offsP = k.pointer("offs", DType::i32), selP = k.pointer("sel", DType::i32);
    Pointer prevF = k.pointer("prevF", DType::f32), prevI = k.pointer("prevI", DType::i32), prevH = k.pointer("prevH", DType::i32);
    Value program = programId(0) + numPrograms(0) * programId(1);
    Value i = program * B + arange(0, B);
    Value off = load(offsP, i);
    Value m = load(selP, i) != 0;
    store(prevF, i, atomicAdd(accF, off, load(valsF, i), m), m);
    store(prevI, i, atomicAdd(accI, off, load(valsI, i), m), m);
    store(prevH, i, atomicAdd(hits, off, 1)); // unmasked, scalar value
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);

  const std::array<uint32_t, 3> grid{4, 3, 1};
  const int programs = 12, lanes = programs * B;
  for (bool integral : {true, false}) {
    std::vector<int32_t> offs(lanes), sel(lanes), valsI(lanes), prevI(lanes, kPoisonI32), prevH(lanes, kPoisonI32);
    std::vector<float> valsF(lanes), prevF(lanes, poison());
    for (int l = 0; l < lanes; ++l) {
      offs[l] = randInt(0, Slots - 1); // collisions across programs and inside a tile
      sel[l] = coin(0.8);
      valsI[l] = int32_t(randBits()); // wraps
      valsF[l] = integral ? float(randInt(-1000, 1000)) : randFloat(-10, 10);
    }
    std::vector<float> accF(Slots + 2, poison());
    std::vector<int32_t> accI(Slots + 2, kPoisonI32), hits(Slots + 2, kPoisonI32);
    for (int s = 0; s < Slots; ++s) {
      accF[s] = integral ? float(randInt(-50, 50)) : randFloat(-1, 1);
      accI[s] = int32_t(randBits());
      hits[s] = 0;
    }
    std::vector<float> accF0 = accF;
    std::vector<int32_t> accI0 = accI;
    launch(*exe, "atomics", grid,
           {ptr(accF, "f32"), ptr(accI, "i32"), ptr(hits, "i32"), ptr(valsF, "f32"), ptr(valsI, "i32"),
            ptr(offs, "i32"), ptr(sel, "i32"), ptr(prevF, "f32"), ptr(prevI, "i32"), ptr(prevH, "i32")});

    // Sequential model in the host's program order (z, y, x; lanes row-major).
    std::vector<float> modelF = accF0;
    std::vector<uint32_t> modelI(accI0.begin(), accI0.end());
    std::vector<int32_t> modelH(Slots, 0);
    Diffs diffs;
    std::vector<double> exactTotal(Slots);
    std::vector<std::multimap<uint32_t, uint32_t>> pairsI(Slots), pairsH(Slots);
    for (int s = 0; s < Slots; ++s)
      exactTotal[s] = accF0[s];
    for (int l = 0; l < lanes; ++l) {
      int s = offs[l];
      if (prevH[l] != modelH[s])
        diffs.add("hits prev lane " + std::to_string(l) + ": got " + std::to_string(prevH[l]) + " want " +
                  std::to_string(modelH[s]));
      pairsH[s].insert({uint32_t(prevH[l]), 1u});
      modelH[s] += 1;
      if (!sel[l]) {
        if (bitsOf(prevF[l]) != kPoisonBits || prevI[l] != kPoisonI32)
          diffs.add("masked-off lane " + std::to_string(l) + " wrote a previous value");
        continue;
      }
      if (bitsOf(prevF[l]) != bitsOf(modelF[s]))
        diffs.add("f32 prev lane " + std::to_string(l) + ": got " + show(prevF[l]) + " want " + show(modelF[s]));
      if (uint32_t(prevI[l]) != modelI[s])
        diffs.add("i32 prev lane " + std::to_string(l) + ": got " + std::to_string(prevI[l]) + " want " +
                  std::to_string(int32_t(modelI[s])));
      pairsI[s].insert({uint32_t(prevI[l]), uint32_t(valsI[l])});
      modelF[s] += valsF[l];
      modelI[s] += uint32_t(valsI[l]);
      exactTotal[s] += valsF[l];
    }
    for (int s = 0; s < Slots + 2; ++s) {
      if (s >= Slots) {
        if (bitsOf(accF[s]) != kPoisonBits || accI[s] != kPoisonI32 || hits[s] != kPoisonI32)
          diffs.add("slot past the end changed");
        continue;
      }
      if (bitsOf(accF[s]) != bitsOf(modelF[s]))
        diffs.add("f32 slot " + std::to_string(s) + ": got " + show(accF[s]) + " want " + show(modelF[s]));
      if (integral && double(accF[s]) != exactTotal[s])
        diffs.add("f32 slot " + std::to_string(s) + " total: got " + show(accF[s]) + " want " + show(exactTotal[s]));
      if (uint32_t(accI[s]) != modelI[s])
        diffs.add("i32 slot " + std::to_string(s) + ": got " + std::to_string(accI[s]));
      if (hits[s] != modelH[s])
        diffs.add("hits slot " + std::to_string(s) + ": got " + std::to_string(hits[s]) + " want " +
                  std::to_string(modelH[s]));
      if (!chains(uint32_t(accI0[s]), uint32_t(accI[s]), pairsI[s]) || !chains(0, uint32_t(hits[s]), pairsH[s]))
        diffs.add("slot " + std::to_string(s) + ": previous values do not chain to the total");
    }
    EXPECT_TRUE(diffs.ok()) << (integral ? "integral" : "fractional") << " f32 values: " << diffs;
  }
  // The chain check bites: a wrong previous value breaks it.
  EXPECT_FALSE(chains(5, 12, {{5, 3}, {9, 4}}));
  EXPECT_TRUE(chains(5, 12, {{8, 4}, {5, 3}}));
}

//===----------------------------------------------------------------------===//
// 5. Shared memory
//===----------------------------------------------------------------------===//

TEST_F(HostOps, SharedMemoryRoundTripSlicesAndMaskedAsyncCopies) {
  constexpr int R = 6, C = 10;
  ModuleBuilder mb;
  {
    auto k = mb.kernel("roundtrip");
    Pointer x = k.pointer("x", DType::f32), xi = k.pointer("xi", DType::i32);
    Pointer o1 = k.pointer("o1", DType::f32), o2 = k.pointer("o2", DType::f32), o3 = k.pointer("o3", DType::i32);
    Value offs = (programId(0) * R + arange(0, R).expand(1)) * C + arange(0, C).expand(0);
    Shared s = sharedAlloc({R, C}, DType::f32);
    sharedStore(s, load(x, offs));
    barrier();
    Value v = sharedLoad(s);
    barrier();
    sharedStore(s, -v); // overwrite in place
    barrier();
    store(o1, offs, v);
    store(o2, offs, sharedLoad(s));
    Shared si = sharedAlloc({C}, DType::i32);
    Value row = programId(0) * C + arange(0, C);
    sharedStore(si, load(xi, row));
    barrier();
    store(o3, row, sharedLoad(si));
  }
  {
    // Double buffering: chunk i+1 is copied into slot (i+1)%2 while slot i%2 is consumed.
    auto k = mb.kernel("pipeline");
    Pointer x = k.pointer("x", DType::f32), out = k.pointer("out", DType::f32), last = k.pointer("last", DType::f32);
    Value t = k.scalar("t", DType::i32);
    Value tileOffs = arange(0, R).expand(1) * C + arange(0, C).expand(0);
    Shared ring = sharedAlloc({2, R, C}, DType::f32);
    Value first = asyncCopy(x, tileOffs, sharedSlice(ring, 0));
    asyncWait({first});
    Value acc = forRange(0, t, 1, {zeros({R, C}, DType::f32)}, [&](Value i, const std::vector<Value> &carried) {
      Value next = i + 1;
      // The last iteration's copy is masked off entirely: it zeroes its slot and reads nothing.
      Value token = asyncCopy(x, next * (R * C) + tileOffs, sharedSlice(ring, next % 2), next < t);
      asyncWait({token}, 1);
      barrier();
      Value current = sharedLoad(sharedSlice(ring, i % 2));
      barrier();
      return std::vector<Value>{carried[0] * 0.5 + current};
    })[0];
    store(out, tileOffs, acc);
    store(last, tileOffs, sharedLoad(sharedSlice(ring, t % 2)));
  }
  {
    auto k = mb.kernel("masked_copy");
    Pointer x = k.pointer("x", DType::f32), selP = k.pointer("sel", DType::i32), out = k.pointer("out", DType::f32);
    Value offs = (programId(0) * R + arange(0, R).expand(1)) * C + arange(0, C).expand(0);
    Shared s = sharedAlloc({R, C}, DType::f32);
    sharedStore(s, full({R, C}, 1234.5, DType::f32)); // stale contents the copy must replace
    barrier();
    Value m = load(selP, offs) != 0;
    Value token = asyncCopy(x, where(m, offs, 0x7fffffff), s, m);
    asyncWait({token});
    barrier();
    store(out, offs, sharedLoad(s));
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);

  {
    const int programs = 3;
    std::vector<float> x(programs * R * C), o1(x.size(), poison()), o2(x.size(), poison());
    std::vector<int32_t> xi(programs * C), o3(xi.size(), kPoisonI32);
    for (float &v : x)
      v = randFloat(-9, 9);
    for (int32_t &v : xi)
      v = int32_t(randBits());
    launch(*exe, "roundtrip", {programs, 1, 1},
           {ptr(x, "f32"), ptr(xi, "i32"), ptr(o1, "f32"), ptr(o2, "f32"), ptr(o3, "i32")});
    Diffs diffs;
    for (size_t j = 0; j < x.size(); ++j) {
      if (bitsOf(o1[j]) != bitsOf(x[j]))
        diffs.add("round trip [" + std::to_string(j) + "]: got " + show(o1[j]) + " want " + show(x[j]));
      if (bitsOf(o2[j]) != bitsOf(-x[j]))
        diffs.add("overwrite [" + std::to_string(j) + "]: got " + show(o2[j]) + " want " + show(-x[j]));
    }
    for (size_t j = 0; j < xi.size(); ++j)
      if (o3[j] != xi[j])
        diffs.add("i32 round trip [" + std::to_string(j) + "]");
    EXPECT_TRUE(diffs.ok()) << diffs;
  }
  for (int t : {1, 2, 5, randInt(3, 9)}) {
    std::vector<float> x(t * R * C), out(R * C, poison()), last(R * C, poison());
    for (float &v : x)
      v = randFloat(-4, 4);
    launch(*exe, "pipeline", {1, 1, 1}, {ptr(x, "f32"), ptr(out, "f32"), ptr(last, "f32"), KernelArg::fromI32(t)});
    Diffs diffs;
    for (int e = 0; e < R * C; ++e) {
      float acc = 0;
      for (int i = 0; i < t; ++i)
        acc = acc * 0.5f + x[i * R * C + e];
      if (bitsOf(out[e]) != bitsOf(acc))
        diffs.add("acc[" + std::to_string(e) + "]: got " + show(out[e]) + " want " + show(acc));
      if (bitsOf(last[e]) != 0)
        diffs.add("masked-off copy left " + show(last[e]) + " at " + std::to_string(e));
    }
    EXPECT_TRUE(diffs.ok()) << "t=" << t << ": " << diffs;
  }
  {
    const int programs = 2;
    std::vector<float> x(programs * R * C), out(x.size(), poison());
    std::vector<int32_t> sel(x.size());
    for (size_t j = 0; j < x.size(); ++j) {
      sel[j] = coin();
      x[j] = sel[j] ? randFloat(-9, 9) : NAN;
    }
    launch(*exe, "masked_copy", {programs, 1, 1}, {ptr(x, "f32"), ptr(sel, "i32"), ptr(out, "f32")});
    Diffs diffs;
    for (size_t j = 0; j < x.size(); ++j) {
      float want = sel[j] ? x[j] : 0.0f;
      if (bitsOf(out[j]) != bitsOf(want))
        diffs.add("[" + std::to_string(j) + "]: got " + show(out[j]) + " want " + show(want));
    }
    EXPECT_TRUE(diffs.ok()) << diffs;
  }
}

//===----------------------------------------------------------------------===//
// 6. Shape ops
//===----------------------------------------------------------------------===//

TEST_F(HostOps, ShapeOpsMatchIndexArithmetic) {
  constexpr int D0 = 3, D1 = 5, D2 = 7, N = D0 * D1 * D2;
  Sections sec;
  ModuleBuilder mb;
  {
    auto k = mb.kernel("shapes");
    Pointer x = k.pointer("x", DType::i32), out = k.pointer("out", DType::i32);
    Pointer xf = k.pointer("xf", DType::bf16), outf = k.pointer("outf", DType::bf16);
    // t[a,b,c] = x[a*35 + b*7 + c], loaded through reshape...
    Value t = load(x, arange(0, N).reshape({D0, D1, D2}));
    // ...and stored back through offsets built by expand + broadcasting.
    Value i0 = arange(0, D0).expand(1).expand(2), i1 = arange(0, D1).expand(0).expand(2);
    Value i2 = arange(0, D2).expand(0).expand(1);
    sec.at["identity"] = {sec.total, N};
    store(out, sec.total + i0 * (D1 * D2) + i1 * D2 + i2, t);
    sec.total += N;
    put(out, sec, "t201", t.trans({2, 0, 1}));
    put(out, sec, "t120", t.trans({1, 2, 0}));
    put(out, sec, "t021", t.trans({0, 2, 1}));
    put(out, sec, "trev", t.trans());
    put(out, sec, "t2d", t.reshape({D0 * D1, D2}).trans());
    put(out, sec, "flat", t.trans({2, 0, 1}).reshape({N}));
    put(out, sec, "r57x3", t.reshape({D1 * D2, D0}));
    Value v5 = load(x, arange(0, D1));
    put(out, sec, "row_bcast", v5.expand(0).broadcastTo({4, D1}));
    put(out, sec, "col_bcast", v5.expand(1).broadcastTo({D1, 3}));
    put(out, sec, "mid_bcast", v5.expand(0).expand(2).broadcastTo({2, D1, 3}));
    put(out, sec, "neg_axis", v5.expand(-1).broadcastTo({D1, 2}));
    put(out, sec, "scalar_bcast", load(x, arange(0, 1)).sum(0).broadcastTo({2, 3}));
    put(out, sec, "numpy_bcast", v5.expand(1) * 1000 + arange(0, 4)); // [5,1] op [4] -> [5,4]
    Value tf = load(xf, arange(0, D1 * D2).reshape({D1, D2}));
    store(outf, arange(0, D1 * D2).reshape({D2, D1}), tf.trans());
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);
  std::vector<int32_t> x(N), out(sec.total, kPoisonI32);
  for (int32_t &v : x)
    v = int32_t(randBits());
  std::vector<uint16_t> xf(D1 * D2), outf(D1 * D2, kPoison16);
  for (uint16_t &v : xf)
    v = uint16_t(randBits());
  launch(*exe, "shapes", {1, 1, 1}, {ptr(x, "i32"), ptr(out, "i32"), ptr(xf, "bf16"), ptr(outf, "bf16")});

  auto T = [&](int a, int b, int c) { return int64_t(x[a * D1 * D2 + b * D2 + c]); };
  std::map<std::string, std::vector<int64_t>> want;
  for (int j = 0; j < N; ++j)
    want["identity"].push_back(x[j]);
  for (int i = 0; i < D2; ++i) // t201[i,j,k] = t[j,k,i], shape [7,3,5]
    for (int j = 0; j < D0; ++j)
      for (int k = 0; k < D1; ++k)
        want["t201"].push_back(T(j, k, i));
  for (int i = 0; i < D1; ++i) // t120[i,j,k] = t[k,i,j], shape [5,7,3]
    for (int j = 0; j < D2; ++j)
      for (int k = 0; k < D0; ++k)
        want["t120"].push_back(T(k, i, j));
  for (int i = 0; i < D0; ++i) // t021[i,j,k] = t[i,k,j], shape [3,7,5]
    for (int j = 0; j < D2; ++j)
      for (int k = 0; k < D1; ++k)
        want["t021"].push_back(T(i, k, j));
  for (int i = 0; i < D2; ++i) // trev[i,j,k] = t[k,j,i], shape [7,5,3]
    for (int j = 0; j < D1; ++j)
      for (int k = 0; k < D0; ++k)
        want["trev"].push_back(T(k, j, i));
  for (int i = 0; i < D2; ++i) // [15,7]^T: [7,15]
    for (int j = 0; j < D0 * D1; ++j)
      want["t2d"].push_back(x[j * D2 + i]);
  want["flat"] = want["t201"];
  for (int j = 0; j < N; ++j)
    want["r57x3"].push_back(x[j]);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < D1; ++j)
      want["row_bcast"].push_back(x[j]);
  for (int i = 0; i < D1; ++i)
    for (int j = 0; j < 3; ++j)
      want["col_bcast"].push_back(x[i]);
  for (int a = 0; a < 2; ++a)
    for (int i = 0; i < D1; ++i)
      for (int j = 0; j < 3; ++j)
        want["mid_bcast"].push_back(x[i]);
  for (int i = 0; i < D1; ++i)
    for (int j = 0; j < 2; ++j)
      want["neg_axis"].push_back(x[i]);
  want["scalar_bcast"].assign(6, x[0]);
  for (int i = 0; i < D1; ++i)
    for (int j = 0; j < 4; ++j)
      want["numpy_bcast"].push_back(int32_t(uint32_t(x[i]) * 1000u + uint32_t(j)));
  Diffs diffs;
  for (auto &[name, where] : sec.at) {
    ASSERT_TRUE(want.count(name)) << name;
    ASSERT_EQ(int64_t(want[name].size()), where.second) << name;
    compareSection(diffs, name, out.data() + where.first, want[name]);
  }
  for (int i = 0; i < D2; ++i)
    for (int j = 0; j < D1; ++j)
      if (outf[i * D1 + j] != xf[j * D2 + i])
        diffs.add("bf16 transpose (" + std::to_string(i) + "," + std::to_string(j) + ")");
  EXPECT_TRUE(diffs.ok()) << diffs;
}

//===----------------------------------------------------------------------===//
// 7. Reductions and scans
//===----------------------------------------------------------------------===//

/// IEEE 754-2019 maximum / minimum (arith.maximumf / minimumf): NaN propagates; -0 < +0.
double nanMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return NAN;
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double nanMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return NAN;
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

TEST_F(HostOps, ReductionsAndScansAlongEveryAxis) {
  constexpr int R = 5, C = 13, A = 3, Bd = 4, Cd = 5;
  Sections secF, secI;
  ModuleBuilder mb;
  {
    auto k = mb.kernel("reduce");
    Pointer x = k.pointer("x", DType::f32), xi = k.pointer("xi", DType::i32), x3 = k.pointer("x3", DType::f32);
    Pointer xi3 = k.pointer("xi3", DType::i32), x64 = k.pointer("x64", DType::i64), xb = k.pointer("xb", DType::bf16);
    Pointer of = k.pointer("of", DType::f32), oi = k.pointer("oi", DType::i32), o64 = k.pointer("o64", DType::i64);
    Pointer ob = k.pointer("ob", DType::bf16);
    Value t = load(x, arange(0, R * C).reshape({R, C}));
    Value ti = load(xi, arange(0, R * C).reshape({R, C}));
    Value t3 = load(x3, arange(0, A * Bd * Cd).reshape({A, Bd, Cd}));
    Value ti3 = load(xi3, arange(0, A * Bd * Cd).reshape({A, Bd, Cd}));
    for (int axis = 0; axis < 2; ++axis) {
      std::string a = std::to_string(axis);
      put(of, secF, "sum" + a, t.sum(axis));
      put(of, secF, "max" + a, t.max(axis));
      put(of, secF, "min" + a, t.min(axis));
      Shape reduced = axis == 0 ? Shape{C} : Shape{R};
      put(of, secF, "maxabs" + a, reduce(t, axis, [](Value p, Value q) { return maximum(abs(p), abs(q)); }));
      put(of, secF, "cumsum" + a, t.cumsum(axis));
      put(of, secF, "runmax" + a, scan(t, axis, [](Value p, Value q) { return maximum(p, q); }));
      put(oi, secI, "isum" + a, ti.sum(axis));
      put(oi, secI, "imax" + a, ti.max(axis));
      put(oi, secI, "imin" + a, ti.min(axis));
      put(oi, secI, "iprod" + a, reduce(ti, axis, [](Value p, Value q) { return p * q; }));
      put(oi, secI, "icumsum" + a, ti.cumsum(axis));
      // Associative but not commutative: shows the scan's operand order.
      put(oi, secI, "ifirst" + a, scan(ti, axis, [](Value p, Value) { return p; }));
      put(oi, secI, "irunmin" + a, scan(ti, axis, [](Value p, Value q) { return minimum(p, q); }));
    }
    for (int axis = 0; axis < 3; ++axis) {
      std::string a = std::to_string(axis);
      put(of, secF, "sum3_" + a, t3.sum(axis));
      put(of, secF, "max3_" + a, t3.max(axis));
      put(of, secF, "min3_" + a, t3.min(axis));
      put(of, secF, "cumsum3_" + a, t3.cumsum(axis));
      put(oi, secI, "isum3_" + a, ti3.sum(axis));
      put(oi, secI, "imax3_" + a, ti3.max(axis));
      put(oi, secI, "icumsum3_" + a, ti3.cumsum(axis));
    }
    put(of, secF, "sum1d", load(x, arange(0, C)).sum(0)); // 1-D: a scalar
    put(oi, secI, "imin1d", load(xi, arange(0, C)).min(0));
    store(o64, arange(0, 2), load(x64, arange(0, 66).reshape({2, 33}).trans().trans()).sum(1));
    store(ob, arange(0, C), load(xb, arange(0, R * C).reshape({R, C})).max(0));
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);

  std::vector<float> x(R * C), x3(A * Bd * Cd), of(secF.total, poison());
  std::vector<int32_t> xi(R * C), xi3(A * Bd * Cd), oi(secI.total, kPoisonI32);
  std::vector<int64_t> x64(66), o64(2, int64_t(0xa5a5a5a5a5a5a5a5));
  std::vector<uint16_t> xb(R * C), ob(C, kPoison16);
  for (float &v : x)
    v = randFloat(-10, 10);
  for (float &v : x3)
    v = randFloat(-10, 10);
  for (int j = 0; j < 3; ++j) // NaN must propagate through sum, max, min and the scans
    x[randInt(0, R * C - 1)] = NAN;
  x3[randInt(0, A * Bd * Cd - 1)] = NAN;
  for (int32_t &v : xi)
    v = randInt(-1000, 1000);
  for (int32_t &v : xi3)
    v = int32_t(randBits());
  for (int64_t &v : x64)
    v = randInt64(-(int64_t(1) << 40), int64_t(1) << 40);
  for (uint16_t &v : xb)
    v = toHalf(kBF16, randFloat(-100, 100));
  launch(*exe, "reduce", {1, 1, 1},
         {ptr(x, "f32"), ptr(xi, "i32"), ptr(x3, "f32"), ptr(xi3, "i32"), ptr(x64, "i64"), ptr(xb, "bf16"),
          ptr(of, "f32"), ptr(oi, "i32"), ptr(o64, "i64"), ptr(ob, "bf16")});

  std::map<std::string, std::vector<double>> wantF, tolF;
  std::map<std::string, std::vector<int64_t>> wantI;
  auto X = [&](int r, int c) { return double(x[r * C + c]); };
  // One line along `axis` of an R x C tile.
  auto line2 = [&](auto get, int axis, int outer, int extent) {
    std::vector<double> v;
    for (int i = 0; i < extent; ++i)
      v.push_back(axis == 0 ? get(i, outer) : get(outer, i));
    return v;
  };
  auto sumWithBound = [](const std::vector<double> &v, size_t count, double &bound) {
    double s = 0, mag = 0;
    for (size_t i = 0; i < count; ++i)
      s += v[i], mag += std::abs(v[i]);
    bound = gamma(int(count) - 1) * mag;
    return s;
  };
  for (int axis = 0; axis < 2; ++axis) {
    std::string a = std::to_string(axis);
    int extent = axis == 0 ? R : C, outer = axis == 0 ? C : R;
    for (int o = 0; o < outer; ++o) {
      auto v = line2(X, axis, o, extent);
      double bound, s = sumWithBound(v, v.size(), bound);
      wantF["sum" + a].push_back(s);
      tolF["sum" + a].push_back(bound);
      double mx = v[0], mn = v[0], ma = std::abs(v[0]);
      for (double e : v)
        mx = nanMax(mx, e), mn = nanMin(mn, e), ma = nanMax(ma, std::abs(e));
      wantF["max" + a].push_back(mx);
      wantF["min" + a].push_back(mn);
      wantF["maxabs" + a].push_back(ma);
      auto vi = line2([&](int r, int c) { return double(xi[r * C + c]); }, axis, o, extent);
      int64_t is = 0, imx = int64_t(vi[0]), imn = int64_t(vi[0]);
      uint32_t prod = 1;
      for (double e : vi)
        is += int64_t(e), imx = std::max(imx, int64_t(e)), imn = std::min(imn, int64_t(e)),
            prod *= uint32_t(int32_t(e));
      wantI["isum" + a].push_back(is);
      wantI["imax" + a].push_back(imx);
      wantI["imin" + a].push_back(imn);
      wantI["iprod" + a].push_back(int32_t(prod));
    }
    // Scans keep the tile's shape: fill row-major.
    std::vector<double> cs(R * C), csTol(R * C), rm(R * C);
    std::vector<int64_t> ics(R * C), first(R * C), runmin(R * C);
    for (int o = 0; o < outer; ++o) {
      auto v = line2(X, axis, o, extent);
      auto vi = line2([&](int r, int c) { return double(xi[r * C + c]); }, axis, o, extent);
      double running = NAN, bound;
      int64_t irun = 0, imin = 0;
      for (int i = 0; i < extent; ++i) {
        int idx = axis == 0 ? i * C + o : o * C + i;
        cs[idx] = sumWithBound(v, i + 1, bound);
        csTol[idx] = bound;
        running = i == 0 ? v[0] : nanMax(running, v[i]);
        rm[idx] = running;
        irun += int64_t(vi[i]);
        ics[idx] = irun;
        first[idx] = int64_t(vi[0]);
        imin = i == 0 ? int64_t(vi[0]) : std::min(imin, int64_t(vi[i]));
        runmin[idx] = imin;
      }
    }
    wantF["cumsum" + a] = cs;
    tolF["cumsum" + a] = csTol;
    wantF["runmax" + a] = rm;
    wantI["icumsum" + a] = ics;
    wantI["ifirst" + a] = first;
    wantI["irunmin" + a] = runmin;
  }
  int dims3[3] = {A, Bd, Cd};
  for (int axis = 0; axis < 3; ++axis) {
    std::string a = std::to_string(axis);
    // Remaining dims in order.
    std::vector<int> rest;
    for (int d = 0; d < 3; ++d)
      if (d != axis)
        rest.push_back(d);
    for (int p = 0; p < dims3[rest[0]]; ++p)
      for (int q = 0; q < dims3[rest[1]]; ++q) {
        std::vector<double> v;
        double mx = NAN, mn = NAN;
        int64_t is = 0, imx = INT64_MIN;
        for (int i = 0; i < dims3[axis]; ++i) {
          int idx[3];
          idx[axis] = i, idx[rest[0]] = p, idx[rest[1]] = q;
          int flat = (idx[0] * Bd + idx[1]) * Cd + idx[2];
          double e = x3[flat];
          v.push_back(e);
          mx = i == 0 ? e : nanMax(mx, e);
          mn = i == 0 ? e : nanMin(mn, e);
          is += xi3[flat];
          imx = std::max(imx, int64_t(xi3[flat]));
        }
        double bound, s = sumWithBound(v, v.size(), bound);
        wantF["sum3_" + a].push_back(s);
        tolF["sum3_" + a].push_back(bound);
        wantF["max3_" + a].push_back(mx);
        wantF["min3_" + a].push_back(mn);
        wantI["isum3_" + a].push_back(int32_t(uint32_t(uint64_t(is))));
        wantI["imax3_" + a].push_back(imx);
      }
    std::vector<double> cs(A * Bd * Cd), csTol(A * Bd * Cd);
    std::vector<int64_t> ics(A * Bd * Cd);
    for (int flat = 0; flat < A * Bd * Cd; ++flat) {
      int idx[3] = {flat / (Bd * Cd), flat / Cd % Bd, flat % Cd};
      std::vector<double> v;
      uint32_t irun = 0;
      for (int i = 0; i <= idx[axis]; ++i) {
        int j[3] = {idx[0], idx[1], idx[2]};
        j[axis] = i;
        int f = (j[0] * Bd + j[1]) * Cd + j[2];
        v.push_back(x3[f]);
        irun += uint32_t(xi3[f]);
      }
      double bound;
      cs[flat] = sumWithBound(v, v.size(), bound);
      csTol[flat] = bound;
      ics[flat] = int32_t(irun);
    }
    wantF["cumsum3_" + a] = cs;
    tolF["cumsum3_" + a] = csTol;
    wantI["icumsum3_" + a] = ics;
  }
  {
    std::vector<double> v(x.begin(), x.begin() + C);
    double bound;
    wantF["sum1d"] = {sumWithBound(v, v.size(), bound)};
    tolF["sum1d"] = {bound};
    wantI["imin1d"] = {*std::min_element(xi.begin(), xi.begin() + C)};
  }
  Diffs diffs;
  for (auto &[name, where] : secF.at) {
    ASSERT_TRUE(wantF.count(name)) << name;
    ASSERT_EQ(int64_t(wantF[name].size()), where.second) << name;
    compareSection(diffs, name, of.data() + where.first, wantF[name], tolF[name]);
  }
  for (auto &[name, where] : secI.at) {
    ASSERT_TRUE(wantI.count(name)) << name;
    ASSERT_EQ(int64_t(wantI[name].size()), where.second) << name;
    compareSection(diffs, name, oi.data() + where.first, wantI[name]);
  }
  // i64 sums of a [2, 33] reshape (after a double transpose); bf16 max along axis 0.
  for (int r = 0; r < 2; ++r) {
    int64_t s = 0;
    for (int c = 0; c < 33; ++c)
      s += x64[r * 33 + c];
    if (o64[r] != s)
      diffs.add("i64 sum row " + std::to_string(r) + ": got " + std::to_string(o64[r]) + " want " + std::to_string(s));
  }
  for (int c = 0; c < C; ++c) {
    float m = -INFINITY;
    for (int r = 0; r < R; ++r)
      m = std::max(m, fromHalf(kBF16, xb[r * C + c]));
    if (ob[c] != toHalf(kBF16, m))
      diffs.add("bf16 max col " + std::to_string(c) + ": got " + hex(ob[c]));
  }
  EXPECT_TRUE(diffs.ok()) << diffs;
  // The NaN checks bite: a max that ignored NaN would differ somewhere.
  bool someNaN = false;
  for (double v : wantF["max1"])
    someNaN |= std::isnan(v);
  EXPECT_TRUE(someNaN) << "no NaN reached a max1 line; propagation went untested";
}

/// A combiner that drops NaN (maxnumf instead of maximumf) must be caught.
TEST_F(HostOps, ReductionCheckCatchesANaNDroppingCombiner) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("maxabs");
    Pointer x = k.pointer("x", DType::f32), out = k.pointer("out", DType::f32);
    Value t = load(x, arange(0, 24).reshape({4, 6}));
    store(out, arange(0, 4), reduce(t, 1, [](Value p, Value q) { return maximum(abs(p), abs(q)); }));
  }
  std::string error;
  auto module = mb.finish(&error);
  ASSERT_TRUE(module) << error;
  std::string text = module->str();
  size_t at = text.find("arith.maximumf");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, std::strlen("arith.maximumf"), "arith.maxnumf");
  for (bool mutated : {false, true}) {
    auto exe = mutated ? compileText(text) : HostExecutable::compile(*module, &error);
    ASSERT_TRUE(exe) << error;
    std::vector<float> x(24), out(4, poison());
    for (float &v : x)
      v = randFloat(-5, 5);
    x[6 + randInt(0, 5)] = NAN; // row 1
    launch(*exe, "maxabs", {1, 1, 1}, {ptr(x, "f32"), ptr(out, "f32")});
    Diffs diffs;
    for (int r = 0; r < 4; ++r) {
      double m = 0;
      for (int c = 0; c < 6; ++c)
        m = nanMax(m, std::abs(double(x[r * 6 + c])));
      compareSection(diffs, "row" + std::to_string(r), &out[r], {m});
    }
    EXPECT_EQ(diffs.ok(), !mutated) << (mutated ? "mutated kernel passed" : "") << diffs;
  }
}

//===----------------------------------------------------------------------===//
// 8. dot
//===----------------------------------------------------------------------===//

/// Random finite codes of a format, optionally within an exponent window [eLo, eHi].
uint32_t randomFiniteCode(std::mt19937_64 &rng, const Format &f, int eLo = -1000, int eHi = 1000) {
  for (;;) {
    uint32_t c = uint32_t(rng()) & (f.numCodes() - 1);
    double v = decode(f, c);
    if (!std::isfinite(v))
      continue;
    if (v != 0 && (std::ilogb(v) < eLo || std::ilogb(v) > eHi))
      continue;
    return c;
  }
}

struct DotCase {
  std::string name;
  const Format *a, *b; // null: f32 / i8
  DType ta, tb;
  bool integer;
};

TEST_F(HostOps, DotAccumulatesExactProductsWithinTheF32Bound) {
  constexpr int M = 7, N = 9, K = 37, P = 2;
  std::vector<DotCase> cases{
      {"bf16", &kBF16, &kBF16, DType::bf16, DType::bf16, false},
      {"f16", &kF16, &kF16, DType::f16, DType::f16, false},
      {"bf16_f16", &kBF16, &kF16, DType::bf16, DType::f16, false},
      {"e4m3fn", &kE4M3FN, &kE4M3FN, DType::f8E4M3FN, DType::f8E4M3FN, false},
      {"e5m2", &kE5M2, &kE5M2, DType::f8E5M2, DType::f8E5M2, false},
      {"e4m3fnuz", &kE4M3FNUZ, &kE4M3FNUZ, DType::f8E4M3FNUZ, DType::f8E4M3FNUZ, false},
      {"e5m2fnuz", &kE5M2FNUZ, &kE5M2FNUZ, DType::f8E5M2FNUZ, DType::f8E5M2FNUZ, false},
      {"e4m3fn_e5m2", &kE4M3FN, &kE5M2, DType::f8E4M3FN, DType::f8E5M2, false},
      {"f32", nullptr, nullptr, DType::f32, DType::f32, false},
      {"i8", nullptr, nullptr, DType::i8, DType::i8, true},
  };
  ModuleBuilder mb;
  for (const DotCase &dc : cases) {
    DType acc = dc.integer ? DType::i32 : DType::f32;
    auto k = mb.kernel("dot_" + dc.name);
    Pointer a = k.pointer("a", dc.ta), b = k.pointer("b", dc.tb), c = k.pointer("c", acc), out = k.pointer("out", acc);
    Value p = programId(0);
    Value rows = arange(0, M).expand(1), cols = arange(0, N).expand(0), ks = arange(0, K);
    Value tileA = load(a, p * (M * K) + rows * K + ks.expand(0));
    Value tileB = load(b, p * (K * N) + ks.expand(1) * N + cols);
    Value cOffs = p * (M * N) + rows * N + cols;
    store(out, cOffs, dot(tileA, tileB, load(c, cOffs)));
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);

  for (const DotCase &dc : cases) {
    // Operands as codes (for the launch) and exact values (for the reference).
    auto makeOperand = [&](const Format *f, DType t, size_t count, std::vector<uint8_t> &bytes, std::vector<double> &v) {
      int width = t == DType::f32 ? 4 : bitWidth(t) / 8;
      bytes.assign(count * width, 0);
      v.resize(count);
      for (size_t i = 0; i < count; ++i) {
        if (t == DType::i8) {
          int8_t q = int8_t(randInt(-128, 127));
          bytes[i] = uint8_t(q);
          v[i] = q;
        } else if (t == DType::f32) {
          float q = randFloat(-2, 2);
          std::memcpy(&bytes[i * 4], &q, 4);
          v[i] = q;
        } else {
          // 16-bit formats: exponents within +-8 keep products and sums unremarkable.
          uint32_t code = width == 2 ? randomFiniteCode(rng, *f, -8, 8) : randomFiniteCode(rng, *f);
          std::memcpy(&bytes[i * width], &code, width);
          v[i] = decode(*f, code);
        }
      }
    };
    std::vector<uint8_t> aBytes, bBytes;
    std::vector<double> av, bv;
    makeOperand(dc.a, dc.ta, P * M * K, aBytes, av);
    makeOperand(dc.b, dc.tb, P * K * N, bBytes, bv);
    std::vector<int32_t> ci(P * M * N), outI(P * M * N, kPoisonI32);
    std::vector<float> cf(P * M * N), outF(P * M * N, poison());
    for (int i = 0; i < P * M * N; ++i) {
      ci[i] = randInt(-(1 << 24), 1 << 24);
      cf[i] = randFloat(-4, 4);
    }
    launch(*exe, "dot_" + dc.name, {P, 1, 1},
           {KernelArg::ptr(aBytes.data(), dtypeName(dc.ta)), KernelArg::ptr(bBytes.data(), dtypeName(dc.tb)),
            dc.integer ? ptr(ci, "i32") : ptr(cf, "f32"), dc.integer ? ptr(outI, "i32") : ptr(outF, "f32")});
    // Reference in double: products of these formats are exact there, and the double sum's
    // own error is far below the f32 bound gamma_K * (|c| + sum |a b|) (+ gamma for f32
    // operands, whose products round).
    Diffs diffs, wrong;
    for (int p = 0; p < P; ++p)
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          int o = p * M * N + i * N + j;
          double sum = dc.integer ? ci[o] : cf[o], mag = std::abs(sum), sumWrong = sum;
          for (int kk = 0; kk < K; ++kk) {
            double term = av[p * M * K + i * K + kk] * bv[p * K * N + kk * N + j];
            sum += term;
            mag += std::abs(term);
            sumWrong += av[p * M * K + i * K + kk] * bv[p * K * N + kk * N + (N - 1 - j)]; // b columns reversed
          }
          if (dc.integer) {
            if (outI[o] != int64_t(sum))
              diffs.add(dc.name + " (" + std::to_string(i) + "," + std::to_string(j) + "): got " +
                        std::to_string(outI[o]) + " want " + std::to_string(int64_t(sum)));
            if (outI[o] != int64_t(sumWrong))
              wrong.add("differs");
            continue;
          }
          double bound = gamma(dc.ta == DType::f32 ? K + 1 : K) * mag;
          double err = std::abs(double(outF[o]) - sum);
          if (!(err <= bound))
            diffs.add(dc.name + " (" + std::to_string(i) + "," + std::to_string(j) + "): got " + show(outF[o]) +
                      " want " + show(sum) + " err " + show(err) + " bound " + show(bound));
          if (!(std::abs(double(outF[o]) - sumWrong) <= bound))
            wrong.add("differs");
        }
    EXPECT_TRUE(diffs.ok()) << diffs;
    EXPECT_GT(wrong.count, size_t(M * N)) << dc.name << ": a reference with b's columns reversed passed";
  }
}

//===----------------------------------------------------------------------===//
// 9. scaled_dot
//===----------------------------------------------------------------------===//

TEST_F(HostOps, ScaledDotMatchesAnIndependentMxDecoder) {
  constexpr int M = 5, N = 6, K = 96, KB = K / 32;
  struct Case {
    std::string name;
    const Format *a, *b;
  };
  std::vector<Case> cases{{"e4m3_fp4", &kE4M3FN, &kE2M1},
                          {"fp4_e4m3", &kE2M1, &kE4M3FN},
                          {"e5m2_e5m2", &kE5M2, &kE5M2},
                          {"fp4_fp4", &kE2M1, &kE2M1},
                          {"e2m3_e3m2", &kE2M3, &kE3M2}};
  ModuleBuilder mb;
  for (const Case &c : cases) {
    auto k = mb.kernel("sdot_" + c.name);
    // fp4 operands arrive packed in i8 along K (a) or N (b); fp6 ones as exact f32 values
    // narrowed in the kernel; fp8 ones directly.
    auto operand = [&](const Format *f, const char *name, int rows, int cols) {
      Value r = arange(0, rows).expand(1);
      if (f == &kE2M1) {
        Pointer p = k.pointer(name, DType::i8);
        return unpackFp4(load(p, r * (cols / 2) + arange(0, cols / 2).expand(0)));
      }
      if (f->bits == 6) {
        Pointer p = k.pointer(name, DType::f32);
        return load(p, r * cols + arange(0, cols).expand(0)).to(f->dtype);
      }
      Pointer p = k.pointer(name, f->dtype);
      return load(p, r * cols + arange(0, cols).expand(0));
    };
    Value tileA = operand(c.a, "a", M, K);
    Value tileB = operand(c.b, "b", K, N);
    Pointer sa = k.pointer("sa", DType::f8E8M0FNU), sb = k.pointer("sb", DType::f8E8M0FNU);
    Pointer acc = k.pointer("acc", DType::f32), out = k.pointer("out", DType::f32);
    Value scaleA = load(sa, arange(0, M).expand(1) * KB + arange(0, KB).expand(0));
    Value scaleB = load(sb, arange(0, KB).expand(1) * N + arange(0, N).expand(0));
    Value cOffs = arange(0, M).expand(1) * N + arange(0, N).expand(0);
    store(out, cOffs, scaledDot(tileA, scaleA, tileB, scaleB, load(acc, cOffs)));
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);

  for (const Case &c : cases) {
    auto operand = [&](const Format *f, int rows, int cols, std::vector<double> &values, std::vector<uint8_t> &bytes,
                       std::vector<float> &floats) {
      values.resize(rows * cols);
      for (int i = 0; i < rows * cols; ++i) {
        uint32_t code = randomFiniteCode(rng, *f);
        values[i] = decode(*f, code);
        if (f == &kE2M1) {
          bytes.resize(rows * cols / 2);
          uint8_t &byte = bytes[i / 2];
          byte = i % 2 == 0 ? uint8_t(code) : uint8_t(byte | code << 4); // low nibble first
        } else if (f->bits == 6) {
          floats.push_back(float(values[i]));
        } else {
          bytes.push_back(uint8_t(code));
        }
      }
    };
    std::vector<double> av, bv;
    std::vector<uint8_t> aBytes, bBytes;
    std::vector<float> aFloats, bFloats;
    operand(c.a, M, K, av, aBytes, aFloats);
    operand(c.b, K, N, bv, bBytes, bFloats);
    // Moderate scales: every product stays an exact normal f32.
    // A's neighbouring scale blocks differ, so a kernel reading the wrong block is caught.
    std::vector<uint8_t> sa(M * KB), sb(KB * N);
    for (int i = 0; i < M * KB; ++i)
      do
        sa[i] = uint8_t(127 + randInt(-8, 8));
      while (i % KB != 0 && sa[i] == sa[i - 1]);
    for (uint8_t &s : sb)
      s = uint8_t(127 + randInt(-8, 8));
    std::vector<float> acc(M * N), out(M * N, poison());
    for (float &v : acc)
      v = randFloat(-8, 8);
    auto arg = [&](const Format *f, std::vector<uint8_t> &bytes, std::vector<float> &floats) {
      if (f->bits == 6)
        return ptr(floats, "f32");
      return KernelArg::ptr(bytes.data(), f == &kE2M1 ? "i8" : f->name);
    };
    launch(*exe, "sdot_" + c.name, {1, 1, 1},
           {arg(c.a, aBytes, aFloats), arg(c.b, bBytes, bFloats), ptr(sa, "f8E8M0FNU"), ptr(sb, "f8E8M0FNU"),
            ptr(acc, "f32"), ptr(out, "f32")});
    Diffs diffs, wrong;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double sum = acc[i * N + j], mag = std::abs(sum), sumWrong = sum;
        for (int kk = 0; kk < K; ++kk) {
          double scaleA = std::ldexp(1.0, int(sa[i * KB + kk / 32]) - 127);
          double scaleB = std::ldexp(1.0, int(sb[(kk / 32) * N + j]) - 127);
          double term = av[i * K + kk] * scaleA * bv[kk * N + j] * scaleB;
          sum += term;
          mag += std::abs(term);
          // Wrong: A's scale blocks rotated by one. A reference off by a single element
          // changes only the block's edge terms, which wide formats (e5m2) can drown.
          double scaleA2 = std::ldexp(1.0, int(sa[i * KB + (kk / 32 + 1) % KB]) - 127);
          sumWrong += av[i * K + kk] * scaleA2 * bv[kk * N + j] * scaleB;
        }
        double bound = gamma(K) * mag, got = out[i * N + j];
        if (!(std::abs(got - sum) <= bound))
          diffs.add(c.name + " (" + std::to_string(i) + "," + std::to_string(j) + "): got " + show(got) + " want " +
                    show(sum) + " bound " + show(bound));
        if (!(std::abs(got - sumWrong) <= bound))
          wrong.add("differs");
      }
    EXPECT_TRUE(diffs.ok()) << diffs;
    EXPECT_GT(wrong.count, size_t(M * N / 2)) << c.name << ": a reference with rotated scale blocks passed";
  }
}

//===----------------------------------------------------------------------===//
// 10. fp_convert
//===----------------------------------------------------------------------===//

/// Both NaN, or the same bits.
bool sameFloat(float got, float want) {
  return std::isnan(want) ? std::isnan(got) && bitsOf(got) != kPoisonBits : bitsOf(got) == bitsOf(want);
}
bool sameHalf(const Format &f, uint16_t got, uint16_t want) {
  return std::isnan(decode(f, want)) ? std::isnan(decode(f, got)) && got != kPoison16 : got == want;
}

TEST_F(HostOps, FpConvertWidensEveryCodeExactly) {
  const Format *eightBit[] = {&kE4M3FN, &kE5M2, &kE4M3FNUZ, &kE5M2FNUZ, &kE8M0};
  ModuleBuilder mb;
  for (const Format *f : eightBit) {
    auto k = mb.kernel(std::string("widen_") + f->name);
    Pointer codes = k.pointer("codes", f->dtype);
    Pointer o32 = k.pointer("o32", DType::f32), obf = k.pointer("obf", DType::bf16), oh = k.pointer("oh", DType::f16);
    Value i = arange(0, 256);
    Value c = load(codes, i);
    store(o32, i, c.to(DType::f32));
    store(obf, i, c.to(DType::bf16));
    store(oh, i, c.to(DType::f16));
  }
  {
    auto k = mb.kernel("widen_fp4");
    Pointer bytes = k.pointer("bytes", DType::i8);
    Pointer o32 = k.pointer("o32", DType::f32), obf = k.pointer("obf", DType::bf16), oh = k.pointer("oh", DType::f16);
    Value c = unpackFp4(load(bytes, arange(0, 256))); // 512 codes, low nibble first
    Value i = arange(0, 512);
    store(o32, i, c.to(DType::f32));
    store(obf, i, c.to(DType::bf16));
    store(oh, i, c.to(DType::f16));
  }
  {
    // Every bf16 and f16 code through arith.extf (and back through truncf: exact).
    auto k = mb.kernel("widen_halves");
    Pointer xb = k.pointer("xb", DType::bf16), xh = k.pointer("xh", DType::f16);
    Pointer ob = k.pointer("ob", DType::f32), oh = k.pointer("oh", DType::f32);
    Pointer rb = k.pointer("rb", DType::bf16), rh = k.pointer("rh", DType::f16);
    Value offs = programId(0) * 256 + arange(0, 256);
    Value wb = load(xb, offs).to(DType::f32), wh = load(xh, offs).to(DType::f32);
    store(ob, offs, wb);
    store(oh, offs, wh);
    store(rb, offs, wb.to(DType::bf16));
    store(rh, offs, wh.to(DType::f16));
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);

  {
    std::vector<uint16_t> codes(65536), rb(65536, kPoison16), rh(65536, kPoison16);
    for (uint32_t c = 0; c < 65536; ++c)
      codes[c] = uint16_t(c);
    std::vector<float> ob(65536, poison()), oh(65536, poison());
    launch(*exe, "widen_halves", {256, 1, 1},
           {ptr(codes, "bf16"), ptr(codes, "f16"), ptr(ob, "f32"), ptr(oh, "f32"), ptr(rb, "bf16"), ptr(rh, "f16")});
    Diffs diffs;
    for (uint32_t c = 0; c < 65536; ++c) {
      if (!sameFloat(ob[c], fromHalf(kBF16, uint16_t(c))))
        diffs.add("bf16 " + hex(c) + " -> f32: got " + show(ob[c]) + " want " + show(fromHalf(kBF16, uint16_t(c))));
      if (!sameFloat(oh[c], fromHalf(kF16, uint16_t(c))))
        diffs.add("f16 " + hex(c) + " -> f32: got " + show(oh[c]) + " want " + show(fromHalf(kF16, uint16_t(c))));
      // Exact, or any NaN for NaN (the poison pattern is itself one of the inputs here).
      if (rb[c] != c && !sameHalf(kBF16, rb[c], uint16_t(c)))
        diffs.add("bf16 " + hex(c) + " round trip: got " + hex(rb[c]));
      if (rh[c] != c && !sameHalf(kF16, rh[c], uint16_t(c)))
        diffs.add("f16 " + hex(c) + " round trip: got " + hex(rh[c]));
    }
    EXPECT_TRUE(diffs.ok()) << diffs;
  }

  auto check = [&](const Format &f, const std::vector<uint32_t> &codes, const std::vector<float> &o32,
                   const std::vector<uint16_t> &obf, const std::vector<uint16_t> &oh) {
    Diffs diffs;
    for (size_t i = 0; i < codes.size(); ++i) {
      double v = decode(f, codes[i]);
      if (!sameFloat(o32[i], float(v)))
        diffs.add(std::string(f.name) + " code " + hex(codes[i]) + " -> f32: got " + show(o32[i]) + " want " + show(v));
      if (!sameHalf(kBF16, obf[i], toHalf(kBF16, float(v))))
        diffs.add(std::string(f.name) + " code " + hex(codes[i]) + " -> bf16: got " + hex(obf[i]) + " want " +
                  hex(toHalf(kBF16, float(v))));
      if (!sameHalf(kF16, oh[i], toHalf(kF16, float(v))))
        diffs.add(std::string(f.name) + " code " + hex(codes[i]) + " -> f16: got " + hex(oh[i]) + " want " +
                  hex(toHalf(kF16, float(v))));
    }
    EXPECT_TRUE(diffs.ok()) << f.name << ": " << diffs;
  };
  for (const Format *f : eightBit) {
    std::vector<uint8_t> bytes(256);
    std::vector<uint32_t> codes(256);
    for (int c = 0; c < 256; ++c)
      bytes[c] = uint8_t(c), codes[c] = c;
    std::shuffle(bytes.begin(), bytes.end(), rng);
    for (int c = 0; c < 256; ++c)
      codes[c] = bytes[c];
    std::vector<float> o32(256, poison());
    std::vector<uint16_t> obf(256, kPoison16), oh(256, kPoison16);
    launch(*exe, std::string("widen_") + f->name, {1, 1, 1},
           {KernelArg::ptr(bytes.data(), f->name), ptr(o32, "f32"), ptr(obf, "bf16"), ptr(oh, "f16")});
    check(*f, codes, o32, obf, oh);
  }
  {
    std::vector<uint8_t> bytes(256);
    std::vector<uint32_t> codes(512);
    for (int c = 0; c < 256; ++c)
      bytes[c] = uint8_t(c);
    std::shuffle(bytes.begin(), bytes.end(), rng);
    for (int c = 0; c < 256; ++c)
      codes[2 * c] = bytes[c] & 0xF, codes[2 * c + 1] = bytes[c] >> 4;
    std::vector<float> o32(512, poison());
    std::vector<uint16_t> obf(512, kPoison16), oh(512, kPoison16);
    launch(*exe, "widen_fp4", {1, 1, 1}, {KernelArg::ptr(bytes.data(), "i8"), ptr(o32, "f32"), ptr(obf, "bf16"), ptr(oh, "f16")});
    check(kE2M1, codes, o32, obf, oh);
  }

  // fp6 has no pointer type and the DSL has no bitcast: tile IR text truncates i8 codes
  // (random high bits included) to i6 and bitcasts them.
  std::string text = "module {\n";
  for (const Format *f : {&kE2M3, &kE3M2}) {
    std::string t64 = "tensor<64x", tf = t64 + f->name + ">";
    text += std::string("  func.func @widen_") + f->name +
            "(%codes: !tile.ptr<i8>, %o32: !tile.ptr<f32>, %obf: !tile.ptr<bf16>, %oh: !tile.ptr<f16>)"
            " attributes {tile.kernel, tile.num_warps = 4 : i32} {\n"
            "    %i = tile.arange 0 to 64 : tensor<64xi32>\n"
            "    %c = tile.load %codes[%i] : !tile.ptr<i8>[tensor<64xi32>] -> tensor<64xi8>\n"
            "    %t = arith.trunci %c : tensor<64xi8> to tensor<64xi6>\n"
            "    %f = arith.bitcast %t : tensor<64xi6> to " + tf + "\n";
    for (auto [name, type] : {std::pair{"o32", "f32"}, {"obf", "bf16"}, {"oh", "f16"}})
      text += std::string("    %w_") + name + " = tile.fp_convert %f : " + tf + " -> tensor<64x" + type + ">\n" +
              "    tile.store %w_" + name + ", %" + name + "[%i] : tensor<64x" + type + ">, !tile.ptr<" + type +
              ">[tensor<64xi32>]\n";
    text += "    return\n  }\n";
  }
  text += "}\n";
  auto exe6 = compileText(text);
  ASSERT_TRUE(exe6);
  for (const Format *f : {&kE2M3, &kE3M2}) {
    std::vector<uint8_t> bytes(64);
    std::vector<uint32_t> codes(64);
    for (int c = 0; c < 64; ++c)
      codes[c] = c;
    std::shuffle(codes.begin(), codes.end(), rng);
    for (int c = 0; c < 64; ++c)
      bytes[c] = uint8_t(codes[c] | (randBits() & 0xC0));
    std::vector<float> o32(64, poison());
    std::vector<uint16_t> obf(64, kPoison16), oh(64, kPoison16);
    launch(*exe6, std::string("widen_") + f->name, {1, 1, 1},
           {KernelArg::ptr(bytes.data(), "i8"), ptr(o32, "f32"), ptr(obf, "bf16"), ptr(oh, "f16")});
    check(*f, codes, o32, obf, oh);
  }
}

/// A narrowing kernel as tile IR: x[n] (f32, bf16 or f16) to four i8 outputs holding the
/// codes under rtne, rtne+saturate, rtz, rtz+saturate. The input is padded to whole blocks and
/// loaded without a mask, so the kernel tests fp_convert alone (masked bf16 loads are covered by
/// HostOpsRegressions.Bf16ValuesKeepEveryBitThroughBranchesAndLoops).
std::string narrowKernelText(const std::string &name, const char *source, const Format &f) {
  std::string t = "tensor<256x", ti32 = t + "i32>", ti1 = t + "i1>", tsrc = t + source + ">", tf = t + f.name + ">";
  std::string ti8 = t + "i8>", tiN = t + "i" + std::to_string(f.bits) + ">";
  std::ostringstream os;
  os << "  func.func @" << name << "(%x: !tile.ptr<" << source << ">, %o0: !tile.ptr<i8>, %o1: !tile.ptr<i8>, "
     << "%o2: !tile.ptr<i8>, %o3: !tile.ptr<i8>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {\n"
     << "    %pid = tile.program_id 0\n"
     << "    %block = arith.constant 256 : i32\n"
     << "    %base = arith.muli %pid, %block : i32\n"
     << "    %iota = tile.arange 0 to 256 : " << ti32 << "\n"
     << "    %bases = tile.splat %base : i32 -> " << ti32 << "\n"
     << "    %offs = arith.addi %bases, %iota : " << ti32 << "\n"
     << "    %ns = tile.splat %n : i32 -> " << ti32 << "\n"
     << "    %m = arith.cmpi slt, %offs, %ns : " << ti32 << "\n"
     << "    %v = tile.load %x[%offs] : !tile.ptr<" << source << ">[" << ti32 << "] -> " << tsrc << "\n";
  const char *attrs[4] = {"", " {saturate}", " {rounding = #tile<rounding rtz>}",
                          " {rounding = #tile<rounding rtz>, saturate}"};
  for (int i = 0; i < 4; ++i) {
    os << "    %c" << i << " = tile.fp_convert %v" << attrs[i] << " : " << tsrc << " -> " << tf << "\n";
    if (f.bits == 8) {
      os << "    %b" << i << " = arith.bitcast %c" << i << " : " << tf << " to " << ti8 << "\n";
    } else {
      os << "    %r" << i << " = arith.bitcast %c" << i << " : " << tf << " to " << tiN << "\n"
         << "    %b" << i << " = arith.extui %r" << i << " : " << tiN << " to " << ti8 << "\n";
    }
    os << "    tile.store %b" << i << ", %o" << i << "[%offs] mask %m : " << ti8 << ", !tile.ptr<i8>[" << ti32 << "], "
       << ti1 << "\n";
  }
  os << "    return\n  }\n";
  return os.str();
}

struct NarrowSource {
  const char *type;
  const Format *format; // null for f32
};

TEST_F(HostOps, FpConvertNarrowsEveryInputClassExactly) {
  const NarrowSource sources[] = {{"f32", nullptr}, {"bf16", &kBF16}, {"f16", &kF16}};
  std::string text = "module {\n";
  for (const Format *f : kNarrowFormats)
    for (const NarrowSource &s : sources)
      text += narrowKernelText(std::string("narrow_") + f->name + "_" + s.type, s.type, *f);
  text += "}\n";
  auto exe = compileText(text);
  ASSERT_TRUE(exe);

  const struct {
    Round round;
    bool saturate;
    const char *name;
  } modes[4] = {{Round::NearestEven, false, "rtne"},
                {Round::NearestEven, true, "rtne+sat"},
                {Round::TowardZero, false, "rtz"},
                {Round::TowardZero, true, "rtz+sat"}};
  for (const Format *f : kNarrowFormats) {
    const Encoder &enc = encoderFor(*f);
    for (const NarrowSource &s : sources) {
      // Inputs: f32 probes and random values; every bf16 / f16 code.
      std::vector<float> values;
      std::vector<uint16_t> halves;
      if (!s.format) {
        values = probeInputs(*f);
        std::vector<float> more = randomInputs(rng, *f, 20000);
        values.insert(values.end(), more.begin(), more.end());
      } else {
        for (uint32_t c = 0; c < 65536; ++c)
          halves.push_back(uint16_t(c));
        for (uint16_t h : halves)
          values.push_back(fromHalf(*s.format, h));
      }
      int n = int(values.size());
      size_t padded = size_t(ceilDiv(n, 256)) * 256;
      std::vector<uint8_t> outs[4];
      for (auto &o : outs)
        o.assign(padded, kPoisonByte);
      std::vector<float> x32 = values;
      x32.resize(padded, NAN);
      halves.resize(padded, 0);
      launch(*exe, std::string("narrow_") + f->name + "_" + s.type, {ceilDiv(n, 256), 1, 1},
             {s.format ? KernelArg::ptr(halves.data(), s.type) : ptr(x32, "f32"), ptr(outs[0], "i8"),
              ptr(outs[1], "i8"), ptr(outs[2], "i8"), ptr(outs[3], "i8"), KernelArg::fromI32(n)});
      for (int m = 0; m < 4; ++m) {
        Diffs diffs;
        for (int i = 0; i < n; ++i) {
          uint32_t want = enc.encode(values[i], modes[m].round, modes[m].saturate);
          if (outs[m][i] != want)
            diffs.add(show(values[i]) + " (" + hex(s.format ? halves[i] : bitsOf(values[i])) + "): got " +
                      hex(outs[m][i]) + " want " + hex(want));
        }
        for (size_t i = n; i < padded; ++i)
          if (outs[m][i] != kPoisonByte)
            diffs.add("wrote past n at " + std::to_string(i));
        EXPECT_TRUE(diffs.ok()) << s.type << " -> " << f->name << " " << modes[m].name << ": " << diffs;
      }
      // The check bites: ties-down (rtne output) and rtne (rtz output) references must differ.
      if (!s.format) {
        size_t ties = 0, nearest = 0;
        for (int i = 0; i < n; ++i) {
          ties += outs[0][i] != enc.encode(values[i], Round::NearestTiesDown, false);
          nearest += outs[2][i] != enc.encode(values[i], Round::NearestEven, false);
        }
        EXPECT_GT(ties, 0u) << f->name << ": a ties-down reference matched the rtne results";
        EXPECT_GT(nearest, 0u) << f->name << ": an rtne reference matched the rtz results";
      }
    }
  }
}

/// The same conversions through the DSL's .to(), which is what kernels use: the f8 and e8m0
/// formats store through typed pointers, fp4 through packFp4, fp6 round-trips to f32.
TEST_F(HostOps, FpConvertThroughTheDsl) {
  const Format *direct[] = {&kE4M3FN, &kE5M2, &kE4M3FNUZ, &kE5M2FNUZ, &kE8M0};
  constexpr int B = 256;
  ModuleBuilder mb;
  for (const Format *f : direct) {
    auto k = mb.kernel(std::string("to_") + f->name);
    Pointer x = k.pointer("x", DType::f32), xb = k.pointer("xb", DType::bf16), xh = k.pointer("xh", DType::f16);
    Pointer o0 = k.pointer("o0", f->dtype), o1 = k.pointer("o1", f->dtype), o2 = k.pointer("o2", f->dtype);
    Pointer o3 = k.pointer("o3", f->dtype);
    Value offs = programId(0) * B + arange(0, B);
    Value v = load(x, offs);
    store(o0, offs, v.to(f->dtype));
    store(o1, offs, v.to(f->dtype, /*saturate=*/true));
    store(o2, offs, load(xb, offs).to(f->dtype));
    store(o3, offs, load(xh, offs).to(f->dtype, true));
  }
  {
    auto k = mb.kernel("to_fp4");
    Pointer x = k.pointer("x", DType::f32), o0 = k.pointer("o0", DType::i8), o1 = k.pointer("o1", DType::i8);
    Value v = load(x, programId(0) * B + arange(0, B));
    Value packedOffs = programId(0) * (B / 2) + arange(0, B / 2);
    store(o0, packedOffs, packFp4(v.to(DType::f4E2M1FN)));
    store(o1, packedOffs, packFp4(v.to(DType::f4E2M1FN, true)));
  }
  for (const Format *f : {&kE2M3, &kE3M2}) {
    auto k = mb.kernel(std::string("roundtrip_") + f->name);
    Pointer x = k.pointer("x", DType::f32), o = k.pointer("o", DType::f32);
    Value offs = programId(0) * B + arange(0, B);
    store(o, offs, load(x, offs).to(f->dtype).to(DType::f32));
  }
  {
    // Scalar conversions (not tiles).
    auto k = mb.kernel("scalar");
    Value x = k.scalar("x", DType::f32);
    Pointer o8 = k.pointer("o8", DType::f8E4M3FN), o8s = k.pointer("o8s", DType::f8E4M3FN);
    Pointer oe = k.pointer("oe", DType::f8E8M0FNU), o4 = k.pointer("o4", DType::f32), oi = k.pointer("oi", DType::f8E5M2);
    Value one = arange(0, 1);
    store(o8, one, x.to(DType::f8E4M3FN));
    store(o8s, one, x.to(DType::f8E4M3FN, true));
    store(oe, one, x.to(DType::f8E8M0FNU));
    store(o4, one, x.to(DType::f4E2M1FN).to(DType::f32));
    store(oi, one, x.to(DType::i32).to(DType::f8E5M2)); // int -> f32 -> e5m2
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);

  for (const Format *f : direct) {
    const Encoder &enc = encoderFor(*f);
    std::vector<float> x = probeInputs(*f), more = randomInputs(rng, *f, 4000);
    x.insert(x.end(), more.begin(), more.end());
    size_t n = x.size(), padded = size_t(ceilDiv(n, B)) * B;
    x.resize(padded, 0.f);
    std::vector<uint16_t> xb(padded), xh(padded);
    for (size_t i = 0; i < padded; ++i)
      xb[i] = uint16_t(randBits()), xh[i] = uint16_t(randBits());
    std::vector<uint8_t> o[4];
    for (auto &v : o)
      v.assign(padded, kPoisonByte);
    launch(*exe, std::string("to_") + f->name, {ceilDiv(n, B), 1, 1},
           {ptr(x, "f32"), ptr(xb, "bf16"), ptr(xh, "f16"), KernelArg::ptr(o[0].data(), f->name),
            KernelArg::ptr(o[1].data(), f->name), KernelArg::ptr(o[2].data(), f->name),
            KernelArg::ptr(o[3].data(), f->name)});
    Diffs diffs;
    for (size_t i = 0; i < padded; ++i) {
      uint32_t want[4] = {enc.encode(x[i], Round::NearestEven, false), enc.encode(x[i], Round::NearestEven, true),
                          enc.encode(fromHalf(kBF16, xb[i]), Round::NearestEven, false),
                          enc.encode(fromHalf(kF16, xh[i]), Round::NearestEven, true)};
      for (int m = 0; m < 4; ++m)
        if (o[m][i] != want[m])
          diffs.add("output " + std::to_string(m) + " input " + std::to_string(i) + " (" + show(x[i]) + ", bf16 " +
                    hex(xb[i]) + ", f16 " + hex(xh[i]) + "): got " + hex(o[m][i]) + " want " + hex(want[m]));
    }
    EXPECT_TRUE(diffs.ok()) << f->name << ": " << diffs;
  }
  {
    const Encoder &enc = encoderFor(kE2M1);
    std::vector<float> x = probeInputs(kE2M1), more = randomInputs(rng, kE2M1, 2000);
    x.insert(x.end(), more.begin(), more.end());
    size_t n = x.size(), padded = size_t(ceilDiv(n, B)) * B;
    x.resize(padded, 0.f);
    std::vector<uint8_t> o0(padded / 2, kPoisonByte), o1(padded / 2, kPoisonByte);
    launch(*exe, "to_fp4", {ceilDiv(n, B), 1, 1}, {ptr(x, "f32"), ptr(o0, "i8"), ptr(o1, "i8")});
    Diffs diffs;
    for (size_t i = 0; i < padded / 2; ++i) {
      uint32_t want0 = enc.encode(x[2 * i], Round::NearestEven, false) |
                       enc.encode(x[2 * i + 1], Round::NearestEven, false) << 4;
      uint32_t want1 = enc.encode(x[2 * i], Round::NearestEven, true) |
                       enc.encode(x[2 * i + 1], Round::NearestEven, true) << 4;
      if (o0[i] != want0 || o1[i] != want1)
        diffs.add("pair " + std::to_string(i) + " (" + show(x[2 * i]) + ", " + show(x[2 * i + 1]) + "): got " +
                  hex(o0[i]) + "/" + hex(o1[i]) + " want " + hex(want0) + "/" + hex(want1));
    }
    EXPECT_TRUE(diffs.ok()) << "fp4: " << diffs;
  }
  for (const Format *f : {&kE2M3, &kE3M2}) {
    const Encoder &enc = encoderFor(*f);
    std::vector<float> x = probeInputs(*f), more = randomInputs(rng, *f, 2000);
    x.insert(x.end(), more.begin(), more.end());
    size_t n = x.size(), padded = size_t(ceilDiv(n, B)) * B;
    x.resize(padded, 0.f);
    std::vector<float> o(padded, poison());
    launch(*exe, std::string("roundtrip_") + f->name, {ceilDiv(n, B), 1, 1}, {ptr(x, "f32"), ptr(o, "f32")});
    Diffs diffs;
    for (size_t i = 0; i < padded; ++i) {
      float want = float(decode(*f, enc.encode(x[i], Round::NearestEven, false)));
      if (bitsOf(o[i]) != bitsOf(want))
        diffs.add(show(x[i]) + ": got " + show(o[i]) + " want " + show(want));
    }
    EXPECT_TRUE(diffs.ok()) << f->name << ": " << diffs;
  }
  {
    std::vector<float> inputs = {0.f, -0.f, 1.f, -1.5f, 448.f, 464.f, 465.f, 1e9f, -1e9f, INFINITY, -INFINITY, NAN,
                                 0x1p-9f, 0x1p-10f, 3e-3f, 0.75f, 5.f, 7.f, 2.5f, 1.25f, 0x1p-127f, 0x1.8p-127f};
    for (int j = 0; j < 20; ++j)
      inputs.push_back(randFloat(-600, 600));
    Diffs diffs;
    for (float x : inputs) {
      uint8_t o8 = kPoisonByte, o8s = kPoisonByte, oe = kPoisonByte, oi = kPoisonByte;
      float o4 = poison();
      launch(*exe, "scalar", {1, 1, 1},
             {KernelArg::fromF32(x), KernelArg::ptr(&o8, "f8E4M3FN"), KernelArg::ptr(&o8s, "f8E4M3FN"),
              KernelArg::ptr(&oe, "f8E8M0FNU"), KernelArg::ptr(&o4, "f32"), KernelArg::ptr(&oi, "f8E5M2")});
      uint32_t w8 = encoderFor(kE4M3FN).encode(x, Round::NearestEven, false);
      uint32_t w8s = encoderFor(kE4M3FN).encode(x, Round::NearestEven, true);
      uint32_t we = encoderFor(kE8M0).encode(x, Round::NearestEven, false);
      float w4 = float(decode(kE2M1, encoderFor(kE2M1).encode(x, Round::NearestEven, false)));
      if (o8 != w8 || o8s != w8s || oe != we || bitsOf(o4) != bitsOf(w4))
        diffs.add(show(x) + ": got " + hex(o8) + "/" + hex(o8s) + "/" + hex(oe) + "/" + show(o4) + " want " + hex(w8) +
                  "/" + hex(w8s) + "/" + hex(we) + "/" + show(w4));
      if (std::isfinite(x) && std::abs(x) < 2e9f) {
        uint32_t wi = encoderFor(kE5M2).encode(float(int32_t(x)), Round::NearestEven, false);
        if (oi != wi)
          diffs.add(show(x) + " via i32 -> e5m2: got " + hex(oi) + " want " + hex(wi));
      }
    }
    EXPECT_TRUE(diffs.ok()) << "scalar: " << diffs;
  }
}

/// lookupNibbles over every byte with a table that is neither symmetric nor monotonic: each
/// i16 holds the low nibble's entry in its low byte, the high nibble's in its high byte.
TEST(HostOpsFormats, LookupNibblesMapsEveryByte) {
  static constexpr std::array<int8_t, 16> kTable{-128, 127, 3, -7, 50, 0, 1, -1, 99, -99, 12, 33, -64, 64, 8, -8};
  ModuleBuilder mb;
  {
    auto k = mb.kernel("lookup");
    Pointer bytes = k.pointer("bytes", DType::i8), out = k.pointer("out", DType::i16);
    Value i = arange(0, 256);
    store(out, i, lookupNibbles(load(bytes, i), kTable));
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);
  std::vector<uint8_t> bytes(256);
  for (int b = 0; b < 256; ++b)
    bytes[b] = uint8_t(b);
  std::vector<uint16_t> out(256, kPoison16);
  ASSERT_TRUE(launch(*exe, "lookup", {1, 1, 1}, {ptr(bytes, "i8"), ptr(out, "i16")}));
  for (int b = 0; b < 256; ++b)
    EXPECT_EQ(out[b], uint16_t(uint8_t(kTable[b & 15]) | uint8_t(kTable[b >> 4]) << 8)) << "byte " << b;
}

/// The reference encoder itself against hand-checked codes from the format definitions.
TEST(HostOpsReference, EncoderAgreesWithHandCheckedCodes) {
  auto rtne = [](const Format &f, float x, bool sat = false) { return encoderFor(f).encode(x, Round::NearestEven, sat); };
  EXPECT_EQ(rtne(kE4M3FN, 448.f), 0x7Eu);
  EXPECT_EQ(rtne(kE4M3FN, 464.f), 0x7Eu);            // tie: 448 has the even mantissa
  EXPECT_EQ(rtne(kE4M3FN, 464.00003f), 0x7Fu);       // rounds to 480: overflow -> NaN
  EXPECT_EQ(rtne(kE4M3FN, -500.f, true), 0xFEu);     // saturates to -448
  EXPECT_EQ(rtne(kE4M3FN, 0x1p-10f), 0x00u);         // half the smallest subnormal: tie to 0
  EXPECT_EQ(rtne(kE4M3FN, 0x1.8p-9f), 0x02u);        // 1.5 subnormal ulps: tie to even (2)
  EXPECT_EQ(rtne(kE4M3FN, -0.f), 0x80u);
  EXPECT_EQ(rtne(kE5M2, 61440.f), 0x7Cu);            // tie above the max goes to the even Inf
  EXPECT_EQ(rtne(kE5M2, 61439.996f), 0x7Bu);
  EXPECT_EQ(rtne(kE5M2, -INFINITY), 0xFCu);
  EXPECT_EQ(rtne(kE5M2, -INFINITY, true), 0xFBu);
  EXPECT_EQ(rtne(kE4M3FNUZ, 240.f), 0x7Fu);
  EXPECT_EQ(rtne(kE4M3FNUZ, 248.f), 0x80u);          // tie above the max: NaN
  EXPECT_EQ(rtne(kE4M3FNUZ, -0.f), 0x00u);
  EXPECT_EQ(rtne(kE4M3FNUZ, -0x1p-12f), 0x00u);      // rounds to zero: +0
  EXPECT_EQ(rtne(kE2M1, 5.f), 0x6u);                 // tie between 4 and 6: 4 (even code 6 -> 0x6 is 4)
  EXPECT_EQ(rtne(kE2M1, 0.25f), 0x0u);
  EXPECT_EQ(rtne(kE2M1, 0.75f), 0x2u);
  EXPECT_EQ(rtne(kE2M1, -7.f), 0xFu);                // overflow: -6
  EXPECT_EQ(rtne(kE2M1, NAN), 0x7u);
  EXPECT_EQ(rtne(kE2M3, 7.75f), 0x1Fu);
  EXPECT_EQ(rtne(kE3M2, 30.f), 0x1Fu);               // 28 is the max
  EXPECT_EQ(rtne(kE8M0, 1.f), 127u);
  EXPECT_EQ(rtne(kE8M0, 1.5f), 128u);                // ties up
  EXPECT_EQ(rtne(kE8M0, 1.4999999f), 127u);
  EXPECT_EQ(rtne(kE8M0, 0x1p-127f), 0u);
  EXPECT_EQ(rtne(kE8M0, 0x1.8p-127f), 1u);
  EXPECT_EQ(rtne(kE8M0, 0.f), 0u);
  EXPECT_EQ(rtne(kE8M0, 0x1.8p127f), 0xFFu);
  EXPECT_EQ(rtne(kE8M0, 0x1.8p127f, true), 0xFEu);
  EXPECT_EQ(encoderFor(kE8M0).encode(0x1.fffffep-1f, Round::TowardZero, false), 126u);
  EXPECT_EQ(decode(kE4M3FN, 0x7E), 448.0);
  EXPECT_EQ(decode(kE4M3FNUZ, 0x7F), 240.0);
  EXPECT_EQ(decode(kE5M2FNUZ, 0x7F), 57344.0);
  EXPECT_EQ(decode(kE3M2, 0x1F), 28.0);
  EXPECT_EQ(decode(kE2M3, 0x01), 0.125);
  EXPECT_EQ(decode(kE2M1, 0x1), 0.5);
  EXPECT_TRUE(std::isnan(decode(kE5M2FNUZ, 0x80)));
  EXPECT_EQ(toHalf(kBF16, 1.00390625f), 0x3F80u); // tie to even
  EXPECT_EQ(toHalf(kF16, 65520.f), 0x7C00u);       // tie above the max: Inf
}

//===----------------------------------------------------------------------===//
// 11. Elementwise: where, integer division and shifts, comparisons, conversions
//===----------------------------------------------------------------------===//

TEST_F(HostOps, ElementwiseOpsMatchCpp) {
  constexpr int B = 97;
  Sections secI, secF;
  ModuleBuilder mb;
  {
    auto k = mb.kernel("elementwise");
    Pointer ai = k.pointer("ai", DType::i32), bi = k.pointer("bi", DType::i32), si = k.pointer("si", DType::i32);
    Pointer xf = k.pointer("xf", DType::f32), yf = k.pointer("yf", DType::f32);
    Pointer a8 = k.pointer("a8", DType::i8), b8 = k.pointer("b8", DType::i8), a64 = k.pointer("a64", DType::i64);
    Pointer b64 = k.pointer("b64", DType::i64), o64 = k.pointer("o64", DType::i64);
    Pointer oi = k.pointer("oi", DType::i32), of = k.pointer("of", DType::f32);
    Pointer obf = k.pointer("obf", DType::bf16), oh = k.pointer("oh", DType::f16), o8 = k.pointer("o8", DType::i8);
    Value i = arange(0, B);
    Value a = load(ai, i), b = load(bi, i), s = load(si, i), x = load(xf, i), y = load(yf, i);
    Value c = a < b;
    put(oi, secI, "div", a / b);
    put(oi, secI, "rem", a % b);
    put(oi, secI, "shl", a << s);
    put(oi, secI, "shr", a >> s);
    put(oi, secI, "and", a & b);
    put(oi, secI, "or", a | b);
    put(oi, secI, "xor", a ^ b);
    put(oi, secI, "neg", -a);
    put(oi, secI, "absi", abs(a));
    put(oi, secI, "maxi", maximum(a, b));
    put(oi, secI, "mini", minimum(a, b));
    put(oi, secI, "add", a + b);
    put(oi, secI, "sub", a - b);
    put(oi, secI, "mul", a * b);
    put(oi, secI, "icmp", (a < b).to(DType::i32) + ((a <= b).to(DType::i32) << 1) + ((a > b).to(DType::i32) << 2) +
                              ((a >= b).to(DType::i32) << 3) + ((a == b).to(DType::i32) << 4) +
                              ((a != b).to(DType::i32) << 5));
    put(oi, secI, "fcmp", (x < y).to(DType::i32) + ((x <= y).to(DType::i32) << 1) + ((x > y).to(DType::i32) << 2) +
                              ((x >= y).to(DType::i32) << 3) + ((x == y).to(DType::i32) << 4) +
                              ((x != y).to(DType::i32) << 5));
    put(oi, secI, "masklogic", ((c & (x < y)) | ((a == 0) ^ c)).to(DType::i32));
    put(oi, secI, "where_int_scalar", where(c, a, 7));
    put(oi, secI, "where_scalar_int", where(c, -9, b));
    put(oi, secI, "where_scalar_cond", where(programId(0) == 0, a, b));
    put(oi, secI, "fptosi", (x * 1000.0).to(DType::i32));
    put(oi, secI, "i1toi32", (x < y).to(DType::i32));
    put(oi, secI, "i8sext", load(a8, i).to(DType::i32));
    put(of, secF, "where_float_scalar", where(c, 1.5, x));
    put(of, secF, "where_float_scalar2", where(c, x, -2.0));
    put(of, secF, "addf", x + y);
    put(of, secF, "subf", x - y);
    put(of, secF, "mulf", x * y);
    put(of, secF, "divf", x / y);
    put(of, secF, "remf", x % y);
    put(of, secF, "negf", -x);
    put(of, secF, "absf", abs(x));
    put(of, secF, "floor", floor(x));
    put(of, secF, "sqrt", sqrt(abs(x)));
    put(of, secF, "maxf", maximum(x, y));
    put(of, secF, "minf", minimum(x, y));
    put(of, secF, "minnumf", minimumNumber(x, y));
    put(of, secF, "sitofp", a.to(DType::f32));
    put(of, secF, "i1tof", (x < y).to(DType::f32));
    put(of, secF, "exp", exp(x * 0.01));
    put(of, secF, "exp2", exp2(x * 0.01));
    put(of, secF, "log", log(abs(x) + 0.5));
    put(of, secF, "rsqrt", rsqrt(abs(x) + 0.5));
    put(of, secF, "reciprocal", approximateReciprocal(x));
    put(of, secF, "approximate_exp", approximateExp(x * 0.01));
    put(of, secF, "tanh", tanh(x * 0.01));
    put(of, secF, "erf", erf(x * 0.01));
    put(of, secF, "bf16roundtrip", x.to(DType::bf16).to(DType::f32));
    put(of, secF, "f16roundtrip", x.to(DType::f16).to(DType::f32));
    store(obf, i, x.to(DType::bf16));
    store(oh, i, x.to(DType::f16));
    Value p8 = load(a8, i), q8 = load(b8, i);
    store(o8, i, p8 * q8 + (p8 / q8) - (p8 % q8));
    Value p64 = load(a64, i), q64 = load(b64, i);
    store(o64, i, (p64 / q64) * 1000003 + (p64 % q64) + (p64 >> 7));
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);

  std::vector<int32_t> ai(B), bi(B), si(B), oi(secI.total, kPoisonI32);
  std::vector<float> xf(B), yf(B), of(secF.total, poison());
  std::vector<int8_t> a8(B), b8(B), o8(B, int8_t(kPoisonByte));
  std::vector<int64_t> a64(B), b64(B), o64(B, int64_t(0xa5a5a5a5a5a5a5a5));
  std::vector<uint16_t> obf(B, kPoison16), oh(B, kPoison16);
  const int32_t edgeA[] = {7, -7, 7, -7, INT32_MIN, INT32_MAX, 0, -1, 1, INT32_MIN, 5, -5};
  const int32_t edgeB[] = {2, 2, -2, -2, 1, -1, 3, 7, INT32_MIN, INT32_MAX, 5, 5};
  const float edgeX[] = {NAN, 1.f, NAN, -0.f, 0.f, INFINITY, -INFINITY, 3.f, 5.5f, -5.5f, 1e-45f, 2.5f, -2.5f};
  const float edgeY[] = {1.f, NAN, NAN, 0.f, -0.f, INFINITY, 1.f, 3.f, 2.f, 2.f, 1e-45f, 1.f, 1.f};
  for (int j = 0; j < B; ++j) {
    ai[j] = j < 12 ? edgeA[j] : int32_t(randBits()) >> randInt(0, 30);
    do
      bi[j] = j < 12 ? edgeB[j] : int32_t(randBits()) >> randInt(0, 30);
    while (bi[j] == 0 || (ai[j] == INT32_MIN && bi[j] == -1));
    si[j] = randInt(0, 31);
    xf[j] = j < 13 ? edgeX[j] : randFloat(-300, 300);
    yf[j] = j < 13 ? edgeY[j] : (coin(0.1) ? xf[j] : randFloat(-300, 300));
    a8[j] = int8_t(randInt(-128, 127));
    do
      b8[j] = int8_t(randInt(-128, 127));
    while (b8[j] == 0 || (a8[j] == -128 && b8[j] == -1));
    a64[j] = int64_t(rng());
    do
      b64[j] = int64_t(rng()) >> randInt(0, 62);
    while (b64[j] == 0 || (a64[j] == INT64_MIN && b64[j] == -1));
  }
  launch(*exe, "elementwise", {1, 1, 1},
         {ptr(ai, "i32"), ptr(bi, "i32"), ptr(si, "i32"), ptr(xf, "f32"), ptr(yf, "f32"), ptr(a8, "i8"), ptr(b8, "i8"),
          ptr(a64, "i64"), ptr(b64, "i64"), ptr(o64, "i64"), ptr(oi, "i32"), ptr(of, "f32"), ptr(obf, "bf16"),
          ptr(oh, "f16"), ptr(o8, "i8")});

  std::map<std::string, std::vector<int64_t>> wantI;
  std::map<std::string, std::vector<double>> wantF, tolF;
  auto wrap = [](int64_t v) { return int64_t(int32_t(uint32_t(uint64_t(v)))); };
  auto ulpTol = [](double ref, double ulps) { return ulps * std::ldexp(1.0, std::ilogb(ref == 0 ? 1e-30 : ref) - 23); };
  for (int j = 0; j < B; ++j) {
    int64_t a = ai[j], b = bi[j];
    float x = xf[j], y = yf[j];
    auto cmpBits = [](auto p, auto q) {
      return int64_t((p < q) | (p <= q) << 1 | (p > q) << 2 | (p >= q) << 3 | (p == q) << 4 | (p != q) << 5);
    };
    wantI["div"].push_back(a / b);
    wantI["rem"].push_back(a % b);
    wantI["shl"].push_back(int32_t(uint32_t(a) << si[j]));
    wantI["shr"].push_back(int32_t(a) >> si[j]);
    wantI["and"].push_back(a & b);
    wantI["or"].push_back(a | b);
    wantI["xor"].push_back(a ^ b);
    wantI["neg"].push_back(wrap(-a));
    wantI["absi"].push_back(wrap(std::abs(a)));
    wantI["maxi"].push_back(std::max(a, b));
    wantI["mini"].push_back(std::min(a, b));
    wantI["add"].push_back(wrap(a + b));
    wantI["sub"].push_back(wrap(a - b));
    wantI["mul"].push_back(wrap(int64_t(uint64_t(a) * uint64_t(b))));
    wantI["icmp"].push_back(cmpBits(a, b));
    wantI["fcmp"].push_back(cmpBits(x, y));
    bool c = a < b;
    wantI["masklogic"].push_back((c && x < y) || ((a == 0) != c));
    wantI["where_int_scalar"].push_back(c ? a : 7);
    wantI["where_scalar_int"].push_back(c ? -9 : b);
    wantI["where_scalar_cond"].push_back(a);
    float scaled = x * 1000.0f;
    // fptosi is only defined in range; NaN/Inf lanes are not compared.
    wantI["fptosi"].push_back(std::isfinite(scaled) && std::abs(scaled) < 2e9f ? int64_t(int32_t(scaled)) : INT64_MIN);
    wantI["i1toi32"].push_back(x < y);
    wantI["i8sext"].push_back(a8[j]);
    wantF["where_float_scalar"].push_back(c ? 1.5f : x);
    wantF["where_float_scalar2"].push_back(c ? x : -2.0f);
    wantF["addf"].push_back(x + y);
    wantF["subf"].push_back(x - y);
    wantF["mulf"].push_back(x * y);
    wantF["divf"].push_back(x / y);
    wantF["remf"].push_back(std::fmod(x, y));
    wantF["negf"].push_back(-x);
    wantF["absf"].push_back(std::fabs(x));
    wantF["floor"].push_back(std::floor(x));
    wantF["sqrt"].push_back(std::sqrt(std::fabs(x)));
    wantF["maxf"].push_back(nanMax(x, y));
    wantF["minf"].push_back(nanMin(x, y));
    // Which of two equal zeros comes back is unspecified (LLVM's minnum); the host gives x.
    wantF["minnumf"].push_back(std::isnan(x) ? y : std::isnan(y) || x == y ? x : std::min(x, y));
    wantF["sitofp"].push_back(float(int32_t(a)));
    wantF["i1tof"].push_back(x < y ? 1.0 : 0.0);
    // Transcendentals: within 4 ulp of the double result (libm-quality bound).
    auto approx = [&](const char *name, double ref) {
      wantF[name].push_back(ref);
      tolF[name].push_back(std::isfinite(ref) ? ulpTol(ref, 4) : 0);
    };
    float x100 = x * 0.01f;
    approx("exp", std::exp(double(x100)));
    approx("exp2", std::exp2(double(x100)));
    approx("log", std::log(double(std::fabs(x) + 0.5f)));
    approx("rsqrt", 1 / std::sqrt(double(std::fabs(x) + 0.5f)));
    approx("reciprocal", double(1.0f / x)); // overflows to inf where f32 does
    // approximateExp's documented bound on GPUs: exp's plus |x|·log2(e)·2^-24 relative.
    approx("approximate_exp", std::exp(double(x100)));
    tolF["approximate_exp"].back() += std::exp(double(x100)) * std::fabs(x100) * M_LOG2E * 0x1p-24;
    approx("tanh", std::tanh(double(x100)));
    approx("erf", std::erf(double(x100)));
    wantF["bf16roundtrip"].push_back(fromHalf(kBF16, toHalf(kBF16, x)));
    wantF["f16roundtrip"].push_back(fromHalf(kF16, toHalf(kF16, x)));
  }
  Diffs diffs;
  for (auto &[name, where] : secI.at) {
    ASSERT_TRUE(wantI.count(name)) << name;
    std::vector<int64_t> want = wantI[name];
    std::vector<int32_t> got(oi.begin() + where.first, oi.begin() + where.first + where.second);
    for (size_t j = 0; j < want.size(); ++j)
      if (want[j] == INT64_MIN) // not compared
        want[j] = got[j];
    compareSection(diffs, name, got.data(), want);
  }
  for (auto &[name, where] : secF.at) {
    ASSERT_TRUE(wantF.count(name)) << name;
    const float *got = of.data() + where.first;
    if (tolF.count(name)) {
      compareSection(diffs, name, got, wantF[name], tolF[name]);
      continue;
    }
    // Exact: same bits (any NaN for NaN), including the order of -0 and +0 in maximum/minimum.
    for (size_t j = 0; j < wantF[name].size(); ++j)
      if (!sameFloat(got[j], float(wantF[name][j])))
        diffs.add(name + "[" + std::to_string(j) + "] (x=" + show(xf[j]) + ", y=" + show(yf[j]) + "): got " +
                  show(got[j]) + " want " + show(wantF[name][j]));
  }
  for (int j = 0; j < B; ++j) {
    if (!sameHalf(kBF16, obf[j], toHalf(kBF16, xf[j])))
      diffs.add("bf16[" + std::to_string(j) + "]: got " + hex(obf[j]) + " want " + hex(toHalf(kBF16, xf[j])));
    if (!sameHalf(kF16, oh[j], toHalf(kF16, xf[j])))
      diffs.add("f16[" + std::to_string(j) + "]: got " + hex(oh[j]) + " want " + hex(toHalf(kF16, xf[j])));
    int p = a8[j], q = b8[j];
    int8_t want8 = int8_t(uint8_t(p * q + p / q - p % q));
    if (o8[j] != want8)
      diffs.add("i8[" + std::to_string(j) + "]: got " + std::to_string(o8[j]) + " want " + std::to_string(want8));
    int64_t want64 = int64_t(uint64_t(a64[j] / b64[j]) * 1000003u + uint64_t(a64[j] % b64[j]) + uint64_t(a64[j] >> 7));
    if (o64[j] != want64)
      diffs.add("i64[" + std::to_string(j) + "]: got " + std::to_string(o64[j]) + " want " + std::to_string(want64));
  }
  EXPECT_TRUE(diffs.ok()) << diffs;
}

//===----------------------------------------------------------------------===//
// 12. Control flow
//===----------------------------------------------------------------------===//

TEST_F(HostOps, LoopsCarryTilesAndBranchesReturnTiles) {
  constexpr int B = 19;
  ModuleBuilder mb;
  {
    auto k = mb.kernel("loops");
    Pointer x = k.pointer("x", DType::f32), out = k.pointer("out", DType::f32), outi = k.pointer("outi", DType::i32);
    Value lo = k.scalar("lo", DType::i32), hi = k.scalar("hi", DType::i32), step = k.scalar("step", DType::i32);
    Value lanes = arange(0, B);
    std::vector<Value> init{full({B}, 1.0, DType::f32), zeros({B}, DType::i32), constant(0, DType::i32)};
    auto r = forRange(lo, hi, step, init, [&](Value i, const std::vector<Value> &c) {
      Value v = load(x, i * B + lanes);
      // Nested loop with its own carried scalar.
      Value inner = forRange(0, i % 3 + 1, 1, {constant(0, DType::i32)}, [&](Value j, const std::vector<Value> &d) {
        return std::vector<Value>{d[0] + j + 1};
      })[0];
      return std::vector<Value>{c[0] * 0.5 + v, c[1] + i * 10 + lanes + inner, c[2] + 1};
    });
    store(out, lanes, r[0]);
    store(outi, lanes, r[1]);
    store(outi, B + arange(0, 1), r[2]);
  }
  {
    // A data-dependent branch on a reduced scalar, with a side effect only in one branch, also
    // inside a loop.
    auto k = mb.kernel("flags");
    Pointer x = k.pointer("x", DType::f32), flag = k.pointer("flag", DType::i32);
    Value p = programId(0);
    Value v = load(x, p * B + arange(0, B));
    ifThen(v.sum(0) > 0.0, [&] { store(flag, p + arange(0, 1), 1); });
    forRange(0, 3, 1, {}, [&](Value i, const std::vector<Value> &) {
      ifThen(v.max(0) > (i.to(DType::f32) - 1.0), [&] { atomicAdd(flag, numPrograms(0) + p + arange(0, 1), 1); });
      return std::vector<Value>{};
    });
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);

  // scf.if returning tiles and a scalar, at the top level and inside a loop, as tile IR text
  // (ifThenElse from the DSL is covered by HostOpsRegressions.IfThenElseReturnsValues).
  auto branches = compileText(R"mlir(
module {
  func.func @branches(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>, %outi: !tile.ptr<i32>)
      attributes {tile.kernel, tile.num_warps = 4 : i32} {
    %p = tile.program_id 0
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c4 = arith.constant 4 : i32
    %c19 = arith.constant 19 : i32
    %base = arith.muli %p, %c19 : i32
    %iota = tile.arange 0 to 19 : tensor<19xi32>
    %bases = tile.splat %base : i32 -> tensor<19xi32>
    %offs = arith.addi %bases, %iota : tensor<19xi32>
    %v = tile.load %x[%offs] : !tile.ptr<f32>[tensor<19xi32>] -> tensor<19xf32>
    %p1 = arith.addi %p, %c1 : i32
    %p1s = tile.splat %p1 : i32 -> tensor<19xi32>
    %vi = arith.muli %iota, %p1s : tensor<19xi32>
    %rem = arith.remsi %p, %c2 : i32
    %even = arith.cmpi eq, %rem, %c0 : i32
    %r:3 = scf.if %even -> (tensor<19xf32>, tensor<19xi32>, f32) {
      %two = arith.constant dense<2.0> : tensor<19xf32>
      %a = arith.mulf %v, %two : tensor<19xf32>
      %ones = arith.constant dense<1> : tensor<19xi32>
      %b = arith.addi %vi, %ones : tensor<19xi32>
      %s = arith.constant 1.5 : f32
      scf.yield %a, %b, %s : tensor<19xf32>, tensor<19xi32>, f32
    } else {
      %one = arith.constant dense<1.0> : tensor<19xf32>
      %a = arith.subf %v, %one : tensor<19xf32>
      %threes = arith.constant dense<3> : tensor<19xi32>
      %b = arith.muli %vi, %threes : tensor<19xi32>
      %s = arith.constant -0.25 : f32
      scf.yield %a, %b, %s : tensor<19xf32>, tensor<19xi32>, f32
    }
    %rs = tile.splat %r#2 : f32 -> tensor<19xf32>
    %sum = arith.addf %r#0, %rs : tensor<19xf32>
    tile.store %sum, %out[%offs] : tensor<19xf32>, !tile.ptr<f32>[tensor<19xi32>]
    tile.store %r#1, %outi[%offs] : tensor<19xi32>, !tile.ptr<i32>[tensor<19xi32>]
    %zero = arith.constant dense<0.0> : tensor<19xf32>
    %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%c = %zero) -> (tensor<19xf32>) : i32 {
      %lt = arith.cmpi slt, %i, %c2 : i32
      %n = scf.if %lt -> (tensor<19xf32>) {
        %a = arith.addf %c, %v : tensor<19xf32>
        scf.yield %a : tensor<19xf32>
      } else {
        %three = arith.constant dense<3.0> : tensor<19xf32>
        %m = arith.mulf %c, %three : tensor<19xf32>
        scf.yield %m : tensor<19xf32>
      }
      scf.yield %n : tensor<19xf32>
    }
    %np = tile.num_programs 0
    %base2 = arith.muli %np, %c19 : i32
    %base2s = tile.splat %base2 : i32 -> tensor<19xi32>
    %offs2 = arith.addi %base2s, %offs : tensor<19xi32>
    tile.store %acc, %out[%offs2] : tensor<19xf32>, !tile.ptr<f32>[tensor<19xi32>]
    return
  }
}
)mlir");
  ASSERT_TRUE(branches);

  const int T = 9;
  std::vector<float> x(T * B);
  for (float &v : x)
    v = randFloat(-3, 3);
  struct Bounds {
    int lo, hi, step;
  };
  for (Bounds bd : {Bounds{0, T, 1}, Bounds{1, T, 2}, Bounds{3, 3, 1}, Bounds{5, 2, 1}, Bounds{T - 1, T, 5},
                    Bounds{randInt(0, 3), randInt(4, T), randInt(1, 3)}}) {
    std::vector<float> out(B, poison());
    std::vector<int32_t> outi(B + 1, kPoisonI32);
    launch(*exe, "loops", {1, 1, 1},
           {ptr(x, "f32"), ptr(out, "f32"), ptr(outi, "i32"), KernelArg::fromI32(bd.lo), KernelArg::fromI32(bd.hi),
            KernelArg::fromI32(bd.step)});
    Diffs diffs;
    int trips = 0;
    std::vector<float> acc(B, 1.0f);
    std::vector<int32_t> acci(B, 0);
    for (int i = bd.lo; i < bd.hi; i += bd.step, ++trips)
      for (int l = 0; l < B; ++l) {
        acc[l] = acc[l] * 0.5f + x[i * B + l];
        int inner = 0;
        for (int j = 0; j < i % 3 + 1; ++j)
          inner += j + 1;
        acci[l] += i * 10 + l + inner;
      }
    for (int l = 0; l < B; ++l) {
      if (bitsOf(out[l]) != bitsOf(acc[l]))
        diffs.add("acc[" + std::to_string(l) + "]: got " + show(out[l]) + " want " + show(acc[l]));
      if (outi[l] != acci[l])
        diffs.add("acci[" + std::to_string(l) + "]: got " + std::to_string(outi[l]) + " want " + std::to_string(acci[l]));
    }
    if (outi[B] != trips)
      diffs.add("trip count: got " + std::to_string(outi[B]) + " want " + std::to_string(trips));
    EXPECT_TRUE(diffs.ok()) << "for (" << bd.lo << "; " << bd.hi << "; " << bd.step << "): " << diffs;
  }
  {
    const int programs = 5;
    std::vector<float> xs(programs * B), out(2 * programs * B, poison());
    for (float &v : xs)
      v = randFloat(-3, 3);
    std::vector<int32_t> outi(programs * B, kPoisonI32), flag(2 * programs, 0);
    launch(*branches, "branches", {programs, 1, 1}, {ptr(xs, "f32"), ptr(out, "f32"), ptr(outi, "i32")});
    launch(*exe, "flags", {programs, 1, 1}, {ptr(xs, "f32"), ptr(flag, "i32")});
    Diffs diffs;
    for (int p = 0; p < programs; ++p) {
      double sum = 0, mag = 0, max = -INFINITY;
      for (int l = 0; l < B; ++l) {
        float v = xs[p * B + l];
        sum += v;
        mag += std::abs(v);
        max = std::max(max, double(v));
        float want = p % 2 == 0 ? v * 2.0f + 1.5f : (v - 1.0f) + -0.25f;
        int32_t wanti = p % 2 == 0 ? l * (p + 1) + 1 : l * (p + 1) * 3;
        float acc = ((0.0f + v) + v) * 3.0f * 3.0f;
        if (bitsOf(out[p * B + l]) != bitsOf(want))
          diffs.add("branch value p" + std::to_string(p) + " l" + std::to_string(l) + ": got " + show(out[p * B + l]) +
                    " want " + show(want));
        if (outi[p * B + l] != wanti)
          diffs.add("branch int p" + std::to_string(p) + " l" + std::to_string(l));
        if (bitsOf(out[(programs + p) * B + l]) != bitsOf(acc))
          diffs.add("loop branch p" + std::to_string(p) + " l" + std::to_string(l) + ": got " +
                    show(out[(programs + p) * B + l]) + " want " + show(acc));
      }
      // The flag is only decidable when the sum is clearly away from 0.
      if (std::abs(sum) > gamma(B) * mag && flag[p] != (sum > 0))
        diffs.add("flag p" + std::to_string(p) + ": got " + std::to_string(flag[p]) + " for sum " + show(sum));
      int count = (max > -1.0) + (max > 0.0) + (max > 1.0);
      if (flag[programs + p] != count)
        diffs.add("loop flag p" + std::to_string(p) + ": got " + std::to_string(flag[programs + p]) + " want " +
                  std::to_string(count));
    }
    EXPECT_TRUE(diffs.ok()) << diffs;
  }
}

//===----------------------------------------------------------------------===//
// Regressions: each reproduced a bug found while writing this suite (now fixed).
//===----------------------------------------------------------------------===//

/// DSL (dsl/lib/DSL.cpp, combineAlong): the InsertionGuard is taken after createBlock() has
/// moved the builder into the combiner block, so every op built after a custom reduce/scan lands
/// inside the combiner region, after its tile.yield. Verification then fails ("the combiner
/// region must yield one 'f32'").
TEST(HostOpsRegressions, OpsAfterACustomCombinerStayOutsideIt) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("k");
    Pointer x = k.pointer("x", DType::f32), out = k.pointer("out", DType::f32);
    Value m = reduce(load(x, arange(0, 8)), 0, [](Value a, Value b) { return maximum(a, b); });
    store(out, arange(0, 1), m);
  }
  std::string error;
  EXPECT_TRUE(mb.finish(&error)) << error;
}

/// DSL (ifThenElse): the first, result-less scf.if gets a terminator in its then block; that
/// block is moved into the typed scf.if and a second scf.yield is appended after the stale one
/// ("'scf.yield' op must be the last operation in the parent block").
TEST(HostOpsRegressions, IfThenElseReturnsValues) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("k");
    Pointer out = k.pointer("out", DType::f32);
    auto r = ifThenElse(programId(0) == 0, [] { return std::vector<Value>{zeros({4}, DType::f32)}; },
                        [] { return std::vector<Value>{full({4}, 1.0, DType::f32)}; });
    store(out, arange(0, 4), r[0]);
  }
  std::string error;
  EXPECT_TRUE(mb.finish(&error)) << error;
}

/// DSL (where): with both choices literals, the literals take the condition's dtype (i1), so
/// where(c, 3, 4) is an i1 tile equal to c (3 and 4 truncate to 1 and 0), and
/// where(c, 1.5, 2.5) is rejected ("a floating-point literal cannot take the integer dtype i1").
TEST(HostOpsRegressions, WhereWithTwoLiteralsKeepsTheirValues) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("k");
    Pointer out = k.pointer("out", DType::i32);
    Value i = arange(0, 4);
    Value w = where(i < 2, 3, 4);
    EXPECT_EQ(w.dtype(), DType::i32);
    store(out, i, w.to(DType::i32));
  }
  std::string error;
  auto module = mb.finish(&error);
  ASSERT_TRUE(module) << error;
  auto exe = HostExecutable::compile(*module, &error);
  ASSERT_TRUE(exe) << error;
  int32_t out[4] = {kPoisonI32, kPoisonI32, kPoisonI32, kPoisonI32};
  launch(*exe, "k", {1, 1, 1}, {KernelArg::ptr(out, "i32")});
  EXPECT_EQ(std::vector<int32_t>(out, out + 4), (std::vector<int32_t>{3, 3, 4, 4}));
}

/// Host pipeline (HostPipeline.cpp runs upstream arith-expand, whose maximumf/minimumf
/// expansion is cmpf ugt/ult + select): maximum(+0, -0) gives -0 and minimum(-0, +0) gives +0;
/// arith.maximumf/minimumf (and IEEE 754-2019 maximum/minimum) order -0 below +0. The same
/// applies to max/min reductions.
TEST(HostOpsRegressions, MaximumMinimumOrderSignedZeros) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("k");
    Pointer x = k.pointer("x", DType::f32), y = k.pointer("y", DType::f32), out = k.pointer("out", DType::f32);
    Value i = arange(0, 2);
    Value a = load(x, i), b = load(y, i);
    store(out, i, maximum(a, b));
    store(out, 2 + i, minimum(a, b));
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);
  float x[2] = {0.f, -0.f}, y[2] = {-0.f, 0.f}, out[4];
  launch(*exe, "k", {1, 1, 1}, {KernelArg::ptr(x, "f32"), KernelArg::ptr(y, "f32"), KernelArg::ptr(out, "f32")});
  EXPECT_FALSE(std::signbit(out[0])) << "maximum(+0, -0)";
  EXPECT_FALSE(std::signbit(out[1])) << "maximum(-0, +0)";
  EXPECT_TRUE(std::signbit(out[2])) << "minimum(+0, -0)";
  EXPECT_TRUE(std::signbit(out[3])) << "minimum(-0, +0)";
}

/// Host codegen (LLVM's x86 backend, reached through TileToHost's masked loads and reduction
/// loops): a bf16 value carried by a phi -- the result of a masked load, or the loop-carried
/// accumulator of a reduction -- is legalized through f32 and truncated back: with vcvtneps2bf16
/// on CPUs with AVX512-BF16, which flushes subnormals to zero, else with __truncsfbf2, which
/// quiets signaling NaNs. LLVM's InstCombine turns integer phis feeding bitcasts back into bf16
/// phis, so the lowering cannot avoid it by carrying bits; building the JIT target machine
/// without +avx512bf16,+avxneconvert (Compiler.cpp) fixes the subnormals.
TEST(HostOpsRegressions, Bf16ValuesKeepEveryBitThroughBranchesAndLoops) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("k");
    Pointer x = k.pointer("x", DType::bf16), o = k.pointer("o", DType::bf16), m = k.pointer("m", DType::bf16);
    Value offs = programId(0) * 256 + arange(0, 256);
    store(o, offs, load(x, offs, offs < 65536));
    store(m, programId(0) + arange(0, 1), load(x, programId(0) * 256 + arange(0, 4)).max(0));
  }
  auto exe = compileDsl(mb);
  ASSERT_TRUE(exe);
  std::vector<uint16_t> in(65536), out(65536, kPoison16), maxima(256, kPoison16);
  for (uint32_t c = 0; c < 65536; ++c)
    in[c] = uint16_t(c);
  for (int p = 0; p < 256; ++p) // each program's first four: a positive subnormal, then -2^-133
    in[p * 256] = uint16_t(1 + p % 127), in[p * 256 + 1] = in[p * 256 + 2] = in[p * 256 + 3] = 0x8001;
  launch(*exe, "k", {256, 1, 1}, {ptr(in, "bf16"), ptr(out, "bf16"), ptr(maxima, "bf16")});
  Diffs diffs;
  for (uint32_t c = 0; c < 65536; ++c)
    if (out[c] != in[c])
      diffs.add("masked load of " + hex(in[c]) + " gave " + hex(out[c]));
  for (int p = 0; p < 256; ++p)
    if (maxima[p] != in[p * 256])
      diffs.add("max of " + hex(in[p * 256]) + " and -2^-133 gave " + hex(maxima[p]));
  EXPECT_TRUE(diffs.ok()) << diffs;
}

} // namespace
