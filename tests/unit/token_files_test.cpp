// Token files another tool wrote (llm.c's .bin, nanoGPT's raw uint16): the
// files are written here byte by byte as those tools lay them out, prepared,
// and read back through the loader; hostile ones are refused by name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "config/experiment.h"
#include "data/data_error.h"
#include "data/prepare.h"
#include "data/sources.h"
#include "data/token_dataset.h"
#include "data/token_files.h"

namespace hpctrain::data {
namespace {
namespace fs = std::filesystem;

void put_le(std::ofstream& out, std::uint32_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.put(static_cast<char>((value >> (8 * i)) & 0xFFU));
}

class TokenFilesTest : public ::testing::Test {
 protected:
  ~TokenFilesTest() override { fs::remove_all(root_); }

  fs::path path(const std::string& relative) {
    fs::create_directories((root_ / relative).parent_path());
    return root_ / relative;
  }

  // llm.c's layout: 256 little-endian int32 (magic, version, token count, zeros), then the tokens.
  void llmc(const std::string& relative, const std::vector<std::uint32_t>& tokens, std::uint32_t version = 1,
            std::uint32_t magic = kLlmcMagic, std::size_t declared = SIZE_MAX) {
    std::ofstream out(path(relative), std::ios::binary);
    put_le(out, magic, 4);
    put_le(out, version, 4);
    put_le(out, static_cast<std::uint32_t>(declared == SIZE_MAX ? tokens.size() : declared), 4);
    for (int i = 3; i < 256; ++i) put_le(out, 0, 4);
    for (const auto t : tokens) put_le(out, t, version == 1 ? 2 : 4);
  }

  // nanoGPT's layout: the tokens as little-endian uint16, nothing else.
  void raw(const std::string& relative, const std::vector<std::uint32_t>& tokens, int bytes = 2) {
    std::ofstream out(path(relative), std::ios::binary);
    for (const auto t : tokens) put_le(out, t, bytes);
  }

  config::Experiment experiment(const std::vector<std::string>& extra) {
    std::ofstream(path("exp.toml")) << "[job]\nname = \"t\"\n[data]\nseq_len = 4\n";
    std::vector<std::string> overrides = {"data.dir=" + (root_ / "prepared").string()};
    overrides.insert(overrides.end(), extra.begin(), extra.end());
    return config::load_experiment((root_ / "exp.toml").string(), overrides);
  }

  std::string sources(const std::string& key, const std::string& relative) {
    return "data." + key + "=[\"" + (root_ / relative).string() + "\"]";
  }

  std::string error_of(const std::vector<std::string>& extra) {
    try {
      prepare(experiment(extra), log_);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "no error";
  }

  static std::vector<std::uint32_t> counting(std::uint32_t n, std::uint32_t start = 0) {
    std::vector<std::uint32_t> v(n);
    for (std::uint32_t i = 0; i < n; ++i) v[i] = start + i;
    return v;
  }

  fs::path root_ = fs::temp_directory_path() / ("hpctrain-token-files-" + std::to_string(getpid()));
  std::FILE* log_ = std::tmpfile();
};

TEST_F(TokenFilesTest, LlmcFilesArePreparedInPathOrderAndReadBackExactly) {
  // Two training shards as llm.c names them, and its validation shard.
  llmc("fineweb/fineweb_train_000001.bin", counting(9));
  llmc("fineweb/fineweb_train_000002.bin", counting(8, 100));
  llmc("fineweb/fineweb_val_000000.bin", counting(5, 50));
  const auto result = prepare(experiment({sources("sources", "fineweb"), "data.glob=fineweb_train_*.bin",
                                          sources("validation_sources", "fineweb/fineweb_val_000000.bin"),
                                          "data.format=llmc", "data.vocab_size=50257"}),
                              log_);
  EXPECT_TRUE(result.stats.token_files);
  EXPECT_EQ(result.stats.files, 3U);
  EXPECT_EQ(result.stats.train_tokens, 17U);
  EXPECT_EQ(result.stats.validation_tokens, 5U);
  EXPECT_EQ(result.tokenizer_hash, "");
  EXPECT_FALSE(fs::exists(result.dir / "tokenizer.model"));

  const TokenDataset train(result.dir, "train", 4);
  EXPECT_EQ(train.vocab_size(), 50257);
  // 17 tokens, samples of 5 sharing a boundary token: 4.
  ASSERT_EQ(train.size(), 4U);
  std::vector<std::int64_t> sample(5);
  train.read(1, sample.data());
  EXPECT_EQ(sample, (std::vector<std::int64_t>{4, 5, 6, 7, 8}));
  train.read(2, sample.data());
  EXPECT_EQ(sample, (std::vector<std::int64_t>{8, 100, 101, 102, 103})) << "one stream: the second file continues it";
  const TokenDataset val(result.dir, "val", 4);
  val.read(0, sample.data());
  EXPECT_EQ(sample, (std::vector<std::int64_t>{50, 51, 52, 53, 54}));

  // Unchanged inputs: reused, not imported again.
  const auto again = prepare(experiment({sources("sources", "fineweb"), "data.glob=fineweb_train_*.bin",
                                         sources("validation_sources", "fineweb/fineweb_val_000000.bin"),
                                         "data.format=llmc", "data.vocab_size=50257"}),
                             log_);
  EXPECT_TRUE(again.reused);
  EXPECT_TRUE(again.stats.token_files);
}

TEST_F(TokenFilesTest, Uint32TokensPastUint16AndATestSplit) {
  llmc("train.bin", {70000, 1, 2, 3, 128255, 5}, 2);
  llmc("val.bin", {7, 8, 9, 10, 11}, 2);
  llmc("test.bin", {12, 13, 14, 15, 128000}, 2);
  const auto result =
      prepare(experiment({sources("sources", "train.bin"), sources("validation_sources", "val.bin"),
                          sources("test_sources", "test.bin"), "data.format=llmc", "data.vocab_size=128256"}),
              log_);
  const TokenDataset train(result.dir, "train", 4);
  std::vector<std::int64_t> sample(5);
  train.read(0, sample.data());
  EXPECT_EQ(sample, (std::vector<std::int64_t>{70000, 1, 2, 3, 128255}));
  const TokenDataset test(result.dir, "test", 4);
  test.read(0, sample.data());
  EXPECT_EQ(sample[4], 128000);
}

TEST_F(TokenFilesTest, NanoGptRawUint16FilesAreRead) {
  raw("shakespeare/train.bin", {0, 1, 65535, 3, 4, 5, 6, 7, 8});
  raw("shakespeare/val.bin", {9, 10, 11, 12, 13});
  const auto result = prepare(
      experiment({sources("sources", "shakespeare/train.bin"), sources("validation_sources", "shakespeare/val.bin"),
                  "data.format=uint16", "data.vocab_size=65536"}),
      log_);
  const TokenDataset train(result.dir, "train", 4);
  ASSERT_EQ(train.size(), 2U);
  std::vector<std::int64_t> sample(5);
  train.read(0, sample.data());
  EXPECT_EQ(sample, (std::vector<std::int64_t>{0, 1, 65535, 3, 4}));
}

TEST_F(TokenFilesTest, HostileFilesAreRefusedByName) {
  raw("val.bin", counting(5));
  const auto with = [&](const std::string& train, const std::string& format, const std::string& vocab = "1000") {
    return error_of({sources("sources", train), sources("validation_sources", "val.bin"), "data.format=" + format,
                     "data.vocab_size=" + vocab});
  };
  llmc("magic.bin", counting(8), 1, 12345);
  EXPECT_NE(with("magic.bin", "llmc").find("magic.bin: starts with 12345, not llm.c's magic number 20240520"),
            std::string::npos)
      << with("magic.bin", "llmc");
  llmc("version.bin", counting(8), 7);
  EXPECT_NE(with("version.bin", "llmc").find("version.bin: llm.c header version 7"), std::string::npos);
  llmc("short.bin", counting(8), 1, kLlmcMagic, 9);
  EXPECT_NE(with("short.bin", "llmc").find("short.bin: the header declares 9 tokens of 2 bytes, but 16 bytes follow"),
            std::string::npos)
      << with("short.bin", "llmc");
  raw("tiny.bin", counting(3));
  EXPECT_NE(with("tiny.bin", "llmc").find("tiny.bin: 6 bytes, shorter than llm.c's 1024-byte header"),
            std::string::npos);
  raw("odd.bin", counting(9), 1);  // 9 single bytes
  EXPECT_NE(with("odd.bin", "uint16").find("odd.bin: 9 bytes is not a whole number of 2-byte tokens"),
            std::string::npos);
  raw("big.bin", {1, 2, 3, 999, 1000, 6});
  EXPECT_NE(with("big.bin", "uint16").find("big.bin: token 1000 at position 4 is outside the vocabulary of 1000"),
            std::string::npos)
      << with("big.bin", "uint16");
  // Nothing half-made is left behind by a refused import.
  EXPECT_FALSE(fs::exists(root_ / "prepared"));
}

TEST_F(TokenFilesTest, SplitsAreNamedByFilesAndOnlyForTokenFiles) {
  const auto config_error = [&](const std::vector<std::string>& extra) {
    try {
      (void)experiment(extra);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(config_error({"data.format=llmc"}).find("name the validation split's files in data.validation_sources"),
            std::string::npos);
  EXPECT_NE(config_error({"data.format=uint16", "data.validation_sources=[\"v.bin\"]", "data.test_fraction=0.1"})
                .find("name the test split's files in data.test_sources"),
            std::string::npos);
  EXPECT_NE(config_error({"data.validation_sources=[\"v.bin\"]"}).find("a text corpus is split by"), std::string::npos);
  EXPECT_NE(config_error({"data.format=uint16", "data.validation_sources=[\"v.bin\"]", "model.kind=bert"})
                .find("a bert model masks tokens with its tokenizer's <mask> piece"),
            std::string::npos);
}

TEST_F(TokenFilesTest, ExcludeLeavesOutPathsInsideASourceDirectory) {
  for (const char* name : {"corpus/a.py", "corpus/encodings/cp1.py", "corpus/deep/encodings/x.py", "corpus/b.py"}) {
    std::ofstream(path(name)) << "x = 1\n";
  }
  config::DataConfig data;
  data.sources = {(root_ / "corpus").string()};
  data.exclude = {"encodings/*"};
  std::vector<std::string> names;
  for (const auto& f : resolve_sources(data)) names.push_back(f.path.lexically_relative(root_ / "corpus").string());
  // A pattern matches the whole relative path: "encodings/*" is the top-level directory only.
  EXPECT_EQ(names, (std::vector<std::string>{"a.py", "b.py", "deep/encodings/x.py"}));
  data.exclude = {"encodings/*", "*/encodings/*"};
  names.clear();
  for (const auto& f : resolve_sources(data)) names.push_back(f.path.lexically_relative(root_ / "corpus").string());
  EXPECT_EQ(names, (std::vector<std::string>{"a.py", "b.py"}));
}

}  // namespace
}  // namespace hpctrain::data
