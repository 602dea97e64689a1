"""Pickle-free tensor directory format shared with the C++ side.

<dir>/manifest.json = {"tensors": {name: {"dtype", "shape", "file"}}, "meta": {...}}
and one raw little-endian C-contiguous file per tensor. A shape of [] is a
scalar (one element).
"""
import json
import os
import re

import numpy as np
import torch

# explicit little-endian numpy dtypes so the files are the same on any host
DTYPES = {
    "float32": (np.dtype("<f4"), torch.float32),
    "int64": (np.dtype("<i8"), torch.int64),
}
TORCH_TO_NAME = {t: n for n, (_, t) in DTYPES.items()}


def _file_name(name):
    # tensor names contain dots; keep them but drop anything path-like
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".bin"


def read_dir(path):
    with open(os.path.join(path, "manifest.json")) as f:
        manifest = json.load(f)
    out = {}
    for name, ent in manifest["tensors"].items():
        if ent["dtype"] not in DTYPES:
            raise ValueError(f"{name}: unsupported dtype {ent['dtype']!r}")
        npdt, _ = DTYPES[ent["dtype"]]
        shape = [int(s) for s in ent["shape"]]
        arr = np.fromfile(os.path.join(path, ent["file"]), dtype=npdt)
        n = int(np.prod(shape, dtype=np.int64))  # prod([]) == 1: scalar
        if arr.size != n:
            raise ValueError(f"{name}: file has {arr.size} elements, shape {shape} needs {n}")
        # astype to native order, then copy so the tensor owns writable memory
        out[name] = torch.from_numpy(arr.astype(npdt.newbyteorder("="), copy=True).reshape(shape))
    return out, manifest.get("meta", {})


def write_dir(path, tensors, meta):
    os.makedirs(path, exist_ok=True)
    entries = {}
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        if t.dtype not in TORCH_TO_NAME:
            raise ValueError(f"{name}: unsupported dtype {t.dtype} (float32 or int64 only)")
        dname = TORCH_TO_NAME[t.dtype]
        fname = _file_name(name)
        t.numpy().astype(DTYPES[dname][0], copy=False).tofile(os.path.join(path, fname))
        entries[name] = {"dtype": dname, "shape": list(t.shape), "file": fname}
    # manifest last: a reader never sees a manifest naming files not yet written
    tmp = os.path.join(path, "manifest.json.tmp")
    with open(tmp, "w") as f:
        json.dump({"tensors": entries, "meta": meta}, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(path, "manifest.json"))
