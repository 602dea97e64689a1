#!/usr/bin/python3
"""ddap_merge_reference.py CHECKPOINT [LATER]: the weights a DDAP checkpoint
must resume with at another world size, computed from the file alone (h5py
and numpy, nothing of hpctrain's), printed as hpctrain's `final weights
sha256`. With LATER, a checkpoint of the run resumed from CHECKPOINT at
another world size and written before its next merge: checks instead that
every rank of LATER holds as its int8 wire's residual the mean of
CHECKPOINT's residuals (step 4 of the rule), and prints what it compared.

The documented rule (docs/checkpoints.md, "Other world sizes"): a merge in
flight is applied to every replica (anchor' = next_anchor(anchor, merged);
theta_r' = anchor' + theta_r - theta_at_start_r; in a streaming run only on
the values [ddap_merge_begin, ddap_merge_end) it merges, with the outer
momentum's slice); then, unless every replica
is the anchor, the replicas are merged by the run's rule (average, ties or
diloco, from the checkpoint's own config) and the anchor steps once more.
Every operation is the one hpctrain does, in float32 and in the same order,
so the hash must match bit for bit.

A sharded checkpoint (checkpoint.sharded) is its index plus the shard files
the index lists in its attribute shard_files, under step-N.shards/; h5py reads
each and a dataset is taken from whichever file holds it.
"""
import hashlib
import os
import sys
import tomllib

import h5py
import numpy as np

f32 = np.float32


class Stored:
    """A checkpoint as one file or an index with its shards: the index's
    attributes, and each path from the file that holds it."""

    def __init__(self, path):
        index = h5py.File(path, "r")
        self.attrs = index.attrs
        self.files = [index]
        if "shards" in index.attrs:
            directory = path[:-len(".h5")] + ".shards"
            table = index.attrs["shard_files"].decode()
            self.files += [h5py.File(os.path.join(directory, line.split()[0]), "r") for line in table.splitlines()]

    def __getitem__(self, path):
        for f in self.files:
            if path in f:
                return f[path]
        raise KeyError(path)


def parameter_order(f):
    """The model's parameters in registration order, which is the order of the
    flat ddap/anchor: each /model/<name> (the anchor, one dataset per
    parameter) must match exactly one unused slice starting where the last
    ended."""
    anchor = f["ddap/anchor"][...]
    params = {name: f["model"][name][...] for name in f["model"]}
    order, offset = [], 0
    while offset < anchor.size:
        fits = [n for n, v in params.items() if n not in order and offset + v.size <= anchor.size
                and np.array_equal(anchor[offset:offset + v.size], v.ravel())]
        if len(fits) != 1:
            sys.exit(f"cannot tell the parameter at offset {offset} of ddap/anchor: candidates {fits}")
        order.append(fits[0])
        offset += params[fits[0]].size
    return order, params


def next_anchor(anchor, merged, rule, momentum):
    if rule["merge"] != "diloco":
        return anchor + merged, momentum
    g = -merged
    if momentum is None:
        momentum = np.zeros_like(anchor)
    mu, lr = f32(rule["outer_momentum"]), f32(rule["outer_lr"])
    momentum = momentum * mu + g
    return anchor - lr * (g + mu * momentum), momentum


def merged_delta(deltas, rule):
    total = np.zeros_like(deltas[0])
    for d in deltas:
        total = total + d
    if rule["merge"] != "ties":
        return total / f32(len(deltas))
    elected = np.sign(total)
    agreeing, count = np.zeros_like(total), np.zeros_like(total)
    for d in deltas:
        agrees = (np.sign(d) == elected) & (d != 0)
        agreeing = agreeing + np.where(agrees, d, f32(0))
        count = count + agrees.astype(f32)
    return np.where(count > 0, agreeing / np.maximum(count, f32(1)), f32(0)).astype(f32)


def apply_merge_in_flight(f, rule, anchor, momentum, thetas):
    """The merge in flight on its values [begin, end) (all of them before
    streaming merges): the anchor, the momentum and every replica there."""
    begin, end = 0, anchor.size
    if "ddap_merge_begin" in f.attrs:
        begin, end = int(f.attrs["ddap_merge_begin"]), int(f.attrs["ddap_merge_end"])
    part = slice(begin, end)
    anchor = anchor.copy()
    if rule["merge"] == "diloco" and momentum is None:
        momentum = np.zeros_like(anchor)
    piece = momentum[part].copy() if momentum is not None else None
    anchor[part], piece = next_anchor(anchor[part], f["ddap/merged"][...], rule, piece)
    if piece is not None:
        momentum = momentum.copy()
        momentum[part] = piece
    moved = []
    for r, t in enumerate(thetas):
        t = t.copy()
        t[part] = anchor[part] + (t[part] - f[f"replicas/rank-{r:05}/ddap_theta_at_start"][...])
        moved.append(t)
    return anchor, momentum, moved


def check_residuals(f, later):
    ranks, later_ranks = int(f.attrs["world_size"]), int(later.attrs["world_size"])
    owed = np.zeros_like(f["replicas/rank-00000/ddap_residual"][...])
    for r in range(ranks):
        owed = owed + f[f"replicas/rank-{r:05}/ddap_residual"][...]
    owed = owed / f32(ranks)
    if not owed.any():
        sys.exit("the first checkpoint's residuals are all zero: nothing to check")
    for r in range(later_ranks):
        if not np.array_equal(later[f"replicas/rank-{r:05}/ddap_residual"][...], owed):
            sys.exit(f"rank {r} of {later_ranks} does not hold the mean of the {ranks} ranks' residuals")
    print(f"{later_ranks} ranks each hold the mean of {ranks} ranks' residuals ({owed.size} values)")


def main():
    f = Stored(sys.argv[1])
    if len(sys.argv) > 2:
        return check_residuals(f, Stored(sys.argv[2]))
    rule = tomllib.loads(f.attrs["config"].decode())["parallel"]
    order, _ = parameter_order(f)
    ranks = int(f.attrs["world_size"])
    flat = lambda group: np.concatenate([f[group][n][...].ravel() for n in order]).astype(f32)
    anchor = f["ddap/anchor"][...]
    momentum = f["ddap/momentum"][...] if "momentum" in f["ddap"] else None
    thetas = [flat(f"replicas/rank-{r:05}/model") for r in range(ranks)]
    if int(f.attrs["ddap_started_at"]) >= 0:
        anchor, momentum, thetas = apply_merge_in_flight(f, rule, anchor, momentum, thetas)
    if any(not np.array_equal(t, anchor) for t in thetas):
        anchor, momentum = next_anchor(anchor, merged_delta([t - anchor for t in thetas], rule), rule, momentum)
    digest, offset = hashlib.sha256(), 0
    for name in order:
        size = f["model"][name].size
        digest.update(name.encode())
        digest.update(anchor[offset:offset + size].astype("<f4").tobytes())
        offset += size
    print(digest.hexdigest())


if __name__ == "__main__":
    main()
