//===- TuningTest.cpp - tuned configuration tables and their lookup -------===//

#include "wavetile/ops/Tuning.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

using namespace wavetile::ops;

namespace {

const std::vector<std::string> kKeys = {"target", "cu_num", "M", "N", "K", "dtype"};

/// A file in a fresh directory, removed with it.
struct TempFile {
  std::filesystem::path dir, path;
  explicit TempFile(const std::string &text, const std::string &name = "tuned.csv") {
    dir = std::filesystem::temp_directory_path() / ("wavetile-tuning-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir);
    path = dir / name;
    if (!text.empty())
      std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove_all(dir); }
};

const char *kTable = "# tuned on an H200\n"
                     "target,cu_num,M,N,K,dtype,kernel,block_m,block_n,split_k,us\n"
                     "sm_90,132,1,8192,8192,bf16,decode,16,64,4,9.1\n"
                     "sm_90,132,4,8192,8192,bf16,decode,4,8,1,9.5\n"
                     "sm_90,132,16,8192,8192,bf16,decode,16,128,8,9.8\n"
                     "sm_90,132,32,8192,8192,bf16,decode,32,64,2,10.4\n"
                     "sm_90,132,320,8192,8192,bf16,tiled,128,128,1,48.0\n"
                     "\n"
                     "sm_90,132,512,8192,8192,bf16,tiled,128,256,1,70.2\n";

TEST(TunedConfigs, FindsExactThenTheNearerRoundingOfM) {
  TempFile file(kTable);
  std::string error;
  auto configs = TunedConfigs::load(file.path.string(), kKeys, &error);
  ASSERT_TRUE(configs) << error;
  EXPECT_EQ(configs->size(), 6u);
  auto kernelFor = [&](int64_t m) -> std::string {
    const TunedRow *row = configs->find({"sm_90", "132", std::to_string(m), "8192", "8192", "bf16"});
    return row ? row->at("kernel") + "/" + row->at("block_n") : "none";
  };
  EXPECT_EQ(kernelFor(1), "decode/64");
  EXPECT_EQ(kernelFor(32), "decode/64");
  EXPECT_EQ(kernelFor(17), "decode/64");  // padded to 32
  EXPECT_EQ(kernelFor(300), "tiled/128"); // padded to 320 (multiples of 32 up to 1024)
  EXPECT_EQ(kernelFor(400), "tiled/256"); // 416 is not tuned; the next power of two, 512, is
  EXPECT_EQ(kernelFor(3), "decode/8");    // the power of two, 4, before AITER's padding, 16
  EXPECT_EQ(kernelFor(2), "decode/128");  // 2 is not tuned; padded, 16, is
  EXPECT_EQ(kernelFor(5), "decode/128");  // 8 is not tuned; 16 is
  EXPECT_EQ(configs->find({"sm_90", "132", "32", "8192", "8192", "f16"}), nullptr);
  EXPECT_EQ(configs->find({"gfx942", "304", "32", "8192", "8192", "bf16"}), nullptr);
}

TEST(TunedConfigs, PadsMAsAiterDoes) {
  EXPECT_EQ(TunedConfigs::paddedM(1), 16);
  EXPECT_EQ(TunedConfigs::paddedM(256), 256);
  EXPECT_EQ(TunedConfigs::paddedM(257), 288);
  EXPECT_EQ(TunedConfigs::paddedM(1025), 1088);
  EXPECT_EQ(TunedConfigs::paddedM(4097), 4224);
}

TEST(TunedConfigs, MalformedFilesAreRefusedWithTheLine) {
  std::string error;
  auto refused = [&](const std::string &text, const std::string &says) {
    TempFile file(text);
    EXPECT_FALSE(TunedConfigs::load(file.path.string(), kKeys, &error));
    EXPECT_NE(error.find(says), std::string::npos) << error;
    EXPECT_NE(error.find(file.path.string()), std::string::npos) << error;
  };
  refused("target,cu_num,M,N,dtype,kernel\n", "the header has no key column 'K'");
  refused("target,cu_num,M,N,K,dtype,kernel\nsm_90,132,1,2,3,bf16\n", ":2: expected 7 fields");
  refused("target,cu_num,M,N,K,dtype,kernel\nsm_90,132,x1,2,3,bf16,a\n", ":2: M is 'x1', not an integer");
  refused("target,cu_num,M,N,K,dtype,kernel\nsm_90,132,1,2,3,bf16,a\nsm_90,132,1,2,3,bf16,b\n",
          ":3: a second row for the shape (sm_90,132,1,2,3,bf16)");
  refused("# only a comment\n", "no header line");
  EXPECT_FALSE(TunedConfigs::load("/nonexistent/tuned.csv", kKeys, &error));
  EXPECT_NE(error.find("cannot be read"), std::string::npos);
}

TEST(TunedDispatch, UntunedShapesAreCapturedOnce) {
  TempFile table(kTable);
  TempFile capture("", "untuned.csv");
  std::string error;
  auto configs = TunedConfigs::load(table.path.string(), kKeys, &error);
  ASSERT_TRUE(configs) << error;
  TunedDispatch::Options options;
  options.capturePath = capture.path.string();
  TunedDispatch dispatch("gemm_a16w16", *configs, options);
  EXPECT_NE(dispatch.lookup({"sm_90", "132", "1", "8192", "8192", "bf16"}), nullptr);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(dispatch.lookup({"sm_90", "132", "7", "4096", "4096", "bf16"}), nullptr);
  EXPECT_EQ(dispatch.lookup({"sm_90", "132", "7", "4096", "1024", "bf16"}), nullptr);
  EXPECT_EQ(dispatch.untuned().size(), 2u);
  std::ifstream in(capture.path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "target,cu_num,M,N,K,dtype\nsm_90,132,7,4096,4096,bf16\nsm_90,132,7,4096,1024,bf16\n");
  // The capture is itself a table of keys the tuner reads.
  auto keys = TunedConfigs::load(capture.path.string(), kKeys, &error);
  ASSERT_TRUE(keys) << error;
  EXPECT_EQ(keys->size(), 2u);
}

// WAVETILE_LOG_UNTUNED=1 logs each untuned shape once on stderr; WAVETILE_TUNE_CAPTURE names
// the capture file; other values of the first log nothing.
TEST(TunedDispatch, EnvironmentLogsEachUntunedShapeOnce) {
  TempFile table(kTable);
  TempFile capture("", "untuned.csv");
  std::string error;
  auto configs = TunedConfigs::load(table.path.string(), kKeys, &error);
  ASSERT_TRUE(configs) << error;
  auto lookups = [&](const char *log) {
    ::setenv("WAVETILE_LOG_UNTUNED", log, 1);
    ::setenv("WAVETILE_TUNE_CAPTURE", capture.path.string().c_str(), 1);
    TunedDispatch dispatch("gemm_a16w16", *configs, TunedDispatch::Options::fromEnvironment());
    ::unsetenv("WAVETILE_LOG_UNTUNED");
    ::unsetenv("WAVETILE_TUNE_CAPTURE");
    ::testing::internal::CaptureStderr();
    dispatch.lookup({"sm_90", "132", "1", "8192", "8192", "bf16"}); // tuned
    for (int i = 0; i < 3; ++i)
      dispatch.lookup({"sm_90", "132", "7", "4096", "4096", "bf16"});
    dispatch.lookup({"sm_90", "132", "7", "4096", "1024", "bf16"});
    return ::testing::internal::GetCapturedStderr();
  };
  EXPECT_EQ(lookups("1"), "wavetile: gemm_a16w16: no tuned configuration for target,cu_num,M,N,K,dtype = "
                          "sm_90,132,7,4096,4096,bf16; using the default\n"
                          "wavetile: gemm_a16w16: no tuned configuration for target,cu_num,M,N,K,dtype = "
                          "sm_90,132,7,4096,1024,bf16; using the default\n");
  EXPECT_EQ(lookups("0"), "");
  std::ifstream in(capture.path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "target,cu_num,M,N,K,dtype\nsm_90,132,7,4096,4096,bf16\nsm_90,132,7,4096,1024,bf16\n"
                  "sm_90,132,7,4096,4096,bf16\nsm_90,132,7,4096,1024,bf16\n");
}

} // namespace
