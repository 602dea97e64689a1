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


class BertMLM(nn.Module):
    def __init__(self, vocab_size, max_seq_len, n_layer, n_head, d_model):
        super().__init__()
        self.vocab_size = vocab_size
        self.max_seq_len = max_seq_len
        self.n_layer = n_layer
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_seq_len, d_model)
        self.emb_ln = nn.LayerNorm(d_model, eps=LN_EPS)
        self.blocks = nn.ModuleList(
            [Block(d_model, n_head, causal=False) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model, eps=LN_EPS)
        self.mlm = MlmHead(vocab_size, d_model)

    def forward(self, tokens, labels=None):
        B, T = tokens.shape
        assert T <= self.max_seq_len, "sequence longer than max_seq_len"
        pos = torch.arange(T, device=tokens.device)
        x = self.emb_ln(self.tok_emb(tokens) + self.pos_emb(pos))
        for blk in self.blocks:
            x = blk(x)
        h = self.ln_f(x)
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
        return BertMLM(*args)
    raise ValueError(f"unknown model {kind!r} (expected gpt, bert or mlp)")


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
