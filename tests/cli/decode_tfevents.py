"""decode_tfevents.py RUN_DIR: an independent reader of hpctrain's TensorBoard
files. It checks the TFRecord framing (both masked CRC32Cs of every record),
parses the Event protobufs by hand, and requires every scalar to equal the
matching metrics.jsonl value (as float32). Prints a summary; exits non-zero on
any mismatch."""
import glob
import json
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def fields(buf):
    """Yields (field number, wire type, value) of one protobuf message."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            length, i = varint(buf, i)
            value, i = buf[i:i + length], i + length
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"unexpected wire type {wire}")
        yield number, wire, value


def varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, i


def main(run_dir):
    assert crc32c(b"123456789") == 0xE3069283, "the decoder's own CRC32C is wrong"
    files = glob.glob(f"{run_dir}/tensorboard/events.out.tfevents.*")
    assert len(files) == 1, f"expected one event file, found {files}"
    data = open(files[0], "rb").read()
    scalars, versions, i = {}, [], 0
    while i < len(data):
        header = data[i:i + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", data[i + 8:i + 12])
        assert header_crc == masked(header), f"bad length CRC at byte {i}"
        payload = data[i + 12:i + 12 + length]
        (payload_crc,) = struct.unpack("<I", data[i + 12 + length:i + 16 + length])
        assert payload_crc == masked(payload), f"bad payload CRC at byte {i}"
        i += 16 + length
        step = 0
        for number, wire, value in fields(payload):
            if number == 2:
                step = value
            elif number == 3:
                versions.append(value.decode())
            elif number == 5:
                for _, _, v in fields(value):
                    entry = dict((n, val) for n, _, val in fields(v))
                    tag = entry[1].decode()
                    scalars[(tag, step)] = struct.unpack("<f", entry[2])[0]
    assert versions == ["brain.Event:2"], versions
    expected = {}
    for line in open(f"{run_dir}/metrics.jsonl"):
        record = json.loads(line)
        for key, value in record.items():
            if key not in ("kind", "step"):
                expected[(f"{record['kind']}/{key}", record["step"])] = struct.unpack("<f", struct.pack("<f", value))[0]
    assert scalars == expected, f"{len(scalars)} scalars in TensorBoard, {len(expected)} in metrics.jsonl; " + str(
        sorted(set(scalars.items()) ^ set(expected.items()))[:4])
    tags = sorted({tag for tag, _ in scalars})
    print(f"ok: {len(scalars)} scalars in {i} bytes, every CRC valid, all equal to metrics.jsonl; tags: {', '.join(tags)}")


if __name__ == "__main__":
    main(sys.argv[1])
