//===- HostDeviceTest.cpp - host code objects through the runtime ---------===//
//
// The third backend of the device interface: every example compiled by the JIT into a
// shared object for this CPU, loaded by the runtime's host device, launched through the
// same Kernel::launch the GPU backends use, and checked against its reference.
//
//===----------------------------------------------------------------------===//

#include "Examples.h"

#include "wavetile/Jit.h"
#include "wavetile/runtime/Device.h"
#include "wavetile/runtime/wavetile_runtime.h"

#include <gtest/gtest.h>

#include <random>

using namespace wavetile;
using namespace wavetile::examples;

namespace {

class HostDeviceTest : public ::testing::TestWithParam<std::string> {};

std::string exampleName(const ::testing::TestParamInfo<std::string> &info) { return info.param; }

std::vector<std::string> exampleNames() {
  std::vector<std::string> names;
  for (const Example &e : allExamples())
    names.push_back(e.name);
  return names;
}

} // namespace

TEST_P(HostDeviceTest, MatchesTheReference) {
  const Example &example = *findExample(GetParam());
  std::string error;
  auto module = example.build(&error);
  ASSERT_TRUE(module) << error;
  JitOptions options;
  options.target = "host";
  Jit jit(options); // memory only
  auto compiled = jit.compile(*module, &error);
  ASSERT_TRUE(compiled) << error;
  EXPECT_EQ(compiled->binary->manifest.target, "host");
  EXPECT_EQ(compiled->binary->image.substr(0, 4), "\x7f" "ELF");

  auto device = Device::open(Backend::Host, 0, &error);
  ASSERT_TRUE(device) << error;
  EXPECT_EQ(device->target(), "host");
  auto loaded = device->load(compiled->binary->image, compiled->binary->manifest, &error);
  ASSERT_TRUE(loaded) << error;
  const LoadedModule::Kernel *kernel = loaded->kernel(example.name, &error);
  ASSERT_TRUE(kernel) << error;

  uint64_t seed = std::random_device{}();
  for (const auto &shape : example.testShapes) {
    LaunchPlan plan = example.prepare(shape, seed);
    auto args = argumentsOf(plan, &error);
    ASSERT_TRUE(args) << error;
    ASSERT_TRUE(kernel->launch(plan.grid, args->data(), args->size(), nullptr, &error)) << error;
    CheckReport report = example.verify(plan);
    EXPECT_TRUE(report.passed) << example.name << " seed " << seed << ": " << report.summary;
  }
}

INSTANTIATE_TEST_SUITE_P(Host, HostDeviceTest, ::testing::ValuesIn(exampleNames()), exampleName);

TEST(HostDevice, MemoryEventsAndErrors) {
  std::string error;
  auto device = Device::open(Backend::Host, 0, &error);
  ASSERT_TRUE(device) << error;
  EXPECT_FALSE(Device::open(Backend::Host, 1, &error));
  EXPECT_EQ(error, "host: no device 1 (1 present)");
  void *p = device->allocate(1000, &error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  int values[3] = {1, 2, 3}, back[3] = {};
  ASSERT_TRUE(device->copyToDevice(p, values, sizeof values, &error));
  ASSERT_TRUE(device->copyToHost(back, p, sizeof back, &error));
  EXPECT_EQ(back[2], 3);
  EXPECT_TRUE(device->release(p, &error));
  void *start = device->createEvent(&error), *end = device->createEvent(&error);
  ASSERT_TRUE(start && end);
  ASSERT_TRUE(device->recordEvent(start, nullptr, &error));
  ASSERT_TRUE(device->recordEvent(end, nullptr, &error));
  float ms = -1;
  ASSERT_TRUE(device->elapsedMilliseconds(start, end, &ms, &error));
  EXPECT_GE(ms, 0.f);
  device->destroyEvent(start, &error);
  device->destroyEvent(end, &error);

  // A code object that is not a shared object, and a manifest for another target.
  ModuleManifest manifest;
  manifest.target = "host";
  EXPECT_FALSE(device->load("not an ELF image at all, just text", manifest, &error));
  EXPECT_EQ(error, "loading the code object failed: the host code object is not a 64-bit ELF shared object");
  manifest.target = "sm_90";
  EXPECT_FALSE(device->load("x", manifest, &error));
  EXPECT_EQ(error, "code object for sm_90 cannot load on host CPU (target host)");
}

TEST(HostDevice, ManyCodeObjectsLoadSideBySide) {
  std::string error;
  auto device = Device::open(Backend::Host, 0, &error);
  ASSERT_TRUE(device) << error;
  JitOptions options;
  options.target = "host";
  Jit jit(options);
  std::vector<std::unique_ptr<LoadedModule>> loaded;
  for (int round = 0; round < 2; ++round) // the second round loads again after unloading
    for (const char *name : {"vector_add", "cumsum", "softmax"}) {
      auto module = findExample(name)->build(&error);
      ASSERT_TRUE(module) << error;
      auto compiled = jit.compile(*module, &error);
      ASSERT_TRUE(compiled) << error;
      loaded.push_back(device->load(compiled->binary->image, compiled->binary->manifest, &error));
      ASSERT_TRUE(loaded.back()) << error;
      EXPECT_TRUE(loaded.back()->kernel(name, &error)) << name << ": " << error;
      if (round == 1)
        loaded.erase(loaded.begin());
    }
}

TEST(HostDevice, TheCApiRunsAKernelEndToEnd) {
  std::string error;
  auto module = findExample("vector_add")->build(&error);
  ASSERT_TRUE(module) << error;
  JitOptions options;
  options.target = "host";
  auto compiled = Jit(options).compile(*module, &error);
  ASSERT_TRUE(compiled) << error;
  std::string manifest = printManifest(compiled->binary->manifest);

  wt_device *device = wt_device_open(WT_BACKEND_HOST, 0);
  ASSERT_TRUE(device) << wt_last_error();
  EXPECT_STREQ(wt_device_target(device), "host");
  const std::string &image = compiled->binary->image;
  wt_module *loaded = wt_module_load(device, image.data(), image.size(), manifest.c_str());
  ASSERT_TRUE(loaded) << wt_last_error();
  const wt_kernel *kernel = wt_module_kernel(loaded, "vector_add");
  ASSERT_TRUE(kernel) << wt_last_error();
  EXPECT_EQ(wt_module_kernel(loaded, "nope"), nullptr);
  EXPECT_STREQ(wt_last_error(), "no kernel named 'nope' in this module");

  const int n = 3001;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  std::mt19937 rng(std::random_device{}());
  std::normal_distribution<float> normal;
  for (int i = 0; i < n; ++i)
    x[i] = normal(rng), y[i] = normal(rng);
  size_t bytes = n * sizeof(float);
  void *dx = wt_malloc(device, bytes), *dy = wt_malloc(device, bytes), *dout = wt_malloc(device, bytes);
  ASSERT_TRUE(dx && dy && dout) << wt_last_error();
  ASSERT_EQ(wt_copy_to_device(device, dx, x.data(), bytes), 0);
  ASSERT_EQ(wt_copy_to_device(device, dy, y.data(), bytes), 0);
  wt_arg args[4] = {};
  void *pointers[3] = {dx, dy, dout};
  for (int i = 0; i < 3; ++i) {
    args[i].kind = WT_ARG_POINTER;
    args[i].value.pointer = pointers[i];
    args[i].extent_bytes = bytes;
  }
  args[3].kind = WT_ARG_I32;
  args[3].value.i32 = n;
  ASSERT_EQ(wt_kernel_launch(kernel, (n + 1023) / 1024, 1, 1, args, 4, nullptr), 0) << wt_last_error();
  ASSERT_EQ(wt_synchronize(device), 0);
  ASSERT_EQ(wt_copy_to_host(device, out.data(), dout, bytes), 0);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[i], x[i] + y[i]) << "element " << i;

  // Launch checks come back through wt_last_error.
  args[3].kind = WT_ARG_F32;
  EXPECT_NE(wt_kernel_launch(kernel, 1, 1, 1, args, 4, nullptr), 0);
  EXPECT_STREQ(wt_last_error(), "argument 3 ('n') of 'vector_add' must be i32, got f32");
  args[3].kind = 42;
  EXPECT_NE(wt_kernel_launch(kernel, 1, 1, 1, args, 4, nullptr), 0);
  EXPECT_STREQ(wt_last_error(), "argument 3 has unknown kind 42");
  args[3].kind = WT_ARG_I32;
  args[0].extent_bytes = uint64_t(1) << 31; // x was compiled for tensors under 2 GiB
  EXPECT_NE(wt_kernel_launch(kernel, 1, 1, 1, args, 4, nullptr), 0);
  EXPECT_STREQ(wt_last_error(), "argument 0 ('x') of 'vector_add' was compiled for tensors under 2 GiB, got "
                                "2147483648 bytes");
  EXPECT_EQ(wt_module_load(device, image.data(), image.size(), "wavetile-manifest 1\n"), nullptr);
  EXPECT_STREQ(wt_last_error(), "manifest line 1: no target line");

  for (void *p : pointers)
    EXPECT_EQ(wt_free(device, p), 0);
  wt_module_unload(loaded);
  wt_device_close(device);
}
