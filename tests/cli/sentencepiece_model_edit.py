#!/usr/bin/env python3
"""sentencepiece_model_edit.py MODE FILE: a SentencePiece tokenizer.model made
hostile in place, by editing its protobuf (sentencepiece_model.proto's wire
format), for tests/cli/hostile-review.sh:
  charsmap   the normalizer_spec (field 3) gains a precompiled_charsmap
             (field 2) whose Darts trie units (0xFFFFFFFF) send libsentencepiece
             0.1.97's walk gigabytes past its buffer;
  escape     every normal piece (field 1, type 1) starts with ESC [ 2 J and a
             C1 CSI (U+009B): whatever a model samples drives a terminal.
"""
import struct
import sys


def varint(blob, i):
    value = shift = 0
    while True:
        byte = blob[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def encode(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def fields(blob):
    """(key, body) of each field; body is the bytes of a length-delimited
    field, or of the value itself for the other wire types."""
    i = 0
    while i < len(blob):
        key, j = varint(blob, i)
        wire = key & 7
        if wire == 2:
            n, j = varint(blob, j)
            yield key, blob[j:j + n]
            i = j + n
        elif wire == 0:
            _, k = varint(blob, j)
            yield key, blob[j:k]
            i = k
        elif wire == 5:
            yield key, blob[j:j + 4]
            i = j + 4
        elif wire == 1:
            yield key, blob[j:j + 8]
            i = j + 8
        else:
            sys.exit(f"wire type {wire}")


def field(key, body):
    return encode(key) + (encode(len(body)) + body if key & 7 == 2 else body)


def with_charsmap(normalizer):
    charsmap = struct.pack("<I", 1024) + b"\xff" * 1024 + b"a\0"
    return normalizer + field((2 << 3) | 2, charsmap)


def escaped_piece(piece):
    parts = list(fields(piece))
    kind = next((int.from_bytes(v, "little") for k, v in parts if k >> 3 == 3), 1)
    if kind != 1:
        return piece
    return b"".join(field(k, b"\x1b[2J\xc2\x9b" + v if k >> 3 == 1 else v) for k, v in parts)


def main(mode, path):
    number, edit = {"charsmap": (3, with_charsmap), "escape": (1, escaped_piece)}[mode]
    blob = open(path, "rb").read()
    open(path, "wb").write(b"".join(field(k, edit(v) if k >> 3 == number else v) for k, v in fields(blob)))


if __name__ == "__main__":
    main(*sys.argv[1:])
