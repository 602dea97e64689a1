// Where each of hpctrain's parameters sits in a Hugging Face checkpoint of
// the same architecture: gpt as GPT2LMHeadModel, llama as LlamaForCausalLM.
//   gpt:   tok_emb -> transformer.wte, pos_emb -> wpe, blocks.i -> h.i with
//          ln1/ln2 -> ln_1/ln_2, attn.qkv -> attn.c_attn, attn.proj ->
//          attn.c_proj, mlp.fc -> mlp.c_fc, mlp.proj -> mlp.c_proj, ln_f ->
//          ln_f. GPT-2's Conv1D stores a linear map as [in, out], the
//          transpose of ours; the qkv split [q | k | v] is the same. The
//          output layer is the token embedding in both.
//   llama: tok_emb -> model.embed_tokens, blocks.i -> model.layers.i with
//          ln1 -> input_layernorm, attn.{q,k,v,o}_proj -> self_attn.*, ln2 ->
//          post_attention_layernorm, mlp.{gate,up,down} -> mlp.*_proj,
//          ln_f -> model.norm, lm_head -> lm_head (absent when tied). Our
//          RoPE rotates halves as HF's does, so q and k need no permutation
//          (that permutation is between Meta's interleaved layout and HF's).
//   bert (norm_position = "post") as BertForMaskedLM: tok_emb/pos_emb ->
//          bert.embeddings.{word,position}_embeddings, emb_ln ->
//          embeddings.LayerNorm, blocks.i -> bert.encoder.layer.i with
//          attn.qkv split in three -> attention.self.{query,key,value},
//          attn.proj -> attention.output.dense, ln1 ->
//          attention.output.LayerNorm, mlp.fc -> intermediate.dense,
//          mlp.proj -> output.dense, ln2 -> output.LayerNorm; mlm.{dense,ln}
//          -> cls.predictions.transform.{dense,LayerNorm}, mlm.bias ->
//          cls.predictions.bias; the decoder is the word embedding. BERT's
//          token type embeddings have no counterpart: the export writes one
//          row of zeros, the import adds row 0 (type 0, the only one
//          hpctrain feeds) to the position embeddings.
// A pre-LayerNorm bert and mlp have no HF class that computes what they
// compute: asking for their layout throws, naming the difference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/model_config.h"

namespace hpctrain::ckpt {

struct HfTensorName {
  std::string hf;    // the name in HF's state dict
  std::string ours;  // the parameter's name in hpctrain's model
  bool transposed;   // HF stores the transpose (GPT-2's Conv1D)
  // HF's tensor is rows [part, part + 1) / parts of ours (BERT's separate
  // query, key and value of our fused qkv); 0 of 1 is the whole tensor.
  int part = 0;
  int parts = 1;
};

// An HF tensor that is tied to one of ours: a file may hold it (a state dict
// saved without deduplication), and then it must equal that parameter.
struct HfTiedName {
  std::string hf;
  std::string ours;
};

// BertForMaskedLM's token type embeddings (see above).
inline constexpr const char* kBertTokenTypes = "bert.embeddings.token_type_embeddings.weight";

// Every parameter of `model`, in the HF model's order.
std::vector<HfTensorName> hf_layout(const config::ModelConfig& model);

// The shape HF stores `name` (one of hf_layout(model)) in, for a vocabulary
// of `vocab_size`, from the configuration alone: an import compares a file's
// headers with it before the model is built, so a config.json that asks for
// gigabytes its weights file does not hold is refused before they are
// allocated. Throws std::logic_error for a name hf_layout never gives.
std::vector<std::int64_t> hf_shape(const HfTensorName& name, const config::ModelConfig& model, std::int64_t vocab_size);

// The tied tensors a file of this model may also hold.
std::vector<HfTiedName> hf_tied(const config::ModelConfig& model);

// HF's class for the kind ("GPT2LMHeadModel", "LlamaForCausalLM", "BertForMaskedLM").
std::string hf_architecture(const config::ModelConfig& model);

// What an HF file may also hold that is no parameter of ours, and is
// skipped on import: GPT-2's causal-mask buffers (attn.bias,
// attn.masked_bias), Llama's rotary_emb.inv_freq and BERT's position_ids
// and token_type_ids in older files, and the heads of BERT's other
// pre-training task (bert.pooler, cls.seq_relationship), which
// BertForMaskedLM does not use either.
bool is_hf_unused(const std::string& hf_name);

}  // namespace hpctrain::ckpt
