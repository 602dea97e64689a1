"""train.py IN_DIR OUT_DIR: train the reference model some steps, as hpctrain's
trainer does, so a run can be compared with PyTorch step by step.

IN_DIR (tensorio format, written by tests/train) holds meta {model, vocab_size,
max_seq_len, n_layer, n_head, d_model, beta1, beta2, eps, weight_decay,
grad_clip, no_decay: [kinds]}, `param.<name>` for every parameter (the
weights before step 1), and for each step s from 0: `tokens.<s>` and
`targets.<s>` [B,T] int64 (one micro-batch a step), and `lr` [steps] float32.
Each step: gradients reset, loss, backward, clipping by the global norm
(clip_grad_norm_), torch.optim.AdamW with two groups, decayed and exempt by
parameter kind (the names' rule of model::parameter_kind).
OUT_DIR gets `loss` [steps] and `param.<name>` after the last step.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
import tensorio  # noqa: E402


def fail(msg):
    print(f"train.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


def kind(name):
    if name.endswith("bias"):
        return "bias"
    if "_emb." in name:
        return "embedding"
    if any(n in name for n in ("ln1.", "ln2.", "ln_f.", "emb_ln.", "mlm.ln.")):
        return "norm"
    return "weight"


def main(argv):
    if len(argv) != 3:
        fail("usage: train.py IN_DIR OUT_DIR")
    torch.set_num_threads(1)
    tensors, meta = tensorio.read_dir(argv[1])
    model = models.build(meta)
    given = {k[len("param."):]: v for k, v in tensors.items() if k.startswith("param.")}
    params = dict(model.named_parameters())
    if set(given) != set(params):
        fail(f"parameter sets differ: {sorted(set(given) ^ set(params))}")
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(given[name])
    exempt = set(meta["no_decay"])
    groups = [
        {"params": [p for n, p in params.items() if kind(n) not in exempt], "weight_decay": meta["weight_decay"]},
        {"params": [p for n, p in params.items() if kind(n) in exempt], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=1.0, betas=(meta["beta1"], meta["beta2"]), eps=meta["eps"])
    lrs = tensors["lr"]
    losses = []
    for s in range(lrs.numel()):
        for group in optimizer.param_groups:
            group["lr"] = float(lrs[s])
        optimizer.zero_grad(set_to_none=True)
        _, loss = model(tensors[f"tokens.{s}"], tensors[f"targets.{s}"])
        loss.backward()
        if meta["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), meta["grad_clip"])
        optimizer.step()
        losses.append(loss.item())
    out = {"loss": torch.tensor(losses, dtype=torch.float32)}
    for name, p in model.named_parameters():
        out["param." + name] = p.detach()
    tensorio.write_dir(argv[2], out, {"torch_version": torch.__version__})
    print(f"train.py: {meta['model']} {len(losses)} steps, losses {losses[0]:.6f} .. {losses[-1]:.6f}")


if __name__ == "__main__":
    main(sys.argv)
