"""ddap_tokens_report.py OUT NAME...: the report of bench/ddap-tokens-to-target.sh.

Each OUT/NAME/metrics.jsonl is read as bench/across-nodes-report.py reads its
runs (whole-split evaluations only), with its target (the first NAME's, DDP's,
final evaluation loss x 1.01) and its linear interpolation between
evaluations; the table gives each run's steps to the target and their
multiple of DDP's. A run that does not reach it is measured at its own final
loss instead, as across-nodes-report.py does: its steps over the steps DDP
took to reach that loss. Beside them, the bytes each rank's reducer sent per
step (the train records' sent_bytes_per_step, the communicator's nominal
count, averaged over the run) and DDP's bytes as a multiple of them.
"""
import importlib.util
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("across_nodes_report", os.path.join(here, "across-nodes-report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)


def bytes_per_step(path):
    """The mean of the train records' sent_bytes_per_step over the steps they cover (None before it was logged)."""
    total, last = 0.0, 0
    for record in map(json.loads, open(path)):
        if record.get("kind") != "train":
            continue
        if "sent_bytes_per_step" not in record:
            return None
        total += record["sent_bytes_per_step"] * (record["step"] - last)
        last = record["step"]
    return total / last if last else None


def main(out, names):
    runs = {name: report.load_run(os.path.join(out, name, "metrics.jsonl")) for name in names}
    base = runs[names[0]]
    target = base["final_loss"] * report.TARGET_MARGIN
    base_steps = report.steps_to(base["evals"], target)
    print(f"Target: {target:.4f} nats ({names[0]}'s final {base['final_loss']:.4f} x {report.TARGET_MARGIN}); "
          f"{base['steps']} steps of 16 x 256 tokens, 2 ranks.\n")
    sent = {name: bytes_per_step(os.path.join(out, name, "metrics.jsonl")) for name in names}
    print("| configuration | final eval loss | steps to target | x DDP's tokens (to the target, else to the final loss) "
          "| MB sent per step | x fewer bytes than DDP |")
    print("|---|---|---|---|---|---|")
    for name in names:
        run = runs[name]
        steps = report.steps_to(run["evals"], target)
        if steps is not None:
            reached, ratio = f"{steps:.0f}", f"{steps / base_steps:.2f}"
        else:
            reached = f"not reached in {run['steps']}"
            ddp_steps = report.steps_to(base["evals"], run["final_loss"])
            ratio = f"{run['steps'] / ddp_steps:.2f} (DDP: step {ddp_steps:.0f})" if ddp_steps else "-"
        mb = f"{sent[name] / 1e6:.4f}" if sent[name] is not None else "-"
        fewer = f"{sent[names[0]] / sent[name]:.1f}" if sent[name] and sent[names[0]] else "-"
        print(f"| {name} | {run['final_loss']:.4f} | {reached} | {ratio} | {mb} | {fewer} |")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
