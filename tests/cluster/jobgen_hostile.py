#!/usr/bin/python3
"""jobgen_hostile.py JOBGEN EXPERIMENT: hostile values cannot add a directive,
change a directive's value, or run a command.

Every value of the corpus goes into every string field jobgen writes: the
job name and log directory (#SBATCH context), the executable, the run
directory, an environment value and an srun argument (shell context), a
run-time environment value, the site keys (reservation, mail_user,
nodelist, exclude, mail_type, exclusive, cpu_bind, gpu_bind) and a
[slurm.extra] option's name and value. Control characters must be refused by
jobgen, with the field named. Everything else must render, and then:
  - sbatch itself parses the script: the held job has exactly the name, node
    count, time limit and partition that were asked for;
  - the fields sbatch checks against the cluster (partition, account, qos,
    constraint) cannot reach a held job with a hostile value, so the table of
    options `sbatch -v` prints as parsed, before it asks the controller, must
    equal a benign rendering's except for exactly those values;
  - mem and time are refused by jobgen itself, naming the field;
  - a site key or [slurm.extra] value is either refused naming its key, or
    sbatch -v parses exactly that value for its option and nothing else
    changes; an extra option's name is always refused (names are lowercase
    letters, digits and '-');
  - bash runs the script against a dry run (srun and scontrol replaced by
    recorders): srun gets the executable and the srun argument as one literal
    word each, the environment
    value arrives intact, the run directory is created under its literal name,
    and no injected command ran.
Needs a cluster from with-cluster.sh (sbatch, squeue, scancel)."""
import hashlib, json, os, re, subprocess, sys, tempfile

jobgen, experiment = sys.argv[1], os.path.abspath(sys.argv[2])
corpus = [
    'a"b', "a'b", "a\\b", 'a\\"b', "'a' \"b\"", "a # b", "a#b", "#SBATCH --nodes=9", "x\" --nodes=\"9",
    "$(touch PWNED)", "`touch PWNED`", "a; touch PWNED", "a && touch PWNED", "a | touch PWNED", "${HOME}", "$HOME",
    "a>b", "--time=1", " lead and trail ", "ends with \\", "ünïcødé ☃ 名前", "\\\\\\", "'; touch PWNED; '",
]
control = ["a\nb", "a\rb", "a\tb", "\x1b[31mred", "nul\x7f"]


def toml_string(s):
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a valid TOML basic string here


def render(work, fields, extra=()):
    exp = os.path.join(work, "hostile.toml")
    with open(experiment) as f:
        text = f.read()
    slurm = "\n[slurm]\n" + "".join(f"{k} = {v}\n" for k, v in fields.get("slurm", {}).items())
    env = "\n[slurm.env]\n" + "".join(f"{k} = {v}\n" for k, v in fields.get("env", {}).items())
    if "extra" in fields:
        env += "\n[slurm.extra]\n" + "".join(f"{k} = {v}\n" for k, v in fields["extra"].items())
    sets = [x for k, v in fields.get("job", {}).items() for x in ("--set", f"job.{k}={v}")]
    with open(exp, "w") as f:
        f.write(text + slurm + env)
    return subprocess.run([jobgen, exp, "--cluster", "local", *sets, *extra], capture_output=True, text=True, cwd=work)


def parsed_options(work, fields):
    """sbatch -v's table of the options it parsed from the rendered script."""
    r = render(work, fields)
    if r.returncode != 0:
        return None, r.stderr.strip()
    script = os.path.join(work, "options.sbatch")
    with open(script, "w") as f:
        f.write(r.stdout)
    sb = subprocess.run(["sbatch", "-v", "--test-only", script], capture_output=True, text=True, cwd=work)
    lines = sb.stderr.splitlines()
    if "sbatch: defined options" not in lines or "sbatch: end of defined options" not in lines:
        return None, sb.stderr.strip()
    table = {}
    for line in lines[lines.index("sbatch: defined options") + 2:lines.index("sbatch: end of defined options") - 1]:
        m = re.fullmatch(r"sbatch: (\S+)\s*: (.*)", line)
        if m is None:
            return None, f"unexpected line in sbatch -v's table: {line!r}"
        table[m.group(1)] = m.group(2).replace(work, "WORK")  # the log directory lies under it
    return table, ""


CHECKED_BY_CLUSTER = ("partition", "account", "qos", "constraint")
SITE_SBATCH = {"reservation": "reservation", "mail_user": "mail-user", "nodelist": "nodelist", "exclude": "exclude"}
SITE_REFUSED = ("mail_type", "exclusive", "cpu_bind", "gpu_bind")  # keywords and binding syntax: no corpus value fits
with tempfile.TemporaryDirectory() as work:
    benign, why = parsed_options(work, {"slurm": {**{k: '"plain"' for k in CHECKED_BY_CLUSTER}, "mem": '"2G"'}})
if benign is None or any(benign.get(k) != "plain" for k in CHECKED_BY_CLUSTER) or benign.get("mem") != "2G":
    sys.exit(f"FAIL: sbatch -v did not show the benign rendering's options: {benign} {why}")

failures = []
checked = 0
for value in corpus:
    with tempfile.TemporaryDirectory() as work:
        q = toml_string(value)
        r = render(work, {"slurm": {"job_name": q, "nodes": 1, "time": '"00:10:00"', "executable": q, "log_dir": q,
                                    "srun_args": f"[{q}]"},
                          "env": {"HOSTILE": q}, "job": {"run_dir": q}})
        if r.returncode != 0:
            failures.append(f"{value!r}: jobgen refused a printable value: {r.stderr.strip()}")
            continue
        script = os.path.join(work, "job.sbatch")
        with open(script, "w") as f:
            f.write(r.stdout)

        # sbatch parses the directives: a held job shows what it understood.
        sb = subprocess.run(["sbatch", "--hold", "--parsable", script], capture_output=True, text=True, cwd=work)
        if sb.returncode != 0:
            failures.append(f"{value!r}: sbatch refused the script: {sb.stderr.strip()}")
            continue
        job_id = sb.stdout.strip().split(";")[0]
        sq = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%j\x1f%D\x1f%l\x1f%P"], capture_output=True,
                            text=True)
        subprocess.run(["scancel", job_id])
        got = sq.stdout.rstrip("\n").split("\x1f")
        want = [value, "1", "10:00", "debug"]
        if got != want:
            failures.append(f"{value!r}: sbatch understood name/nodes/time/partition {got}, expected {want}")

        # bash runs the script against a dry run.
        fake = os.path.join(work, "fakebin")
        os.mkdir(fake)
        record = os.path.join(work, "srun.json")
        with open(os.path.join(fake, "srun"), "w") as f:
            f.write(f"#!/usr/bin/python3\nimport json, os, sys\njson.dump({{'argv': sys.argv[1:], "
                    f"'HOSTILE': os.environ.get('HOSTILE')}}, open({record!r}, 'w'))\n")
        with open(os.path.join(fake, "scontrol"), "w") as f:
            f.write("#!/bin/sh\necho scontrol \"$@\" >> scontrol.log\n")
        for name in ("srun", "scontrol"):
            os.chmod(os.path.join(fake, name), 0o755)
        env = dict(os.environ, PATH=fake + ":" + os.environ["PATH"], SLURM_JOB_ID="42", SLURM_RESTART_COUNT="0")
        env.pop("HOSTILE", None)
        run = subprocess.run(["bash", script], capture_output=True, text=True, cwd=work, env=env)
        rec = json.load(open(record)) if os.path.exists(record) else None
        config = os.path.join(value, "jobgen-42.toml")
        if rec is None:
            failures.append(f"{value!r}: the dry run never reached srun: {run.stderr.strip()}")
        elif rec["argv"] != ["--mpi=pmi2", value, "--", value, "train", config] or rec["HOSTILE"] != value:
            failures.append(f"{value!r}: srun saw {rec}")
        elif not os.path.isfile(os.path.join(work, config)):
            failures.append(f"{value!r}: the config was not written under the literal run directory")
        else:
            header = [l for l in r.stdout.splitlines() if "resolved config sha256:" in l][0].split()[-1]
            body = open(os.path.join(work, config), "rb").read()
            if hashlib.sha256(body).hexdigest() != header:
                failures.append(f"{value!r}: the embedded config does not hash to the header's sha256")
        pwned = [os.path.join(d, f) for d, _, fs in os.walk(work) for f in fs if f == "PWNED"]
        if pwned:
            failures.append(f"{value!r}: an injected command ran: {pwned}")
        checked += 1

    with tempfile.TemporaryDirectory() as work:
        q = toml_string(value)
        got, why = parsed_options(work, {"slurm": {**{k: q for k in CHECKED_BY_CLUSTER}, "mem": '"2G"'}})
        want = dict(benign, **{k: value for k in CHECKED_BY_CLUSTER})
        if got is None:
            failures.append(f"{value!r} in partition/account/qos/constraint: {why}")
        elif got != want:
            failures.append(f"{value!r}: sbatch -v parsed {got}, expected {want}")
        for field in ("mem", "time"):
            r = render(work, {"slurm": {field: q}})
            if r.returncode == 0 or f"slurm.{field}" not in r.stderr:
                failures.append(f"{value!r} in {field}: not refused naming slurm.{field}: {r.stderr.strip()}")
        checked += 1

    # Site keys and [slurm.extra]: refused naming the key, or parsed by sbatch
    # as exactly this value for exactly this option.
    base = {**{k: '"plain"' for k in CHECKED_BY_CLUSTER}, "mem": '"2G"'}
    for key, option, fields in [(k, o, {"slurm": {**base, k: q}}) for k, o in SITE_SBATCH.items()] + [
            ("extra", "comment", {"slurm": base, "extra": {"comment": q}})]:
        with tempfile.TemporaryDirectory() as work:
            got, why = parsed_options(work, fields)
            if got is None:
                if f"slurm.{key}" not in why:
                    failures.append(f"{value!r} in slurm.{key}: neither parsed nor refused naming the key: {why}")
            elif got != dict(benign, **{option: value}):
                failures.append(f"{value!r} in slurm.{key}: sbatch -v parsed {got}")
            checked += 1
    for key in SITE_REFUSED:
        with tempfile.TemporaryDirectory() as work:
            r = render(work, {"slurm": {key: q}})
            if r.returncode == 0 or f"slurm.{key}" not in r.stderr:
                failures.append(f"{value!r} in slurm.{key}: not refused naming the key: {r.stderr.strip()}")
            checked += 1
    with tempfile.TemporaryDirectory() as work:
        r = render(work, {"extra": {q: '"1"'}})
        if r.returncode == 0 or "not an sbatch long option name" not in r.stderr:
            failures.append(f"{value!r} as a [slurm.extra] name: not refused: {r.stderr.strip()}")
        checked += 1

    with tempfile.TemporaryDirectory() as work:
        q = toml_string(value)
        r = render(work, {"env": {"LATER": "{ runtime = " + q + " }"}})
        expands_commands = "$(" in value or "`" in value
        if expands_commands and (r.returncode == 0 or "nothing that could run a command" not in r.stderr):
            failures.append(f"{value!r}: a run-time value with command substitution was not refused: {r.stderr}")
        if not expands_commands and r.returncode != 0:
            failures.append(f"{value!r}: a run-time value was refused: {r.stderr.strip()}")

for value in control:
    for field, fields in (("job_name", {"slurm": {"job_name": toml_string(value)}}),
                          ("executable", {"slurm": {"executable": toml_string(value)}}),
                          ("env", {"env": {"HOSTILE": toml_string(value)}}),
                          ("srun_args", {"slurm": {"srun_args": f"[{toml_string(value)}]"}}),
                          ("reservation", {"slurm": {"reservation": toml_string(value)}}),
                          ("extra", {"extra": {"comment": toml_string(value)}})):
        with tempfile.TemporaryDirectory() as work:
            r = render(work, fields)
            if r.returncode == 0 or ("control character" not in r.stderr and "printable ASCII" not in r.stderr):
                failures.append(f"{value!r} in {field}: not refused as a control character: {r.stderr.strip()}")
            checked += 1

for f in failures:
    print("FAIL:", f)
print(f"{checked} hostile renderings checked, {len(failures)} failures")
sys.exit(1 if failures else 0)
