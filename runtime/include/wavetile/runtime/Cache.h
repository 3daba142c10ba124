//===- Cache.h - the on-disk cache of compiled kernels ------------------*- C++ -*-===//
//
// Content-addressed entries (a code object and its manifest), written atomically, checked
// when read, built once per key however many processes ask at once. No LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_RUNTIME_CACHE_H
#define WAVETILE_RUNTIME_CACHE_H

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace wavetile {

/// SHA-256 of `data`, as 64 lowercase hex digits.
std::string sha256Hex(std::string_view data);

/// What one cache entry holds.
struct CacheEntry {
  std::string image;    // the code object (hsaco, PTX)
  std::string manifest; // its manifest text
};

class DiskCache {
public:
  /// The directory the environment asks for: none when WAVETILE_CACHE=0, else
  /// $WAVETILE_CACHE_DIR, else $XDG_CACHE_HOME/wavetile, else ~/.cache/wavetile.
  static std::optional<std::string> directoryFromEnvironment();

  explicit DiskCache(std::string directory) : directory_(std::move(directory)) {}
  const std::string &directory() const { return directory_; }

  enum class Source { Disk, Built };
  using Builder = std::function<bool(CacheEntry *entry, std::string *error)>;

  /// The entry for `key` (hex digits), read from disk or, when missing or corrupt, made by
  /// `build` and stored. Processes asking for one key at once take turns on a lock file
  /// (flock: the lock dies with its holder, so a crashed compile never blocks the others);
  /// whoever comes after the builder reads its entry. A corrupt entry is reported on stderr
  /// once, with the reason, and rebuilt. Failures to store are reported and the built entry
  /// is still returned.
  bool getOrBuild(std::string_view key, const Builder &build, CacheEntry *entry, Source *source,
                  std::string *error) const;

  /// The path of `key`'s entry (whether or not it exists).
  std::string entryPath(std::string_view key) const;

private:
  std::string directory_;
};

} // namespace wavetile

#endif
