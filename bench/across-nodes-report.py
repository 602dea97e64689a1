#!/usr/bin/python3
"""Turns bench/across-nodes.sh's results into docs/benchmarks.md and its plots.

    across-nodes-report.py RESULTS_DIR DOCS_DIR

RESULTS_DIR/<rate>/doctor.txt        allreduce busbw over the link (16 MiB)
RESULTS_DIR/<rate>/<config>/metrics.jsonl   hpctrain's records of one run
RESULTS_DIR/settings.txt             steps, evaluation interval, merge settings

Definitions, fixed before any run (the same for every run):
- eval loss: over the whole validation split, at every evaluation;
- target: DDP's final eval loss x 1.01 on the same link;
- time to target: training seconds (evaluations excluded) until the eval loss
  first reaches the target, interpolated linearly between evaluations;
- x sooner at its own final loss: DDP's time to reach a run's final eval loss
  over the run's own time to reach it (for runs that end above the target);
- x DDP's tokens: the steps (so the tokens: every step is 16 x 256 of them) a
  run took to reach the target (if it did, else its own final eval loss) over
  the steps DDP took to reach the same loss, interpolated like the time. It
  splits the speed-up in two: x sooner ~ (x DDP's tokens/s) / (x DDP's tokens), the link's share and the
  algorithm's share (not exactly: start-up and a run's speed vary);
- tokens/s: the run's summary, all ranks, evaluations excluded;
- a run preempted and resumed from its checkpoint (SLURM's time limit; the job
  log says "resumed from ... at step N") is several segments, each of which
  counts its training seconds from 0: each segment is placed after the one
  before, which ends at its last evaluation's seconds plus the steps from there
  to the checkpoint at that segment's own mean step time; its tokens/s is then
  all its tokens over all its training seconds;
- matmul peak: the fp32 GFLOP/s rank 0 measured at start-up, so that runs
  measured at different times on a shared machine can be told apart from a
  machine that was slower then.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

RATES = ["unlimited", "1gbit", "100mbit", "10mbit"]
RATE_LABEL = {"unlimited": "unlimited", "1gbit": "1 Gbit/s", "100mbit": "100 Mbit/s", "10mbit": "10 Mbit/s"}
# The fixed configurations, in the report's order; any other run found (a DDAP
# configuration with options, ddap-diloco-blocking+sync100+int4) follows them.
CONFIGS = ["ddp", "ddap-average-blocking", "ddap-average-overlapped", "ddap-ties-blocking", "ddap-ties-overlapped",
           "ddap-diloco-blocking", "ddap-diloco-overlapped"]
TARGET_MARGIN = 1.01  # the target: DDP's final eval loss x this
AIMED_SPEEDUP = 2.5  # how much sooner than DDP the best DDAP run should reach the target at 100 Mbit/s


def label(config, settings):
    if config == "ddp":
        return "DDP, buckets overlapped with backward"
    base, *options = config.split("+")
    _, merge, mode = base.split("-")
    detail = f", applied {settings.get('merge_delay', '?')} steps later" if mode == "overlapped" else ""
    for option in options:
        if option in ("syncint8", "syncint4", "syncint2"):
            detail += f", their gradients {option[len('sync'):]}"
        elif option.startswith("sync"):
            detail += f", {option[len('sync'):]} synchronous steps first"
        elif option.startswith("frag"):
            detail += f", streamed in {option[len('frag'):]} fragments"
        else:
            detail += f", {option} wire"
    return f"DDAP {merge}, H={settings.get('merge_every', '?')}, {mode}{detail}"


def load_run(path):
    evals, summary = [], None
    # The bytes each rank sent, from the train records (each the mean over the
    # steps since the one before); runs from before the count have none.
    sent, covered, counted = 0.0, 0, True
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r["kind"] == "train":
                if "sent_bytes_per_step" in r:
                    sent += r["sent_bytes_per_step"] * (r["step"] - covered)
                else:
                    counted = False
                covered = r["step"]
            if r["kind"] == "eval":
                if r.get("eval_full") != 1:
                    sys.exit(f"{path}: step {r['step']}: an evaluation of part of the split ({r.get('eval_sequences')} "
                             "sequences): every evaluation must read the whole split")
                evals.append((r["train_s"], r["eval_loss"], r["step"]))
            elif r["kind"] == "summary":
                summary = r
    if summary is None:
        sys.exit(f"{path}: no summary record (did the run finish?)")
    here = os.path.dirname(path)
    commit = open(os.path.join(here, "commit.txt")).read().strip() if os.path.exists(
        os.path.join(here, "commit.txt")) else "unknown"
    duration = int(open(os.path.join(here, "duration_s.txt")).read().split()[0]) if os.path.exists(
        os.path.join(here, "duration_s.txt")) else None
    if summary.get("eval_full") != 1:
        sys.exit(f"{path}: the final evaluation did not read the whole validation split")
    tokens_per_s, train_s = summary["tokens_per_s"], summary["train_s"]
    resumes = resume_steps(os.path.join(here, "job.out"))
    if resumes:
        evals, train_s = join_segments(path, evals, resumes, summary)
        # The summary's tokens/s covers the last segment's steps alone.
        tokens_per_step = summary["tokens_per_s"] * summary["train_s"] / (summary["step"] - resumes[-1])
        tokens_per_s = tokens_per_step * summary["step"] / train_s
    return {"evals": evals, "tokens_per_s": tokens_per_s, "final_loss": summary["eval_loss"],
            "eval_tokens": summary["eval_tokens"], "train_s": train_s, "steps": summary["step"],
            "segments": len(resumes) + 1,
            "commit": commit, "duration_s": duration, "peak_gflops": matmul_peak(os.path.join(here, "job.out")),
            "mb_per_step": sent / covered / 1e6 if counted and covered else None}


def resume_steps(path):
    """The steps a run resumed at from its checkpoints, in order (its job log)."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [int(m) for m in re.findall(r"^resumed from \S+ at step (\d+)", f.read(), re.MULTILINE)]


def join_segments(path, evals, resumes, summary):
    """One time line for a run that resumed at resumes: the evaluations with
    their training seconds counted from the start of the run, and its total."""
    # A segment's seconds restart from 0; a decrease is where the next begins.
    segments = [[]]
    for record in evals:
        if segments[-1] and record[0] < segments[-1][-1][0]:
            segments.append([])
        segments[-1].append(record)
    if len(segments) != len(resumes) + 1:
        sys.exit(f"{path}: {len(segments)} segments of evaluations, but the job log resumed {len(resumes)} times")
    joined, offset, start = [], 0.0, 0
    for segment, end in zip(segments, resumes + [summary["step"]]):
        # Evaluations past the checkpoint were redone by the next segment.
        kept = [r for r in segment if start < r[2] <= end]
        if not kept:
            sys.exit(f"{path}: no evaluation between steps {start} and {end}: the segment cannot be placed in time")
        joined += [(offset + seconds, loss, step) for seconds, loss, step in kept]
        if end == summary["step"]:
            return joined, offset + summary["train_s"]
        seconds, _, step = kept[-1]
        offset += seconds + (end - step) * seconds / (step - start)
        start = end
    sys.exit(f"{path}: the segments end before the run's last step")


def matmul_peak(path):
    """The fp32 matmul GFLOP/s rank 0 measured at start-up (its job log), or None.

    Runs are measured at different times on a shared machine; compute-bound
    runs' tokens/s move with this figure."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        found = re.search(r"([0-9.]+) GFLOP/s fp32 matmul peak per rank", f.read())
    return float(found.group(1)) if found else None


def link_busbw(path):
    """busbw (GB/s) of the 16 MiB row in `hpctrain doctor`'s table."""
    with open(path) as f:
        for line in f:
            cols = line.split()
            if len(cols) == 7 and cols[0] == "16777216":
                return float(cols[5])
    sys.exit(f"{path}: no 16 MiB allreduce row")


def time_to(evals, target, column=0):
    """Training seconds (column 0) or steps (column 2) until the eval loss
    first reaches target, interpolated linearly between evaluations."""
    previous = (0.0, float("inf"))
    for record in evals:
        at, loss = record[column], record[1]
        if loss <= target:
            t0, l0 = previous
            if l0 == float("inf"):
                return at
            return t0 + (at - t0) * (l0 - target) / (l0 - loss)
        previous = (at, loss)
    return None


def steps_to(evals, target):
    return time_to(evals, target, column=2)


def machine():
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} cores ({cpu})"


def main(results, docs):
    settings = {}
    settings_file = os.path.join(results, "settings.txt")
    if os.path.exists(settings_file):
        settings = dict(item.split("=") for item in open(settings_file).read().split())
    runs, busbw = {}, {}
    for rate in RATES:
        if os.path.isdir(os.path.join(results, rate)):
            CONFIGS.extend(sorted(c for c in os.listdir(os.path.join(results, rate))
                                  if c not in CONFIGS and os.path.exists(os.path.join(results, rate, c, "metrics.jsonl"))))
    for rate in RATES:
        if not os.path.isdir(os.path.join(results, rate)):
            continue
        busbw[rate] = link_busbw(os.path.join(results, rate, "doctor.txt"))
        for config in CONFIGS:
            path = os.path.join(results, rate, config, "metrics.jsonl")
            if os.path.exists(path):
                runs[(rate, config)] = load_run(path)
    if not runs:
        sys.exit(f"{results}: no runs")
    rates = [r for r in RATES if r in busbw]
    steps = sorted({run["steps"] for run in runs.values()})
    tokens = sorted({run["eval_tokens"] for run in runs.values()})

    commits = sorted({run["commit"] for run in runs.values()})
    if len(commits) == 1:
        commit = f"`{commits[0]}`"
    else:
        commit = "; ".join(f"`{c}` ({', '.join(k[1] for k, r in runs.items() if r['commit'] == c)})" for c in commits)
    durations = [run["duration_s"] for run in runs.values() if run["duration_s"] is not None]
    took = f"{sum(durations) / 60:.0f} minutes for these runs" if durations else "about two hours"
    # A configuration run on one link and not on another (a part of the
    # benchmark still to run); one run on no link was not chosen.
    missing = [f"{RATE_LABEL[r]} {c}" for r in RATES if r in busbw for c in CONFIGS
               if (r, c) not in runs and any((other, c) in runs for other in RATES)]
    out = [
        "# Benchmarks: sync against async reducers across nodes",
        "",
        f"Generated by `bench/across-nodes.sh` ({took}, root; the report alone:",
        f"`bench/across-nodes.sh --report-only`). Do not edit by hand. Measured at {commit}.",
        "Memory per rank and ZeRO-1, on one machine: [scale.md](scale.md) (`bench/scale.sh`).",
        "",
        "The headline is **time to target**: training seconds until a run's eval loss",
        f"first reaches the target, DDP's final eval loss x {TARGET_MARGIN} on the same link. Every",
        "evaluation reads the whole validation split "
        f"({', '.join(str(int(t)) for t in tokens)} tokens), so the target and the curves are",
        "the same measure; evaluations are left out of training time. The target, the",
        "run length and the configurations are fixed in the script before any run.",
        "",
    ]
    verdicts = []
    for rate in rates:
        base = runs.get((rate, "ddp"))
        if base is None:
            continue
        target = base["final_loss"] * TARGET_MARGIN
        ddp_time = time_to(base["evals"], target)
        out += [f"## {RATE_LABEL[rate]} (allreduce busbw {busbw[rate]:.3f} GB/s at 16 MiB)", "",
                f"Target: {target:.4f} nats (DDP's final {base['final_loss']:.4f} x {TARGET_MARGIN}).", "",
                "| reducer | time to target s | x sooner than DDP | tokens/s | x DDP | final eval loss | vs DDP |"
                " x sooner at its own final loss | x DDP's tokens | MB sent per step | x fewer bytes |"
                " matmul peak GFLOP/s |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        best = closest = None
        speed_ratios, token_ratios = [], []  # DDAP runs' x DDP's tokens/s and x DDP's tokens
        for config in CONFIGS:
            run = runs.get((rate, config))
            if run is None:
                continue
            reached = time_to(run["evals"], target)
            sooner = ddp_time / reached if reached and ddp_time else None
            gap = run["final_loss"] / base["final_loss"] - 1
            own = time_to(run["evals"], run["final_loss"])
            ddp_own = time_to(base["evals"], run["final_loss"])
            own_sooner = ddp_own / own if own and ddp_own and reached is None else None
            # Tokens to the target where the run reached it, else to its own final loss.
            level = target if reached is not None else run["final_loss"]
            ddp_steps = steps_to(base["evals"], level)
            token_ratio = steps_to(run["evals"], level) / ddp_steps if ddp_steps else None
            speed_ratio = run["tokens_per_s"] / base["tokens_per_s"]
            if config != "ddp":
                speed_ratios.append(speed_ratio)
                if token_ratio is not None:
                    token_ratios.append(token_ratio)
            peak = "-" if run["peak_gflops"] is None else f"{run['peak_gflops']:.0f}"
            # Runs measured before the communicators counted bytes have no figure.
            mb = "-" if run["mb_per_step"] is None else f"{run['mb_per_step']:.3f}"
            fewer = "-" if run["mb_per_step"] is None or not base["mb_per_step"] else \
                f"{base['mb_per_step'] / run['mb_per_step']:.1f}"
            if own_sooner is not None and (closest is None or gap < closest[2]):
                closest = (config, own_sooner, gap)
            out.append(f"| {label(config, settings)} | {'not reached' if reached is None else f'{reached:.0f}'} | "
                       f"{'-' if sooner is None else f'{sooner:.2f}'} | {run['tokens_per_s']:.0f} | "
                       f"{speed_ratio:.2f} | {run['final_loss']:.4f} | "
                       f"{100 * gap:+.1f}% | {'-' if own_sooner is None else f'{own_sooner:.2f}'} | "
                       f"{'-' if config == 'ddp' or token_ratio is None else f'{token_ratio:.2f}'} | {mb} | {fewer} | "
                       f"{peak} |")
            if config != "ddp" and sooner is not None and (best is None or sooner > best[1]):
                best = (config, sooner, gap)
        out.append("")
        resumed = [f"{label(c, settings)} ran in {runs[(rate, c)]['segments']} segments" for c in CONFIGS
                   if (rate, c) in runs and runs[(rate, c)]["segments"] > 1]
        if resumed:
            out += [f"{'; '.join(resumed)}: SLURM's time limit preempted it, it checkpointed and was requeued, "
                    "and resumed from its checkpoint; its seconds are joined into one time line (definitions "
                    "in the script).", ""]
        if best is None:
            verdicts.append(f"- {RATE_LABEL[rate]}: no DDAP configuration reached the target in "
                            f"{', '.join(str(s) for s in steps)} steps.")
            if closest is not None:
                verdicts.append(f"  The closest, {label(closest[0], settings)}, ended {100 * closest[2]:+.1f}% from "
                                f"DDP's final eval loss, and reached its own final loss {closest[1]:.2f}x sooner "
                                "than DDP reached the same loss.")
            if speed_ratios and token_ratios:
                fastest, frugal = max(speed_ratios), min(token_ratios)
                verdicts.append(f"  Why: a run is about (x DDP's tokens/s) / (x DDP's tokens) sooner. The fastest "
                                f"DDAP run has {fastest:.2f}x DDP's tokens/s, so it would have to reach a loss on at "
                                f"most {fastest / AIMED_SPEEDUP:.2f}x DDP's tokens to be {AIMED_SPEEDUP}x sooner; the "
                                f"most frugal needed {frugal:.2f}x DDP's tokens to reach its own final loss "
                                f"(together: at best {fastest / frugal:.2f}x sooner). Local AdamW steps on "
                                "half the batch, merged every few steps, learn less per token than DDP's steps on "
                                "the whole batch (docs/reducers.md, \"What a local step is worth\").")
        else:
            verdicts.append(f"- {RATE_LABEL[rate]}: the best DDAP configuration, {label(best[0], settings)}, reached "
                            f"DDP's final eval loss within 1% {best[1]:.2f}x sooner than DDP "
                            f"(final eval loss {100 * best[2]:+.1f}% from DDP's).")
    if missing:
        verdicts.append(f"- Not run yet, so not compared: {', '.join(missing)}.")
    # What these rows do not yet show, said beside every headline they give.
    verdicts.append("- Not yet a fair comparison: every DDP row runs at optimizer.lr 1e-3, which is not DDP's "
                    "tuned rate, and sends fp32 gradients while DDAP's synchronous steps send int2 with error "
                    "feedback; DDAP's configuration was chosen on the same validation split and seed it is "
                    "reported on, one seed, and the rows come from several commits and days (the matmul peak "
                    "column). Read each \"x sooner\" as an upper bound on DDAP's advantage until a tuned and "
                    "compressed DDP, three seeds and the test split replace it.")
    out += ["Summary:", ""] + verdicts + [
        "",
        f"- Machine: {machine()}. Two simulated SLURM nodes (network namespaces,",
        "  tests/cluster/slurm-cluster.sh), one rank per node, one core each, MPI over",
        "  TCP on the veth link (`--cluster local-tcp`: `UCX_TLS=tcp,self`), submitted",
        "  with `jobgen --submit` from `jobs/quickstart-2node.toml`.",
        "- Model and data: jobs/quickstart-2node.toml's model (a 4-layer GPT, d_model 256)",
        "  and the quickstart's corpus, with the tokenizer trained on 400,000 lines;",
        f"  {', '.join(str(s) for s in steps)} steps of 16 x 256 tokens at learning rate "
        f"{settings.get('lr', '1e-3')}, the same",
        "  seed for every run; each rank's 8 sequences per step",
        f"  in one micro-batch; evaluations every {settings.get('eval_every', '?')} steps.",
        "- DDP: buckets of 1 MiB, then at most 2 MiB (`parallel.bucket_cap_mb = 2`).",
        f"  DDAP: merges every {settings.get('merge_every', '?')} steps; overlapped merges are applied "
        f"{settings.get('merge_delay', '?')} steps",
        "  after they start; diloco with outer learning rate 0.7 and Nesterov momentum 0.9.",
        "  All use AdamW and the quickstart's schedule.",
        "- Runs measured on different days share the machine with other work: the last",
        "  column, the fp32 matmul rate rank 0 measured when its run started, shows how",
        "  fast the machine was then. Compute-bound runs' tokens/s move with it.",
        "- Link: `tbf` on both nodes' links (`slurm-cluster.sh shape`); busbw is",
        "  `hpctrain doctor`'s 16 MiB allreduce over it.",
        "",
        "![eval loss against training time](benchmarks/eval_loss.png)",
        "",
        "![tokens/s per configuration](benchmarks/tokens_per_s.png)",
        "",
    ]

    os.makedirs(os.path.join(docs, "benchmarks"), exist_ok=True)
    with open(os.path.join(docs, "benchmarks.md"), "w") as f:
        f.write("\n".join(out))
    plot(runs, rates, os.path.join(docs, "benchmarks"), settings)
    print("\n".join(out[:out.index("Summary:") + len(verdicts) + 2]))


def plot(runs, rates, where, settings):
    with tempfile.TemporaryDirectory() as tmp:
        present = [c for c in CONFIGS if any((rate, c) in runs for rate in rates)]
        with open(os.path.join(tmp, "tokens.dat"), "w") as f:
            f.write("link " + " ".join(f'"{label(c, settings)}"' for c in present) + "\n")
            for rate in rates:
                f.write(f'"{RATE_LABEL[rate]}" ' +
                        " ".join(f"{runs[(rate, c)]['tokens_per_s']:.1f}" if (rate, c) in runs else "NaN"
                                 for c in present) + "\n")
        curves = []
        for rate in rates:
            for config in CONFIGS:
                if (rate, config) not in runs:
                    continue
                name = os.path.join(tmp, f"{rate}-{config}.dat")
                with open(name, "w") as f:
                    for seconds, loss, _ in runs[(rate, config)]["evals"]:
                        f.write(f"{seconds:.3f} {loss:.6f}\n")
                curves.append((name, f"{label(config, settings)}, {RATE_LABEL[rate]}", rates.index(rate), config))
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "across-nodes.gp")
        lines = ", ".join(f"'{name}' using 1:2 with linespoints dashtype {1 + r} lc {1 + CONFIGS.index(c)} "
                          f"title '{title}'" for name, title, r, c in curves)
        subprocess.run(["gnuplot", "-e", f"tokens='{tmp}/tokens.dat'; out='{where}'; columns={len(present)}; "
                        f"curves=\"{lines}\"", script], check=True)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
