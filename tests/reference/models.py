"""PyTorch reference models that hpctrain's C++ models are checked against.

Parameter names are the interchange keys with the C++ side: do not rename
modules without changing src/ too. No dropout anywhere, so forward/backward
are deterministic functions of (params, tokens, targets).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

LN_EPS = 1e-5


def gelu_tanh(x):
    # GPT-2's GELU approximation; the C++ side uses the same tanh form.
    return F.gelu(x, approximate="tanh")


class Attention(nn.Module):
    # True: the same function through F.scaled_dot_product_attention (flash
    # attention on a GPU), as a PyTorch user would write it; the benchmarks
    # set it (bench_pytorch.py --sdpa), the checks keep the explicit form.
    use_sdpa = False

    def __init__(self, d_model, n_head, causal):
        super().__init__()
        assert d_model % n_head == 0, "d_model must be divisible by n_head"
        self.n_head = n_head
        self.causal = causal
        self.qkv = nn.Linear(d_model, 3 * d_model)  # output laid out [q | k | v]
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, d = x.shape
        H = self.n_head
        hd = d // H
        q, k, v = self.qkv(x).split(d, dim=-1)
        # within each of q/k/v, head h owns columns [h*hd, (h+1)*hd)
        q = q.view(B, T, H, hd).transpose(1, 2)  # [B,H,T,hd]
        k = k.view(B, T, H, hd).transpose(1, 2)
        v = v.view(B, T, H, hd).transpose(1, 2)
        if Attention.use_sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
            return self.proj(y.transpose(1, 2).reshape(B, T, d))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hd)  # [B,H,T,T]
        if self.causal:
            # query t may see keys s <= t; the rest become -inf so softmax gives 0
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
            att = att.masked_fill(mask, float("-inf"))
        att = att.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, d)
        return self.proj(y)


class Mlp(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.proj = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        return self.proj(gelu_tanh(self.fc(x)))


class Block(nn.Module):
    # pre-LayerNorm residual block (GPT-2 style)
    def __init__(self, d_model, n_head, causal):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model, eps=LN_EPS)
        self.attn = Attention(d_model, n_head, causal)
        self.ln2 = nn.LayerNorm(d_model, eps=LN_EPS)
        self.mlp = Mlp(d_model)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab_size, max_seq_len, n_layer, n_head, d_model):
        super().__init__()
        self.vocab_size = vocab_size
        self.max_seq_len = max_seq_len
        self.n_layer = n_layer
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_seq_len, d_model)
        self.blocks = nn.ModuleList(
            [Block(d_model, n_head, causal=True) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model, eps=LN_EPS)

    def forward(self, tokens, targets=None):
        B, T = tokens.shape
        assert T <= self.max_seq_len, "sequence longer than max_seq_len"
        pos = torch.arange(T, device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(pos)
        for blk in self.blocks:
            x = blk(x)
        # tied output head: no separate lm_head parameter, no bias
        logits = self.ln_f(x) @ self.tok_emb.weight.t()
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, self.vocab_size), targets.reshape(-1))
        return logits, loss


class MlmHead(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.dense = nn.Linear(d_model, d_model)
        self.ln = nn.LayerNorm(d_model, eps=LN_EPS)
        # output bias lives here because the decoder weight is tied to tok_emb
        self.bias = nn.Parameter(torch.zeros(vocab_size))


class PostNormBlock(nn.Module):
    """One layer of Hugging Face's BertModel (BertLayer), in hpctrain's names:
    BertSelfAttention with BertSelfOutput (dense, residual, then LayerNorm),
    BertIntermediate and BertOutput (dense, residual, then LayerNorm). The
    query, key and value projections are one Linear laid out [q | k | v]."""

    def __init__(self, d_model, n_head):
        super().__init__()
        self.attn = Attention(d_model, n_head, causal=False)
        self.ln1 = nn.LayerNorm(d_model, eps=LN_EPS)  # attention.output.LayerNorm
        self.mlp = Mlp(d_model)
        self.ln2 = nn.LayerNorm(d_model, eps=LN_EPS)  # output.LayerNorm

    def forward(self, x):
        x = self.ln1(self.attn(x) + x)
        return self.ln2(self.mlp(x) + x)


class BertMLM(nn.Module):
    """hpctrain's bert. Pre-LayerNorm (the default): Block above, and a final
    LayerNorm. post_norm: Hugging Face's BertForMaskedLM with one token type
    and no dropout: embeddings (word + position, LayerNorm), PostNormBlock
    layers and no final LayerNorm. Both end in BertLMPredictionHead's
    arithmetic (dense, activation, LayerNorm, the word embedding as decoder
    plus a bias)."""

    def __init__(self, vocab_size, max_seq_len, n_layer, n_head, d_model, post_norm=False):
        super().__init__()
        self.vocab_size = vocab_size
        self.max_seq_len = max_seq_len
        self.n_layer = n_layer
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_seq_len, d_model)
        self.emb_ln = nn.LayerNorm(d_model, eps=LN_EPS)
        self.blocks = nn.ModuleList(
            [PostNormBlock(d_model, n_head) if post_norm else Block(d_model, n_head, causal=False)
             for _ in range(n_layer)])
        self.ln_f = None if post_norm else nn.LayerNorm(d_model, eps=LN_EPS)
        self.mlm = MlmHead(vocab_size, d_model)

    def forward(self, tokens, labels=None):
        B, T = tokens.shape
        assert T <= self.max_seq_len, "sequence longer than max_seq_len"
        pos = torch.arange(T, device=tokens.device)
        x = self.emb_ln(self.tok_emb(tokens) + self.pos_emb(pos))
        for blk in self.blocks:
            x = blk(x)
        h = x if self.ln_f is None else self.ln_f(x)
        h = self.mlm.ln(gelu_tanh(self.mlm.dense(h)))
        logits = h @ self.tok_emb.weight.t() + self.mlm.bias
        loss = None
        if labels is not None:
            # mean over labelled positions only (-100 = not masked, no loss)
            loss = F.cross_entropy(logits.view(-1, self.vocab_size), labels.reshape(-1),
                                   ignore_index=-100)
        return logits, loss


class MlpLM(nn.Module):
    """Per-token MLP language model (no context mixing) from the user's notebook."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.vocab_size = vocab_size
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.linear1 = nn.Linear(d_model, 4 * d_model)
        self.linear2 = nn.Linear(4 * d_model, d_model)
        self.linear_out = nn.Linear(d_model, vocab_size)

    def forward(self, tokens, targets=None):
        x = self.tok_emb(tokens)
        # exact (erf) GELU here, unlike the transformers' tanh form
        x = F.gelu(self.linear1(x))
        x = F.gelu(self.linear2(x))
        logits = self.linear_out(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, self.vocab_size), targets.reshape(-1))
        return logits, loss


# --- Llama, after Hugging Face's LlamaForCausalLM (modeling_llama.py) --------
# The same arithmetic and the same order of operations as HF's classes, under
# hpctrain's parameter names (docs/models.md maps them to HF's).


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        # in fp32 whatever x is, then back to x's type, then the weight
        x32 = x.to(torch.float32)
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


def rope_tables(T, head_dim, theta):
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    freqs = torch.arange(T).float()[:, None] @ inv_freq[None, :]  # [T, hd/2]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, d_model, n_head, n_kv_head):
        super().__init__()
        self.n_head, self.n_kv_head = n_head, n_kv_head
        self.head_dim = d_model // n_head
        self.q_proj = nn.Linear(d_model, n_head * self.head_dim, bias=False)
        self.k_proj = nn.Linear(d_model, n_kv_head * self.head_dim, bias=False)
        self.v_proj = nn.Linear(d_model, n_kv_head * self.head_dim, bias=False)
        self.o_proj = nn.Linear(n_head * self.head_dim, d_model, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        hd = self.head_dim
        q = self.q_proj(x).view(B, T, -1, hd).transpose(1, 2)  # [B, H, T, hd]
        k = self.k_proj(x).view(B, T, -1, hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, -1, hd).transpose(1, 2)
        cos, sin = cos.to(q.dtype)[None, None], sin.to(q.dtype)[None, None]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # repeat_kv: key/value head j serves query heads j*n_rep .. (j+1)*n_rep-1
        n_rep = self.n_head // self.n_kv_head
        k = k[:, :, None].expand(B, self.n_kv_head, n_rep, T, hd).reshape(B, self.n_head, T, hd)
        v = v[:, :, None].expand(B, self.n_kv_head, n_rep, T, hd).reshape(B, self.n_head, T, hd)
        att = (q @ k.transpose(-2, -1)) * hd ** -0.5
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        att = att.masked_fill(mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, -1)
        return self.o_proj(y)


class SwiGLU(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.gate = nn.Linear(d_model, d_ff, bias=False)
        self.up = nn.Linear(d_model, d_ff, bias=False)
        self.down = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class LlamaBlock(nn.Module):
    def __init__(self, d_model, n_head, n_kv_head, d_ff, eps):
        super().__init__()
        self.ln1 = RMSNorm(d_model, eps)
        self.attn = LlamaAttention(d_model, n_head, n_kv_head)
        self.ln2 = RMSNorm(d_model, eps)
        self.mlp = SwiGLU(d_model, d_ff)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.ln1(x), cos, sin)
        return x + self.mlp(self.ln2(x))


class Llama(nn.Module):
    def __init__(self, vocab_size, max_seq_len, n_layer, n_head, d_model, n_kv_head, d_ff,
                 rope_theta=10000.0, norm_eps=1e-6, tie_embeddings=False):
        super().__init__()
        self.vocab_size, self.max_seq_len, self.n_layer = vocab_size, max_seq_len, n_layer
        self.head_dim, self.rope_theta = d_model // n_head, rope_theta
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(
            [LlamaBlock(d_model, n_head, n_kv_head, d_ff, norm_eps) for _ in range(n_layer)])
        self.ln_f = RMSNorm(d_model, norm_eps)
        self.lm_head = None if tie_embeddings else nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, tokens, targets=None):
        B, T = tokens.shape
        assert T <= self.max_seq_len, "sequence longer than max_seq_len"
        cos, sin = rope_tables(T, self.head_dim, self.rope_theta)
        cos, sin = cos.to(tokens.device), sin.to(tokens.device)
        x = self.tok_emb(tokens)
        for blk in self.blocks:
            x = blk(x, cos, sin)
        out = self.tok_emb.weight if self.lm_head is None else self.lm_head.weight
        logits = self.ln_f(x) @ out.t()
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, self.vocab_size), targets.reshape(-1))
        return logits, loss


def build(meta):
    """Construct the model named by a check/bench meta dict."""
    kind = meta["model"]
    V, d = int(meta["vocab_size"]), int(meta["d_model"])
    if kind == "mlp":
        return MlpLM(V, d)
    args = (V, int(meta["max_seq_len"]), int(meta["n_layer"]), int(meta["n_head"]), d)
    if kind == "gpt":
        return GPT(*args)
    if kind == "bert":
        return BertMLM(*args, post_norm=meta.get("norm_position", "pre") == "post")
    if kind == "llama":
        return Llama(*args, int(meta["n_kv_head"]), int(meta["d_ff"]), float(meta["rope_theta"]),
                     float(meta["norm_eps"]), bool(meta["tie_embeddings"]))
    raise ValueError(f"unknown model {kind!r} (expected gpt, bert, mlp or llama)")


@torch.no_grad()
def init_weights(model, seed):
    """GPT-2 init; only used when the reference runs standalone."""
    g = torch.Generator().manual_seed(seed)
    n_layer = getattr(model, "n_layer", 1)
    for name, p in model.named_parameters():
        leaf = name.rsplit(".", 1)[-1]
        mod = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
        if isinstance(mod, nn.LayerNorm):
            p.fill_(1.0 if leaf == "weight" else 0.0)
        elif leaf == "bias" or name == "mlm.bias":
            p.zero_()
        elif name.endswith("attn.proj.weight") or name.endswith("mlp.proj.weight"):
            # residual-stream projections scaled so the sum over 2L adds stays O(1)
            p.normal_(0.0, 0.02 / math.sqrt(2 * n_layer), generator=g)
        else:  # Linear weights and embeddings
            p.normal_(0.0, 0.02, generator=g)
    return model
