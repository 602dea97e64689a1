#!/usr/bin/env python3
"""Writes the seed corpus of the safetensors harness (tests/fuzz/corpus/safetensors):
small valid inputs in the harness's framing (an index's text, a NUL, then a
safetensors file; or a safetensors file alone), from the format's definition:
an 8-byte little-endian header length, a JSON header of dtype, shape and
data_offsets per tensor, the data. Usage: make_safetensors_seeds.py OUT_DIR"""
import json
import struct
import sys
from pathlib import Path


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape, raw bytes)] in data order."""
    header, offset = {}, 0
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(raw for *_, raw in tensors)


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    f32 = struct.pack("<6f", 1.0, -2.5, 0.0, 3.25, 1e-30, -7.0)
    f16 = struct.pack("<4H", 0x3C00, 0x0001, 0x7C00, 0x8400)  # 1, the smallest subnormal, inf, a negative normal
    bf16 = struct.pack("<3H", 0x3F80, 0xC020, 0x0000)
    one = safetensors([("model.embed_tokens.weight", "F32", [2, 3], f32),
                       ("model.norm.weight", "F16", [4], f16),
                       ("lm_head.weight", "BF16", [3], bf16)],
                      {"format": "pt"})
    (out / "single").write_bytes(one)
    (out / "empty-and-scalar").write_bytes(
        safetensors([("a", "F32", [0, 4], b""), ("b", "F32", [], struct.pack("<f", 2.0))]))
    shard = safetensors([("transformer.wte.weight", "F32", [2, 3], f32), ("transformer.ln_f.bias", "BF16", [3], bf16)])
    index = {"metadata": {"total_size": len(f32) + len(bf16)},
             "weight_map": {"transformer.wte.weight": "model-1.safetensors",
                            "transformer.ln_f.bias": "model-1.safetensors"}}
    (out / "index").write_bytes(json.dumps(index).encode() + b"\0" + shard)


if __name__ == "__main__":
    main()
