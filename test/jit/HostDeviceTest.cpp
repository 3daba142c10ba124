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
  const GpuModule::Kernel *kernel = loaded->kernel(example.name, &error);
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
  std::vector<std::unique_ptr<GpuModule>> loaded;
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
