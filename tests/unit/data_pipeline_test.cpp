// The data pipeline end to end on small corpora made in a temporary directory:
// tokenizer round trips, bad-input policy, idempotent preparation, the loader.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/experiment.h"
#include "data/data_error.h"
#include "data/documents.h"
#include "data/prepare.h"
#include "data/sources.h"
#include "data/token_dataset.h"
#include "data/token_healing.h"
#include "data/tokenizer.h"

namespace hpctrain::data {
namespace {
namespace fs = std::filesystem;

constexpr std::string_view kCode =
    "import os\n\n\nclass Greeter:\n    \"\"\"Says hello.\"\"\"\n\n    def greet(self, name):\n"
    "        if name:\n            return f'hello, {name}!'\n\t\treturn None  # tabs, too\n    \n"
    "def main():\n    print(Greeter().greet('wörld ✓'))   \n\n\n";

class DataPipelineTest : public ::testing::Test {
 protected:
  DataPipelineTest() {
    fs::create_directories(root_ / "corpus" / "pkg");
    // Real code for the tokenizer to learn from: a few standard library modules.
    for (const char* name : {"textwrap.py", "shlex.py", "fnmatch.py", "glob.py", "colorsys.py"}) {
      fs::copy_file(python_stdlib_dir() / name, root_ / "corpus" / "pkg" / name);
    }
    file("corpus/greeter.py", std::string(kCode));
    file("corpus/copy_of_greeter.py", std::string(kCode));  // an exact duplicate
  }
  ~DataPipelineTest() override { fs::remove_all(root_); }

  void file(const std::string& relative, const std::string& content) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::binary) << content;
  }

  config::Experiment experiment(const std::vector<std::string>& extra = {}) {
    // Six documents leave the default validation fraction none: no split
    // unless a test asks for one (prepare refuses a split it cannot fill).
    file("exp.toml",
         "[job]\nname = \"t\"\n[data]\nvocab_size = 600\ntokenizer_max_lines = 1000\nseq_len = 16\n"
         "validation_fraction = 0\n");
    std::vector<std::string> overrides = {"data.sources=[\"" + (root_ / "corpus").string() + "\"]",
                                          "data.dir=" + (root_ / "prepared").string()};
    overrides.insert(overrides.end(), extra.begin(), extra.end());
    return config::load_experiment((root_ / "exp.toml").string(), overrides);
  }

  std::string error_of(const std::vector<std::string>& extra) {
    try {
      prepare(experiment(extra), log_);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "no error";
  }

  fs::path root_ = fs::temp_directory_path() / ("hpctrain-data-test-" + std::to_string(getpid()));
  std::FILE* log_ = std::tmpfile();
};

TEST_F(DataPipelineTest, CodeRoundTripsWithIndentationAndBlankLines) {
  auto result = prepare(experiment(), log_);
  const Tokenizer tokenizer = Tokenizer::load(result.dir / "tokenizer.model");
  EXPECT_EQ(tokenizer.decode(tokenizer.encode(kCode)), kCode);
  const std::string odd = "\n\n  \n\t\tx = '\\x00'  \r\n    # ∑ 🚀 — unseen characters fall back to bytes\n";
  EXPECT_EQ(tokenizer.decode(tokenizer.encode(odd)), odd);
  const auto ids = tokenizer.encode("a\nb");
  EXPECT_EQ(ids.size(), 3U) << "a newline is one token";
}

// A prompt ending in a space is cut where training text never is: healing
// takes the lone space off and lets the first token be any that starts with it.
TEST_F(DataPipelineTest, APromptsLastTokenIsHealedIntoTheTokensThatExtendIt) {
  const auto result = prepare(experiment(), log_);
  const Tokenizer tokenizer = Tokenizer::load(result.dir / "tokenizer.model");
  std::vector<int> ids = tokenizer.encode("def ");
  // Training text has "def" + a token starting with " " (" g", " greet"...).
  const std::vector<int> whole = tokenizer.encode("def greet");
  ASSERT_GE(whole.size(), 2U);
  ASSERT_EQ(tokenizer.decode({whole[0]}), "def");
  ASSERT_EQ(ids.size(), 2U);
  ASSERT_NE(ids.back(), whole[1]) << "\"def \" ends in a token \"def greet\" does not have";
  const auto healed = heal_prompt_end(tokenizer, ids);
  ASSERT_TRUE(healed.has_value());
  EXPECT_EQ(healed->cut, " ");
  EXPECT_EQ(ids, std::vector<int>{whole.front()}) << "the prompt is \"def\" now";
  EXPECT_TRUE(healed->allowed[static_cast<std::size_t>(whole[1])]) << "\"def greet\"'s second token extends the cut";
  int allowed = 0;
  for (int id = 0; id < tokenizer.vocab_size(); ++id) {
    if (!healed->allowed[static_cast<std::size_t>(id)]) continue;
    ++allowed;
    EXPECT_EQ(tokenizer.decode({id}).rfind(' ', 0), 0U) << "token " << id << " does not start with the cut space";
  }
  EXPECT_GT(allowed, 10);
  EXPECT_FALSE(healed->allowed[static_cast<std::size_t>(tokenizer.encode("1").front())]);
  std::vector<int> none;
  EXPECT_FALSE(heal_prompt_end(tokenizer, none).has_value());
}

TEST_F(DataPipelineTest, PreparesCountsAndReusesAnUnchangedDataSet) {
  const auto first = prepare(experiment(), log_);
  EXPECT_FALSE(first.reused);
  EXPECT_EQ(first.stats.files, 7U);
  EXPECT_EQ(first.stats.duplicates_removed, 1U);
  EXPECT_EQ(first.stats.documents, 6U);
  EXPECT_GT(first.stats.tokens, 1000U);
  EXPECT_GT(first.stats.characters_per_token, 1.0);
  EXPECT_GE(first.stats.subword_fertility, 1.0);
  EXPECT_TRUE(fs::exists(first.dir / "meta.json"));

  const auto again = prepare(experiment(), log_);
  EXPECT_TRUE(again.reused);
  EXPECT_EQ(again.fingerprint, first.fingerprint);
  EXPECT_EQ(again.stats.tokens, first.stats.tokens);

  file("corpus/new.py", "print('new input')\n");
  const auto changed = prepare(experiment(), log_);
  EXPECT_FALSE(changed.reused);
  EXPECT_NE(changed.fingerprint, first.fingerprint);
}

TEST_F(DataPipelineTest, PreparationIsDeterministic) {
  const auto a = prepare(experiment(), log_);
  const auto a_meta = a.tokenizer_hash;
  fs::remove_all(a.dir);
  const auto b = prepare(experiment(), log_);
  EXPECT_EQ(b.tokenizer_hash, a_meta);
  EXPECT_EQ(b.stats.tokens, a.stats.tokens);
}

TEST_F(DataPipelineTest, ATestSplitComesFromTrainingNeverFromValidation) {
  for (int d = 0; d < 60; ++d)
    file("corpus/more/m" + std::to_string(d) + ".py", "x = " + std::to_string(d * 7919) + "\n");
  const auto before = prepare(experiment({"data.validation_fraction=0.2"}), log_);
  EXPECT_THROW(TokenDataset(before.dir, "test", 4), DataError);
  EXPECT_EQ(before.stats.test_tokens, 0U);
  // The same tokenizer, so that token counts compare: only the split changes.
  fs::copy_file(before.dir / "tokenizer.model", root_ / "tokenizer.model");
  const auto after = prepare(experiment({"data.validation_fraction=0.2", "data.test_fraction=0.3",
                                         "data.tokenizer=" + (root_ / "tokenizer.model").string()}),
                             log_);
  EXPECT_NE(after.fingerprint, before.fingerprint);
  EXPECT_EQ(after.stats.validation_tokens, before.stats.validation_tokens);
  EXPECT_GT(after.stats.test_tokens, 0U);
  EXPECT_EQ(after.stats.train_tokens + after.stats.test_tokens, before.stats.train_tokens);
  const TokenDataset test(after.dir, "test", 4, after.tokenizer_hash);
  EXPECT_EQ(test.size(), (after.stats.test_tokens - 1) / 4);
  EXPECT_EQ(test.split(), "test");
}

// data.document_starts cuts each file after the split, at lines alone: the
// same tokens with one </s> more per piece, every file's pieces in its split.
TEST_F(DataPipelineTest, DocumentStartsCutFilesIntoDocumentsWithinTheirSplit) {
  const auto whole = prepare(experiment({"data.validation_fraction=0.3"}), log_);
  fs::copy_file(whole.dir / "tokenizer.model", root_ / "tokenizer.model");
  const std::string tokenizer = "data.tokenizer=" + (root_ / "tokenizer.model").string();
  const auto same = prepare(experiment({"data.validation_fraction=0.3", tokenizer}), log_);
  ASSERT_EQ(same.stats.tokens, whole.stats.tokens);
  const auto cut = prepare(
      experiment({"data.validation_fraction=0.3", tokenizer, R"(data.document_starts=["def ", "class ", "@"])"}), log_);
  EXPECT_NE(cut.fingerprint, same.fingerprint);
  EXPECT_GT(cut.stats.documents, same.stats.documents + 10);
  EXPECT_EQ(cut.stats.tokens - same.stats.tokens, cut.stats.documents - same.stats.documents);
  EXPECT_GE(cut.stats.train_tokens, same.stats.train_tokens);
  EXPECT_GT(cut.stats.validation_tokens, same.stats.validation_tokens);  // a file with definitions is there
  const std::string refused = error_of({R"(data.document_starts=["def ", ""])"});
  EXPECT_NE(refused.find("data.document_starts holds an empty prefix"), std::string::npos) << refused;
}

TEST_F(DataPipelineTest, LoaderReadsFixedLengthSamplesFromTheShards) {
  const auto result = prepare(experiment(), log_);
  const TokenDataset train(result.dir, "train", 16, result.tokenizer_hash);
  EXPECT_EQ(train.size(), (result.stats.train_tokens - 1) / 16);
  std::vector<std::int64_t> a(17), b(17);
  train.read(0, a.data());
  train.read(1, b.data());
  EXPECT_EQ(a[16], b[0]) << "consecutive samples share their boundary token";
  for (auto t : a) EXPECT_LT(t, train.vocab_size());
  EXPECT_THROW(train.read(train.size(), a.data()), DataError);
}

TEST_F(DataPipelineTest, ShardsFromAnotherTokenizerAreRefused) {
  const auto result = prepare(experiment(), log_);
  try {
    const TokenDataset wrong(result.dir, "train", 16, std::string(64, '0'));
    FAIL() << "accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("were made with tokenizer " + result.tokenizer_hash), std::string::npos)
        << e.what();
  }
}

TEST_F(DataPipelineTest, TruncatedShardIsNamed) {
  const auto result = prepare(experiment(), log_);
  fs::resize_file(result.dir / "train-000.bin", 10);
  try {
    const TokenDataset broken(result.dir, "train", 16);
    FAIL() << "accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("train-000.bin: 10 bytes"), std::string::npos) << e.what();
  }
}

TEST_F(DataPipelineTest, BadInputIsSkippedAndCountedOrNamedWithItsLine) {
  file("corpus/blob.py", std::string("abc\0def", 7));
  file("corpus/latin1.py", "ok = 1\nname = 'caf\xe9'\n");
  file("corpus/docs.jsonl", "{\"text\": \"good line\"}\nnot json\n{\"body\": \"no text field\"}\n[1, 2]\n");
  const auto result = prepare(experiment({"data.glob=*"}), log_);
  EXPECT_EQ(result.stats.skipped.at("binary file"), 1U);
  EXPECT_EQ(result.stats.skipped.at("not UTF-8"), 1U);
  EXPECT_EQ(result.stats.skipped.at("JSONL line is not JSON"), 1U);
  EXPECT_EQ(result.stats.skipped.at("JSONL line without the text field"), 2U);

  const std::string strict = error_of({"data.glob=*", "data.on_bad_input=error"});
  EXPECT_NE(strict.find((root_ / "corpus/blob.py").string() + ": binary file (NUL byte at offset 3)"),
            std::string::npos)
      << strict;
  fs::remove(root_ / "corpus/blob.py");
  const std::string jsonl = error_of({"data.glob=*.jsonl", "data.on_bad_input=error"});
  EXPECT_NE(jsonl.find((root_ / "corpus/docs.jsonl").string() + ":2: not JSON"), std::string::npos) << jsonl;
  fs::remove(root_ / "corpus/docs.jsonl");
  const std::string utf8 = error_of({"data.glob=latin1.py", "data.on_bad_input=error"});
  EXPECT_NE(utf8.find((root_ / "corpus/latin1.py").string() + ":2: invalid UTF-8"), std::string::npos) << utf8;
}

// Lines as a Hugging Face dataset's to_json writes them (pandas's records,
// one per line, ASCII-only): every column, "/" escaped, non-ASCII as \u
// escapes, astral characters as surrogate pairs (docs/data.md).
TEST_F(DataPipelineTest, AHuggingFaceJsonExportIsReadByItsTextColumn) {
  file(
      "hf/train.jsonl",
      R"({"repo_name":"octo\/demo","path":"src\/caf\u00e9.py","copies":"2","content":"def caf\u00e9():\n    return \"\ud83d\ude00\" + '\\\/'\n","size":"41"})"
      "\n"
      R"({"repo_name":"octo\/demo","path":"b.py","copies":"1","content":"x = 1\n","size":"6"})"
      "\n");
  config::DataConfig data;
  data.text_field = "content";
  DocumentReader reader(data);
  std::vector<Document> documents;
  const fs::path path = root_ / "hf/train.jsonl";
  reader.read({path, InputFormat::kJsonl, fs::file_size(path), 0}, documents);
  ASSERT_EQ(documents.size(), 2U);
  EXPECT_EQ(documents[0].text, "def caf\u00e9():\n    return \"\U0001F600\" + '\\/'\n");
  EXPECT_EQ(documents[1].text, "x = 1\n");
  EXPECT_TRUE(reader.skipped().empty());
}

TEST_F(DataPipelineTest, MissingPathsAndEmptyCorporaAreErrors) {
  EXPECT_EQ(error_of({"data.sources=[\"/no/such/dir\"]"}), "data.sources: '/no/such/dir' does not exist");
  EXPECT_NE(error_of({"data.glob=*.nothing"}).find("matches data.glob '*.nothing'"), std::string::npos);
  file("empty/blank.txt", "");
  const std::string empty = error_of({"data.sources=[\"" + (root_ / "empty").string() + "\"]"});
  EXPECT_NE(empty.find("the corpus is empty after filtering"), std::string::npos) << empty;
}

}  // namespace
}  // namespace hpctrain::data
