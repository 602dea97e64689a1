#include "config/eval_config.h"

#include <fmt/format.h>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::config {

EvalConfig EvalConfig::read(SectionReader section) {
  EvalConfig v;
  v.interval = section.integer("interval", v.interval, 0, kNoLimit);
  v.samples = section.integer("samples", v.samples, 1, std::int64_t{1} << 31);  // data::kMaxEvalSample
  v.final_eval = section.choice("final", v.final_eval);
  v.test = section.boolean("test", v.test);
  v.retired_batches = section.retired("batches");
  v.prompt = section.string("prompt", v.prompt);
  v.sample_tokens = section.integer("sample_tokens", v.sample_tokens, 0, 1 << 20);
  v.temperature = section.number("temperature", v.temperature, 1e-6, 100.0);
  v.top_k = section.integer("top_k", v.top_k, 0, 1 << 20);
  section.finish();
  return v;
}

}  // namespace hpctrain::config
