//===- Kernel.cpp - launch checks and the manifest text format ------------===//

#include "wavetile/runtime/Kernel.h"

#include <cctype>
#include <charconv>
#include <climits>

using namespace wavetile;

const char *wavetile::argKindName(ArgKind kind) {
  switch (kind) {
  case ArgKind::Pointer:
    return "pointer";
  case ArgKind::I32:
    return "i32";
  case ArgKind::I64:
    return "i64";
  case ArgKind::F32:
    return "f32";
  case ArgKind::F64:
    return "f64";
  }
  return "?";
}

static bool argKindFromName(std::string_view name, ArgKind *kind) {
  for (ArgKind k : {ArgKind::Pointer, ArgKind::I32, ArgKind::I64, ArgKind::F32, ArgKind::F64})
    if (name == argKindName(k)) {
      *kind = k;
      return true;
    }
  return false;
}

KernelArg KernelArg::ptr(void *p, std::string elementType, uint64_t extentBytes) {
  KernelArg a{ArgKind::Pointer, {}, std::move(elementType), extentBytes};
  a.pointer = p;
  return a;
}
KernelArg KernelArg::fromI32(int32_t v) {
  KernelArg a{ArgKind::I32, {}, {}};
  a.i32 = v;
  return a;
}
KernelArg KernelArg::fromI64(int64_t v) {
  KernelArg a{ArgKind::I64, {}, {}};
  a.i64 = v;
  return a;
}
KernelArg KernelArg::fromF32(float v) {
  KernelArg a{ArgKind::F32, {}, {}};
  a.f32 = v;
  return a;
}
KernelArg KernelArg::fromF64(double v) {
  KernelArg a{ArgKind::F64, {}, {}};
  a.f64 = v;
  return a;
}

bool wavetile::checkLaunch(const KernelSignature &kernel, std::array<uint32_t, 3> grid, const KernelArg *args,
                           size_t count, std::string *error) {
  auto fail = [&](std::string message) {
    if (error)
      *error = std::move(message);
    return false;
  };
  if (count != kernel.params.size())
    return fail("kernel '" + kernel.name + "' takes " + std::to_string(kernel.params.size()) + " arguments, got " +
                std::to_string(count));
  for (size_t i = 0; i < count; ++i) {
    const KernelParam &param = kernel.params[i];
    auto where = [&] { return "argument " + std::to_string(i) + " ('" + param.name + "') of '" + kernel.name + "'"; };
    if (args[i].kind != param.kind)
      return fail(where() + " must be " + argKindName(param.kind) + ", got " + argKindName(args[i].kind));
    if (param.kind != ArgKind::Pointer)
      continue;
    if (!args[i].elementType.empty() && args[i].elementType != param.elementType)
      return fail(where() + " points to " + param.elementType + ", got a buffer of " + args[i].elementType);
    if (param.within2GiB && args[i].extentBytes >= (uint64_t(1) << 31))
      return fail(where() + " was compiled for tensors under 2 GiB, got " + std::to_string(args[i].extentBytes) +
                  " bytes");
  }
  // CUDA's limits, which HIP's contain: every backend refuses what a GPU would.
  if (grid[0] == 0 || grid[0] > uint32_t(INT32_MAX))
    return fail("grid dimension x must be in [1, 2^31), got " + std::to_string(grid[0]));
  for (int axis : {1, 2})
    if (grid[axis] == 0 || grid[axis] > kMaxGridYZ)
      return fail(std::string("grid dimension ") + "xyz"[axis] + " must be in [1, 65535], got " +
                  std::to_string(grid[axis]));
  return true;
}

//===----------------------------------------------------------------------===//
// Manifest text. One directive per line, fields separated by single spaces:
//   wavetile-manifest 1
//   target <name>
//   kernel <name>
//   block <x> <y> <z>
//   shared <bytes>
//   dynamic-shared <bytes>        (only when nonzero)
//   grid-arguments <n>
//   param <name> <kind> <element type> [within-2gib]
//   end
//===----------------------------------------------------------------------===//

static constexpr std::string_view kManifestHeader = "wavetile-manifest 1";

const KernelManifest *ModuleManifest::find(std::string_view name) const {
  for (const KernelManifest &k : kernels)
    if (k.signature.name == name)
      return &k;
  return nullptr;
}

static constexpr std::string_view kEmulatedPrefix = "emulate:";

std::string_view wavetile::emulatedGpuTarget(std::string_view target) {
  return target.starts_with(kEmulatedPrefix) ? target.substr(kEmulatedPrefix.size()) : std::string_view();
}

std::string wavetile::emulatedTargetName(std::string_view gpuTarget) {
  return std::string(kEmulatedPrefix) + std::string(gpuTarget);
}

std::string wavetile::printManifest(const ModuleManifest &manifest) {
  std::string out = std::string(kManifestHeader) + "\ntarget " + manifest.target + "\n";
  for (const KernelManifest &k : manifest.kernels) {
    out += "kernel " + k.signature.name + "\n";
    out += "block " + std::to_string(k.block[0]) + " " + std::to_string(k.block[1]) + " " +
           std::to_string(k.block[2]) + "\n";
    out += "shared " + std::to_string(k.sharedBytes) + "\n";
    if (k.dynamicSharedBytes)
      out += "dynamic-shared " + std::to_string(k.dynamicSharedBytes) + "\n";
    out += "grid-arguments " + std::to_string(k.gridArguments) + "\n";
    for (const KernelParam &p : k.signature.params)
      out += "param " + p.name + " " + argKindName(p.kind) + " " + p.elementType + (p.within2GiB ? " within-2gib" : "") +
             "\n";
    out += "end\n";
  }
  return out;
}

namespace {
std::vector<std::string_view> splitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (start <= line.size()) {
    size_t end = line.find(' ', start);
    if (end == std::string_view::npos)
      end = line.size();
    fields.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  return fields;
}

bool parseUnsigned(std::string_view text, uint32_t *value) {
  if (text.empty())
    return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

bool validName(std::string_view name) {
  if (name.empty())
    return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$'))
      return false;
  return true;
}
} // namespace

bool wavetile::parseManifest(std::string_view text, ModuleManifest *manifest, std::string *error) {
  ModuleManifest result;
  KernelManifest *open = nullptr; // the kernel between `kernel` and `end`
  size_t lineNumber = 0;
  auto fail = [&](const std::string &message) {
    if (error)
      *error = "manifest line " + std::to_string(lineNumber) + ": " + message;
    return false;
  };
  bool sawHeader = false, sawTarget = false;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    if (newline == std::string_view::npos)
      return fail("the manifest is truncated (no newline after the last line)");
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline + 1);
    ++lineNumber;
    if (!sawHeader) {
      if (line != kManifestHeader)
        return fail("expected '" + std::string(kManifestHeader) + "', got '" + std::string(line) + "'");
      sawHeader = true;
      continue;
    }
    std::vector<std::string_view> f = splitFields(line);
    std::string_view directive = f[0];
    // Targets are names, or "emulate:<name>" for code objects of emulated devices.
    if (directive == "target" && f.size() == 2 && !sawTarget &&
        validName(emulatedGpuTarget(f[1]).empty() ? std::string_view(f[1]) : emulatedGpuTarget(f[1]))) {
      result.target = f[1];
      sawTarget = true;
    } else if (directive == "kernel" && f.size() == 2) {
      if (open)
        return fail("kernel '" + std::string(f[1]) + "' starts before '" + open->signature.name + "' ends");
      if (!validName(f[1]) || result.find(f[1]))
        return fail("bad or repeated kernel name '" + std::string(f[1]) + "'");
      result.kernels.emplace_back();
      open = &result.kernels.back();
      open->signature.name = f[1];
    } else if (!open) {
      return fail("'" + std::string(line) + "' outside a kernel");
    } else if (directive == "block" && f.size() == 4) {
      for (int i = 0; i < 3; ++i)
        if (!parseUnsigned(f[i + 1], &open->block[i]) || open->block[i] == 0)
          return fail("bad block size '" + std::string(line) + "'");
    } else if (directive == "shared" && f.size() == 2) {
      if (!parseUnsigned(f[1], &open->sharedBytes))
        return fail("bad shared size '" + std::string(f[1]) + "'");
    } else if (directive == "dynamic-shared" && f.size() == 2) {
      if (!parseUnsigned(f[1], &open->dynamicSharedBytes))
        return fail("bad dynamic shared size '" + std::string(f[1]) + "'");
    } else if (directive == "grid-arguments" && f.size() == 2) {
      if (!parseUnsigned(f[1], &open->gridArguments) || open->gridArguments > 3)
        return fail("bad grid-argument count '" + std::string(f[1]) + "'");
    } else if (directive == "param" && (f.size() == 4 || (f.size() == 5 && f[4] == "within-2gib"))) {
      KernelParam param{std::string(f[1]), ArgKind::Pointer, std::string(f[3]), f.size() == 5};
      if (!validName(f[1]) || !argKindFromName(f[2], &param.kind) || !validName(f[3]) ||
          (param.within2GiB && param.kind != ArgKind::Pointer))
        return fail("bad parameter '" + std::string(line) + "'");
      open->signature.params.push_back(std::move(param));
    } else if (directive == "end" && f.size() == 1) {
      open = nullptr;
    } else {
      return fail("unknown or malformed directive '" + std::string(line) + "'");
    }
  }
  if (!sawHeader || !sawTarget)
    return fail(sawHeader ? "no target line" : "empty manifest");
  if (open)
    return fail("kernel '" + open->signature.name + "' has no 'end'");
  *manifest = std::move(result);
  return true;
}
