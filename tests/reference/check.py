"""check.py IN_DIR OUT_DIR: run the reference forward+backward on given params.

IN_DIR (tensorio format, written by the C++ test) holds meta {model, vocab_size,
max_seq_len, n_layer, n_head, d_model; for llama also n_kv_head, d_ff,
rope_theta, norm_eps, tie_embeddings; for bert norm_position}, `param.<name>` for every parameter,
`tokens` [B,T] int64 and `targets` [B,T] int64 (BERT: MLM labels, -100 = ignore).
OUT_DIR gets `logits`, `loss` (shape []) and `grad.<name>` for every parameter.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
import tensorio  # noqa: E402


def fail(msg):
    print(f"check.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


def main(argv):
    if len(argv) != 3:
        fail("usage: check.py IN_DIR OUT_DIR")
    in_dir, out_dir = argv[1], argv[2]
    torch.set_num_threads(1)  # reduction order fixed -> bitwise reproducible reference
    torch.set_default_dtype(torch.float32)

    try:
        tensors, meta = tensorio.read_dir(in_dir)
    except (OSError, ValueError, KeyError) as e:
        fail(f"cannot read {in_dir}: {e}")
    for key in ("model", "vocab_size", "d_model"):
        if key not in meta:
            fail(f"meta lacks {key!r} (have {sorted(meta)})")
    try:
        model = models.build(meta)
    except (KeyError, ValueError, AssertionError) as e:
        fail(f"cannot build model from meta {meta}: {e!r}")

    expected = dict(model.named_parameters())
    given = {k[len("param."):]: v for k, v in tensors.items() if k.startswith("param.")}
    missing = sorted(set(expected) - set(given))
    extra = sorted(set(given) - set(expected))
    if missing or extra:
        fail(f"parameter set mismatch for model {meta['model']!r}:\n"
             f"  missing: {missing}\n  unexpected: {extra}")
    with torch.no_grad():
        for name, p in expected.items():
            t = given[name]
            if t.dtype != torch.float32:
                fail(f"param.{name}: dtype {t.dtype}, expected float32")
            if tuple(t.shape) != tuple(p.shape):
                fail(f"param.{name}: shape {list(t.shape)}, expected {list(p.shape)}")
            p.copy_(t)

    for key in ("tokens", "targets"):
        if key not in tensors:
            fail(f"missing tensor {key!r}")
        if tensors[key].dtype != torch.int64 or tensors[key].dim() != 2:
            fail(f"{key}: need 2-D int64, got {tensors[key].dtype} {list(tensors[key].shape)}")
    tokens, targets = tensors["tokens"], tensors["targets"]
    if tokens.shape != targets.shape:
        fail(f"tokens {list(tokens.shape)} vs targets {list(targets.shape)}")
    V = int(meta["vocab_size"])
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= V):
        fail(f"tokens outside [0, {V})")
    valid = targets[targets != -100] if meta["model"] == "bert" else targets
    if valid.numel() and (valid.min() < 0 or valid.max() >= V):
        fail(f"targets outside [0, {V})" + (" (or -100)" if meta["model"] == "bert" else ""))
    if meta["model"] != "mlp" and tokens.shape[1] > int(meta["max_seq_len"]):
        fail(f"T={tokens.shape[1]} > max_seq_len={meta['max_seq_len']}")

    logits, loss = model(tokens, targets)
    loss.backward()
    if not torch.isfinite(loss):
        fail(f"loss is not finite ({loss.item()}); all BERT labels -100?")

    out = {"logits": logits.detach(), "loss": loss.detach().reshape(())}
    for name, p in model.named_parameters():
        # a parameter the loss does not touch still gets an (all-zero) gradient
        out["grad." + name] = p.grad if p.grad is not None else torch.zeros_like(p)
    tensorio.write_dir(out_dir, out, {"torch_version": torch.__version__,
                                      "threads": torch.get_num_threads()})
    print(f"check.py: {meta['model']} loss {loss.item():.6f} -> {out_dir}")


if __name__ == "__main__":
    main(sys.argv)
