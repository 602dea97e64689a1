#!/usr/bin/env bash
# doctor-across-nodes.sh HPCTRAIN NODES TASKS_PER_NODE: runs `hpctrain doctor`
# under srun on a cluster from with-cluster.sh and checks what every rank
# reported: the same head node (the first node) and address, a world size equal
# to SLURM's task count, and an interface that is not loopback and whose subnet
# holds the head address.
set -euo pipefail
hpctrain=$1 nodes=$2 per_node=$3
tasks=$((nodes * per_node))
out=$(mktemp)
trap 'rm -f "$out"' EXIT

srun --mpi=pmi2 -N "$nodes" -n "$tasks" --ntasks-per-node="$per_node" \
  "$hpctrain" doctor --timeout 60 --max-bytes 1048576 | tee "$out"

python3 - "$out" "$tasks" <<'PY'
import ipaddress, re, sys
text = open(sys.argv[1]).read()
tasks = int(sys.argv[2])
rows = [dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line)) for line in text.splitlines() if line.startswith("rank=")]
assert len(rows) == tasks, f"{len(rows)} rank lines, expected {tasks}"
assert sorted(int(r["rank"]) for r in rows) == list(range(tasks)), "ranks are not 0..n-1"
heads = {(r["head"], r["head_addr"]) for r in rows}
assert len(heads) == 1, f"ranks disagree on the head node: {heads}"
head, head_addr = heads.pop()
assert head == "node1", f"head node {head}, expected node1 (the first node of the step)"
for r in rows:
    assert int(r["world"]) == tasks == int(r["slurm_tasks"]), f"rank {r['rank']}: world {r['world']}, SLURM tasks {r['slurm_tasks']}"
    assert r["iface"] != "lo", f"rank {r['rank']} on {r['host']} chose lo"
    net = ipaddress.ip_interface(r["iface_addr"]).network
    assert ipaddress.ip_address(head_addr) in net, f"rank {r['rank']}: {r['iface']} {net} does not hold head {head_addr}"
    assert int(r["local"].split("/")[1]) == len([x for x in rows if x["host"] == r["host"]]), f"rank {r['rank']}: local size"
assert re.search(r"^ +1048576 .* 0$", text, re.M), "no verified 1 MiB row in the busbw table"
hosts = sorted({r["host"] for r in rows})
print(f"ok: {tasks} ranks on {hosts} agree on head {head} {head_addr}; interfaces "
      + ", ".join(sorted({f"{r['host']}:{r['iface']} {r['iface_addr']}" for r in rows})))
PY
