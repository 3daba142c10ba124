//===- Examples.h - example kernels with host checks ------------*- C++ -*-===//
//
// Each example is a kernel written in the C++ DSL plus a check that runs it on the host
// against an independent reference: fresh random inputs, outputs poisoned before the run,
// strict tolerances. The `wavetile` CLI and the numerics tests both use them.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_EXAMPLES_EXAMPLES_H
#define WAVETILE_EXAMPLES_EXAMPLES_H

#include "wavetile/Compiler.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace wavetile::examples {

struct CheckReport {
  bool passed = false;
  std::string summary;      // "max rel err 3.1e-07 (limit 1e-05) over 4096 elements"
  double runSeconds = 0;    // host execution of the grid
};

struct Example {
  std::string name;
  std::string summary;
  std::vector<std::string> dims;                  // names of the shape parameters ("M", "N", ...)
  std::vector<std::vector<int64_t>> testShapes;   // odd shapes with tails
  std::function<std::unique_ptr<Module>(std::string *error)> build;
  std::function<CheckReport(const HostExecutable &, const std::vector<int64_t> &shape, uint64_t seed)> check;
};

const std::vector<Example> &allExamples();
const Example *findExample(const std::string &name);

} // namespace wavetile::examples

#endif
