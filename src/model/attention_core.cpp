#include "model/attention_core.h"

#include <ATen/Parallel.h>
#include <ATen/ThreadLocalState.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/types.h>
#include <torch/version.h>

#define HPCTRAIN_FUSED_ATTENTION (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1))
#if HPCTRAIN_FUSED_ATTENTION
#include <ATen/ops/scaled_dot_product_attention.h>
#endif

#include <algorithm>
#include <limits>
#include <vector>

namespace hpctrain::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// At T = 256 blocks of 128 and whole heads take the same time, and blocks of
// 64 are slower (their GEMMs are too small); at T = 1024 blocks of 128 make a
// tiny GPT's step 14% faster.
constexpr std::int64_t kQueryRows = 128;

// A head's [T, T] buffer holds its blocks one after another: block b, rows
// [begin, end), keeps its [end - begin, keys] scores contiguous from row
// `begin` on, so every GEMM and softmax sees a dense matrix.
struct QueryBlock {
  std::int64_t begin, rows, keys;
  at::Tensor in(const at::Tensor& head_buffer) const {
    return head_buffer.view(-1).narrow(0, begin * head_buffer.size(1), rows * keys).view({rows, keys});
  }
};

std::vector<QueryBlock> blocks_of(std::int64_t t, bool causal, std::int64_t query_rows) {
  const std::int64_t rows = causal ? query_rows : t;
  std::vector<QueryBlock> blocks;
  for (std::int64_t begin = 0; begin < t; begin += rows) {
    const std::int64_t end = std::min(begin + rows, t);
    blocks.push_back({begin, end - begin, causal ? end : t});
  }
  return blocks;
}

// Head i (batch i / H, head i % H) of a [B, T, parts * d] tensor: part p's
// [T, hd] columns, a view with rows parts * d apart.
struct Heads {
  std::int64_t n_head, hd;
  at::Tensor of(const at::Tensor& packed, std::int64_t i, std::int64_t part) const {
    return packed[i / n_head].narrow(1, (part * n_head + i % n_head) * hd, hd);
  }
};

class HeadParallelAttention : public torch::autograd::Function<HeadParallelAttention> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& packed_qkv, std::int64_t n_head, bool causal,
                               double scale, std::int64_t query_rows) {
    const torch::Tensor qkv = packed_qkv.contiguous();
    const auto b = qkv.size(0), t = qkv.size(1), d = qkv.size(2) / 3;
    const Heads heads{n_head, d / n_head};
    auto probs = torch::empty({b * n_head, t, t}, qkv.options());
    auto y = torch::empty({b, t, d}, qkv.options());
    const std::vector<QueryBlock> blocks = blocks_of(t, causal, query_rows);
    // Within a block only its last `rows` keys can lie above the diagonal.
    const auto mask =
        causal ? torch::full({query_rows, query_rows}, -std::numeric_limits<float>::infinity(), qkv.options()).triu(1)
               : torch::Tensor();
    // Inside parallel_for, ATen ops and (OpenMP) OpenBLAS run on the calling
    // thread alone. The pool's threads keep their own thread-local state
    // (grad mode on, for one), so each takes the caller's.
    const at::ThreadLocalState caller;
    at::parallel_for(0, b * n_head, 1, [&](std::int64_t begin, std::int64_t end) {
      const at::ThreadLocalStateGuard as_caller(caller);
      for (std::int64_t h = begin; h < end; ++h) {
        const torch::Tensor q = heads.of(qkv, h, 0), k = heads.of(qkv, h, 1), v = heads.of(qkv, h, 2);
        const torch::Tensor out = heads.of(y, h, 0);
        for (const QueryBlock& blk : blocks) {
          torch::Tensor s = blk.in(probs[h]);
          torch::addmm_out(s, s, q.narrow(0, blk.begin, blk.rows), k.narrow(0, 0, blk.keys).t(), 0.0, scale);
          if (causal) s.narrow(1, blk.begin, blk.rows).add_(mask.narrow(0, 0, blk.rows).narrow(1, 0, blk.rows));
          torch::_softmax_out(s, s, -1, false);
          torch::Tensor out_rows = out.narrow(0, blk.begin, blk.rows);
          torch::mm_out(out_rows, s, v.narrow(0, 0, blk.keys));
        }
      }
    });
    ctx->save_for_backward({qkv, probs});
    ctx->saved_data["n_head"] = n_head;
    ctx->saved_data["causal"] = causal;
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["query_rows"] = query_rows;
    return y;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &qkv = saved[0], &probs = saved[1];
    const std::int64_t n_head = ctx->saved_data["n_head"].toInt();
    const bool causal = ctx->saved_data["causal"].toBool();
    const double scale = ctx->saved_data["scale"].toDouble();
    const std::int64_t query_rows = ctx->saved_data["query_rows"].toInt();
    const torch::Tensor dy = grads[0].contiguous();
    const auto b = qkv.size(0), t = qkv.size(1), d = qkv.size(2) / 3;
    const Heads heads{n_head, d / n_head};
    auto dqkv = torch::empty_like(qkv);
    const std::vector<QueryBlock> blocks = blocks_of(t, causal, query_rows);
    const at::ThreadLocalState caller;
    at::parallel_for(0, b * n_head, 1, [&](std::int64_t begin, std::int64_t end) {
      const at::ThreadLocalStateGuard as_caller(caller);
      auto dp_buffer = torch::empty({t, t}, qkv.options());
      auto ds_buffer = torch::empty({t, t}, qkv.options());
      for (std::int64_t h = begin; h < end; ++h) {
        const torch::Tensor q = heads.of(qkv, h, 0), k = heads.of(qkv, h, 1), v = heads.of(qkv, h, 2);
        const torch::Tensor dq = heads.of(dqkv, h, 0), dk = heads.of(dqkv, h, 1), dv = heads.of(dqkv, h, 2);
        const torch::Tensor dout = heads.of(dy, h, 0);
        // The last block sees every key, so it writes dk and dv whole and the
        // blocks before it add to their prefixes.
        for (auto blk = blocks.rbegin(); blk != blocks.rend(); ++blk) {
          const double accumulate = blk == blocks.rbegin() ? 0.0 : 1.0;
          const torch::Tensor p = blk->in(probs[h]);
          torch::Tensor dp = blk->in(dp_buffer), ds = blk->in(ds_buffer);
          const torch::Tensor dout_rows = dout.narrow(0, blk->begin, blk->rows);
          torch::Tensor dq_rows = dq.narrow(0, blk->begin, blk->rows);
          torch::Tensor dk_keys = dk.narrow(0, 0, blk->keys), dv_keys = dv.narrow(0, 0, blk->keys);
          torch::mm_out(dp, dout_rows, v.narrow(0, 0, blk->keys).t());
          torch::addmm_out(dv_keys, dv_keys, p.t(), dout_rows, accumulate, 1.0);
          torch::_softmax_backward_data_out(ds, dp, p, -1, p.scalar_type());
          torch::addmm_out(dq_rows, dq_rows, ds, k.narrow(0, 0, blk->keys), 0.0, scale);
          torch::addmm_out(dk_keys, dk_keys, ds.t(), q.narrow(0, blk->begin, blk->rows), accumulate, scale);
        }
      }
    });
    return {dqkv, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

at::Tensor attention_core(const at::Tensor& qkv, std::int64_t n_head, bool causal, double scale,
                          std::int64_t query_rows) {
  if (qkv.is_cpu() && qkv.scalar_type() == torch::kFloat32) {
    return HeadParallelAttention::apply(qkv, n_head, causal, scale, query_rows > 0 ? query_rows : kQueryRows);
  }
  const auto b = qkv.size(0), t = qkv.size(1), d = qkv.size(2) / 3, hd = d / n_head;
  const auto parts = qkv.view({b, t, 3, n_head, hd}).permute({2, 0, 3, 1, 4});  // [3, B, H, T, hd]
#if HPCTRAIN_FUSED_ATTENTION
  // On a GPU, LibTorch's fused attention (flash attention where the GPU and
  // the dtype allow it): the [T, T] scores are never written to memory, which
  // the composition below does twice per head and layer, forward and
  // backward. Under the deterministic algorithms a GPU run turns on
  // (train/run_setup.h), LibTorch picks a kernel whose backward is
  // deterministic, or throws. Not measured on a GPU here: bench/gpu-proof.sh's
  // throughput step is the measurement (docs/gpu.md).
  if (qkv.is_cuda()) {
    return at::scaled_dot_product_attention(parts[0], parts[1], parts[2], {}, 0.0, causal, scale)
        .transpose(1, 2)
        .reshape({b, t, d});
  }
#endif
  const auto part = [&](std::int64_t i) { return parts[i].reshape({b * n_head, t, hd}); };
  torch::Tensor scores = torch::bmm(part(0), part(1).transpose(1, 2)).mul_(scale);
  if (causal) {
    scores.masked_fill_(torch::ones({t, t}, qkv.options().dtype(torch::kBool)).triu(1),
                        -std::numeric_limits<double>::infinity());
  }
  return torch::bmm(torch::softmax(scores, -1), part(2)).view({b, n_head, t, hd}).transpose(1, 2).reshape({b, t, d});
}

}  // namespace hpctrain::model
