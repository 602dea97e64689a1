"""compare_logits.py LOGITS_DIR WEIGHTS: hpctrain's logits against PyTorch's on the same weights.

LOGITS_DIR is what build/bench/model_logits wrote (tensorio format: `tokens`,
`logits`, and meta naming the model's shape, device and precision); WEIGHTS
the same checkpoint's weights as `hpctrain ckpt export` wrote them
(safetensors, read with Hugging Face's safetensors package). The reference
model (models.GPT) gets those weights and computes the logits of the same
tokens twice: in float64 on the CPU, the truth, and as hpctrain did (its
device; bf16 autocast when hpctrain used bf16). Each error is
||x - truth|| / ||truth||.

PASS when hpctrain's error is at most twice PyTorch's own in the same
precision plus 1e-3 for bf16 (bf16 has 8 significant bits: both land near
1e-3 to 1e-2, in different orders of summation), and at most 1e-4 in fp32.
Prints one line per error and the verdict; exits 1 on FAIL.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
import tensorio  # noqa: E402


def fail(msg):
    print(f"compare_logits.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def rel(x, truth):
    return ((x.double() - truth).norm() / truth.norm()).item()


def main(argv):
    if len(argv) != 3:
        fail("usage: compare_logits.py LOGITS_DIR WEIGHTS.safetensors")
    try:
        from safetensors.torch import load_file
    except ImportError:
        fail("needs Hugging Face's safetensors (pip install safetensors; Debian 13: python3-safetensors)")
    tensors, meta = tensorio.read_dir(argv[1])
    weights = load_file(argv[2])
    torch.manual_seed(0)
    model = models.build(meta)
    expected = dict(model.named_parameters())
    if set(expected) != set(weights):
        fail(f"{argv[2]}: parameters {sorted(set(weights) ^ set(expected))} are in one of "
             "the export and the reference model only")
    with torch.no_grad():
        for name, p in expected.items():
            if tuple(weights[name].shape) != tuple(p.shape):
                fail(f"{name}: shape {list(weights[name].shape)} in the export, {list(p.shape)} in the model")
            p.copy_(weights[name])
    tokens, theirs = tensors["tokens"], tensors["logits"]

    with torch.no_grad():
        truth = model.double()(tokens)[0]
        device = torch.device(meta["device"])
        model = model.float().to(device)
        bf16 = meta["precision"] == "bf16"
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            ours = model(tokens.to(device))[0].float().cpu()

    e_hpctrain, e_torch = rel(theirs, truth), rel(ours, truth)
    agree = (theirs.argmax(-1) == ours.argmax(-1)).double().mean().item()
    limit = 2 * e_torch + 1e-3 if bf16 else 1e-4
    ok = e_hpctrain <= limit and torch.isfinite(theirs).all().item()
    print(json.dumps({
        "checkpoint": meta.get("checkpoint"), "step": meta.get("step"), "device": meta["device"],
        "precision": meta["precision"], "shape": list(theirs.shape), "torch_version": torch.__version__,
        "hpctrain_vs_float64": e_hpctrain, "pytorch_vs_float64": e_torch,
        "hpctrain_vs_pytorch": rel(theirs, ours.double()), "top1_agreement": agree, "limit": limit,
        "verdict": "PASS" if ok else "FAIL"}))
    print(f"logits: hpctrain {meta['precision']} on {meta['device']} is {e_hpctrain:.3g} from float64, "
          f"PyTorch {torch.__version__} {e_torch:.3g} (limit {limit:.3g}); top-1 agreement {100 * agree:.2f}%: "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
