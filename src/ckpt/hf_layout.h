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
// bert and mlp have no HF class that computes what they compute: asking for
// their layout throws, naming the difference.
#pragma once

#include <string>
#include <vector>

#include "config/model_config.h"

namespace hpctrain::ckpt {

struct HfTensorName {
  std::string hf;    // the name in HF's state dict
  std::string ours;  // the parameter's name in hpctrain's model
  bool transposed;   // HF stores the transpose (GPT-2's Conv1D)
};

// Every parameter of `model`, in the HF model's order.
std::vector<HfTensorName> hf_layout(const config::ModelConfig& model);

// HF's class for the kind ("GPT2LMHeadModel", "LlamaForCausalLM").
std::string hf_architecture(const config::ModelConfig& model);

// What an HF file may also hold that is no parameter of ours, and is
// skipped on import: GPT-2's causal-mask buffers (attn.bias,
// attn.masked_bias) and Llama's rotary_emb.inv_freq in older files.
bool is_hf_buffer(const std::string& hf_name);

}  // namespace hpctrain::ckpt
