//===- DiskCache.cpp - content-addressed code objects on disk -------------===//
//
// An entry is one file, <dir>/<first two key digits>/<key>.entry:
//   wavetile-cache 1\n<key>\n<manifest bytes> <image bytes> <sha256 of manifest+image>\n
//   <manifest><image>
// written to a temporary name and renamed into place, so readers see a whole entry or none.
// Builders of one key serialize on <key>.lock with flock.
//
//===----------------------------------------------------------------------===//

#include "wavetile/runtime/Cache.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <set>
#include <sys/file.h>
#include <unistd.h>

using namespace wavetile;

namespace {

constexpr std::string_view kEntryHeader = "wavetile-cache 1\n";

/// Reads the whole file; false when it cannot be opened (missing).
bool readFile(const std::string &path, std::string *contents) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  contents->clear();
  char buffer[1 << 16];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0)
    contents->append(buffer, size_t(n));
  ::close(fd);
  return n == 0;
}

bool writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data.remove_prefix(size_t(n));
  }
  return true;
}

std::string serialize(std::string_view key, const CacheEntry &entry) {
  std::string payload = entry.manifest + entry.image;
  return std::string(kEntryHeader) + std::string(key) + "\n" + std::to_string(entry.manifest.size()) + " " +
         std::to_string(entry.image.size()) + " " + sha256Hex(payload) + "\n" + payload;
}

/// Parses an entry file; on failure says what is wrong with it.
bool deserialize(std::string_view key, std::string_view file, CacheEntry *entry, std::string *problem) {
  auto fail = [&](const char *what) {
    *problem = what;
    return false;
  };
  if (file.substr(0, kEntryHeader.size()) != kEntryHeader)
    return fail("not a wavetile cache entry");
  file.remove_prefix(kEntryHeader.size());
  size_t newline = file.find('\n');
  if (newline == std::string_view::npos || file.substr(0, newline) != key)
    return fail(newline == std::string_view::npos ? "truncated header" : "written for another key");
  file.remove_prefix(newline + 1);
  newline = file.find('\n');
  if (newline == std::string_view::npos)
    return fail("truncated header");
  std::string sizes(file.substr(0, newline));
  file.remove_prefix(newline + 1);
  unsigned long long manifestBytes = 0, imageBytes = 0;
  char checksum[65] = {};
  if (std::sscanf(sizes.c_str(), "%llu %llu %64s", &manifestBytes, &imageBytes, checksum) != 3)
    return fail("malformed header");
  if (file.size() != manifestBytes + imageBytes)
    return fail(file.size() < manifestBytes + imageBytes ? "truncated" : "longer than its header says");
  if (sha256Hex(file) != checksum)
    return fail("checksum mismatch");
  entry->manifest = std::string(file.substr(0, manifestBytes));
  entry->image = std::string(file.substr(manifestBytes));
  return true;
}

/// Reports a problem with the cache on stderr, once per process and message.
void reportOnce(const std::string &message) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  std::lock_guard<std::mutex> lock(mutex);
  if (reported.insert(message).second)
    std::fprintf(stderr, "wavetile: %s\n", message.c_str());
}

/// Holds an exclusive flock on a file for its lifetime.
class FileLock {
public:
  explicit FileLock(const std::string &path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      return;
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
    }
  }
  ~FileLock() {
    if (fd_ >= 0)
      ::close(fd_); // closing releases the lock
  }
  bool held() const { return fd_ >= 0; }

private:
  int fd_ = -1;
};

} // namespace

std::optional<std::string> DiskCache::directoryFromEnvironment() {
  if (const char *enabled = std::getenv("WAVETILE_CACHE"); enabled && std::string_view(enabled) == "0")
    return std::nullopt;
  if (const char *dir = std::getenv("WAVETILE_CACHE_DIR"); dir && *dir)
    return std::string(dir);
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/wavetile";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/wavetile";
  return std::nullopt;
}

std::string DiskCache::entryPath(std::string_view key) const {
  return directory_ + "/" + std::string(key.substr(0, 2)) + "/" + std::string(key) + ".entry";
}

bool DiskCache::getOrBuild(std::string_view key, const Builder &build, CacheEntry *entry, Source *source,
                           std::string *error) const {
  if (key.size() < 8 || key.find_first_not_of("0123456789abcdef") != std::string_view::npos) {
    if (error)
      *error = "cache keys are lowercase hex digits, got '" + std::string(key) + "'";
    return false;
  }
  std::string path = entryPath(key);
  // Reads the entry if it is there and whole; reports one that is not.
  auto tryRead = [&]() {
    std::string file, problem;
    if (!readFile(path, &file))
      return false;
    if (deserialize(key, file, entry, &problem))
      return true;
    reportOnce("cache entry " + path + " is corrupt (" + problem + "); rebuilding it");
    return false;
  };
  if (tryRead()) {
    *source = Source::Disk;
    return true;
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  FileLock lock(path.substr(0, path.size() - 6) + ".lock");
  if (!lock.held())
    reportOnce("cannot lock the cache in " + directory_ + " (" + std::strerror(errno) +
               "); compiling without it");
  else if (tryRead()) { // another process built it while we waited
    *source = Source::Disk;
    return true;
  }
  if (!build(entry, error))
    return false;
  *source = Source::Built;
  if (!lock.held())
    return true;
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool stored = fd >= 0 && writeAll(fd, serialize(key, *entry)) && ::fsync(fd) == 0;
  if (fd >= 0)
    ::close(fd);
  stored = stored && ::rename(temporary.c_str(), path.c_str()) == 0;
  if (!stored) {
    reportOnce("cannot write the cache entry " + path + " (" + std::strerror(errno) + ")");
    ::unlink(temporary.c_str());
  }
  return true;
}
