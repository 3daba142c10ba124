//===- Tune.cpp - wavetile tune: tuned configurations for this device -----===//

#include "wavetile/ops/GemmTuner.h"
#include "wavetile/runtime/Device.h"

#include <charconv>
#include <cstdio>
#include <map>
#include <sstream>

using namespace wavetile;
using namespace wavetile::ops;

namespace wavetile::tool {

/// wavetile tune --op gemm_a16w16|gemm_a8w8|gemm_a8w8_blockscale|gemm_a4w4 --shapes M:N:K[,...] [--dtype D]
/// [--out-dtype D]
/// [--bias] [--device host|gpu] -o TABLE.csv
int tuneCommand(const std::map<std::string, std::string> &values, bool bias) {
  auto fail = [](const std::string &message) {
    std::fprintf(stderr, "wavetile tune: %s\n", message.c_str());
    return 1;
  };
  auto value = [&](const char *name, const std::string &fallback) {
    auto it = values.find(name);
    return it == values.end() ? fallback : it->second;
  };
  const std::string op = value("--op", "");
  if (op != "gemm_a16w16" && op != "gemm_a8w8" && op != "gemm_a8w8_blockscale" && op != "gemm_a4w4")
    return fail("--op gemm_a16w16, gemm_a8w8, gemm_a8w8_blockscale or gemm_a4w4 can be tuned (got '" + op + "')");
  std::string table = value("-o", "");
  if (table.empty())
    return fail("-o TABLE.csv is needed (the op reads $WAVETILE_TUNED_DIR/<op>.csv)");
  std::vector<GemmShape> shapes;
  std::stringstream list(value("--shapes", ""));
  for (std::string item; std::getline(list, item, ',');) {
    int64_t dims[3];
    size_t start = 0;
    for (int d = 0; d < 3; ++d) {
      size_t end = d < 2 ? item.find(':', start) : item.size();
      auto [ptr, ec] = std::from_chars(item.data() + start, item.data() + std::min(end, item.size()), dims[d]);
      if (end == std::string::npos || ec != std::errc() || ptr != item.data() + std::min(end, item.size()) ||
          dims[d] < 1)
        return fail("shape '" + item + "' is not M:N:K with positive integers");
      start = end + 1;
    }
    shapes.push_back({dims[0], dims[1], dims[2]});
  }
  if (shapes.empty())
    return fail("--shapes M:N:K[,M:N:K...] is needed");
  GemmTuneOptions options;
  options.op = op;
  options.bias = bias;
  for (auto [flag, field] : {std::pair{"--dtype", &options.input}, std::pair{"--out-dtype", &options.output}}) {
    // Defaults: bf16 (the gemm_a8w8 ops: f8E4M3FN; gemm_a4w4: f4E2M1FN) in; out bf16, or the
    // input's dtype for gemm_a16w16.
    const std::string input = value("--dtype", op == "gemm_a16w16" ? "bf16"
                                               : op == "gemm_a4w4" ? "f4E2M1FN"
                                                                   : "f8E4M3FN");
    std::string name = flag == std::string("--dtype") ? input : value(flag, op == "gemm_a16w16" ? input : "bf16");
    std::optional<DType> dtype = dsl::parseDType(name);
    if (!dtype)
      return fail(std::string(flag) + " '" + name + "' is not a dtype");
    *field = *dtype;
  }
  std::string error;
  std::unique_ptr<Device> device = value("--device", "gpu") == "host" ? Device::open(Backend::Host, 0, &error)
                                                                        : Device::openAny(0, &error);
  if (!device)
    return fail(error);
  std::unique_ptr<OpRuntime> rt = OpRuntime::create(*device, &error);
  if (!rt)
    return fail(error);
  std::vector<GemmTuneResult> results;
  if (!tuneGemm(*rt, shapes, options, &results, &error))
    return fail(error);
  std::printf("%-20s %-34s %10s %6s %6s %6s %9s\n", "M:N:K", "best (tile/stages/warps/split)", "us", "tried", "wrong",
              "failed", "compile_s");
  for (const GemmTuneResult &r : results) {
    std::string shape = std::to_string(r.shape.m) + ":" + std::to_string(r.shape.n) + ":" + std::to_string(r.shape.k);
    std::printf("%-20s %-34s %10.2f %6d %6d %6d %9.1f\n", shape.c_str(), r.best ? r.best->key().c_str() : "(none)",
                r.microseconds, r.tried, r.wrong, r.failed, r.compileSeconds);
    if (!r.best)
      std::printf("  every candidate was dropped; the first: %s\n", r.firstFailure.c_str());
  }
  if (!writeGemmTable(table, *rt, options, results, &error))
    return fail(error);
  std::printf("wrote %s (%s, %d multiprocessors)\n", table.c_str(), device->target().c_str(),
              device->multiprocessors());
  return 0;
}

} // namespace wavetile::tool
