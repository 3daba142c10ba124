//===- Jit.h - compile once per kernel specialization, cached -----------*- C++ -*-===//
//
// Plain C++ (no MLIR or LLVM headers).
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_JIT_H
#define WAVETILE_JIT_H

#include "wavetile/Compiler.h"

#include <list>
#include <map>
#include <memory>
#include <mutex>

namespace wavetile {

/// The compiler's identity in cache keys: its version, the LLVM it was built with, and the
/// build of the binary holding it (size and modification time), so a rebuilt compiler never
/// reads what an older build wrote.
const std::string &compilerVersion();

struct JitOptions {
  /// "host", a GPU target name ("gfx942", "sm_90", ...), or "emulate:<GPU target>": the
  /// per-thread IR an emulated device runs (lowerKernelsForEmulation).
  std::string target;
  /// The disk cache's directory; none: memory only.
  std::optional<std::string> cacheDirectory;
  /// Where every compile writes its stages (tile IR, IR after each pass, LLVM IR, ISA, the
  /// code object and its manifest), one folder per cache key; none: no dumps.
  std::optional<std::string> dumpDirectory;
  size_t memoryEntries = 64;
  std::string compilerVersion = wavetile::compilerVersion();

  /// For `target`, with the cache and dumps the environment asks for (WAVETILE_CACHE=0,
  /// WAVETILE_CACHE_DIR, WAVETILE_DUMP_IR).
  static JitOptions fromEnvironment(std::string target);
};

/// Compiles tile modules for one target: a GPU, or the host (shared objects for this CPU,
/// loaded by the runtime's host device). The key of a compile is the SHA-256 of the
/// compiler version, the target and the module's tile IR (which carries its specialization:
/// static shapes, dtypes, num_warps, num_stages, pointer promises). Keys hit an in-memory
/// LRU first, then the disk cache; a miss compiles and stores.
class Jit {
public:
  explicit Jit(JitOptions options);
  const JitOptions &options() const { return options_; }

  enum class Source { Memory, Disk, Compiled };
  struct Result {
    std::shared_ptr<const CodeObject> binary;
    Source source;
    double seconds; // spent in this call: compiling, or reading the cache
    std::string key;
  };
  std::optional<Result> compile(const Module &module, std::string *error);

private:
  bool forHost() const;
  JitOptions options_;
  bool emulated_ = false;
  std::optional<GpuTarget> target_;
  std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<const CodeObject>>> recent_; // most recent first
  std::map<std::string, decltype(recent_)::iterator> byKey_;
};

const char *jitSourceName(Jit::Source source);

} // namespace wavetile

#endif
