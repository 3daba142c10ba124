//===- Examples.h - example kernels with reference checks -------*- C++ -*-===//
//
// Each example is a kernel written in the C++ DSL plus a checked launch: `prepare` makes a
// launch plan with fresh random inputs and poisoned outputs, something runs it (the host
// JIT here, a GPU elsewhere), and `verify` compares the outputs with an independent
// reference under strict tolerances. The `wavetile` CLI and the numerics tests use them;
// `saveLaunch` writes a plan (with the host's or the emulator's outputs) for runs on other
// machines.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_EXAMPLES_EXAMPLES_H
#define WAVETILE_EXAMPLES_EXAMPLES_H

#include "wavetile/Compiler.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wavetile::examples {

/// One kernel argument of a launch: a buffer (bytes in host memory) or a scalar.
struct LaunchArg {
  std::string name;
  ArgKind kind;
  std::string elementType;   // buffers: "f32", "bf16", ...; scalars: their type
  std::vector<uint8_t> data; // buffers only
  bool isOutput = false;
  int32_t i32 = 0;
  float f32 = 0;

  template <typename T> T *as() { return reinterpret_cast<T *>(data.data()); }
  template <typename T> const T *as() const { return reinterpret_cast<const T *>(data.data()); }
  template <typename T> size_t count() const { return data.size() / sizeof(T); }
};

struct LaunchPlan {
  std::string kernel;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::vector<LaunchArg> args;
  std::vector<int64_t> shape;
  uint64_t seed = 0;
  /// How a different machine's outputs may differ from this plan's host outputs:
  /// |x - host| <= atol + rtol * |host| per element (0/0 means bit-exact).
  double rtol = 0, atol = 0;

  LaunchArg &arg(const std::string &name);
  const LaunchArg &arg(const std::string &name) const;
};

struct CheckReport {
  bool passed = false;
  std::string summary;   // "max rel err 3.1e-07 (limit 1e-05) over 4096 elements"
  double runSeconds = 0; // execution of the whole grid
};

struct Example {
  std::string name;
  std::string summary;
  std::vector<std::string> dims;                // names of the shape parameters ("M", "N", ...)
  std::vector<std::vector<int64_t>> testShapes; // odd shapes with tails
  std::function<std::unique_ptr<Module>(std::string *error)> build;
  std::function<LaunchPlan(const std::vector<int64_t> &shape, uint64_t seed)> prepare;
  std::function<CheckReport(const LaunchPlan &plan)> verify;
};

const std::vector<Example> &allExamples();
const Example *findExample(const std::string &name);

/// The plan's arguments for a launch on host memory (its buffers, in place).
std::optional<std::vector<KernelArg>> argumentsOf(LaunchPlan &plan, std::string *error);
/// Runs a plan on the host executable (filling its outputs), timing it.
bool runOnHost(const HostExecutable &exe, LaunchPlan &plan, CheckReport &report);
/// prepare + runOnHost + verify.
CheckReport checkOnHost(const Example &example, const HostExecutable &exe, const std::vector<int64_t> &shape,
                        uint64_t seed);
/// Writes `plan` (as run on the host) to DIR/<kernel>.json, one DIR/<kernel>.<arg>.bin per
/// buffer holding its contents before the run, and DIR/<kernel>.<arg>.host.bin with the host's
/// result for each output.
bool saveLaunch(const LaunchPlan &before, const LaunchPlan &after, const std::string &dir, std::string *error,
                const std::string &reference = "host");

} // namespace wavetile::examples

#endif
