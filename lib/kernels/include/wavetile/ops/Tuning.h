//===- Tuning.h - tuned kernel configurations by shape ----------*- C++ -*-===//
//
// Library ops that have many kernel variants (the GEMM family) choose one per shape from a
// table of tuned configurations: a CSV file whose header names its columns. Key columns say
// which shape a row is for (target, CU count, M, N, K, dtypes, ...); the other columns are
// the kernel's parameters (block sizes, stages, split-K, warps) and what the tuner measured.
// Lookup follows AITER's order (docs/tuning.md): M as given, then M padded (to a multiple of
// 16 up to 256, of 32 up to 1024, of 64 up to 4096, else of 128), then the next power of two;
// no row: the op's heuristic default. Untuned shapes can be logged (WAVETILE_LOG_UNTUNED=1,
// once per shape) and captured into a CSV of keys for the tuner (WAVETILE_TUNE_CAPTURE=path).
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_OPS_TUNING_H
#define WAVETILE_OPS_TUNING_H

#include <cstdint>
#include <iosfwd>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace wavetile::ops {

/// The table lib/kernels/configs/<op>.csv as it was when the library was built, or null
/// when none shipped: tables travel inside the library, not beside it.
const char *shippedTable(const std::string &op);

/// One row: column name -> value, as written in the file.
using TunedRow = std::map<std::string, std::string>;
/// The values of a table's key columns, in their order.
using TuningKey = std::vector<std::string>;

class TunedConfigs {
public:
  /// An empty table keyed by `keyColumns` (one of which is "M").
  explicit TunedConfigs(std::vector<std::string> keyColumns);
  /// Reads `path`: a header, then one row per line (comma separated, no quoting; blank lines
  /// and lines starting with '#' are skipped). Fails naming the file, the line and the
  /// problem: a missing key column, a wrong field count, a non-integer M, a repeated key.
  static std::optional<TunedConfigs> load(const std::string &path, std::vector<std::string> keyColumns,
                                          std::string *error);
  /// The same from a stream; errors name `path`.
  static std::optional<TunedConfigs> parse(std::istream &in, const std::string &path,
                                           std::vector<std::string> keyColumns, std::string *error);

  const std::vector<std::string> &keyColumns() const { return keyColumns_; }
  size_t size() const { return rows_.size(); }
  /// Adds a row (it must hold every key column); false with an error on a repeated key.
  bool add(const TunedRow &row, std::string *error);

  /// The row for `key`, trying M as given, padded, then the next power of two; null when
  /// none matches.
  const TunedRow *find(const TuningKey &key) const;
  /// M as AITER pads it for a second lookup.
  static int64_t paddedM(int64_t m);
  /// Every row, in key order, and a row's key.
  std::vector<TunedRow> rows() const;
  TuningKey keyOf(const TunedRow &row) const;

private:
  std::vector<std::string> keyColumns_;
  size_t mColumn_ = 0;
  std::map<TuningKey, TunedRow> rows_;
};

/// A table with what an op does about shapes it has no row for.
class TunedDispatch {
public:
  struct Options {
    bool logUntuned = false;   // one line on stderr per untuned shape
    std::string capturePath;   // append each untuned shape's key to this CSV (header if new)
    /// WAVETILE_LOG_UNTUNED=1 and WAVETILE_TUNE_CAPTURE=path.
    static Options fromEnvironment();
  };
  TunedDispatch(std::string op, TunedConfigs configs, Options options);

  /// The row for `key`, else for `fallback` (a key of a target whose kernels this one runs,
  /// when given), or null: then the op takes its heuristic default, and `key` is logged and
  /// captured (each at most once per dispatch).
  const TunedRow *lookup(const TuningKey &key, const std::optional<TuningKey> &fallback = std::nullopt);
  /// Shapes looked up without a row so far.
  std::vector<TuningKey> untuned() const;

private:
  std::string op_;
  TunedConfigs configs_;
  Options options_;
  mutable std::mutex mutex_;
  std::set<TuningKey> untuned_;
};

} // namespace wavetile::ops

#endif
