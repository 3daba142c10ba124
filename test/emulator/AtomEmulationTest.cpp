//===- AtomEmulationTest.cpp - every matrix atom, compiled and emulated ---===//
//
// For each MFMA and mma.sync atom of the atom table (what the compiler believes about each
// instruction's lanes), a kernel computes one dot with that atom, which the emulator runs
// with the lane maps it takes from the vendors' documents. The result must be the product of
// the operands (random codes, decoded here by this file's own decoders; exact for int8,
// within f32 rounding otherwise), so the atom table, the lowering and the emulator must
// agree on every lane.
//
// Block-scaled MFMA atoms (every format pairing, both shapes) run the same way with e8m0
// scales. wgmma atoms (sm_90a) read their operands from shared memory, so a single dot of
// loaded tiles does not reach them: the GEMM op tests run them through the emulated sm_90a
// device instead (test/CMakeLists.txt, OpsTest-emulated-sm_90a-gemm).

#include "wavetile/Atoms/AtomTable.h"
#include "wavetile/Emulator.h"
#include "wavetile/dsl/DSL.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

using namespace wavetile;
using namespace wavetile::dsl;
namespace atoms = wavetile::atoms;

namespace {

DType dtypeOf(atoms::ScalarKind kind) {
  switch (kind) {
  case atoms::ScalarKind::f16:
    return DType::f16;
  case atoms::ScalarKind::bf16:
    return DType::bf16;
  case atoms::ScalarKind::f8E4M3FNUZ:
    return DType::f8E4M3FNUZ;
  case atoms::ScalarKind::f8E5M2FNUZ:
    return DType::f8E5M2FNUZ;
  case atoms::ScalarKind::f8E4M3FN:
    return DType::f8E4M3FN;
  case atoms::ScalarKind::f8E5M2:
    return DType::f8E5M2;
  case atoms::ScalarKind::f6E2M3:
    return DType::f6E2M3FN;
  case atoms::ScalarKind::f6E3M2:
    return DType::f6E3M2FN;
  case atoms::ScalarKind::f4E2M1:
    return DType::f4E2M1FN;
  case atoms::ScalarKind::i8:
    return DType::i8;
  case atoms::ScalarKind::i32:
    return DType::i32;
  default:
    return DType::f32;
  }
}

/// The value of an element code, from its own bit fields: sign, exponent (bias as given),
/// mantissa. NaN: e4m3fn's S.1111.111, e5m2's exponent of ones (infinities included here),
/// FNUZ's 0x80; fp6 and fp4 have none.
double valueOf(uint16_t code, atoms::ScalarKind kind) {
  auto small = [&](int bits, int mantissaBits, int bias) {
    const int exponent = (code & ((1 << (bits - 1)) - 1)) >> mantissaBits;
    const double fraction = double(code & ((1 << mantissaBits) - 1)) / (1 << mantissaBits);
    const double magnitude = exponent ? std::ldexp(1 + fraction, exponent - bias) : std::ldexp(fraction, 1 - bias);
    return (code >> (bits - 1)) & 1 ? -magnitude : magnitude;
  };
  switch (kind) {
  case atoms::ScalarKind::f16:
    return double(std::bit_cast<_Float16>(code));
  case atoms::ScalarKind::bf16:
    return double(std::bit_cast<float>(uint32_t(code) << 16));
  case atoms::ScalarKind::f8E4M3FN:
    return (code & 0x7f) == 0x7f ? std::nan("") : small(8, 3, 7);
  case atoms::ScalarKind::f8E4M3FNUZ:
    return code == 0x80 ? std::nan("") : small(8, 3, 8);
  case atoms::ScalarKind::f8E5M2:
    return (code & 0x7c) == 0x7c ? std::nan("") : small(8, 2, 15);
  case atoms::ScalarKind::f8E5M2FNUZ:
    return code == 0x80 ? std::nan("") : small(8, 2, 16);
  case atoms::ScalarKind::f6E2M3:
    return small(6, 3, 1);
  case atoms::ScalarKind::f6E3M2:
    return small(6, 2, 3);
  case atoms::ScalarKind::f4E2M1:
    return small(4, 1, 1);
  case atoms::ScalarKind::i8:
    return double(int8_t(code));
  default:
    return 0;
  }
}

/// A random code of `kind` that is finite and below 8 in magnitude (no format's NaN or
/// infinity codes).
uint16_t randomCode(std::mt19937_64 &rng, atoms::ScalarKind kind) {
  if (kind == atoms::ScalarKind::f16 || kind == atoms::ScalarKind::bf16) {
    float v = std::uniform_int_distribution<int>(-16, 16)(rng) / 8.0f; // exact in both
    return kind == atoms::ScalarKind::f16 ? std::bit_cast<uint16_t>(static_cast<_Float16>(v))
                                          : uint16_t(std::bit_cast<uint32_t>(v) >> 16);
  }
  if (kind == atoms::ScalarKind::i8)
    return uint8_t(std::uniform_int_distribution<int>(-20, 20)(rng));
  for (;;) { // 8-bit floats: any code of magnitude below 8 (no NaN, infinity or 0x80)
    uint16_t code = uint16_t(std::uniform_int_distribution<int>(0, 255)(rng));
    double v = valueOf(code, kind);
    if (code != 0x80 && std::isfinite(v) && std::abs(v) < 8)
      return code;
  }
}

class AtomEmulation : public ::testing::TestWithParam<const atoms::Atom *> {};

TEST_P(AtomEmulation, OneDotEqualsTheExactProduct) {
  const atoms::Atom &atom = *GetParam();
  const std::string targetName = atoms::targetName(atom.target);
  // Two K steps, so the accumulator carries over from the first.
  const int64_t m = atom.m, n = atom.n, k = 2 * atom.k;
  const DType aType = dtypeOf(atom.aType), bType = dtypeOf(atom.bType), cType = dtypeOf(atom.cType);
  ModuleBuilder mb;
  {
    auto kernel = mb.kernel("atom", {.numWarps = 1});
    Pointer a = kernel.pointer("a", aType), b = kernel.pointer("b", bType), c = kernel.pointer("c", cType);
    Value rows = arange(0, int32_t(m)).expand(1), cols = arange(0, int32_t(n)).expand(0);
    Value ksRow = arange(0, int32_t(k)).expand(0), ksCol = arange(0, int32_t(k)).expand(1);
    Value product =
        dot(load(a, rows * int32_t(k) + ksRow), load(b, ksCol * int32_t(n) + cols), zeros({m, n}, cType), atom.name);
    store(c, rows * int32_t(n) + cols, product);
  }
  std::string error;
  auto module = mb.finish(&error);
  ASSERT_TRUE(module) << error;
  auto emulator = EmulatedModule::compile(*module, *lookupGpuTarget(targetName), &error);
  ASSERT_TRUE(emulator) << error;

  std::mt19937_64 rng(std::random_device{}());
  const size_t aBytes = bitWidth(aType) / 8, bBytes = bitWidth(bType) / 8;
  std::vector<uint16_t> aCodes(m * k), bCodes(k * n);
  std::vector<uint8_t> aData(m * k * aBytes), bData(k * n * bBytes);
  for (size_t i = 0; i < aCodes.size(); ++i) {
    aCodes[i] = randomCode(rng, atom.aType);
    std::memcpy(&aData[i * aBytes], &aCodes[i], aBytes);
  }
  for (size_t i = 0; i < bCodes.size(); ++i) {
    bCodes[i] = randomCode(rng, atom.bType);
    std::memcpy(&bData[i * bBytes], &bCodes[i], bBytes);
  }
  std::vector<uint32_t> out(m * n, 0x7fc00001); // NaN / a pattern no sum gives
  std::vector<KernelArg> args{KernelArg::ptr(aData.data(), "", aData.size()),
                              KernelArg::ptr(bData.data(), "", bData.size()),
                              KernelArg::ptr(out.data(), "", out.size() * 4)};
  ASSERT_TRUE(emulator->launch("atom", {1, 1, 1}, args, &error)) << error;
  int bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, size = 0;
      for (int64_t p = 0; p < k; ++p) {
        double product = valueOf(aCodes[i * k + p], atom.aType) * valueOf(bCodes[p * n + j], atom.bType);
        want += product;
        size += std::abs(product);
      }
      // i32 sums are exact; f32 ones round once per K step (two here) and in the hardware's
      // own order: a few ulps of the products' magnitude. A wrong lane map is off by the
      // magnitude of whole products.
      const double allowed = cType == DType::i32 ? 0 : 4 * 0x1p-23 * size;
      double got = cType == DType::i32 ? double(int32_t(out[i * n + j])) : double(std::bit_cast<float>(out[i * n + j]));
      if (!(std::abs(got - want) <= allowed) && bad++ < 4)
        ADD_FAILURE() << atom.name << ": c[" << i << "][" << j << "] = " << got << ", exact " << want;
    }
  EXPECT_EQ(bad, 0) << atom.name;
}

class ScaledAtomEmulation : public ::testing::TestWithParam<const atoms::Atom *> {};

// Block-scaled MFMA: values exactly representable in the atom's formats travel as f32 and are
// converted in the kernel; e8m0 scales per 32 of K. The lowered IR must use this atom's
// instruction (chosen by the operand types and the tile shape).
TEST_P(ScaledAtomEmulation, OneScaledDotEqualsTheScaledProduct) {
  const atoms::Atom &atom = *GetParam();
  const int64_t m = atom.m, n = atom.n, k = 2 * atom.k, groups = k / 32;
  const DType aType = dtypeOf(atom.aType), bType = dtypeOf(atom.bType);
  ModuleBuilder mb;
  {
    auto kernel = mb.kernel("atom", {.numWarps = 1});
    Pointer a = kernel.pointer("a", DType::f32), b = kernel.pointer("b", DType::f32);
    Pointer as = kernel.pointer("a_scale", DType::f8E8M0FNU), bs = kernel.pointer("b_scale", DType::f8E8M0FNU);
    Pointer c = kernel.pointer("c", DType::f32);
    Value rows = arange(0, int32_t(m)).expand(1), cols = arange(0, int32_t(n)).expand(0);
    Value ksRow = arange(0, int32_t(k)).expand(0), ksCol = arange(0, int32_t(k)).expand(1);
    Value groupRow = arange(0, int32_t(groups)).expand(0), groupCol = arange(0, int32_t(groups)).expand(1);
    Value product = scaledDot(load(a, rows * int32_t(k) + ksRow).to(aType), load(as, rows * int32_t(groups) + groupRow),
                              load(b, ksCol * int32_t(n) + cols).to(bType), load(bs, groupCol * int32_t(n) + cols),
                              zeros({m, n}, DType::f32));
    store(c, rows * int32_t(n) + cols, product);
  }
  std::string error;
  auto module = mb.finish(&error);
  ASSERT_TRUE(module) << error;
  const GpuTarget target = *lookupGpuTarget("gfx950");
  auto lowered = lowerKernelsForEmulation(*module, target, &error);
  ASSERT_TRUE(lowered) << error;
  const std::string instruction = "rocdl.mfma.scale.f32." + std::to_string(atom.m) + "x" + std::to_string(atom.n) +
                                  "x" + std::to_string(atom.k) + ".f8f6f4";
  ASSERT_NE(lowered->image.find(instruction), std::string::npos) << atom.name << " was not chosen";
  auto emulator = EmulatedModule::compile(*module, target, &error);
  ASSERT_TRUE(emulator) << error;

  std::mt19937_64 rng(std::random_device{}());
  const int aBits = bitWidth(aType), bBits = bitWidth(bType);
  std::vector<float> aValues(m * k), bValues(k * n);
  for (auto &v : aValues)
    v = float(valueOf(uint8_t(std::uniform_int_distribution<int>(0, (1 << aBits) - 1)(rng)), atom.aType));
  for (auto &v : bValues)
    v = float(valueOf(uint8_t(std::uniform_int_distribution<int>(0, (1 << bBits) - 1)(rng)), atom.bType));
  for (auto *values : {&aValues, &bValues}) // NaN and infinity codes (fp8, bf8) become zeros
    for (float &v : *values)
      if (!std::isfinite(v))
        v = 0;
  std::vector<uint8_t> aScales(m * groups), bScales(groups * n);
  for (auto *scales : {&aScales, &bScales})
    for (uint8_t &e : *scales)
      e = uint8_t(std::uniform_int_distribution<int>(124, 130)(rng));
  std::vector<float> out(m * n, std::nanf(""));
  std::vector<KernelArg> args{
      KernelArg::ptr(aValues.data(), "", aValues.size() * 4), KernelArg::ptr(bValues.data(), "", bValues.size() * 4),
      KernelArg::ptr(aScales.data(), "", aScales.size()), KernelArg::ptr(bScales.data(), "", bScales.size()),
      KernelArg::ptr(out.data(), "", out.size() * 4)};
  ASSERT_TRUE(emulator->launch("atom", {1, 1, 1}, args, &error)) << error;
  int bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, size = 0;
      for (int64_t p = 0; p < k; ++p) {
        double product = double(aValues[i * k + p]) * std::ldexp(1.0, aScales[i * groups + p / 32] - 127) *
                         double(bValues[p * n + j]) * std::ldexp(1.0, bScales[(p / 32) * n + j] - 127);
        want += product;
        size += std::abs(product);
      }
      if (!(std::abs(double(out[i * n + j]) - want) <= 4 * 0x1p-23 * size) && bad++ < 4)
        ADD_FAILURE() << atom.name << ": c[" << i << "][" << j << "] = " << out[i * n + j] << ", expected " << want;
    }
  EXPECT_EQ(bad, 0) << atom.name;
}

std::vector<const atoms::Atom *> scaledAtoms() {
  std::vector<const atoms::Atom *> out;
  for (const atoms::Atom &atom : atoms::allAtoms())
    if (atom.mlirOp == "amdgpu.scaled_mfma")
      out.push_back(&atom);
  return out;
}

std::string testName(const ::testing::TestParamInfo<const atoms::Atom *> &info) {
  std::string name = info.param->name;
  for (char &ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(ScaledAtoms, ScaledAtomEmulation, ::testing::ValuesIn(scaledAtoms()), testName);

std::vector<const atoms::Atom *> emulatedAtoms() {
  std::vector<const atoms::Atom *> out;
  for (const atoms::Atom &atom : atoms::allAtoms())
    if ((atom.mlirOp == "amdgpu.mfma" || atom.mlirOp == "nvvm.mma.sync") && atom.target != atoms::Target::sm_90a)
      out.push_back(&atom);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Atoms, AtomEmulation, ::testing::ValuesIn(emulatedAtoms()), testName);

} // namespace
