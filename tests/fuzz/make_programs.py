#!/usr/bin/python3
"""Writes the corpora of the two harnesses whose input is a program rather
than a file: corpus/checkpoint_edits/ (checkpoint_edits_fuzz.cpp: edits made
through HDF5's API) and corpus/mustache_shapes/ (mustache_shapes_fuzz.cpp:
templates, data and partials of large shapes). Each harness's header comment
defines its format. Ordinary seeds, and one program per hostile input
hpctrain once mishandled.

    python3 tests/fuzz/make_programs.py tests/fuzz/corpus

Run again after a change of the program format, and commit what it writes.
"""
import os
import sys

# The harness's attribute names, in its order (kAttributes).
ATTRIBUTES = ["format_version", "step", "world_size", "reducer", "config", "tokenizer_sha256", "git_commit",
              "versions", "manifest", "epoch", "sampler_step", "log_window_steps", "log_window_loss", "lr",
              "ddap_merges", "ddap_last_step", "ddap_last_merge_applied_for", "ddap_started_at", "best_step",
              "best_eval_loss", "extra", ""]
# Element types (element_type): index -> the byte that picks it.
F32LE, F32BE, F64LE, I64LE, I64BE, U8, I32, U64, FIXED_STRING, VLEN_STRING, COMPOUND, NARROW_FLOAT = range(12)
FORMAT3, FORMAT2 = 0, 1


def attribute(name, element, dims=(), size=0):
    """Op 0: replace root attribute `name`; dims of at most 3 sizes below 40."""
    out = [0, 2 * ATTRIBUTES.index(name), element]
    if element == FIXED_STRING:
        out += [size >> 8, size & 0xFF]
    return bytes(out + [len(dims)] + list(dims))


def remove_attribute(name):
    return bytes([1, ATTRIBUTES.index(name)])


def dataset(index, element, dims, layout, chunk=(), huge=()):
    """Op 2: replace the index-th dataset of the seed. `dims` below 40 each;
    a dimension listed in `huge` is given as a 5-byte number instead."""
    out = [2, index, element, len(dims)]
    for d in dims:
        if d in huge:
            out += [0] + list(d.to_bytes(5, "big"))
        else:
            out += [1, d]
    out.append(layout)
    out += list(chunk)
    return bytes(out)


def remove_dataset(index):
    return bytes([3, index])


def nested_groups(depth, under_model=True):
    return bytes([4, depth >> 8, depth & 0xFF, 0 if under_model else 1])


def link(kind, target, name=b"x"):
    """Op 5: kind % 3: 0 soft, 1 external, 2 hard; kind & 8: to a group."""
    return bytes([5, kind, target, len(name)]) + name


def named_type():
    return bytes([6, F32LE, 0])


CHUNKED, COMPACT, FLETCHER32, DEFLATE, SHUFFLE, WRITE = 1, 2, 4, 8, 16, 32


def edit_programs():
    yield "seed-unchanged-format3", bytes([FORMAT3])
    yield "seed-unchanged-format2", bytes([FORMAT2])
    yield "seed-same-step", bytes([FORMAT3]) + attribute("step", I64LE)
    yield "seed-rewritten-dataset", bytes([FORMAT3]) + dataset(0, F32LE, (32,), CHUNKED | FLETCHER32 | WRITE, (8,))
    # Each hostile checkpoint of the hostile-input review, made by edits.
    yield "repro-array-format-version", bytes([FORMAT2]) + attribute("format_version", I64LE, (16, 16, 16))
    yield "repro-array-step", bytes([FORMAT3]) + attribute("step", I64LE, (39,))
    yield "repro-vlen-config", bytes([FORMAT3]) + attribute("config", VLEN_STRING)
    yield "repro-vlen-reducer-format2", bytes([FORMAT2]) + attribute("reducer", VLEN_STRING)
    yield "repro-big-string-manifest", bytes([FORMAT3]) + attribute("manifest", FIXED_STRING, (), 65000)
    yield "repro-float-world-size", bytes([FORMAT3]) + attribute("world_size", F64LE)
    yield "repro-missing-step", bytes([FORMAT3]) + remove_attribute("step")
    yield "repro-deep-groups", bytes([FORMAT3]) + nested_groups(4096)
    yield "repro-deep-groups-format2", bytes([FORMAT2]) + nested_groups(3000, False)
    yield "repro-external-link", bytes([FORMAT3]) + link(1, 0)
    yield "repro-soft-link", bytes([FORMAT3]) + link(0, 1)
    yield "repro-hard-link-to-group", bytes([FORMAT3]) + link(2 | 8, 0)
    yield "repro-named-datatype", bytes([FORMAT3]) + named_type()
    yield "repro-big-endian-dataset", bytes([FORMAT3]) + dataset(0, F32BE, (32,), CHUNKED | FLETCHER32 | WRITE, (8,))
    yield "repro-gzip-dataset", bytes([FORMAT3]) + dataset(0, F32LE, (32,), CHUNKED | DEFLATE | WRITE, (8,))
    yield "repro-unchecksummed-dataset", bytes([FORMAT3]) + dataset(0, F32LE, (32,), CHUNKED | WRITE, (8,))
    yield "repro-compact-dataset", bytes([FORMAT3]) + dataset(0, F32LE, (32,), COMPACT | WRITE)
    yield "repro-claims-2-to-40-floats", bytes([FORMAT2]) + dataset(1, F32LE, ((1 << 40) - 1,), CHUNKED | FLETCHER32,
                                                                    (16,), huge=((1 << 40) - 1,))
    yield "repro-claims-39-to-the-8", bytes([FORMAT3]) + dataset(2, U8, (39,) * 8, CHUNKED | FLETCHER32, (1,) * 8)
    yield "repro-compound-dataset", bytes([FORMAT3]) + dataset(0, COMPOUND, (32,), WRITE)
    yield "repro-missing-dataset", bytes([FORMAT3]) + remove_dataset(3)


# mustache_shapes: its pieces (kPieces) and operations.
PIECES = ["{{!c}}", "{{a}}", "{{#a}}", "{{/a}}", "{{^a}}", "{{{a}}}", "{{&a}}", "{{>p0}}", "{{.}}", "\n", " ", "x",
          "{{", "}}", "{{=<% %>=}}", "<%={{ }}=%>"]


def repeat(piece, times):
    return bytes([0, PIECES.index(piece), times >> 8, times & 0xFF])


def nest(depth, inverted=False):
    return bytes([1, depth >> 8, depth & 0xFF, 1 if inverted else 0])


def deep_data(depth, end=0, toml=False):
    """end: 0 false, 1 true, 2 0, 3 a string, 4 a list."""
    depth -= 1
    return bytes([2, depth >> 8, depth & 0xFF, end | (8 if toml else 0)])


def wide_data(n, key=0):
    return bytes([3, n >> 8, n & 0xFF, key])


def partial_chain(length, fan_out, in_section=False):
    return bytes([4, length - 1, fan_out - 1, 1 if in_section else 0])


def text(s):
    return bytes([5, len(s)]) + s


def shape_programs():
    yield "seed-section-over-list", wide_data(3) + text(b"") + repeat("{{#a}}", 1) + repeat("{{a}}", 1) + \
        repeat("{{/a}}", 1)
    yield "seed-two-partials", partial_chain(2, 1)
    yield "seed-comments", repeat("{{!c}}", 3) + repeat("\n", 1)
    yield "seed-toml-data", deep_data(3, 1, toml=True) + repeat("{{#a}}", 1) + repeat("x", 1) + repeat("{{/a}}", 1)
    # The hostile shapes of the review: each took seconds to hours, or crashed.
    yield "repro-comment-tags-on-one-line", repeat("{{!c}}", 30000)
    yield "repro-partial-chain-fan-out-2", partial_chain(40, 2)
    yield "repro-partial-chain-in-sections", deep_data(30, 0) + partial_chain(30, 2, in_section=True)
    yield "repro-deep-sections", deep_data(1, 1) + nest(20000)
    yield "repro-deep-toml-data", deep_data(50000, 0, toml=True) + repeat("{{a}}", 1)
    yield "repro-deep-json-data", deep_data(50000, 0) + repeat("{{a}}", 1)
    yield "repro-sections-over-wide-data", wide_data(1000) + repeat("{{#a}}", 4) + repeat("x", 1) + \
        repeat("{{/a}}", 4)


def main():
    for harness, programs in (("checkpoint_edits", edit_programs), ("mustache_shapes", shape_programs)):
        out = os.path.join(sys.argv[1], harness)
        os.makedirs(out, exist_ok=True)
        for name, program in programs():
            with open(os.path.join(out, name), "wb") as f:
                f.write(program)
            print(f"{harness}/{name}: {len(program)} bytes")


if __name__ == "__main__":
    main()
