//===- CacheTest.cpp - the on-disk kernel cache ---------------------------===//

#include "wavetile/runtime/Cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace wavetile;
namespace fs = std::filesystem;

namespace {

const std::string kKey = sha256Hex("a kernel");

/// A fresh directory per test.
class DiskCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/wavetile-cache-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
  }
  void TearDown() override { fs::remove_all(dir); }

  static CacheEntry expected() { return {std::string("\x7f" "ELF binary\0bytes", 17), "wavetile-manifest 1\n"}; }

  /// A builder that appends one byte to `log` per build, after `delayMs`.
  DiskCache::Builder builder(int delayMs = 0) {
    std::string log = dir + "/builds.log";
    return [log, delayMs](CacheEntry *entry, std::string *) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      (void)!::write(fd, "x", 1);
      ::close(fd);
      std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
      *entry = expected();
      return true;
    };
  }
  size_t builds() { return fs::exists(dir + "/builds.log") ? fs::file_size(dir + "/builds.log") : 0; }

  std::string fileContents(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void writeContents(const std::string &path, const std::string &text) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  }

  std::string dir;
};

} // namespace

TEST(Sha256, MatchesTheStandardVectors) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Lengths around the padding boundary (55, 56, 64 bytes) differ from each other.
  EXPECT_NE(sha256Hex(std::string(55, 'x')), sha256Hex(std::string(56, 'x')));
  EXPECT_NE(sha256Hex(std::string(63, 'x')), sha256Hex(std::string(64, 'x')));
}

TEST_F(DiskCacheTest, BuildsOnceThenReadsFromDisk) {
  DiskCache cache(dir);
  CacheEntry entry;
  DiskCache::Source source;
  std::string error;
  ASSERT_TRUE(cache.getOrBuild(kKey, builder(), &entry, &source, &error)) << error;
  EXPECT_EQ(source, DiskCache::Source::Built);
  EXPECT_EQ(entry.image, expected().image);
  CacheEntry again;
  ASSERT_TRUE(cache.getOrBuild(kKey, builder(), &again, &source, &error)) << error;
  EXPECT_EQ(source, DiskCache::Source::Disk);
  EXPECT_EQ(again.image, expected().image);
  EXPECT_EQ(again.manifest, expected().manifest);
  EXPECT_EQ(builds(), 1u);
  EXPECT_EQ(cache.entryPath(kKey), dir + "/" + kKey.substr(0, 2) + "/" + kKey + ".entry");
  // Another key is another entry.
  ASSERT_TRUE(cache.getOrBuild(sha256Hex("another kernel"), builder(), &again, &source, &error));
  EXPECT_EQ(source, DiskCache::Source::Built);
  EXPECT_EQ(builds(), 2u);
}

TEST_F(DiskCacheTest, CorruptEntriesAreReportedOnceAndRebuilt) {
  DiskCache cache(dir);
  CacheEntry entry;
  DiskCache::Source source;
  std::string error;
  ASSERT_TRUE(cache.getOrBuild(kKey, builder(), &entry, &source, &error));
  std::string path = cache.entryPath(kKey), whole = fileContents(path);

  struct Damage {
    std::string contents, reason;
  };
  std::string flipped = whole;
  flipped[flipped.size() - 3] ^= 0x20;
  std::string otherKey = whole;
  otherKey.replace(otherKey.find(kKey), 4, "ffff");
  for (const Damage &damage : {Damage{whole.substr(0, whole.size() - 5), "truncated"},
                               Damage{flipped, "checksum mismatch"}, Damage{"garbage", "not a wavetile cache entry"},
                               Damage{otherKey, "written for another key"}, Damage{"wavetile-cache 1\n", "truncated header"}}) {
    size_t before = builds();
    writeContents(path, damage.contents);
    testing::internal::CaptureStderr();
    CacheEntry rebuilt;
    ASSERT_TRUE(cache.getOrBuild(kKey, builder(), &rebuilt, &source, &error)) << error;
    std::string stderrText = testing::internal::GetCapturedStderr();
    EXPECT_EQ(source, DiskCache::Source::Built) << damage.reason;
    EXPECT_EQ(rebuilt.image, expected().image);
    EXPECT_EQ(builds(), before + 1);
    EXPECT_EQ(stderrText, "wavetile: cache entry " + path + " is corrupt (" + damage.reason + "); rebuilding it\n");
    EXPECT_EQ(fileContents(path), whole) << "the entry is whole again";
  }
  // The same damage again is rebuilt without a second report.
  writeContents(path, "garbage");
  testing::internal::CaptureStderr();
  ASSERT_TRUE(cache.getOrBuild(kKey, builder(), &entry, &source, &error));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(source, DiskCache::Source::Built);
}

TEST_F(DiskCacheTest, ManyProcessesBuildAKeyOnce) {
  constexpr int kProcesses = 8;
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      DiskCache cache(dir);
      CacheEntry entry;
      DiskCache::Source source;
      std::string error;
      bool ok = cache.getOrBuild(kKey, builder(/*delayMs=*/300), &entry, &source, &error) &&
                entry.image == expected().image && entry.manifest == expected().manifest;
      _exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a process got a wrong entry";
  }
  EXPECT_EQ(builds(), 1u);
}

TEST_F(DiskCacheTest, ABuilderThatDiesDoesNotBlockTheNext) {
  std::string started = dir + "/started";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    DiskCache cache(dir);
    CacheEntry entry;
    DiskCache::Source source;
    cache.getOrBuild(
        kKey,
        [&](CacheEntry *, std::string *) {
          std::ofstream(started) << "1";
          std::this_thread::sleep_for(std::chrono::seconds(60)); // killed before it finishes
          return false;
        },
        &entry, &source, nullptr);
    _exit(0);
  }
  for (int i = 0; i < 500 && !fs::exists(started); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(started));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  DiskCache cache(dir);
  CacheEntry entry;
  DiskCache::Source source;
  std::string error;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(cache.getOrBuild(kKey, builder(), &entry, &source, &error)) << error;
  EXPECT_EQ(source, DiskCache::Source::Built);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(DiskCacheTest, AnUnusableDirectoryStillCompiles) {
  writeContents(dir + "/file", "not a directory");
  DiskCache cache(dir + "/file/cache");
  CacheEntry entry;
  DiskCache::Source source;
  std::string error;
  testing::internal::CaptureStderr();
  ASSERT_TRUE(cache.getOrBuild(kKey, builder(), &entry, &source, &error)) << error;
  std::string stderrText = testing::internal::GetCapturedStderr();
  EXPECT_EQ(source, DiskCache::Source::Built);
  EXPECT_EQ(entry.image, expected().image);
  EXPECT_NE(stderrText.find("wavetile: cannot lock the cache in " + dir + "/file/cache"), std::string::npos)
      << stderrText;
}

TEST_F(DiskCacheTest, KeysAreHexAndBuildFailuresPassThrough) {
  DiskCache cache(dir);
  CacheEntry entry;
  DiskCache::Source source;
  std::string error;
  EXPECT_FALSE(cache.getOrBuild("../../etc/passwd", builder(), &entry, &source, &error));
  EXPECT_EQ(error, "cache keys are lowercase hex digits, got '../../etc/passwd'");
  auto failing = [](CacheEntry *, std::string *e) {
    *e = "the compiler said no";
    return false;
  };
  EXPECT_FALSE(cache.getOrBuild(kKey, failing, &entry, &source, &error));
  EXPECT_EQ(error, "the compiler said no");
  EXPECT_FALSE(fs::exists(cache.entryPath(kKey)));
}

TEST(DiskCacheDirectory, ComesFromTheEnvironment) {
  auto with = [](std::initializer_list<std::pair<const char *, const char *>> vars) {
    for (const char *name : {"WAVETILE_CACHE", "WAVETILE_CACHE_DIR", "XDG_CACHE_HOME"})
      unsetenv(name);
    for (auto [name, value] : vars)
      setenv(name, value, 1);
    return DiskCache::directoryFromEnvironment();
  };
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  EXPECT_EQ(with({{"WAVETILE_CACHE", "0"}, {"WAVETILE_CACHE_DIR", "/x"}}), std::nullopt);
  EXPECT_EQ(with({{"WAVETILE_CACHE_DIR", "/x"}, {"XDG_CACHE_HOME", "/y"}}), "/x");
  EXPECT_EQ(with({{"XDG_CACHE_HOME", "/y"}}), "/y/wavetile");
  if (!home.empty()) {
    EXPECT_EQ(with({{"WAVETILE_CACHE", "1"}}), home + "/.cache/wavetile");
  }
  with({});
}
