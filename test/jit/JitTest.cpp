//===- JitTest.cpp - cache keys and the in-memory LRU of the JIT ----------===//

#include "Examples.h"

#include "wavetile/Jit.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace wavetile;

namespace {

std::unique_ptr<Module> example(const char *name) {
  std::string error;
  auto module = examples::findExample(name)->build(&error);
  EXPECT_TRUE(module) << error;
  return module;
}

class JitTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/wavetile-jit-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  JitOptions options(std::string target, std::string version = "test-compiler 1") {
    JitOptions o;
    o.target = std::move(target);
    o.cacheDirectory = dir;
    o.compilerVersion = std::move(version);
    return o;
  }
  Jit::Source compileSource(Jit &jit, const Module &module) {
    std::string error;
    auto result = jit.compile(module, &error);
    EXPECT_TRUE(result) << error;
    return result ? result->source : Jit::Source::Compiled;
  }
  std::string dir;
};

} // namespace

TEST_F(JitTest, MemoryThenDiskThenACompilerVersionChangeMisses) {
  auto gemm = example("gemm");
  Jit jit(options("gfx942"));
  std::string error;
  auto first = jit.compile(*gemm, &error);
  ASSERT_TRUE(first) << error;
  EXPECT_EQ(first->source, Jit::Source::Compiled);
  EXPECT_EQ(first->binary->manifest.target, "gfx942");
  ASSERT_EQ(first->binary->manifest.kernels.size(), 1u);
  EXPECT_EQ(first->binary->manifest.kernels[0].block[0], 256u);
  auto again = jit.compile(*gemm, &error);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->source, Jit::Source::Memory);
  EXPECT_EQ(again->binary, first->binary) << "the same object, not a copy";

  Jit otherProcess(options("gfx942")); // a fresh JIT shares only the disk
  auto fromDisk = otherProcess.compile(*gemm, &error);
  ASSERT_TRUE(fromDisk);
  EXPECT_EQ(fromDisk->source, Jit::Source::Disk);
  EXPECT_EQ(fromDisk->binary->image, first->binary->image);
  EXPECT_EQ(fromDisk->key, first->key);

  Jit newerCompiler(options("gfx942", "test-compiler 2"));
  auto rebuilt = newerCompiler.compile(*gemm, &error);
  ASSERT_TRUE(rebuilt);
  EXPECT_EQ(rebuilt->source, Jit::Source::Compiled);
  EXPECT_NE(rebuilt->key, first->key);

  Jit otherTarget(options("gfx950"));
  EXPECT_EQ(compileSource(otherTarget, *gemm), Jit::Source::Compiled);
}

TEST_F(JitTest, TheMemoryCacheKeepsTheMostRecentlyUsed) {
  JitOptions o = options("sm_90");
  o.cacheDirectory.reset(); // memory only: every miss compiles
  o.memoryEntries = 2;
  Jit jit(o);
  auto a = example("vector_add"), b = example("softmax"), c = example("cumsum");
  EXPECT_EQ(compileSource(jit, *a), Jit::Source::Compiled);
  EXPECT_EQ(compileSource(jit, *b), Jit::Source::Compiled);
  EXPECT_EQ(compileSource(jit, *a), Jit::Source::Memory); // a is now the most recent
  EXPECT_EQ(compileSource(jit, *c), Jit::Source::Compiled); // evicts b
  EXPECT_EQ(compileSource(jit, *a), Jit::Source::Memory);
  EXPECT_EQ(compileSource(jit, *b), Jit::Source::Compiled);
}

TEST_F(JitTest, ErrorsNameTheProblem) {
  Jit unknown(options("gfx1100"));
  std::string error;
  EXPECT_FALSE(unknown.compile(*example("gemm"), &error));
  EXPECT_EQ(error, "unknown target 'gfx1100'; known targets: host, gfx942, gfx950, sm_90, sm_90a (emulate:<target> "
                   "for emulated devices)");
  Jit emulatedUnknown(options("emulate:gfx1100"));
  EXPECT_FALSE(emulatedUnknown.compile(*example("gemm"), &error));
  EXPECT_NE(error.find("unknown target 'emulate:gfx1100'"), std::string::npos) << error;
  // An emulated target's code object is the per-thread IR, its manifest for that target.
  Jit emulated(options("emulate:gfx942"));
  auto compiled = emulated.compile(*example("gemm"), &error);
  ASSERT_TRUE(compiled) << error;
  EXPECT_EQ(compiled->binary->manifest.target, "emulate:gfx942");
  EXPECT_NE(compiled->binary->image.find("rocdl.mfma"), std::string::npos);
  // A kernel over sm_90's shared-memory limit per block (227 KiB) fails to compile.
  std::string text = R"(
func.func @big(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %s = tile.shared_alloc : !tile.shared<65536xf32>
  %z = tile.arange 0 to 128 : tensor<128xi32>
  %v = tile.load %p[%z] : !tile.ptr<f32>[tensor<128xi32>] -> tensor<128xf32>
  tile.store %v, %p[%z] : tensor<128xf32>, !tile.ptr<f32>[tensor<128xi32>]
  return
})";
  auto module = Module::parse(text, "big.mlir", &error);
  ASSERT_TRUE(module) << error;
  Jit jit(options("sm_90"));
  error.clear();
  EXPECT_FALSE(jit.compile(*module, &error));
  EXPECT_NE(error.find("shared memory"), std::string::npos) << error;
}
