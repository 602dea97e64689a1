#!/usr/bin/python3
"""Crafts the hostile checkpoints of corpus/checkpoint/ from a real one.

    /usr/bin/python3 tests/fuzz/make_checkpoint_reproducers.py SEED.h5 OUT_DIR

Each file is a checkpoint hpctrain wrote (SEED, format 3), altered with h5py
in one way hpctrain must refuse cleanly: the fuzz replay and
tests/cli/hostile-checkpoints.sh read them. Needs Debian's python3-h5py
(/usr/bin/python3: the python3 on PATH may not be Debian's). Run again after
a change of the checkpoint format, and commit what it writes.
"""
import os
import shutil
import sys

import h5py
import numpy as np


def altered(seed, out_dir, name, change):
    path = os.path.join(out_dir, name)
    shutil.copyfile(seed, path)
    with h5py.File(path, "r+") as f:
        change(f)
    return path


def first_dataset(f):
    found = []
    f.visititems(lambda n, o: found.append(n) if isinstance(o, h5py.Dataset) and not found else None)
    return found[0]


def main():
    seed, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)

    def array_format_version(f):  # read into an 8-byte int, it overwrote the stack
        del f.attrs["format_version"]
        f.attrs.create("format_version", np.full(4000, 0x41414141, dtype="<i8"))

    def renamed_format_version(f):  # read as format 1: the manifest skipped, with a warning only
        value = f.attrs["format_version"]
        del f.attrs["format_version"]
        f.attrs.create("format_veison", value)

    def vlen_config(f):  # printed garbage and exited 0
        text = f.attrs["config"]
        del f.attrs["config"]
        f.attrs.create("config", text, dtype=h5py.string_dtype("utf-8"))

    def altered_config(f):  # no checksum covered attributes: verify said OK
        text = bytes(f.attrs["config"]).replace(b"steps = ", b"steps = 9")
        f.attrs.modify("config", np.bytes_(text))

    def altered_lr(f):
        f.attrs.modify("lr", np.float64(123.0))

    def big_endian_dataset(f):  # a datatype header altered: evaluated to -nan
        name = first_dataset(f)
        data = f[name][()]
        del f[name]
        f.create_dataset(name, data=data.astype(">f4"), chunks=data.shape, fletcher32=True)

    def gzip_dataset(f):  # another filter: decompression is not ours to trust
        name = first_dataset(f)
        data = f[name][()]
        del f[name]
        f.create_dataset(name, data=data, chunks=data.shape, compression="gzip", fletcher32=True)

    def unchecksummed_dataset(f):
        name = first_dataset(f)
        data = f[name][()]
        del f[name]
        f.create_dataset(name, data=data)

    def soft_link(f):
        f["model/alias"] = h5py.SoftLink("/" + first_dataset(f))

    def external_link(f):  # HDF5 would open another file
        f["model/elsewhere"] = h5py.ExternalLink("/etc/passwd", "/x")

    def deep_groups(f):  # verifying this hung
        group = f
        for _ in range(2000):
            group = group.create_group("g")

    def extra_dataset(f):  # not in the manifest
        f.create_dataset("model/extra", data=np.zeros(4, dtype="<f4"), chunks=(4,), fletcher32=True)

    def extra_attribute(f):  # not in the manifest: shows only in the attribute count
        f.attrs.create("note", np.int64(1))

    def missing_dataset(f):  # in the manifest, not in the file
        del f[first_dataset(f)]

    def huge_world(f):
        f.attrs.modify("world_size", np.int64(-5))

    for name, change in [
        ("array-format-version.h5", array_format_version),
        ("renamed-format-version.h5", renamed_format_version),
        ("vlen-config.h5", vlen_config),
        ("altered-config.h5", altered_config),
        ("altered-lr.h5", altered_lr),
        ("big-endian-dataset.h5", big_endian_dataset),
        ("gzip-dataset.h5", gzip_dataset),
        ("unchecksummed-dataset.h5", unchecksummed_dataset),
        ("soft-link.h5", soft_link),
        ("external-link.h5", external_link),
        ("deep-groups.h5", deep_groups),
        ("extra-dataset.h5", extra_dataset),
        ("missing-dataset.h5", missing_dataset),
        ("extra-attribute.h5", extra_attribute),
        ("negative-world-size.h5", huge_world),
    ]:
        print(altered(seed, out, "repro-" + name, change))


if __name__ == "__main__":
    main()
