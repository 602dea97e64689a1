"""PyTorch fp32 training-step throughput for the reference GPT, eager or compiled.

Prints one JSON line, the baseline hpctrain's CPU trainer is compared against.
--optimizer: AdamW's plain per-parameter loop (the default) or its foreach
(multi-tensor) implementation, PyTorch 2.x's default on CPU. --compile: the
model through torch.compile (inductor); the warm-up steps take the
compilation, so give at least 2. --device cuda --precision bf16: the step on a
GPU under bf16 autocast (fp32 master weights, as hpctrain's), each step timed
to its last kernel; --sdpa: attention through F.scaled_dot_product_attention
(flash attention there) instead of the explicit softmax.
Example (tiny GPT):
  python3 bench/bench_pytorch.py --model gpt --layers 4 --d-model 256 \
      --heads 4 --vocab 8192 --batch 8 --seq 256 --threads 2 --steps 10 --warmup 2
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

# The models are the test oracle's (tests/reference/models.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
import models  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="gpt", choices=["gpt"])
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--optimizer", default="loop", choices=["loop", "foreach"])
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--sdpa", action="store_true")
    a = ap.parse_args()
    if a.steps < 1:
        ap.error("--steps must be >= 1")

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    L, D, T = a.layers, a.d_model, a.seq
    models.Attention.use_sdpa = a.sdpa
    device = torch.device(a.device)
    model = models.init_weights(models.GPT(a.vocab, T, L, a.heads, D), a.seed).to(device)
    n_params = sum(p.numel() for p in model.parameters())  # tok_emb counted once (tied)
    # never the fused kernel: on CPU it is what hpctrain's own loop does in C++
    foreach = a.optimizer == "foreach"
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1,
                            foreach=foreach, fused=False) if _has_fused() else \
        torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, foreach=foreach)
    step_model = torch.compile(model) if a.compile else model

    # a fresh random batch per step, drawn up front so it is not timed
    g = torch.Generator().manual_seed(a.seed + 1)
    n = a.warmup + a.steps
    batches = [torch.randint(a.vocab, (a.batch, T + 1), generator=g).to(device) for _ in range(n)]
    autocast = torch.autocast(a.device, dtype=torch.bfloat16, enabled=a.precision == "bf16")
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    sync()

    times = []
    for i, b in enumerate(batches):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with autocast:
            _, loss = step_model(b[:, :-1].contiguous(), b[:, 1:].contiguous())
        loss.backward()
        opt.step()
        sync()  # on a GPU, the step ends with its last kernel
        dt = time.perf_counter() - t0
        if i >= a.warmup:
            times.append(dt)

    tokens_per_step = a.batch * T
    tokens_per_s = tokens_per_step * len(times) / sum(times)
    # llm.c/PaLM accounting: 6N for the matmuls, 12*L*D*T for attention scores
    flops_per_token = 6 * n_params + 12 * L * D * T
    print(json.dumps({
        "model": a.model, "layers": L, "d_model": D, "heads": a.heads, "vocab": a.vocab,
        "batch": a.batch, "seq": T, "params": n_params,
        "tokens_per_s": round(tokens_per_s, 1),
        "step_ms_median": round(1e3 * statistics.median(times), 2),
        "threads": torch.get_num_threads(), "steps": len(times),
        "flops_per_token": flops_per_token,
        "achieved_gflops": round(tokens_per_s * flops_per_token / 1e9, 2),
        "final_loss": round(loss.item(), 4), "torch_version": torch.__version__,
        "optimizer": a.optimizer, "compiled": a.compile,
        "device": a.device, "precision": a.precision, "sdpa": a.sdpa,
    }))


def _has_fused():
    # torch 1.13's AdamW has no `fused` argument; newer ones do
    import inspect
    return "fused" in inspect.signature(torch.optim.AdamW.__init__).parameters


if __name__ == "__main__":
    main()
