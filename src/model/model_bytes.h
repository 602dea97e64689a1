// How large a model is, from its configuration alone, before anything is
// allocated: a config.json can ask for a shape that is in range key by key
// and still far larger than the machine (a 7B shape beside a 0.3 MB weights
// file), and LibTorch then fails deep in its allocator, or std::bad_alloc
// says nothing. make_model refuses such a model first, naming the keys.
#pragma once

#include <cstdint>
#include <string>

#include "config/choices.h"
#include "config/model_config.h"

namespace hpctrain::model {

// The parameters make_model builds for `config` (within a few percent: biases
// and norms are counted as the model kind has them), in double so that no
// hostile shape can overflow the count.
double estimated_parameters(const config::ModelConfig& config, std::int64_t vocab_size);

// Throws std::runtime_error naming the shape's keys and the figure when the
// float32 weights alone would need more than `memory_bytes` (the machine's
// physical memory when 0).
void refuse_model_beyond_memory(const config::ModelConfig& config, std::int64_t vocab_size, double memory_bytes = 0);

// The machine's physical memory in bytes.
double physical_memory_bytes();

}  // namespace hpctrain::model
