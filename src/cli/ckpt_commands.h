// `hpctrain ckpt inspect|verify|export`: reading checkpoints without training.
#pragma once

#include "train/trained_model.h"

#include <ostream>
#include <string>
#include <vector>

namespace hpctrain::cli {

// Provenance, training position and a table of what the file holds (every
// dataset with `all`; the stored config with `config`).
void run_ckpt_inspect(const std::string& target, bool all, bool config, std::ostream& out);

// Each file, or every checkpoint of each run directory: OK or BAD with the
// reasons. Returns the number of bad checkpoints.
int run_ckpt_verify(const std::vector<std::string>& targets, std::ostream& out);

// The model weights of a checkpoint (or a run's newest, or best): the trained
// weights or their moving average. `format` "hpctrain": one safetensors file
// with hpctrain's parameter names; "hf": a Hugging Face model directory
// (ckpt/hf_export.h).
void run_ckpt_export(const std::string& target, const std::string& out_file, train::WeightsChoice weights,
                     const std::string& format, std::ostream& out);

}  // namespace hpctrain::cli
