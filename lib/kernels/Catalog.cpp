//===- Catalog.cpp - library kernels by textual specialization ------------===//

#include "wavetile/ops/Catalog.h"

#include "wavetile/ops/Norms.h"

#include <charconv>

using namespace wavetile;
using namespace wavetile::ops;

const char *wavetile::ops::opCatalogHelp() {
  return "rmsnorm2d_fwd:DTYPE:N[:gemma][:t5][:a16], rmsnorm2d_fwd_with_add:DTYPE:N[:gemma][:t5][:a16] "
         "(DTYPE f32, f16 or bf16; a16: 16-byte aligned pointers and rows)";
}

std::unique_ptr<Module> wavetile::ops::buildOpKernel(std::string_view spec, std::string *error) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t colon = spec.find(':', start);
    parts.push_back(spec.substr(start, colon - start));
    if (colon == std::string_view::npos)
      break;
    start = colon + 1;
  }
  auto fail = [&](const std::string &why) -> std::unique_ptr<Module> {
    *error = "op kernel '" + std::string(spec) + "': " + why + "; known: " + opCatalogHelp();
    return nullptr;
  };
  if (parts.size() < 3)
    return fail("expected OP:DTYPE:HIDDEN[:FLAG...]");
  std::optional<DType> dtype = dsl::parseDType(parts[1]);
  if (!dtype || (*dtype != DType::f32 && *dtype != DType::f16 && *dtype != DType::bf16))
    return fail("dtype '" + std::string(parts[1]) + "' is not f32, f16 or bf16");
  int64_t hidden = 0;
  auto [end, ec] = std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), hidden);
  if (ec != std::errc() || end != parts[2].data() + parts[2].size() || hidden < 1 || hidden > INT32_MAX)
    return fail("hidden size '" + std::string(parts[2]) + "' is not an integer in [1, 2^31)");
  if (parts[0] != "rmsnorm2d_fwd" && parts[0] != "rmsnorm2d_fwd_with_add")
    return fail("no op named '" + std::string(parts[0]) + "'");
  RmsNormSpec norm{*dtype, hidden, parts[0] == "rmsnorm2d_fwd_with_add"};
  for (size_t i = 3; i < parts.size(); ++i) {
    if (parts[i] == "gemma")
      norm.gemma = true;
    else if (parts[i] == "t5")
      norm.modelSensitive = true;
    else if (parts[i] == "a16")
      norm.vectorAligned = true;
    else
      return fail("unknown flag '" + std::string(parts[i]) + "'");
  }
  return buildRmsNorm(norm, error);
}
