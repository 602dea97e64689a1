// `hpctrain ckpt export RUN --format hf --out DIR`: a checkpoint as a Hugging
// Face model directory: config.json (GPT2Config or LlamaConfig fields),
// model.safetensors with HF's names and layouts (ckpt/hf_layout.h, float32),
// generation_config.json (the run's sampling settings), and, when the run has
// a tokenizer, tokenizer.model (the SentencePiece model itself) with
// tokenizer_config.json and special_tokens_map.json naming its special
// pieces. DIR must not exist (its parent must), or be empty, or hold an
// earlier export (config.json says so): nothing else is replaced.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "ckpt/safetensors_export.h"
#include "config/experiment.h"

namespace hpctrain::ckpt {

struct HfExportRequest {
  std::filesystem::path checkpoint;
  config::Experiment experiment;  // the checkpoint's stored config, resolved
  std::filesystem::path out_dir;
  std::string group = "model";                 // or "ema", the moving average
  std::optional<std::string> tokenizer_model;  // the SentencePiece model's bytes
};

ExportResult export_hf(const HfExportRequest& request);

}  // namespace hpctrain::ckpt
