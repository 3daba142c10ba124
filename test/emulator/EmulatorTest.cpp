//===- EmulatorTest.cpp - the emulator's memory checks and launch errors --===//
//
// The examples' numerics through the emulator are the lit test tools/emulate.test; here,
// what must fail: accesses outside the arguments (named with the lane and the address),
// launches the emulator cannot check, out-of-range buffer lanes that must read 0, and
// shared-memory races of asynchronous copies and matrix instructions.

#include "wavetile/Emulator.h"
#include "Examples.h"

#include "wavetile/Compiler.h"
#include "wavetile/dsl/DSL.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <sstream>

using namespace wavetile;
using namespace wavetile::examples;

namespace {

struct Emulated {
  const Example *example = findExample("vector_add");
  std::unique_ptr<Module> module;
  std::unique_ptr<EmulatedModule> emulator;
  LaunchPlan plan;
  std::vector<KernelArg> args;

  Emulated(std::string_view target, int64_t n) {
    std::string error;
    module = example->build(&error);
    EXPECT_TRUE(module) << error;
    emulator = EmulatedModule::compile(*module, *lookupGpuTarget(target), &error);
    EXPECT_TRUE(emulator) << error;
    plan = example->prepare({n}, 11);
    args = *argumentsOf(plan, &error);
  }
  bool launch(std::string *error) { return emulator->launch(plan.kernel, plan.grid, args, error); }
};

class EmulatorTargets : public ::testing::TestWithParam<const char *> {};

TEST_P(EmulatorTargets, AStoreOutsideTheOutputIsReportedWithTheLaneAndAddress) {
  Emulated run(GetParam(), 3000);
  // Claim the output is 100 elements shorter than the kernel writes: the last lanes' stores
  // fall outside every argument (on CDNA still inside the buffer resource's 2 GiB range).
  run.args[2].extentBytes -= 400;
  std::string error;
  EXPECT_FALSE(run.launch(&error));
  EXPECT_NE(error.find("store of "), std::string::npos) << error;
  EXPECT_NE(error.find("outside every argument buffer"), std::string::npos) << error;
  EXPECT_NE(error.find("workgroup (2, 0, 0) thread "), std::string::npos) << error;
  EXPECT_NE(error.find("'out' spans"), std::string::npos) << error;
  // ... and the kernel's source line: vector_add's store in examples/Examples.cpp.
  EXPECT_NE(error.find("store at "), std::string::npos) << error;
  EXPECT_NE(error.find("Examples.cpp:"), std::string::npos) << error;
}

TEST_P(EmulatorTargets, TailLanesAreMaskedAndTheRestIsExact) {
  // 3000 is not a multiple of the 1024 elements a workgroup covers: the last one's lanes
  // past the end are masked (on CDNA by offsets past num_records, which must read 0 and
  // write nothing; a write past the output would be reported).
  Emulated run(GetParam(), 3000);
  std::string error;
  ASSERT_TRUE(run.launch(&error)) << error;
  CheckReport report = run.example->verify(run.plan);
  EXPECT_TRUE(report.passed) << report.summary;
}

TEST_P(EmulatorTargets, LaunchesWithoutExtentsOrWithWrongArgumentsAreRefused) {
  Emulated run(GetParam(), 1000);
  std::string error;
  run.args[0].extentBytes = 0;
  EXPECT_FALSE(run.launch(&error));
  EXPECT_NE(error.find("need the extent of every pointer argument ('x' has none)"), std::string::npos) << error;
  run.args.pop_back();
  EXPECT_FALSE(run.launch(&error));
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(run.emulator->launch("nope", run.plan.grid, run.args, &error));
  EXPECT_NE(error.find("no kernel 'nope'"), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(Emulator, EmulatorTargets, ::testing::Values("gfx942", "gfx950", "sm_90"));

// tile.lookup_nibbles over every byte, with a table neither symmetric nor monotonic: NVIDIA's
// prmt sequence (4 bytes a thread: selector words; 2: byte pairs) and CDNA's byte-by-byte
// lowering, each run as its vendor documents the instructions.
TEST_P(EmulatorTargets, LookupNibblesMapsEveryByte) {
  static constexpr std::array<int8_t, 16> kTable{-128, 127, 3, -7, 50, 0, 1, -1, 99, -99, 12, 33, -64, 64, 8, -8};
  const int32_t warp = std::string_view(GetParam()).starts_with("gfx") ? 64 : 32;
  dsl::ModuleBuilder mb;
  for (int32_t perThread : {4, 2}) {
    dsl::KernelOptions options;
    options.numWarps = 1;
    auto k = mb.kernel("lookup" + std::to_string(perThread), options);
    dsl::Pointer bytes = k.pointer("bytes", dsl::DType::i8), out = k.pointer("out", dsl::DType::i16);
    dsl::Value i = dsl::programId(0) * (perThread * warp) + dsl::arange(0, perThread * warp);
    dsl::store(out, i, dsl::lookupNibbles(dsl::load(bytes, i), kTable));
  }
  std::string error;
  std::unique_ptr<Module> module = mb.finish(&error);
  ASSERT_TRUE(module) << error;
  auto emulator = EmulatedModule::compile(*module, *lookupGpuTarget(GetParam()), &error);
  ASSERT_TRUE(emulator) << error;
  for (uint32_t perThread : {4u, 2u}) {
    std::vector<uint8_t> bytes(256);
    for (int b = 0; b < 256; ++b)
      bytes[b] = uint8_t(b);
    std::vector<uint16_t> out(256, 0xdead);
    std::vector<KernelArg> args{KernelArg::ptr(bytes.data(), "i8", 256), KernelArg::ptr(out.data(), "i16", 512)};
    ASSERT_TRUE(emulator->launch("lookup" + std::to_string(perThread), {256 / (perThread * warp), 1, 1}, args, &error))
        << error;
    for (int b = 0; b < 256; ++b)
      EXPECT_EQ(out[b], uint16_t(uint8_t(kTable[b & 15]) | uint8_t(kTable[b >> 4]) << 8))
          << perThread << " bytes a thread, byte " << b;
  }
}

// The GPU's f32 erf (wavetile-gpu-math: two polynomials and the hardware's exp2, no device
// library) against the double result: every 4096th f32 up to 4.5 (past 3.92 erf rounds to 1),
// every f32 within 2^-12 of the split between the polynomials, subnormals, both signs, zeros,
// infinities and NaN. The emulator's exp2 is exact, so the bound is the polynomials' (1.2 ulp
// by scripts/fit-erf.py) with half an ulp to spare.
TEST_P(EmulatorTargets, ErfIsWithinTwoUlpsOfTheDoubleResult) {
  const int32_t warp = std::string_view(GetParam()).starts_with("gfx") ? 64 : 32;
  dsl::ModuleBuilder mb;
  {
    dsl::KernelOptions options;
    options.numWarps = 1;
    auto k = mb.kernel("erf", options);
    dsl::Pointer in = k.pointer("in", dsl::DType::f32), out = k.pointer("out", dsl::DType::f32);
    dsl::Value i = dsl::programId(0) * (4 * warp) + dsl::arange(0, 4 * warp);
    dsl::store(out, i, dsl::erf(dsl::load(in, i)));
  }
  std::string error;
  std::unique_ptr<Module> module = mb.finish(&error);
  ASSERT_TRUE(module) << error;
  auto emulator = EmulatedModule::compile(*module, *lookupGpuTarget(GetParam()), &error);
  ASSERT_TRUE(emulator) << error;
  std::vector<float> magnitudes{0.f, 0x1p-149f, 0x1.234p-130f, FLT_MIN, INFINITY};
  for (uint32_t bits = 0; bits <= std::bit_cast<uint32_t>(4.5f); bits += 4096)
    magnitudes.push_back(std::bit_cast<float>(bits));
  for (float m = 0.875f - 0x1p-12f; m <= 0.875f + 0x1p-12f; m = std::nextafter(m, INFINITY))
    magnitudes.push_back(m);
  std::vector<float> inputs{NAN};
  for (float m : magnitudes)
    inputs.insert(inputs.end(), {m, -m});
  const size_t count = (inputs.size() + 4 * warp - 1) / (4 * warp) * (4 * warp);
  inputs.resize(count, 0.f);
  std::vector<float> out(count, -1234.5f);
  std::vector<KernelArg> args{KernelArg::ptr(inputs.data(), "f32", count * 4),
                              KernelArg::ptr(out.data(), "f32", count * 4)};
  ASSERT_TRUE(emulator->launch("erf", {uint32_t(count / (4 * warp)), 1, 1}, args, &error)) << error;
  int64_t bad = 0;
  for (size_t i = 0; i < count; ++i) {
    const double expected = std::erf(double(inputs[i]));
    const float magnitude = std::fabs(float(expected));
    const double ulp = std::max(double(std::nextafter(magnitude, INFINITY) - magnitude), 0x1p-149);
    const bool ok = std::isnan(expected) ? std::isnan(out[i])
                                         : std::fabs(out[i] - expected) <= 2 * ulp &&
                                               std::signbit(out[i]) == std::signbit(expected);
    if (!ok && bad++ < 5)
      ADD_FAILURE() << std::hexfloat << "erf(" << inputs[i] << ") = " << out[i] << ", expected " << expected;
  }
  EXPECT_EQ(bad, 0);
}

/// An fp8 format by its definition: e4m3fn has S.1111.111 as NaN and no infinities, e5m2
/// IEEE's specials in exponent 31, the fnuz formats NaN 0x80 only, no infinities, no -0.
struct Fp8Format {
  dsl::DType dtype;
  int mantissaBits, bias;
  bool fnuz;
  uint8_t largestCode;
};
const Fp8Format kFp8Formats[] = {{dsl::DType::f8E4M3FN, 3, 7, false, 0x7e},
                                 {dsl::DType::f8E5M2, 2, 15, false, 0x7b},
                                 {dsl::DType::f8E4M3FNUZ, 3, 8, true, 0x7f},
                                 {dsl::DType::f8E5M2FNUZ, 2, 16, true, 0x7f}};

double fp8Value(const Fp8Format &f, int code) {
  const int magnitude = code & 0x7f, exponent = magnitude >> f.mantissaBits;
  const int mantissa = magnitude & ((1 << f.mantissaBits) - 1);
  const bool e5m2 = f.mantissaBits == 2 && !f.fnuz;
  if (f.fnuz ? code == 0x80 : e5m2 ? exponent == 31 && mantissa : magnitude == 0x7f)
    return double(NAN);
  if (e5m2 && exponent == 31)
    return code & 0x80 ? -double(INFINITY) : double(INFINITY);
  const double fraction = double(mantissa) / (1 << f.mantissaBits);
  const double v = exponent ? std::ldexp(1 + fraction, exponent - f.bias) : std::ldexp(fraction, 1 - f.bias);
  return code & 0x80 ? -v : v;
}

/// For `target`, one kernel per fp8 format ("<name>_<format>") whose threads each convert four
/// elements: codes to f32 (widening), or f32 to codes with saturation (narrowing).
std::unique_ptr<EmulatedModule> fp8Conversions(const std::string &target, const std::string &name, bool narrowing,
                                               std::string *error) {
  const int32_t warp = target.starts_with("gfx") ? 64 : 32;
  dsl::ModuleBuilder mb;
  for (const Fp8Format &f : kFp8Formats) {
    dsl::KernelOptions options;
    options.numWarps = 1;
    auto k = mb.kernel(name + "_" + dsl::dtypeName(f.dtype), options);
    const dsl::DType from = narrowing ? dsl::DType::f32 : f.dtype, to = narrowing ? f.dtype : dsl::DType::f32;
    dsl::Pointer in = k.pointer("in", from), out = k.pointer("out", to);
    dsl::Value i = dsl::programId(0) * (4 * warp) + dsl::arange(0, 4 * warp);
    dsl::store(out, i, dsl::load(in, i).to(to, /*saturate=*/narrowing));
  }
  std::unique_ptr<Module> module = mb.finish(error);
  return module ? EmulatedModule::compile(*module, *lookupGpuTarget(target), error) : nullptr;
}

// Every code of the four fp8 formats widened to f32, four a thread: each target's own formats
// take its pair instructions (sm_90: OCP through cvt.rn.f16x2.e4m3x2/e5m2x2; gfx942: fnuz and
// gfx950: OCP through v_cvt_pk_f32_fp8/bf8), each run as its vendor documents them; the other
// formats the software decode. All against the formats' definitions.
TEST_P(EmulatorTargets, Fp8WideningDecodesEveryCode) {
  const int32_t warp = std::string_view(GetParam()).starts_with("gfx") ? 64 : 32;
  std::string error;
  auto emulator = fp8Conversions(GetParam(), "widen", /*narrowing=*/false, &error);
  ASSERT_TRUE(emulator) << error;
  for (const Fp8Format &f : kFp8Formats) {
    std::vector<uint8_t> codes(256);
    for (int c = 0; c < 256; ++c)
      codes[c] = uint8_t(c);
    std::vector<float> out(256, -1234.5f);
    std::vector<KernelArg> args{KernelArg::ptr(codes.data(), dsl::dtypeName(f.dtype), 256),
                                KernelArg::ptr(out.data(), "f32", 1024)};
    ASSERT_TRUE(emulator->launch(std::string("widen_") + dsl::dtypeName(f.dtype), {uint32_t(256 / (4 * warp)), 1, 1},
                                 args, &error))
        << error;
    for (int c = 0; c < 256; ++c) {
      const double expected = fp8Value(f, c);
      if (std::isnan(expected))
        EXPECT_TRUE(std::isnan(out[c])) << dsl::dtypeName(f.dtype) << " code " << c << ": " << out[c];
      else
        EXPECT_TRUE(out[c] == expected && std::signbit(out[c]) == std::signbit(expected))
            << dsl::dtypeName(f.dtype) << " code " << c << ": " << out[c] << ", expected " << expected;
    }
  }
}

// f32 narrowed with saturation to the four fp8 formats, four a thread: each target's own
// formats take its pair instructions (sm_90: cvt.rn.satfinite.e4m3x2/e5m2x2; gfx942: fnuz and
// gfx950: OCP through v_cvt_pk_fp8/bf8_f32 after a clamp), run as the vendors document them;
// the other formats the software encoding. Inputs: every finite value, the midpoints between
// neighbours (ties go to the even code) and the floats beside them, values past the largest
// finite, infinities, NaN and zeros, both signs; against the nearest code by the formats'
// definitions (fnuz has no -0).
TEST_P(EmulatorTargets, Fp8SaturatingNarrowingRoundsToNearestEven) {
  const int32_t warp = std::string_view(GetParam()).starts_with("gfx") ? 64 : 32;
  std::string error;
  auto emulator = fp8Conversions(GetParam(), "narrow", /*narrowing=*/true, &error);
  ASSERT_TRUE(emulator) << error;
  for (const Fp8Format &f : kFp8Formats) {
    const double largest = fp8Value(f, f.largestCode);
    std::vector<float> magnitudes{1e-40f, float(fp8Value(f, 1) / 2), float(fp8Value(f, 1) / 4), float(largest * 1.0625),
                                  float(largest * 2), 1e30f, FLT_MAX, INFINITY};
    for (int c = 0; c <= f.largestCode; ++c) {
      magnitudes.push_back(float(fp8Value(f, c)));
      if (c == f.largestCode)
        break;
      const float mid = float((fp8Value(f, c) + fp8Value(f, c + 1)) / 2); // exact in f32
      magnitudes.insert(magnitudes.end(), {mid, std::nextafter(mid, 0.f), std::nextafter(mid, INFINITY)});
    }
    std::vector<float> inputs{NAN};
    for (float m : magnitudes)
      inputs.insert(inputs.end(), {m, -m});
    const size_t count = (inputs.size() + 4 * warp - 1) / (4 * warp) * (4 * warp);
    inputs.resize(count, 0.f);
    std::vector<uint8_t> out(count, 0x5a);
    std::vector<KernelArg> args{KernelArg::ptr(inputs.data(), "f32", count * 4),
                                KernelArg::ptr(out.data(), dsl::dtypeName(f.dtype), count)};
    ASSERT_TRUE(emulator->launch(std::string("narrow_") + dsl::dtypeName(f.dtype), {uint32_t(count / (4 * warp)), 1, 1},
                                 args, &error))
        << error;
    for (size_t i = 0; i < count; ++i) {
      const float x = inputs[i];
      if (std::isnan(x)) {
        EXPECT_TRUE(std::isnan(fp8Value(f, out[i]))) << dsl::dtypeName(f.dtype) << " NaN gave " << int(out[i]);
        continue;
      }
      // The code below |x| and the one above; the nearer wins, a tie the even one.
      const double m = std::fabs(double(x));
      int code = f.largestCode;
      for (int c = 0; c < f.largestCode; ++c)
        if (m < fp8Value(f, c + 1)) {
          const double below = m - fp8Value(f, c), above = fp8Value(f, c + 1) - m;
          code = below < above || (below == above && c % 2 == 0) ? c : c + 1;
          break;
        }
      if (std::signbit(x) && !(f.fnuz && code == 0))
        code |= 0x80;
      EXPECT_EQ(int(out[i]), code) << dsl::dtypeName(f.dtype) << " of " << x;
    }
  }
}

TEST(EmulatedDevice, IsADeviceOfTheTargetAndRefusesUnknownOnes) {
  std::string error;
  auto device = openEmulatedDevice("gfx950", &error);
  ASSERT_TRUE(device) << error;
  EXPECT_EQ(device->backend(), Backend::Emulated);
  EXPECT_EQ(device->target(), "emulate:gfx950");
  EXPECT_FALSE(openEmulatedDevice("gfx90a", &error));
  EXPECT_NE(error.find("unknown target 'gfx90a'"), std::string::npos) << error;
}

} // namespace

namespace {

/// `example` lowered for `target` with every line of its per-thread IR that contains
/// `removed` taken out, launched on `shape`: the launch's error (it must fail).
std::string errorWithout(const char *example, std::string_view target, std::string_view removed,
                         const std::vector<int64_t> &shape) {
  const Example *e = findExample(example);
  std::string error;
  std::unique_ptr<Module> module = e->build(&error);
  EXPECT_TRUE(module) << error;
  std::optional<GpuTarget> gpu = lookupGpuTarget(target);
  std::optional<CodeObject> lowered = lowerKernelsForEmulation(*module, *gpu, &error);
  EXPECT_TRUE(lowered) << error;
  std::istringstream lines(lowered->image);
  std::string text, line;
  int dropped = 0;
  while (std::getline(lines, line))
    if (line.find(removed) == std::string::npos)
      text += line + "\n";
    else
      ++dropped;
  EXPECT_GT(dropped, 0) << removed << " is not in the IR";
  std::unique_ptr<EmulatedModule> emulated = EmulatedModule::fromLowered(text, lowered->manifest, *gpu, &error);
  EXPECT_TRUE(emulated) << error;
  LaunchPlan plan = e->prepare(shape, 5);
  std::vector<KernelArg> args = *argumentsOf(plan, &error);
  EXPECT_FALSE(emulated->launch(plan.kernel, plan.grid, args, &error));
  return error;
}

// The emulator lands a cp.async at its wait; the hardware may land it any time before. A
// ring read without that wait reads bytes in flight (gemm's K loop: six steps, three slots).
TEST(EmulatedRaces, AReadOfBytesACopyMayStillWriteIsReported) {
  std::string error = errorWithout("gemm", "sm_90", "nvvm.cp.async.wait.group", {70, 45, 161});
  EXPECT_NE(error.find("which an issued cp.async may still be writing"), std::string::npos) << error;
}

// wgmma computes when issued here; on the hardware it reads its operands until a wait
// retires its group. Without the waits, the copy that refills the slot the first step's
// group read races with it (gemm_fp8 on sm_90a: wgmma over a three-slot ring, six steps).
TEST(EmulatedRaces, OverwritingWhatAPendingWgmmaReadsIsReported) {
  std::string error = errorWithout("gemm_fp8", "sm_90a", "nvvm.wgmma.wait.group", {70, 45, 321});
  EXPECT_NE(error.find("cp.async writes LDS bytes"), std::string::npos) << error;
  EXPECT_NE(error.find("while warpgroup 0's wgmma that reads"), std::string::npos) << error;
}

} // namespace
