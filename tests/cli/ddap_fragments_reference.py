#!/usr/bin/python3
"""ddap_fragments_reference.py ORDER CHECKPOINT...: a streaming DDAP run
(parallel.merge_fragments, blocking merges) checked from its checkpoints of
consecutive steps alone, read with h5py and numpy: nothing of hpctrain's but
the documented rule (docs/reducers.md, "Streaming merges"):

- fragments are runs of whole parameters in registration order; cut p falls
  on the parameter boundary nearest to p*n/P (the first of two as near) that
  leaves every fragment at least one parameter;
- fragment p merges after local step u = step - sync_steps when
  u mod H == floor((p + 1) * H / P) mod H.

At each checkpoint's step, the parameters whose every replica equals the
anchor must be exactly those of the fragment due then (none when none is),
and between two consecutive steps the anchor must change on exactly those
parameters. Prints the fragments and the steps each merged at. ORDER is a
checkpoint whose anchor has trained every parameter apart (early on, the
layer norms' weights are all ones): it gives the parameters' flat order.
"""
import sys
import tomllib

import numpy as np

from ddap_merge_reference import Stored, parameter_order


def cuts(sizes, fragments):
    boundary = np.concatenate([[0], np.cumsum(sizes)])
    count, n, last, runs = len(sizes), boundary[-1], 0, []
    for p in range(1, fragments + 1):
        cut = count
        if p < fragments:
            target = n * p / fragments
            candidates = range(last + 1, count - (fragments - p) + 1)
            cut = min(candidates, key=lambda i: (abs(boundary[i] - target), i))
        runs.append(range(last, cut))
        last = cut
    return runs


def main():
    files = [Stored(path) for path in sys.argv[2:]]
    parallel = tomllib.loads(files[0].attrs["config"].decode())["parallel"]
    every, fragments = int(parallel["merge_every"]), int(parallel["merge_fragments"])
    sync = int(parallel.get("sync_steps", 0))
    order, params = parameter_order(Stored(sys.argv[1]))
    sizes = [params[name].size for name in order]
    runs = cuts(sizes, fragments)
    phases = [((p + 1) * every // fragments) % every for p in range(fragments)]
    merged_at = {p: [] for p in range(fragments)}
    previous = None
    for f in files:
        step = int(f.attrs["step"])
        u = step - sync
        due = next((p for p in range(fragments) if u >= 1 and u % every == phases[p]), None)
        want = set(runs[due]) if due is not None else set()
        anchor = f["ddap/anchor"][...]
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        ranks = int(f.attrs["world_size"])
        agree, moved = set(), set()
        for i, name in enumerate(order):
            mine = anchor[offsets[i]:offsets[i + 1]]
            if all(np.array_equal(f[f"replicas/rank-{r:05}/model/{name}"][...].ravel(), mine) for r in range(ranks)):
                agree.add(i)
            if previous is not None and not np.array_equal(previous[offsets[i]:offsets[i + 1]], mine):
                moved.add(i)
        if agree != want:
            sys.exit(f"step {step}: replicas equal the anchor on parameters {sorted(agree)}, "
                     f"the rule merges {sorted(want)} (fragment {due})")
        if previous is not None and moved != want:
            sys.exit(f"step {step}: the anchor moved on parameters {sorted(moved)}, the rule merges {sorted(want)}")
        if due is not None:
            merged_at[due].append(step)
        previous = anchor
    described = "; ".join(f"fragment {p}: parameters {runs[p].start}-{runs[p].stop - 1} "
                          f"({sum(sizes[i] for i in runs[p])} values), merged at steps {merged_at[p]}"
                          for p in range(fragments))
    print(f"{len(files)} checkpoints: each merge moved and synchronized exactly its fragment; {described}")


main()
