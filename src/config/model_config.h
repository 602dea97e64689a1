// [model]: the architecture and its shape.
#pragma once

#include <cstdint>

#include "config/choices.h"
#include "config/data_config.h"

namespace hpctrain::config {

class SectionReader;

enum class ModelKind { kGpt, kBert, kMlp };
// What a parameter is, from its name (model::parameter_kind): weight decay exempts kinds.
enum class ParameterKind { kWeight, kBias, kNorm, kEmbedding };

template <>
struct ChoiceTable<ModelKind> {
  static constexpr std::array<Choice<ModelKind>, 3> entries{
      {{"gpt", ModelKind::kGpt}, {"bert", ModelKind::kBert}, {"mlp", ModelKind::kMlp}}};
};
template <>
struct ChoiceTable<ParameterKind> {
  static constexpr std::array<Choice<ParameterKind>, 4> entries{{{"weight", ParameterKind::kWeight},
                                                                 {"bias", ParameterKind::kBias},
                                                                 {"norm", ParameterKind::kNorm},
                                                                 {"embedding", ParameterKind::kEmbedding}}};
};

struct ModelConfig {
  ModelKind kind = ModelKind::kGpt;  // gpt (causal LM), bert (MLM encoder), mlp (a next-token MLP over a window)
  std::int64_t n_layer = 4;
  std::int64_t n_head = 4;
  std::int64_t d_model = 256;
  std::int64_t max_seq_len = 0;  // default: data.seq_len
  double init_std = 0.02;

  // Reads the section and checks it (errors at the key's file:line:column or --set).
  static ModelConfig read(SectionReader section, const DataConfig& data);
};

}  // namespace hpctrain::config
