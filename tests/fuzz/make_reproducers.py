#!/usr/bin/env python3
"""Writes the hand-made reproducers of corpus/{hostlist,experiment,mustache,
batch_script,token_data,run_record,shard_table}/repro-*: one input per hostile case hpctrain once
mishandled (a crash, a hang, unbounded memory, a command run), in each
harness's input format (the harness's header comment describes it).

    python3 tests/fuzz/make_reproducers.py tests/fuzz/corpus

The checkpoint reproducers come from make_checkpoint_reproducers.py; findings
of the fuzzers themselves are stored as found-* next to these.
"""
import json
import os
import sys


def write(root, harness, name, data):
    os.makedirs(os.path.join(root, harness), exist_ok=True)
    path = os.path.join(root, harness, "repro-" + name)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def main():
    root = sys.argv[1]

    # Hostlists: a range ending at 2^64-1 looped; output size was not bounded.
    write(root, "hostlist", "range-to-2e64", "n[18446744073709551614-18446744073709551615]")
    write(root, "hostlist", "single-2e64", "n[18446744073709551615]")
    write(root, "hostlist", "whole-2e64-range", "n[0-18446744073709551615]")
    write(root, "hostlist", "long-prefix-times-range", "x" * 4000 + "[0-65535]")
    write(root, "hostlist", "huge-zero-padding", "n[" + "0" * 100000 + "1-2000]")
    write(root, "hostlist", "chained-groups", "a" + "[1-2]" * 30)
    write(root, "hostlist", "many-unit-groups", "a" + "[1]" * 20000)
    write(root, "hostlist", "product-of-big-groups", "a[1-60000][1-60000]")

    # Experiments: nesting crashed toml++ (stack overflow); --set errors were unclear.
    write(root, "experiment", "deep-table-header", "[" + ".".join(["a"] * 50000) + "]\n")
    write(root, "experiment", "deep-dotted-key", "a." + ".".join(["b"] * 50000) + " = 1\n")
    write(root, "experiment", "deep-arrays", "[job]\nname = " + "[" * 300 + "]" * 300 + "\n")
    write(root, "experiment", "deep-inline-tables", "x = " + "{a = " * 300 + "1" + "}" * 300 + "\n")
    write(root, "experiment", "set-unknown-section", "[job]\n\0nosuch.key=1")
    write(root, "experiment", "set-invalid-utf8", b"[job]\n\0data.dir=\xff\xfe")
    write(root, "experiment", "set-multiline", "[job]\n\0training.steps=10\nc = 2")
    write(root, "experiment", "set-cross-key", "[job]\n\0model.d_model=10\0model.n_head=3")
    write(root, "experiment", "set-deep-value", "[job]\n\0eval.prompt=" + "[" * 200 + "]" * 200)
    write(root, "experiment", "empty-data-dir", '[data]\ndir = ""\n')

    # Mustache: comment tags rendered in quadratic time, partial chains in 2^N.
    write(root, "mustache", "many-comment-tags", "{{!c}}" * 100000 + "\0{}")
    chain = ["p%d={{>p%d}}{{>p%d}}" % (i, i + 1, i + 1) for i in range(40)]
    write(root, "mustache", "partial-chain", "{{>p0}}\0{}\0" + "\0".join(chain))
    write(root, "mustache", "deep-json-data", "{{x}}\0" + "[" * 100000 + "]" * 100000)
    write(root, "mustache", "deep-toml-data", "{{x}}\0#\n[" + ".".join(["a"] * 50000) + "]\n")
    write(root, "mustache", "deep-sections", "{{#a}}" * 20000 + "{{/a}}" * 20000 + '\0{"a": true}')
    write(root, "mustache", "sections-over-data", "{{#a}}{{#a}}{{#a}}{{#a}}.{{/a}}{{/a}}{{/a}}{{/a}}\0" +
          json.dumps({"a": list(range(1000))}))

    # Batch scripts: run-time values ran commands through parameter expansion.
    fields = ["job", "runs/job", "debug", "acct", "cpu", "logs", "hpctrain"]
    for name, literal, runtime_b, runtime_c in [
        ("prompt-expansion", "$(touch pwned)", "${HPCTRAIN_A@P}", "c"),
        ("arithmetic-subscript", "x[$(touch pwned)]", "${a[$HPCTRAIN_A]}", "c"),
        ("assignment-operator", "$(touch pwned)", "${V:=$HPCTRAIN_A}", "${V@P}"),
        ("unclosed-brace", "a", "${SLURM_CPUS_PER_TASK/", "c"),
        ("special-parameters", "a", "$$", "$1$?"),
        ("indirect-expansion", "a", "${!HPCTRAIN_A}", "c"),
    ]:
        write(root, "batch_script", name, "\0".join(fields + [literal, runtime_b, runtime_c, "", ""]))

    # Token data: tokens * token_bytes wrapped to 0 and passed the size check.
    def meta(tokens, token_bytes=2, file="train-000.bin", vocab=400):
        return json.dumps({"format_version": 2, "token_bytes": token_bytes, "vocab_size": vocab,
                           "tokenizer_hash": "x", "stats": {},
                           "splits": {"train": {"shards": [{"file": file, "tokens": tokens}]}}})
    write(root, "token_data", "tokens-wrap-2", meta(2 ** 63) + "\0")
    write(root, "token_data", "tokens-wrap-4", meta(2 ** 62, 4, vocab=70000) + "\0")
    write(root, "token_data", "shard-outside-dir", meta(10, file="../meta.json") + "\0" + "\0" * 20)
    write(root, "token_data", "token-outside-vocabulary", meta(10, vocab=5) + "\0" + "\x09\x00" * 10)
    write(root, "token_data", "float-token-bytes", meta(10, token_bytes=7.9e23) + "\0" + "\0" * 20)
    write(root, "token_data", "not-an-object", "[1, 2]\0")

    # Run records: control characters reached the terminal, a step of 1e308
    # became an integer (undefined), a "kind" that is no string threw.
    write(root, "run_record", "controls-and-huge-numbers",
          '{"event":"start","job_id":"local"}\n'
          '{"event":"end","job_id":"local","outcome":"\\u001b]0;x\\u0007\\u009b2J\\u202e"}\n'
          "not a record\n\0"
          '{"kind":"train","step":1e308,"steps_total":-3,"eta_s":1e300}\n{"kind":17}\n')
    write(root, "run_record", "ids-that-are-commands",
          '{"event":"start","job_id":"1; rm -rf ~"}\n{"event":"end","job_id":"41","next_job_id":"$(id)"}\n'
          '{"event":"start","job_id":"12","array_job_id":"12","array_task_id":"../../etc"}\n')
    # Shard tables: names outside the shard directory; file names that are
    # not the ones hpctrain gives a step.
    digest = "a" * 64
    write(root, "shard_table", "not-our-names",
          b"\x01" + f"../rank-00000.h5 7 {digest}\n".encode() + b"\0step-000000001.h5")
    write(root, "shard_table", "padded-and-signed-steps",
          b"\x02" + f"rank-00000.h5 7 {digest}\nrank-0001.h5 7 {digest}\n".encode() + b"\0step-+0000001.h5")


if __name__ == "__main__":
    main()
