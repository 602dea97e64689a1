#!/usr/bin/env python3
"""docs_match_code.py HPCTRAIN JOBGEN SOURCE_DIR: what the README and docs/
say about the code, checked against the code where a machine can:

- every command line they show (inline code and sh blocks) uses only options
  that its subcommand's --help lists, for hpctrain and jobgen alike;
- the README's layout table has a row for every folder under src/, and none
  for a folder that is gone;
- every preset they name (`--preset NAME`) exists in CMakePresets.json, and
  the README names every configure preset;
- the README's unity-batch figure is the build's (cmake/Layers.cmake).

Prints each mismatch as FILE:LINE: what, and exits 1 if there is any.
"""
import functools
import json
import os
import re
import subprocess
import sys

hpctrain, jobgen, root = sys.argv[1:4]
problems = []

# The options each subcommand's --help lists (CLI11: "  -x,--name ..." lines).
OPTION = re.compile(r"(?:^|[\s,])(--[a-z][a-z0-9-]*)")


@functools.lru_cache(maxsize=None)
def help_text(program, path):
    run = subprocess.run([program, *path, "--help"], capture_output=True, text=True)
    return run.stdout + run.stderr


def options(program, path):
    return set(OPTION.findall(help_text(program, tuple(path)))) | {"--help", "--version"}


def required_options(program, path):
    return set(re.findall(r"^\s+(?:-[a-z],)?(--[a-z][a-z0-9-]*)\s.*\bREQUIRED\b", help_text(program, tuple(path)), re.M))


def subcommands(program, path):
    text = help_text(program, tuple(path))
    part = text.split("Subcommands:", 1)
    if len(part) < 2:
        return []
    return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z-]*)\s", part[1], re.M)]


programs = {}
required = {}
for name, binary in (("hpctrain", hpctrain), ("jobgen", jobgen)):
    tree = {(): options(binary, [])}
    for sub in subcommands(binary, []):
        tree[(sub,)] = options(binary, [sub])
        required[(name, sub)] = required_options(binary, [sub])
        for subsub in subcommands(binary, [sub]):
            tree[(sub, subsub)] = options(binary, [sub, subsub])
            required[(name, sub, subsub)] = required_options(binary, [sub, subsub])
    programs[name] = tree

# `hpctrain EXP.toml` is `hpctrain train EXP.toml`; `jobgen EXP.toml` is
# `jobgen script EXP.toml`, and `jobgen explain EXP.toml` the same with --explain.
shortcuts = {"hpctrain": {".toml": ("train",)}, "jobgen": {".toml": ("script",), "explain": ("script",)}}
COMMAND = re.compile(r"(?:^|[\s`(/])(hpctrain|jobgen)\s+(.*)")


def check_command(program, rest, where):
    tree = programs[program]
    # The command ends where the shell starts another.
    rest = re.split(r"\s(?:\\?\||&&|;|\|\|)\s|\)", rest)[0]
    words = rest.split()
    if not words or not words[0][0].isalpha() and not words[0].endswith(".toml"):
        return
    # The subcommand, with alternatives (eval|generate|ckpt export) each checked.
    first = words[0]
    alternatives = []
    if first.endswith(".toml"):
        alternatives = [shortcuts[program][".toml"]]
        words = words[1:]
    elif first in shortcuts[program]:
        alternatives = [shortcuts[program][first]]
        words = words[1:]
    else:
        names = first.split("|")
        if not all((n,) in tree for n in names):
            return  # not a command line of ours (prose, a path)
        words = words[1:]
        for n in names:
            if words and (n, words[0]) in tree:
                alternatives.append((n, words[0]))
            else:
                alternatives.append((n,))
        if any(len(a) == 2 for a in alternatives):
            words = words[1:]
    # A command shown with its arguments shows the options it cannot run without.
    if len(alternatives) == 1 and words:
        given = {re.sub(r"=.*", "", w.strip("[]")) for w in words}
        for flag in sorted(required.get((program, *alternatives[0]), set()) - given):
            problems.append(f"{where}: `{program} {' '.join(alternatives[0])}` is shown without {flag}, "
                            "which it requires")
    for word in words:
        for flag in re.findall(r"^\[?(--[a-z][a-z0-9-]*)", word):
            for path in alternatives:
                if flag not in tree[path]:
                    problems.append(f"{where}: `{program} {' '.join(path)} {flag}`: no such option "
                                    f"(`{program} {' '.join(path)} --help` lists {', '.join(sorted(tree[path]))})")


def documents():
    yield "README.md"
    for name in sorted(os.listdir(os.path.join(root, "docs"))):
        if name.endswith(".md"):
            yield os.path.join("docs", name)


for doc in documents():
    in_block = False
    for number, line in enumerate(open(os.path.join(root, doc), encoding="utf-8"), 1):
        where = f"{doc}:{number}"
        if line.startswith("```"):
            in_block = line.strip() in ("```sh", "```bash", "```console") if not in_block else False
            continue
        spans = [line] if in_block else re.findall(r"`([^`]+)`", line)
        for span in spans:
            for match in COMMAND.finditer(span):
                check_command(match.group(1), match.group(2), where)

# The layout table against src/.
readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
rows = set(re.findall(r"^\| `src/([a-z_]+)/` \|", readme, re.M))
folders = {d for d in os.listdir(os.path.join(root, "src")) if os.path.isdir(os.path.join(root, "src", d))}
for missing in sorted(folders - rows):
    problems.append(f"README.md: the layout table has no row for src/{missing}/")
for gone in sorted(rows - folders):
    problems.append(f"README.md: the layout table names src/{gone}/, which does not exist")

# Presets.
presets = json.load(open(os.path.join(root, "CMakePresets.json")))
configure = {p["name"] for p in presets.get("configurePresets", [])}
every = configure | {p["name"] for kind in ("buildPresets", "testPresets") for p in presets.get(kind, [])}
for doc in documents():
    for number, line in enumerate(open(os.path.join(root, doc), encoding="utf-8"), 1):
        for name in re.findall(r"--preset[ =]([a-z][a-z0-9-]*)", line):
            if name not in every:
                problems.append(f"{doc}:{number}: --preset {name}: no such preset in CMakePresets.json")
for name in sorted(configure):
    if f"`{name}`" not in readme:
        problems.append(f"README.md: the configure preset `{name}` is not named")

# The unity build's batch size.
layers = open(os.path.join(root, "cmake", "Layers.cmake"), encoding="utf-8").read()
batch = re.search(r"set\(HPCTRAIN_UNITY_BATCH (\d+)", layers).group(1)
for number, line in enumerate(readme.splitlines(), 1):
    for said in re.findall(r"batches of (\d+) sources", line):
        if said != batch:
            problems.append(f"README.md:{number}: batches of {said} sources; cmake/Layers.cmake builds {batch}")

for problem in problems:
    print(problem)
if problems:
    sys.exit(1)
print("README and docs match the code: command-line options, the layout table, presets, the unity batch")
