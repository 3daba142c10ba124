//===- ExamplesTest.cpp - the examples on the host, and that their checks bite ----===//

#include "Examples.h"

#include <gtest/gtest.h>

#include <random>

using namespace wavetile;
using namespace wavetile::examples;

namespace {

/// Fresh inputs every run; the seed is printed so a failure can be replayed.
uint64_t freshSeed() {
  uint64_t seed = std::random_device{}();
  std::printf("seed %llu\n", (unsigned long long)seed);
  return seed;
}

class ExampleTest : public ::testing::TestWithParam<std::string> {
protected:
  /// Builds the example, compiles it for the host with `pipelining`, and checks every test
  /// shape against the reference.
  void checkAllShapes(LoopPipelining pipelining) {
    const Example *example = findExample(GetParam());
    ASSERT_NE(example, nullptr);
    std::string error;
    auto module = example->build(&error);
    ASSERT_TRUE(module) << error;
    auto exe = HostExecutable::compile(*module, &error, pipelining);
    ASSERT_TRUE(exe) << error;
    uint64_t seed = freshSeed();
    for (const auto &shape : example->testShapes) {
      CheckReport report = checkOnHost(*example, *exe, shape, seed);
      EXPECT_TRUE(report.passed) << example->name << " shape[0]=" << shape[0] << ": " << report.summary;
    }
  }
};

// K loops pipelined as on NVIDIA (async copies into a shared ring).
TEST_P(ExampleTest, MatchesReferenceOnOddShapes) { checkAllShapes(LoopPipelining::AsyncCopies); }

// The same checks on the program as CDNA gets it: K loops pipelined through registers.
TEST_P(ExampleTest, MatchesReferenceWithRegisterStagedLoops) { checkAllShapes(LoopPipelining::Registers); }

INSTANTIATE_TEST_SUITE_P(Host, ExampleTest, ::testing::Values("vector_add", "softmax", "rmsnorm", "cumsum", "gemm", "gemm_pipelined",
                                           "gemm_fp8"),
                         [](const auto &info) { return info.param; });

/// Compiles an example after replacing `from` with `to` in its tile IR.
std::unique_ptr<HostExecutable> mutated(const Example &example, const std::string &from, const std::string &to) {
  std::string error;
  auto module = example.build(&error);
  EXPECT_TRUE(module) << error;
  std::string text = module->str();
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "mutation site '" << from << "' not found";
  if (at == std::string::npos)
    return nullptr;
  text.replace(at, from.size(), to);
  auto broken = Module::parse(text, "mutated", &error);
  EXPECT_TRUE(broken) << error;
  auto exe = broken ? HostExecutable::compile(*broken, &error) : nullptr;
  EXPECT_TRUE(exe) << error;
  return exe;
}

struct Mutation {
  std::string example, from, to;
};
void PrintTo(const Mutation &m, std::ostream *os) { *os << m.example << ": " << m.from << " -> " << m.to; }

class MutationTest : public ::testing::TestWithParam<Mutation> {};

// Each check must reject a kernel with a small, realistic bug.
TEST_P(MutationTest, CheckRejectsBrokenKernel) {
  const Mutation &m = GetParam();
  const Example *example = findExample(m.example);
  ASSERT_NE(example, nullptr);
  auto exe = mutated(*example, m.from, m.to);
  ASSERT_TRUE(exe);
  bool anyFailed = false;
  uint64_t seed = freshSeed();
  for (const auto &shape : example->testShapes)
    anyFailed |= !checkOnHost(*example, *exe, shape, seed).passed;
  EXPECT_TRUE(anyFailed) << m.example << " check accepted a kernel with '" << m.from << "' -> '" << m.to << "'";
}

INSTANTIATE_TEST_SUITE_P(
    Host, MutationTest,
    ::testing::Values(Mutation{"vector_add", "arith.addf", "arith.subf"},
                      Mutation{"vector_add", "arith.cmpi slt", "arith.cmpi sle"}, // writes one past the end
                      Mutation{"softmax", "math.exp", "math.exp2"},
                      Mutation{"rmsnorm", "math.rsqrt", "math.sqrt"},
                      Mutation{"cumsum", "arith.cmpi slt", "arith.cmpi sgt"}, // load mask inverted
                      Mutation{"gemm", "arith.muli", "arith.addi"}, // wrong tile origin
                      Mutation{"gemm_fp8", "arith.cmpi slt", "arith.cmpi sgt"}), // A's K mask inverted
    [](const auto &info) { return info.param.example + "_" + std::to_string(info.index); });

} // namespace
