#include "cli/inference_commands.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <stdexcept>

#include "cli/agreed_failure.h"
#include "cli/world_options.h"
#include "cluster/environment.h"
#include "comm/world.h"
#include "handles/mpi.h"
#include "runtime/allocator.h"
#include "support/text.h"
#include "train/evaluator.h"
#include "train/generate.h"
#include "train/preemption.h"
#include "train/run_setup.h"
#include "train/trained_model.h"

namespace hpctrain::cli {
namespace {

// A damaged newer checkpoint is passed over, but never silently.
std::function<void(const ckpt_file::Verdict&)> report_skipped(bool speaks) {
  return [speaks](const ckpt_file::Verdict& v) {
    if (speaks) fmt::print(stderr, "{}\n", ckpt_file::skipped_message(v));
  };
}

}  // namespace

void run_eval(const std::string& target, const std::vector<std::string>& overrides, const EvalOptions& options) {
  const auto env = cluster::Environment::current();
  handles::MpiRuntime mpi;
  // Nothing here to checkpoint: a signal ends the evaluation with exit 75
  // (after MPI starts, whose library may have taken SIGUSR1 for itself).
  train::exit_on_any_preemption_signal();
  finalize_after_agreed_failure(mpi, [&] {
    auto trained = train::load_trained_model(target, overrides, report_skipped(mpi.world_rank() == 0), options.weights);
    auto& e = trained.experiment;
    if (options.split == "test") {
      if (!e.data.has_test_split()) {
        throw std::runtime_error(
            fmt::format("{}: its data set has no test split (data.test_fraction = 0, no "
                        "data.test_sources)",
                        trained.checkpoint.string()));
      }
      e.eval.test = true;
    }
    comm::World world(mpi, env, world_options(e.parallel));
    runtime::apply_threads(train::thread_plan(e, env, world.local_size()).threads);
    // Scoring a split allocates and frees the same logits batch after batch, as
    // training does: without the training heap policy, glibc maps and unmaps
    // them each time (6x slower on the quickstart's validation split).
    (void)runtime::keep_freed_memory(env);
    const train::Evaluator evaluator(e, trained.tokenizer ? &*trained.tokenizer : nullptr);
    train::EvalResult r;
    if (options.split == "test") {
      r = *evaluator.test(*trained.model, world.comm());
    } else if (options.sample) {
      r = evaluator.periodic(*trained.model, world.comm()).sample;
    } else {
      r = evaluator.full(*trained.model, world.comm());
    }
    if (world.rank() == 0) {
      if (trained.hugging_face) {
        fmt::print("Hugging Face model {} ({})\n", trained.checkpoint.string(), config::name_of(e.model.kind));
      } else {
        fmt::print("checkpoint {} (step {}, trained on {} rank{}{})\n", trained.checkpoint.string(), trained.info.step,
                   trained.info.world_size, trained.info.world_size == 1 ? "" : "s",
                   options.weights.ema ? ", the moving average of its weights" : "");
      }
      fmt::print("{} loss {:.4f}, perplexity {:.3f} over {}{}\n", r.split == "test" ? "test" : "validation", r.loss,
                 r.perplexity, r.coverage(),
                 trained.model->objective() == model::Objective::kMasked
                     ? fmt::format(", masked-token accuracy {:.2f}%", 100 * r.masked_accuracy)
                     : "");
    }
    // Every rank holds the reduced result, so every rank refuses alike.
    if (r.tokens <= 0) {
      throw std::runtime_error(
          fmt::format("{}: the {} split holds no whole sequence of data.seq_len {}: nothing was "
                      "scored",
                      e.data.dir, r.split == "test" ? "test" : "validation", e.data.seq_len));
    }
    if (!std::isfinite(r.loss)) {
      throw std::runtime_error(fmt::format("{}: the {} loss is {}: the model computes no finite loss on it",
                                           trained.checkpoint.string(), r.split == "test" ? "test" : "validation",
                                           r.loss));
    }
    world.comm().barrier();
  });
}

void run_generate(const std::string& target, const GenerateOptions& options) {
  train::exit_on_any_preemption_signal();
  auto trained = train::load_trained_model(target, {}, report_skipped(true), options.weights);
  const auto& e = trained.experiment;
  if (trained.model->objective() != model::Objective::kCausal) {
    throw std::runtime_error(fmt::format("{}: a {} model does not generate text; use a gpt or mlp run",
                                         trained.checkpoint.string(), config::name_of(e.model.kind)));
  }
  if (!trained.tokenizer) {
    throw std::runtime_error(
        fmt::format("{}: trained on token files with no tokenizer (data.tokenizer), so it has none to turn a prompt "
                    "into tokens and tokens into text; `hpctrain eval` scores it",
                    trained.checkpoint.string()));
  }
  const auto env = cluster::Environment::current();
  runtime::apply_threads(train::thread_plan(e, env, 1).threads);
  (void)runtime::keep_freed_memory(env);  // one forward pass per token: the same buffers again and again
  // What the model writes is the tokenizer's pieces, which a hostile model
  // file chooses: control characters are shown escaped, lines and tabs kept.
  fmt::print("{}\n",
             support::printable_lines(train::generate(
                 *trained.model, *trained.tokenizer, options.prompt.value_or(e.eval.prompt),
                 options.tokens.value_or(e.eval.sample_tokens), options.temperature.value_or(e.eval.temperature),
                 options.top_k.value_or(e.eval.top_k), e.model.max_seq_len, options.seed.value_or(e.job.seed))));
}

}  // namespace hpctrain::cli
