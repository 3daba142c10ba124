//===- RuntimeTest.cpp - manifests, launch checks, target detection -------===//
//
// What the runtime decides before any driver call. Device launches themselves run on GPU
// hosts (bench/h200/run_examples.py drives them through the C API).
//
//===----------------------------------------------------------------------===//

#include "wavetile/runtime/Device.h"
#include "wavetile/runtime/wavetile_runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>

using namespace wavetile;

namespace {

ModuleManifest gemmManifest() {
  ModuleManifest m;
  m.target = "sm_90";
  KernelManifest k;
  k.signature.name = "gemm";
  k.signature.params = {{"a", ArgKind::Pointer, "bf16", false},
                        {"c", ArgKind::Pointer, "f32", true},
                        {"M", ArgKind::I32, "i32"},
                        {"alpha", ArgKind::F32, "f32"}};
  k.block = {128, 1, 1};
  k.sharedBytes = 24576;
  k.dynamicSharedBytes = 65536;
  m.kernels.push_back(k);
  return m;
}

std::string parseError(const std::string &text) {
  ModuleManifest m;
  std::string error;
  EXPECT_FALSE(parseManifest(text, &m, &error)) << text;
  return error;
}

/// Sets WAVETILE_TARGET for one scope.
struct ScopedTarget {
  explicit ScopedTarget(const char *value) { setenv("WAVETILE_TARGET", value, 1); }
  ~ScopedTarget() { unsetenv("WAVETILE_TARGET"); }
};

} // namespace

TEST(Manifest, RoundTrips) {
  ModuleManifest original = gemmManifest();
  std::string text = printManifest(original);
  ModuleManifest parsed;
  std::string error;
  ASSERT_TRUE(parseManifest(text, &parsed, &error)) << error;
  EXPECT_EQ(parsed.target, "sm_90");
  ASSERT_EQ(parsed.kernels.size(), 1u);
  const KernelManifest &k = parsed.kernels[0];
  EXPECT_EQ(k.signature.name, "gemm");
  EXPECT_EQ(k.block, (std::array<uint32_t, 3>{128, 1, 1}));
  EXPECT_EQ(k.sharedBytes, 24576u);
  EXPECT_EQ(k.dynamicSharedBytes, 65536u);
  EXPECT_EQ(k.gridArguments, 3u);
  ASSERT_EQ(k.signature.params.size(), 4u);
  EXPECT_FALSE(k.signature.params[0].within2GiB);
  EXPECT_TRUE(k.signature.params[1].within2GiB);
  EXPECT_EQ(k.signature.params[3].kind, ArgKind::F32);
  EXPECT_EQ(printManifest(parsed), text);
  EXPECT_EQ(parsed.find("gemm"), &parsed.kernels[0]);
  EXPECT_EQ(parsed.find("nope"), nullptr);
}

TEST(Manifest, EmulatedTargetsRoundTripButOnlyAsEmulateColonName) {
  ModuleManifest original = gemmManifest();
  original.target = "emulate:gfx942";
  ModuleManifest parsed;
  std::string error;
  ASSERT_TRUE(parseManifest(printManifest(original), &parsed, &error)) << error;
  EXPECT_EQ(parsed.target, "emulate:gfx942");
  original.target = "other:gfx942";
  EXPECT_FALSE(parseManifest(printManifest(original), &parsed, &error));
}

TEST(Devices, EmulatedDevicesNeedTheCompilersEmulator) {
  std::string error;
  EXPECT_EQ(Device::open(Backend::Emulated, 0, &error), nullptr);
  EXPECT_NE(error.find("opened by target"), std::string::npos) << error;
  // The runtime alone has no interpreter: the compiler registers one (openEmulatedDevice).
  EXPECT_EQ(Device::openEmulated("gfx942", &error), nullptr);
  EXPECT_NE(error.find("no emulator is registered"), std::string::npos) << error;
}

TEST(Manifest, MalformedTextNamesTheLineAndTheProblem) {
  std::string good = printManifest(gemmManifest());
  EXPECT_EQ(parseError(""), "manifest line 0: empty manifest");
  EXPECT_EQ(parseError("wavetile-manifest 2\n"), "manifest line 1: expected 'wavetile-manifest 1', got 'wavetile-manifest 2'");
  // Truncated anywhere: a cut line, or a kernel without its end.
  EXPECT_NE(parseError(good.substr(0, good.size() - 2)).find("truncated"), std::string::npos);
  EXPECT_NE(parseError(good.substr(0, good.find("end\n"))).find("kernel 'gemm' has no 'end'"), std::string::npos);
  std::string badKind = good;
  badKind.replace(badKind.find("M i32 i32"), 9, "M u32 i32");
  EXPECT_NE(parseError(badKind).find("line 10: bad parameter 'param M u32 i32'"), std::string::npos);
  std::string scalarWithin = good;
  scalarWithin.replace(scalarWithin.find("M i32 i32"), 9, "M i32 i32 within-2gib");
  EXPECT_NE(parseError(scalarWithin).find("bad parameter"), std::string::npos);
  std::string zeroBlock = good;
  zeroBlock.replace(zeroBlock.find("block 128"), 9, "block 0");
  EXPECT_NE(parseError(zeroBlock).find("bad block size"), std::string::npos);
  EXPECT_NE(parseError(good + "kernel gemm\nend\n").find("repeated kernel name 'gemm'"), std::string::npos);
  EXPECT_NE(parseError("wavetile-manifest 1\ntarget sm_90\nblock 1 1 1\n").find("outside a kernel"),
            std::string::npos);
  EXPECT_NE(parseError("wavetile-manifest 1\nkernel k\nend\n").find("no target line"), std::string::npos);
  std::string binaryGarbage = good;
  binaryGarbage[40] = '\x01';
  EXPECT_FALSE(parseError(binaryGarbage).empty());
}

TEST(Launch, ChecksArgumentsAndGridBeforeRunning) {
  KernelSignature k = gemmManifest().kernels[0].signature;
  int32_t data[4];
  auto args = [&](uint64_t cExtent) {
    return std::vector<KernelArg>{KernelArg::ptr(data, "bf16"), KernelArg::ptr(data, "f32", cExtent),
                                  KernelArg::fromI32(7), KernelArg::fromF32(1.5f)};
  };
  std::string error;
  auto ok = args(1 << 20);
  EXPECT_TRUE(checkLaunch(k, {3, 2, 1}, ok.data(), ok.size(), &error)) << error;

  EXPECT_FALSE(checkLaunch(k, {1, 1, 1}, ok.data(), 3, &error));
  EXPECT_EQ(error, "kernel 'gemm' takes 4 arguments, got 3");

  auto wrongKind = ok;
  wrongKind[2] = KernelArg::fromI64(7);
  EXPECT_FALSE(checkLaunch(k, {1, 1, 1}, wrongKind.data(), wrongKind.size(), &error));
  EXPECT_EQ(error, "argument 2 ('M') of 'gemm' must be i32, got i64");

  auto wrongType = ok;
  wrongType[0] = KernelArg::ptr(data, "f16");
  EXPECT_FALSE(checkLaunch(k, {1, 1, 1}, wrongType.data(), wrongType.size(), &error));
  EXPECT_EQ(error, "argument 0 ('a') of 'gemm' points to bf16, got a buffer of f16");

  // `c` was compiled for tensors under 2 GiB: 2^31 - 1 bytes pass, 2^31 do not.
  auto largest = args((uint64_t(1) << 31) - 1), tooLarge = args(uint64_t(1) << 31);
  EXPECT_TRUE(checkLaunch(k, {1, 1, 1}, largest.data(), largest.size(), &error)) << error;
  EXPECT_FALSE(checkLaunch(k, {1, 1, 1}, tooLarge.data(), tooLarge.size(), &error));
  EXPECT_EQ(error, "argument 1 ('c') of 'gemm' was compiled for tensors under 2 GiB, got 2147483648 bytes");

  EXPECT_FALSE(checkLaunch(k, {1, 0, 1}, ok.data(), ok.size(), &error));
  EXPECT_EQ(error, "grid dimension y must be in [1, 65535], got 0");
  EXPECT_FALSE(checkLaunch(k, {1u << 31, 1, 1}, ok.data(), ok.size(), &error));
  EXPECT_EQ(error, "grid dimension x must be in [1, 2^31), got 2147483648");
  EXPECT_TRUE(checkLaunch(k, {(1u << 31) - 1, 65535, 65535}, ok.data(), ok.size(), &error)) << error;
  EXPECT_FALSE(checkLaunch(k, {1, 1, 65536}, ok.data(), ok.size(), &error));
  EXPECT_EQ(error, "grid dimension z must be in [1, 65535], got 65536");
}

TEST(Targets, FromTheDeviceArchitecture) {
  unsetenv("WAVETILE_TARGET");
  std::string target, error;
  EXPECT_TRUE(targetForDevice(Backend::CUDA, "NVIDIA H200", "9.0", &target, &error)) << error;
  EXPECT_EQ(target, "sm_90a");
  EXPECT_TRUE(targetForDevice(Backend::HIP, "AMD Instinct MI300X", "gfx942:sramecc+:xnack-", &target, &error));
  EXPECT_EQ(target, "gfx942");
  EXPECT_TRUE(targetForDevice(Backend::HIP, "AMD Instinct MI355X", "gfx950", &target, &error));
  EXPECT_EQ(target, "gfx950");

  EXPECT_FALSE(targetForDevice(Backend::CUDA, "NVIDIA A100", "8.0", &target, &error));
  EXPECT_EQ(error, "unsupported CUDA device 'NVIDIA A100' (compute capability 8.0); Wavetile targets gfx942, "
                   "gfx950, sm_90, sm_90a (set WAVETILE_TARGET to choose one explicitly)");
  EXPECT_FALSE(targetForDevice(Backend::HIP, "Radeon", "gfx1100", &target, &error));
  EXPECT_NE(error.find("unsupported HIP device 'Radeon' (gfx1100)"), std::string::npos);
  // A CUDA device never maps to an AMD target, even one whose name it could spell.
  EXPECT_FALSE(targetForDevice(Backend::CUDA, "odd", "gfx942", &target, &error));
}

TEST(Targets, WavetileTargetOverridesButMustFitTheVendor) {
  std::string target, error;
  {
    ScopedTarget forced("sm_90");
    EXPECT_TRUE(targetForDevice(Backend::CUDA, "NVIDIA H200", "9.0", &target, &error)) << error;
    EXPECT_EQ(target, "sm_90");
  }
  {
    ScopedTarget forced("gfx942");
    EXPECT_FALSE(targetForDevice(Backend::CUDA, "NVIDIA H200", "9.0", &target, &error));
    EXPECT_EQ(error, "WAVETILE_TARGET='gfx942' cannot run on CUDA device 'NVIDIA H200' (compute capability 9.0)");
  }
  {
    ScopedTarget forced("sm_100");
    EXPECT_FALSE(targetForDevice(Backend::CUDA, "NVIDIA H200", "9.0", &target, &error));
    EXPECT_EQ(error, "WAVETILE_TARGET='sm_100' is not a target; known targets: gfx942, gfx950, sm_90, sm_90a");
  }
}

TEST(Devices, AMissingDriverLibraryIsAClearError) {
  // Only meaningful where the driver library is absent (CI, build machines).
  if (void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(cuda);
    GTEST_SKIP() << "libcuda.so.1 is present";
  }
  std::string error;
  EXPECT_EQ(Device::open(Backend::CUDA, 0, &error), nullptr);
  EXPECT_EQ(error.rfind("CUDA: cannot load libcuda.so.1 (", 0), 0u) << error;
  // The C API says the same through wt_last_error, for every backend it tried.
  EXPECT_EQ(wt_device_open(WT_BACKEND_CUDA, 0), nullptr);
  EXPECT_EQ(std::string(wt_last_error()).rfind("CUDA: cannot load libcuda.so.1", 0), 0u);
  if (void *hip = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(hip);
    return;
  }
  EXPECT_EQ(wt_device_open(WT_BACKEND_ANY, 0), nullptr);
  std::string any = wt_last_error();
  EXPECT_EQ(any.rfind("no GPU device: CUDA: cannot load libcuda.so.1", 0), 0u) << any;
  EXPECT_NE(any.find("; HIP: cannot load libamdhip64.so"), std::string::npos) << any;
  EXPECT_EQ(wt_device_open(7, 0), nullptr);
  EXPECT_STREQ(wt_last_error(), "unknown backend 7");
}
