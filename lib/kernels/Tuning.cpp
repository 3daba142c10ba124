//===- Tuning.cpp - tuned kernel configurations by shape ------------------===//

#include "wavetile/ops/Tuning.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace wavetile::ops;

namespace {

std::string trimmed(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> fieldsOf(const std::string &line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ','))
    fields.push_back(trimmed(field));
  if (!line.empty() && line.back() == ',')
    fields.emplace_back();
  return fields;
}

std::optional<int64_t> integerOf(const std::string &s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

std::string joined(const std::vector<std::string> &values) {
  std::string text;
  for (const std::string &v : values)
    text += (text.empty() ? "" : ",") + v;
  return text;
}

} // namespace

TunedConfigs::TunedConfigs(std::vector<std::string> keyColumns) : keyColumns_(std::move(keyColumns)) {
  mColumn_ = size_t(std::find(keyColumns_.begin(), keyColumns_.end(), "M") - keyColumns_.begin());
}

std::optional<TunedConfigs> TunedConfigs::load(const std::string &path, std::vector<std::string> keyColumns,
                                               std::string *error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot be read";
    return std::nullopt;
  }
  return parse(in, path, std::move(keyColumns), error);
}

std::optional<TunedConfigs> TunedConfigs::parse(std::istream &in, const std::string &path,
                                                std::vector<std::string> keyColumns, std::string *error) {
  TunedConfigs configs(std::move(keyColumns));
  std::vector<std::string> header;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string content = trimmed(line);
    if (content.empty() || content.front() == '#')
      continue;
    std::vector<std::string> fields = fieldsOf(content);
    auto fail = [&](const std::string &problem) {
      *error = path + ":" + std::to_string(number) + ": " + problem;
      return std::nullopt;
    };
    if (header.empty()) {
      header = fields;
      for (const std::string &column : configs.keyColumns_)
        if (std::find(header.begin(), header.end(), column) == header.end())
          return fail("the header has no key column '" + column + "' (key columns: " +
                      joined(configs.keyColumns_) + ")");
      continue;
    }
    if (fields.size() != header.size())
      return fail("expected " + std::to_string(header.size()) + " fields (" + joined(header) + "), got " +
                  std::to_string(fields.size()));
    TunedRow row;
    for (size_t i = 0; i < header.size(); ++i)
      row[header[i]] = fields[i];
    std::string problem;
    if (!configs.add(row, &problem))
      return fail(problem);
  }
  if (header.empty()) {
    *error = path + ": no header line";
    return std::nullopt;
  }
  return configs;
}

TuningKey TunedConfigs::keyOf(const TunedRow &row) const {
  TuningKey key;
  for (const std::string &column : keyColumns_) {
    auto it = row.find(column);
    key.push_back(it == row.end() ? std::string() : it->second);
  }
  return key;
}

bool TunedConfigs::add(const TunedRow &row, std::string *error) {
  for (const std::string &column : keyColumns_)
    if (!row.count(column)) {
      *error = "the row has no key column '" + column + "'";
      return false;
    }
  TuningKey key = keyOf(row);
  if (mColumn_ < key.size() && !integerOf(key[mColumn_])) {
    *error = "M is '" + key[mColumn_] + "', not an integer";
    return false;
  }
  if (!rows_.emplace(key, row).second) {
    *error = "a second row for the shape (" + joined(key) + ")";
    return false;
  }
  return true;
}

std::vector<TunedRow> TunedConfigs::rows() const {
  std::vector<TunedRow> all;
  for (const auto &[key, row] : rows_)
    all.push_back(row);
  return all;
}

int64_t TunedConfigs::paddedM(int64_t m) {
  int64_t multiple = m <= 256 ? 16 : m <= 1024 ? 32 : m <= 4096 ? 64 : 128;
  return (m + multiple - 1) / multiple * multiple;
}

const TunedRow *TunedConfigs::find(const TuningKey &key) const {
  auto at = [&](const TuningKey &k) -> const TunedRow * {
    auto it = rows_.find(k);
    return it == rows_.end() ? nullptr : &it->second;
  };
  if (const TunedRow *row = at(key))
    return row;
  if (mColumn_ >= key.size())
    return nullptr;
  std::optional<int64_t> m = integerOf(key[mColumn_]);
  if (!m || *m < 1)
    return nullptr;
  // The nearer of the two roundings first: 3 rows take a 4-row tile's row before a 16-row one.
  TuningKey padded = key;
  const int64_t aiter = paddedM(*m), power = int64_t(std::bit_ceil(uint64_t(*m)));
  for (int64_t candidate : {std::min(aiter, power), std::max(aiter, power)}) {
    padded[mColumn_] = std::to_string(candidate);
    if (const TunedRow *row = at(padded))
      return row;
  }
  return nullptr;
}

TunedDispatch::Options TunedDispatch::Options::fromEnvironment() {
  Options options;
  const char *log = std::getenv("WAVETILE_LOG_UNTUNED");
  options.logUntuned = log && std::string(log) == "1";
  if (const char *capture = std::getenv("WAVETILE_TUNE_CAPTURE"))
    options.capturePath = capture;
  return options;
}

TunedDispatch::TunedDispatch(std::string op, TunedConfigs configs, Options options)
    : op_(std::move(op)), configs_(std::move(configs)), options_(std::move(options)) {}

const TunedRow *TunedDispatch::lookup(const TuningKey &key, const std::optional<TuningKey> &fallback) {
  if (const TunedRow *row = configs_.find(key))
    return row;
  if (fallback)
    if (const TunedRow *row = configs_.find(*fallback))
      return row;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!untuned_.insert(key).second)
    return nullptr;
  if (options_.logUntuned)
    std::fprintf(stderr, "wavetile: %s: no tuned configuration for %s = %s; using the default\n", op_.c_str(),
                 joined(configs_.keyColumns()).c_str(), joined(key).c_str());
  if (!options_.capturePath.empty()) {
    bool fresh = !std::filesystem::exists(options_.capturePath) || std::filesystem::file_size(options_.capturePath) == 0;
    std::ofstream out(options_.capturePath, std::ios::app);
    if (fresh)
      out << joined(configs_.keyColumns()) << "\n";
    out << joined(key) << "\n";
    if (!out)
      std::fprintf(stderr, "wavetile: %s: could not append to %s\n", op_.c_str(), options_.capturePath.c_str());
  }
  return nullptr;
}

std::vector<TuningKey> TunedDispatch::untuned() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {untuned_.begin(), untuned_.end()};
}
