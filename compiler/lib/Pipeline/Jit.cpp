//===- Jit.cpp - cached compilation of tile modules for GPU targets -------===//

#include "wavetile/Jit.h"

#include "HostLowering.h"

#include "wavetile/runtime/Cache.h"

#include "llvm/Config/llvm-config.h"

#include <chrono>
#include <dlfcn.h>
#include <sys/stat.h>

using namespace wavetile;

const std::string &wavetile::compilerVersion() {
  static const std::string version = [] {
    std::string text = "wavetile " WAVETILE_VERSION " llvm " LLVM_VERSION_STRING;
    Dl_info info;
    struct stat status;
    if (dladdr(reinterpret_cast<void *>(&compilerVersion), &info) && info.dli_fname &&
        stat(info.dli_fname, &status) == 0)
      text += " build " + std::to_string(status.st_size) + "-" + std::to_string(status.st_mtim.tv_sec) + "." +
              std::to_string(status.st_mtim.tv_nsec);
    return text;
  }();
  return version;
}

JitOptions JitOptions::fromEnvironment(std::string target) {
  JitOptions options;
  options.target = std::move(target);
  options.cacheDirectory = DiskCache::directoryFromEnvironment();
  if (const char *dump = std::getenv("WAVETILE_DUMP_IR"); dump && *dump)
    options.dumpDirectory = dump;
  return options;
}

const char *wavetile::jitSourceName(Jit::Source source) {
  switch (source) {
  case Jit::Source::Memory:
    return "memory";
  case Jit::Source::Disk:
    return "disk";
  case Jit::Source::Compiled:
    return "compiled";
  }
  return "?";
}

Jit::Jit(JitOptions options) : options_(std::move(options)) {
  std::string_view target = options_.target;
  emulated_ = !emulatedGpuTarget(target).empty();
  target_ = lookupGpuTarget(emulated_ ? emulatedGpuTarget(target) : target);
}

bool Jit::forHost() const { return options_.target == "host"; }

std::optional<Jit::Result> Jit::compile(const Module &module, std::string *error) {
  auto start = std::chrono::steady_clock::now();
  auto finish = [&](std::shared_ptr<const CodeObject> binary, Source source, std::string key) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return Result{std::move(binary), source, seconds, std::move(key)};
  };
  if (!target_ && !forHost()) {
    if (error)
      *error = "unknown target '" + options_.target + "'; known targets: host, " + gpuTargetNameList() +
               " (emulate:<target> for emulated devices)";
    return std::nullopt;
  }
  if (!module.verify(error))
    return std::nullopt;
  // Host code is compiled for this CPU: its name and features are part of the target.
  std::string target = forHost() ? "host " + detail::hostCpu() + " " + detail::hostFeatures() : options_.target;
  std::string key = sha256Hex(options_.compilerVersion + "\n" + target + "\n" + module.str());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto hit = byKey_.find(key); hit != byKey_.end()) {
      recent_.splice(recent_.begin(), recent_, hit->second);
      return finish(hit->second->second, Source::Memory, key);
    }
  }
  auto binary = std::make_shared<CodeObject>();
  auto build = [&](CacheEntry *entry, std::string *buildError) {
    std::optional<std::string> dump;
    if (options_.dumpDirectory)
      dump = *options_.dumpDirectory + "/" + key.substr(0, 16);
    auto compiled = forHost()   ? compileKernelsForHost(module, buildError)
                    : emulated_ ? lowerKernelsForEmulation(module, *target_, buildError, dump)
                                : compileKernelsForGpu(module, *target_, buildError, dump);
    if (!compiled)
      return false;
    compiled->manifest.target = options_.target; // "emulate:gfx942" loads on emulated devices only
    entry->image = std::move(compiled->image);
    entry->manifest = printManifest(compiled->manifest);
    return true;
  };
  CacheEntry entry;
  Source source = Source::Compiled;
  if (options_.cacheDirectory) {
    DiskCache::Source diskSource;
    if (!DiskCache(*options_.cacheDirectory).getOrBuild(key, build, &entry, &diskSource, error))
      return std::nullopt;
    source = diskSource == DiskCache::Source::Disk ? Source::Disk : Source::Compiled;
  } else if (!build(&entry, error)) {
    return std::nullopt;
  }
  std::string manifestError;
  if (!parseManifest(entry.manifest, &binary->manifest, &manifestError)) {
    if (error) // the entry's checksum held, so the writer produced it: a compiler bug
      *error = "the cached manifest for key " + key + " does not parse: " + manifestError;
    return std::nullopt;
  }
  binary->image = std::move(entry.image);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!byKey_.count(key)) {
    recent_.emplace_front(key, binary);
    byKey_[key] = recent_.begin();
    while (recent_.size() > std::max<size_t>(options_.memoryEntries, 1)) {
      byKey_.erase(recent_.back().first);
      recent_.pop_back();
    }
  }
  return finish(binary, source, key);
}
