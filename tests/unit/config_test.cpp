// The experiment schema: defaults, overrides, and errors located at
// file:line:column (or at the --set that caused them).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "config/config_error.h"
#include "config/experiment.h"
#include "config/experiment_table.h"
#include "config/section_reader.h"

namespace hpctrain::config {
namespace {

class ConfigTest : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_.string();
  }
  std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
    try {
      load_experiment(write(text), overrides);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  }
  std::filesystem::path path_ =
      std::filesystem::temp_directory_path() / ("hpctrain-config-test-" + std::to_string(::getpid()) + ".toml");
  ~ConfigTest() override { std::filesystem::remove(path_); }
};

TEST_F(ConfigTest, DefaultsFillEveryKey) {
  const auto e = load_experiment(write("[data]\nvocab_size = 4096\n"));
  EXPECT_EQ(e.job.name, path_.stem().string());
  EXPECT_EQ(e.job.run_dir, "runs/" + e.job.name);
  EXPECT_EQ(e.data.vocab_size, 4096);
  EXPECT_EQ(e.data.seq_len, 256);
  EXPECT_EQ(e.data.sources, std::vector<std::string>{"@python-stdlib"});
  EXPECT_NE(e.resolved_toml.find("vocab_size = 4096"), std::string::npos) << e.resolved_toml;
  EXPECT_NE(e.resolved_toml.find("seq_len = 256"), std::string::npos) << e.resolved_toml;
}

TEST_F(ConfigTest, CommandLineBeatsFileBeatsDefault) {
  const auto e = load_experiment(write("[data]\nvocab_size = 4096\nseq_len = 64\n"),
                                 {"data.vocab_size=1024", "job.name=override", "data.glob=*.txt"});
  EXPECT_EQ(e.data.vocab_size, 1024);
  EXPECT_EQ(e.data.seq_len, 64);
  EXPECT_EQ(e.job.name, "override");
  EXPECT_EQ(e.data.glob, "*.txt");  // a bare string needs no TOML quotes
  EXPECT_EQ(e.data.dir, "data/override");
}

TEST_F(ConfigTest, SyntaxErrorsCarryLineAndColumn) {
  EXPECT_EQ(error_of("[data]\nseq_len = = 3\n").rfind(path_.string() + ":2:11: ", 0), 0U)
      << error_of("[data]\nseq_len = = 3\n");
}

TEST_F(ConfigTest, WrongTypesAndRangesCarryLineAndColumn) {
  EXPECT_EQ(error_of("[job]\nseed = 1\n\n[data]\n  vocab_size = \"big\"\n"),
            path_.string() + ":5:16: data.vocab_size: expected an integer, got a string");
  EXPECT_EQ(error_of("[data]\nvalidation_fraction = 0.9\n"),
            path_.string() + ":2:23: data.validation_fraction: 0.9 is out of range [0, 0.5]");
  EXPECT_EQ(error_of("[data]\nsources = [\"a\", 3]\n"),
            path_.string() + ":2:17: data.sources: expected an array of strings, but an element is an integer");
}

TEST_F(ConfigTest, UnknownKeysAndSectionsSuggestTheClosest) {
  EXPECT_EQ(error_of("[data]\nvocab_sise = 4096\n"),
            path_.string() + ":2:1: unknown key data.vocab_sise (did you mean data.vocab_size?)");
  EXPECT_EQ(error_of("[dta]\n"), path_.string() + ":1:1: unknown section [dta] (did you mean [data]?)");
  EXPECT_EQ(error_of("[data]\ntokenizer_model = \"bep\"\n"),
            path_.string() + ":2:19: data.tokenizer_model: 'bep' is not one of bpe, unigram (did you mean 'bpe'?)");
}

TEST_F(ConfigTest, TheCommunicatorsWaitIsAChoice) {
  EXPECT_EQ(load_experiment(write("")).parallel.comm_wait, CommWait::kYield);
  EXPECT_EQ(load_experiment(write("[parallel]\ncomm_wait = \"sleep\"\n")).parallel.comm_wait, CommWait::kSleep);
  EXPECT_EQ(load_experiment(write(""), {"parallel.comm_wait=spin"}).parallel.comm_wait, CommWait::kSpin);
  EXPECT_EQ(
      error_of("[parallel]\ncomm_wait = \"spinn\"\n"),
      path_.string() + ":2:13: parallel.comm_wait: 'spinn' is not one of spin, yield, sleep (did you mean 'spin'?)");
}

// tie_embeddings: llama's choice; gpt and bert are tied and the mlp is not,
// so an experiment for a tied llama reads as a gpt, never the other way round.
TEST_F(ConfigTest, TieEmbeddingsIsLlamasChoiceAndTheOtherKindsFixed) {
  const std::string tied_llama = "[model]\nkind = \"llama\"\ntie_embeddings = true\n";
  EXPECT_TRUE(load_experiment(write(tied_llama)).model.tie_embeddings);
  EXPECT_FALSE(load_experiment(write("[model]\nkind = \"llama\"\n")).model.tie_embeddings);
  EXPECT_TRUE(load_experiment(write(tied_llama), {"model.kind=gpt"}).model.tie_embeddings);
  EXPECT_TRUE(load_experiment(write(tied_llama), {"model.kind=bert"}).model.tie_embeddings);
  EXPECT_TRUE(load_experiment(write("[model]\nkind = \"gpt\"\n")).model.tie_embeddings);
  EXPECT_FALSE(load_experiment(write("[model]\nkind = \"mlp\"\n")).model.tie_embeddings);
  const std::string untied_gpt = error_of("[model]\nkind = \"gpt\"\ntie_embeddings = false\n");
  EXPECT_NE(untied_gpt.find("model.kind = \"gpt\" ties its output layer to the token embedding"), std::string::npos)
      << untied_gpt;
  EXPECT_NE(untied_gpt.find(":3:"), std::string::npos) << untied_gpt;  // where tie_embeddings is set
  const std::string tied_mlp = error_of(tied_llama, {"model.kind=mlp"});
  EXPECT_NE(tied_mlp.find("model.kind = \"mlp\" has an output layer of its own"), std::string::npos) << tied_mlp;
}

// A quantized merge wire carries a mean: DDAP's average or diloco, never DDP or ties.
TEST_F(ConfigTest, AQuantizedMergeWireNeedsAMeanRuleOfDdap) {
  const auto e = load_experiment(write("[parallel]\nreducer = \"ddap\"\nmerge = \"diloco\"\nmerge_wire = \"int8\"\n"));
  EXPECT_EQ(e.parallel.merge_wire, WireCodec::kInt8);
  EXPECT_EQ(load_experiment(write("")).parallel.merge_wire, WireCodec::kFp32);
  EXPECT_EQ(
      load_experiment(write("[parallel]\nreducer = \"ddap\"\n"), {"parallel.merge_wire=int4"}).parallel.merge_wire,
      WireCodec::kInt4);
  EXPECT_EQ(
      load_experiment(write("[parallel]\nreducer = \"ddap\"\n"), {"parallel.merge_wire=int2"}).parallel.merge_wire,
      WireCodec::kInt2);
  EXPECT_NE(error_of("[parallel]\nmerge_wire = \"int8\"\n").find("parallel.merge_wire is how DDAP's merges travel"),
            std::string::npos);
  const std::string ties = error_of("[parallel]\nreducer = \"ddap\"\nmerge = \"ties\"\n", {"parallel.merge_wire=int8"});
  EXPECT_NE(ties.find("merge = \"ties\" needs each rank's signs"), std::string::npos) << ties;
  EXPECT_NE(ties.find(":3:"), std::string::npos) << ties;  // where merge is set
}

// The synchronous steps' wire: DDAP's, with synchronous steps to carry.
TEST_F(ConfigTest, ASyncWireNeedsDdapsSynchronousSteps) {
  const auto e = load_experiment(write("[parallel]\nreducer = \"ddap\"\nsync_steps = 30\nsync_wire = \"int4\"\n"));
  EXPECT_EQ(e.parallel.sync_wire, WireCodec::kInt4);
  EXPECT_EQ(load_experiment(write("[parallel]\nreducer = \"ddap\"\nsync_steps = 30\n"), {"parallel.sync_wire=int2"})
                .parallel.sync_wire,
            WireCodec::kInt2);
  EXPECT_EQ(load_experiment(write("")).parallel.sync_wire, WireCodec::kFp32);
  const std::string none = error_of("[parallel]\nreducer = \"ddap\"\nsync_wire = \"int8\"\n");
  EXPECT_NE(none.find("parallel.sync_wire is how DDAP's synchronous steps' gradients travel"), std::string::npos)
      << none;
  EXPECT_NE(none.find(":3:"), std::string::npos) << none;  // where sync_wire is set
  const std::string ddp = error_of("[parallel]\nsync_wire = \"int8\"\n");
  EXPECT_NE(ddp.find("needs parallel.reducer = \"ddap\" and parallel.sync_steps > 0"), std::string::npos) << ddp;
}

// DDP's gradient wire: the codecs of DDAP's wires, for DDP's allreduce only.
TEST_F(ConfigTest, AGradientWireIsDdpsAllreduce) {
  EXPECT_EQ(load_experiment(write("[parallel]\ngradient_wire = \"int4\"\n")).parallel.gradient_wire, WireCodec::kInt4);
  EXPECT_EQ(load_experiment(write("")).parallel.gradient_wire, WireCodec::kFp32);
  for (const char* other : {"reducer = \"ddap\"", "zero = 1", "bf16_compression = true"}) {
    const std::string error = error_of(fmt::format("[parallel]\n{}\ngradient_wire = \"int8\"\n", other));
    EXPECT_NE(error.find("parallel.gradient_wire = \"int8\" is how DDP's gradient buckets travel"), std::string::npos)
        << other << ": " << error;
  }
}

// Streaming merges: DDAP's, at most one fragment a step, one in flight, the
// weights only; each refusal names where its keys are set.
TEST_F(ConfigTest, MergeFragmentsAreDdapsOneInFlightWeightsOnly) {
  const std::string ddap = "[parallel]\nreducer = \"ddap\"\nmerge_every = 16\n";
  EXPECT_EQ(load_experiment(write(ddap + "merge_fragments = 4\n")).parallel.merge_fragments, 4);
  EXPECT_EQ(load_experiment(write("")).parallel.merge_fragments, 1);
  const std::string ddp = error_of("[parallel]\nmerge_fragments = 2\n");
  EXPECT_NE(ddp.find("parallel.merge_fragments streams DDAP's merges"), std::string::npos) << ddp;
  const std::string many = error_of(ddap + "merge_fragments = 17\n");
  EXPECT_NE(many.find("merge_fragments = 17 is more than merge_every = 16"), std::string::npos) << many;
  EXPECT_NE(many.find(":4:"), std::string::npos) << many;
  const std::string moments = error_of(ddap + "merge_fragments = 2\nmerge_moments = true\n");
  EXPECT_NE(moments.find("cannot stream in fragments"), std::string::npos) << moments;
  // H / P = 4 steps between two fragments' merges: a delay of 4 fits, 5 does not.
  const std::string overlapped = ddap + "merge_fragments = 4\nmerge_mode = \"overlapped\"\n";
  EXPECT_EQ(load_experiment(write(overlapped), {"parallel.merge_delay=4"}).parallel.merge_delay, 4);
  const std::string delay = error_of(overlapped, {"parallel.merge_delay=5"});
  EXPECT_NE(delay.find("merge_delay = 5 is longer than the 4 step(s) between two fragments' merges"), std::string::npos)
      << delay;
}

TEST_F(ConfigTest, EvaluationKeys) {
  const auto defaults = load_experiment(write(""));
  EXPECT_EQ(defaults.eval.samples, 512);
  EXPECT_EQ(defaults.eval.final_eval, EvalFinal::kFull);
  EXPECT_TRUE(defaults.checkpoint.keep_best);
  EXPECT_EQ(defaults.training.ema_decay, 0.0);
  EXPECT_EQ(defaults.data.test_fraction, 0.0);
  const auto e = load_experiment(write("[eval]\nsamples = 64\nfinal = \"sample\"\n[data]\ntest_fraction = 0.1\n"),
                                 {"training.ema_decay=0.99", "checkpoint.keep_best=false"});
  EXPECT_EQ(e.eval.samples, 64);
  EXPECT_EQ(e.eval.final_eval, EvalFinal::kSample);
  EXPECT_EQ(e.data.test_fraction, 0.1);
  EXPECT_EQ(e.training.ema_decay, 0.99);
  EXPECT_FALSE(e.checkpoint.keep_best);
  EXPECT_EQ(error_of("[eval]\nfinal = \"all\"\n"),
            path_.string() + ":2:9: eval.final: 'all' is not one of full, sample (did you mean 'full'?)");
  EXPECT_EQ(error_of("", {"training.ema_decay=1"}),
            "--set training.ema_decay=1: training.ema_decay: 1 is out of range [0, 0.999999]");
  EXPECT_EQ(error_of("[data]\nvalidation_fraction = 0.5\ntest_fraction = 0.5\n"),
            path_.string() + ":2:23, " + path_.string() +
                ":3:17: data.validation_fraction + data.test_fraction = 1 leaves no training split");
  // eval.batches, from experiments and stored configs made before eval.samples:
  // accepted, noted, and gone from the resolved config.
  const auto old = load_experiment(write("[eval]\nbatches = 8\n"));
  EXPECT_TRUE(old.eval.retired_batches);
  EXPECT_EQ(old.resolved_toml.find("batches"), std::string::npos);
  EXPECT_FALSE(defaults.eval.retired_batches);
}

TEST_F(ConfigTest, OverrideErrorsNameTheOverride) {
  EXPECT_EQ(error_of("", {"data.vocab_size=12"}),
            "--set data.vocab_size=12: data.vocab_size: 12 is out of range [300, 1048576]");
  EXPECT_EQ(error_of("", {"vocab_size=12"}), "--set vocab_size=12: expected section.key=value");
  EXPECT_EQ(error_of("", {"data.seq_len=long"}),
            "--set data.seq_len=long: data.seq_len: expected an integer, got a string");
}

// jobgen reads [slurm] and [sweep] from the table and resolves each sweep
// point: every reader must still see where each value came from (a copied
// toml++ table has lost it: "<input>:0:0").
TEST_F(ConfigTest, AnExperimentSourceKeepsEveryValuesOrigin) {
  const ExperimentSource source(write("[slurm]\nnodes = 2\n[training]\nsteps = 5\n"), {"slurm.time=\"00:10:00\""});
  const toml::table table = source.table({"slurm.partition=debug"});
  EXPECT_EQ(location(table.at_path("slurm.nodes").node()->source()), path_.string() + ":2:9");
  EXPECT_EQ(location(table.at_path("slurm.time").node()->source()), "--set slurm.time=\"00:10:00\"");
  EXPECT_EQ(location(table.at_path("slurm.partition").node()->source()), "--set slurm.partition=debug");
  EXPECT_EQ(source.resolve().training.steps, 5);
  EXPECT_EQ(source.resolve({"training.steps=7"}).training.steps, 7);
  try {
    (void)source.resolve({"training.steps=-1"});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--set training.steps=-1: ", 0), 0U) << e.what();
  }
  write("[training]\nsteps = -1\n");
  try {
    (void)ExperimentSource(path_.string(), {}).resolve();
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path_.string() + ":2:9: ", 0), 0U) << e.what();
  }
}

// A --set value that is no TOML is a bare string, non-ASCII text included
// (the TOML pre-scan refuses non-ASCII outside strings; that must not refuse
// the value).
TEST_F(ConfigTest, ANonAsciiOverrideIsABareString) {
  EXPECT_EQ(load_experiment(write(""), {"job.name=d\xc3\xa9j\xc3\xa0"}).job.name, "d\xc3\xa9j\xc3\xa0");
  // Not UTF-8: shown escaped, as every byte a terminal might act on.
  EXPECT_EQ(error_of("", {"job.name=\xff"}).rfind("--set job.name=\\xff: neither a TOML value nor a string", 0), 0U);
}

TEST_F(ConfigTest, MissingFileIsNamed) { EXPECT_THROW(load_experiment("/nonexistent/exp.toml"), ConfigError); }

}  // namespace
}  // namespace hpctrain::config
