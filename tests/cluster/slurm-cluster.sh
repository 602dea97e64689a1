#!/usr/bin/env bash
# slurm-cluster.sh — a real (tiny) SLURM cluster on one machine, for tests.
#
# The recipe:
#   * our own munged (key/socket/pid/log/seed under the prefix),
#   * our own slurm.conf (SLURM_CONF points at it; /etc is never touched),
#   * one network namespace per node, veth'd to a private host bridge on
#     the first free subnet of 10.77.0.0/24 .. 10.77.15.0/24 (10.77.0.0/24
#     unless another cluster holds it); each slurmd runs as `slurmd -N nodeI`
#     with its own UTS hostname and a private /etc/hosts bind mount;
#     slurmctld runs on the bridge address (.254) in the host netns, again
#     with its own hostname.
#
# Everything `up` creates is appended to PREFIX/state/undo *as it is created*,
# so `down` removes exactly that (and nothing else), even after a partial
# `up`. Processes are only ever killed by recorded PID (checked against the
# recorded start time, so a recycled PID is never hit) or because they live
# in a network namespace we created. Never by name.
#
# Every prefix that `up` starts is also registered in $REGISTRY (on /run,
# a tmpfs: it goes with a reboot, as do the bridges and namespaces it
# describes). A run killed with SIGKILL, or a session that ends mid-test,
# leaves its cluster's links behind with every daemon dead; the next `up`
# finds such a cluster through the registry and runs its own undo log
# (`down`), so it removes exactly what that cluster recorded, never anything
# else.
#
# Usage:
#   slurm-cluster.sh up    --prefix DIR --nodes N [--cpus C] [--site-like] [--accounting]
#     --site-like: what production sites run and the preemption tests need:
#     KillWait=10 (SIGTERM to SIGKILL), and a second partition "urgent" on the
#     same nodes whose jobs preempt those of "debug" by requeueing them
#     (PreemptType=preempt/partition_prio, PreemptMode=REQUEUE).
#     --accounting: job accounting as real sites run it, so that `sacct`
#     answers: slurmdbd on the controller's address, storing into its own
#     MariaDB server (data directory and socket under the prefix, no TCP).
#   slurm-cluster.sh down  --prefix DIR [--purge]
#   slurm-cluster.sh shape --prefix DIR --rate RATE|off     (tbf, both directions)
#   slurm-cluster.sh exec  --prefix DIR --node I -- CMD...  (run CMD "on" node I)
#   slurm-cluster.sh status --prefix DIR
#
# Must run as root (namespaces, bridge, sysctl, SlurmdUser=root).
set -euo pipefail

readonly PROG=${0##*/}
# /24; nodes are .1..N, the controller .254. `up` takes the first free one
# of 10.77.0 .. 10.77.$((SUBNETS - 1)) and records it in cluster.vars.
SUBNET=10.77.0
CTL_IP=$SUBNET.254
readonly SUBNETS=16
readonly REGISTRY=${HPCT_CLUSTER_REGISTRY:-/run/hpctrain-test-clusters}
# A cluster whose every recorded daemon is dead is stale only when its undo
# log has not changed for this long: an `up` still creating its links has
# recorded no daemon yet.
readonly STALE_AFTER_S=120
readonly CTL_HOST=hpctctl
readonly MAX_NODES=3
# Metric of the safety route: far above the connected route of the bridge
# (metric 0), so it only matters once the bridge is gone.
readonly UNREACH_METRIC=4077
readonly UP_TIMEOUT=${HPCT_CLUSTER_UP_TIMEOUT:-30}

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }

usage() {
  sed -n '/^# Usage:/,/^# Must run/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# ---------------------------------------------------------------------------
# State bookkeeping
# ---------------------------------------------------------------------------
# PREFIX/state/undo holds one line per created object:
#   sysctl KEY OLDVALUE      route SPEC...      link NAME      netns NAME
#   pid PID STARTTIME LABEL
# PREFIX/state/cluster.vars is a sourceable description (id, names, nodes).

# Start time (clock ticks since boot, field 22 of /proc/PID/stat) identifies a
# process instance; together with the PID it survives PID reuse checks.
proc_starttime() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  # comm (field 2) may contain spaces/parens: cut after the last ')'.
  stat=${stat##*) }
  # now field 3 (state) is the first word; starttime is field 22 => word 20.
  set -f
  # shellcheck disable=SC2086  # splitting into fields is the point
  set -- $stat
  set +f
  echo "${20}"
}

proc_state() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  echo "${stat%% *}"
}

# True if PID is alive (not a zombie) and still the instance we recorded.
proc_is() {
  local pid=$1 start=$2 st
  st=$(proc_state "$pid") || return 1
  [[ $st != Z && $st != X ]] || return 1
  [[ $(proc_starttime "$pid") == "$start" ]]
}

record() { echo "$*" >>"$UNDO"; }

record_pid() { # PID LABEL
  local start
  start=$(proc_starttime "$1") || die "process $2 (pid $1) died right after start"
  record pid "$1" "$start" "$2"
}

# ---------------------------------------------------------------------------
# Argument parsing (shared by all subcommands)
# ---------------------------------------------------------------------------
PREFIX='' NODES='' CPUS=4 RATE='' NODE='' PURGE=0 SITE_LIKE=0 ACCOUNTING=0
CMD=()
parse_args() {
  while (($#)); do
    case $1 in
      --prefix) PREFIX=${2:?--prefix needs a value}; shift 2 ;;
      --nodes) NODES=${2:?--nodes needs a value}; shift 2 ;;
      --cpus) CPUS=${2:?--cpus needs a value}; shift 2 ;;
      --rate) RATE=${2:?--rate needs a value}; shift 2 ;;
      --node) NODE=${2:?--node needs a value}; shift 2 ;;
      --purge) PURGE=1; shift ;;
      --site-like) SITE_LIKE=1; shift ;;
      --accounting) ACCOUNTING=1; shift ;;
      --) shift; CMD=("$@"); break ;;
      -h|--help) usage ;;
      *) die "unknown argument: $1" ;;
    esac
  done
  [[ -n $PREFIX ]] || die "--prefix DIR is required"
  # Absolute path: it ends up in slurm.conf and in sh -c strings run from
  # other working directories.
  [[ $PREFIX == /* ]] || PREFIX=$PWD/$PREFIX
  PREFIX=${PREFIX%/}
  UNDO=$PREFIX/state/undo
}

load_vars() {
  [[ -f $PREFIX/state/cluster.vars ]] || die "$PREFIX is not a cluster prefix (no state/cluster.vars)"
  # shellcheck source=/dev/null
  . "$PREFIX/state/cluster.vars"
  CTL_IP=$SUBNET.254
}

# ---------------------------------------------------------------------------
# up
# ---------------------------------------------------------------------------
UP_OK=0
on_up_exit() {
  local rc=$?
  ((UP_OK)) && return 0
  log "bring-up FAILED (rc=$rc); daemon log tails follow, then teardown"
  show_logs
  # Remove whatever was created so far; keep the logs for inspection.
  PURGE=0 do_down || true
  log "the logs remain under $PREFIX/log"
  ((rc)) || rc=1
  exit "$rc"
}

show_logs() {
  local f
  for f in "$PREFIX"/log/* "$PREFIX"/munge/munged.log; do
    [[ -s $f ]] || continue
    # X.out is the daemon's stderr: it repeats X.log, so it is only worth
    # showing when the log file was never written (e.g. a config fatal).
    [[ $f == *.out && -s ${f%.out}.log ]] && continue
    printf '\n===== %s (last 25 lines) =====\n' "$f" >&2
    tail -n 25 "$f" >&2
  done
}

preflight() {
  ((EUID == 0)) || die "must run as root"
  local b
  for b in ip tc unshare nsenter setsid runuser munged munge unmunge slurmctld slurmd sinfo scontrol ss; do
    command -v "$b" >/dev/null || die "missing required program: $b"
  done
  if ((ACCOUNTING)); then
    for b in slurmdbd sacctmgr mariadbd mariadb-install-db mariadb-admin; do
      command -v "$b" >/dev/null || die "missing required program for --accounting: $b"
    done
  fi
  reclaim_stale
  choose_subnet
}

# A subnet is free when no address and no route of this machine is in it
# (another cluster's, a leftover nobody recorded, or the site's own).
subnet_free() {
  ! ip -o -4 addr show | grep -q " ${1//./\\.}\." && [[ -z $(ip route show "$1.0/24") ]]
}

choose_subnet() {
  local k
  for ((k = 0; k < SUBNETS; k++)); do
    subnet_free "10.77.$k" && { SUBNET=10.77.$k; CTL_IP=$SUBNET.254; return 0; }
  done
  die "no free subnet in 10.77.0.0/24 .. 10.77.$((SUBNETS - 1)).0/24; in use: $(ip -o -4 addr show | grep ' 10\.77\.' | head -3)"
}

# True when PREFIX's undo log records no live daemon and has been still for
# STALE_AFTER_S: what a killed run leaves.
prefix_is_stale() {
  local undo=$1/state/undo kind pid start label age
  [[ -f $undo ]] || return 1
  while read -r kind pid start label; do
    [[ $kind == pid ]] && proc_is "$pid" "$start" && return 1
  done <"$undo"
  age=$(($(date +%s) - $(stat -c %Y "$undo")))
  ((age >= STALE_AFTER_S))
}

# Forget PREFIX's registry entry once it is down.
unregister() {
  local id
  id=$( (. "$PREFIX/state/cluster.vars" 2>/dev/null && echo "${ID:-}"))
  [[ -n $id && $(cat "$REGISTRY/$id" 2>/dev/null) == "$PREFIX" ]] && rm -f -- "$REGISTRY/$id"
  return 0
}

# Tear down the registered clusters whose runs were killed, through their
# own undo logs; forget entries whose prefix is down or gone.
reclaim_stale() {
  [[ -d $REGISTRY ]] || return 0
  local entry prefix
  for entry in "$REGISTRY"/*; do
    [[ -f $entry ]] || continue
    prefix=$(<"$entry")
    if [[ ! -f $prefix/state/undo ]]; then
      rm -f -- "$entry"
    elif prefix_is_stale "$prefix"; then
      log "reclaiming a stale cluster (every daemon dead, left by a killed run): $prefix"
      if (PREFIX=$prefix UNDO=$prefix/state/undo do_down); then
        rm -f -- "$entry"
      else
        log "could not tear down $prefix; what is left of it stays, another subnet is used"
      fi
    fi
  done
}

port_free() { [[ -z $(ss -Hltn "sport = :$1") ]]; }

write_configs() {
  local i
  # Hosts file for the controller and every node: the names slurm, MPICH
  # (hydra) and `hostname` users will look up.
  {
    echo "127.0.0.1 localhost"
    echo "::1 localhost ip6-localhost ip6-loopback"
    # The submitting machine's own name maps to the bridge too: a shell on
    # this machine (e.g. `salloc mpiexec ...`, hydra's control host) is
    # reached back by that name from the nodes.
    local me
    me=$(hostname)
    case $me in
      '' | localhost | "$CTL_HOST" | node[0-9]*) echo "$CTL_IP $CTL_HOST" ;;
      *) echo "$CTL_IP $CTL_HOST $me" ;;
    esac
    for ((i = 1; i <= NODES; i++)); do echo "$SUBNET.$i node$i"; done
  } >"$PREFIX/etc/hosts"

  cat >"$PREFIX/etc/slurm.conf" <<EOF
# Generated by $PROG for a throw-away test cluster (id $ID). Do not edit.
ClusterName=hpct$ID
# NodeAddr/controller address are explicit, so no daemon depends on DNS.
SlurmctldHost=$CTL_HOST($CTL_IP)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
# Everything runs as root: no slurm user, no file ownership games.
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# Our private munged, not the system one. cred_expire (step credential
# lifetime, 120 s by default) is also how long SLURM holds a requeued job
# before it may start again (slurm.conf(5)); 30 s keeps the requeue tests from
# spending most of their time waiting, and is ample for a step launch here.
AuthInfo=socket=$PREFIX/munge/munge.socket,cred_expire=30
# pmi2 serves Debian MPICH's built-in PMI-1 client: plain \`srun ./prog\` works.
MpiDefault=pmi2
# No cgroups inside the namespaces (their /sys/fs/cgroup is empty).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
# Without this batch starts may wait up to 3 s.
SchedulerParameters=batch_sched_delay=0
JobAcctGatherType=jobacct_gather/none
$(accounting_storage)
JobCompType=jobcomp/none
# Nodes advertise $CPUS CPUs whatever the real hardware has.
SlurmdParameters=config_overrides
# The submitting shell and the nodes are the same machine; propagating
# limits only produces warnings.
PropagateResourceLimits=NONE
ReturnToService=2
MaxArraySize=1001
KillWait=$((SITE_LIKE ? 10 : 2))
MessageTimeout=10
UnkillableStepTimeout=60
SlurmdTimeout=60
InactiveLimit=0
MinJobAge=300
StateSaveLocation=$PREFIX/ctld/state
SlurmctldPidFile=$PREFIX/run/slurmctld.pid
SlurmctldLogFile=$PREFIX/log/slurmctld.log
SlurmctldDebug=info
SlurmdSpoolDir=$PREFIX/nodes/%n/spool
SlurmdPidFile=$PREFIX/nodes/%n/slurmd.pid
SlurmdLogFile=$PREFIX/log/slurmd-%n.log
SlurmdDebug=info
EOF
  for ((i = 1; i <= NODES; i++)); do
    echo "NodeName=node$i NodeAddr=$SUBNET.$i NodeHostname=node$i CPUs=$CPUS State=UNKNOWN"
  done >>"$PREFIX/etc/slurm.conf"
  if ((SITE_LIKE)); then
    cat >>"$PREFIX/etc/slurm.conf" <<EOF
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
PartitionName=debug Nodes=node[1-$NODES] Default=YES MaxTime=UNLIMITED OverSubscribe=NO PriorityTier=1 State=UP
PartitionName=urgent Nodes=node[1-$NODES] MaxTime=UNLIMITED OverSubscribe=NO PriorityTier=2 PreemptMode=OFF State=UP
EOF
  else
    echo "PartitionName=debug Nodes=node[1-$NODES] Default=YES MaxTime=UNLIMITED OverSubscribe=FORCE:4 State=UP" \
      >>"$PREFIX/etc/slurm.conf"
  fi

  # Network namespaces (ip netns exec remounts /sys) show an empty
  # /sys/fs/cgroup, so slurm's autodetection fails: pin the v1 plugin.
  cat >"$PREFIX/etc/cgroup.conf" <<'EOF'
CgroupPlugin=cgroup/v1
CgroupAutomount=no
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainDevices=no
EOF
}

# slurm.conf's accounting lines: none, or our slurmdbd.
accounting_storage() {
  if ((ACCOUNTING)); then
    # AccountingStoragePass: for slurmdbd, the munge socket its messages use.
    printf 'AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=%s\nAccountingStoragePort=%s\n' \
      "$CTL_IP" "$DBD_PORT"
    printf 'AccountingStoragePass=%s\n' "$PREFIX/munge/munge.socket"
  else
    echo "AccountingStorageType=accounting_storage/none"
  fi
}

# MariaDB for slurmdbd: a fresh data directory, a socket under the prefix and
# no network (slurmdbd finds the socket through MYSQL_UNIX_PORT). root is
# authenticated by the socket's peer credentials (unix_socket), as MariaDB
# installs it: slurmdbd runs as root and needs no password.
start_mariadb() {
  local db=$PREFIX/mysql
  mkdir -p "$db"
  mariadb-install-db --no-defaults --datadir="$db/data" --user=root --skip-test-db --skip-name-resolve \
    </dev/null >>"$PREFIX/log/mariadb-install.out" 2>&1 || die "mariadb-install-db failed (see log/mariadb-install.out)"
  setsid mariadbd --no-defaults --datadir="$db/data" --socket="$db/mysqld.sock" --pid-file="$db/mysqld.pid" \
    --skip-networking --user=root --log-error="$PREFIX/log/mariadbd.log" --innodb-buffer-pool-size=32M \
    </dev/null >>"$PREFIX/log/mariadbd.out" 2>&1 &
  record_pid $! mariadbd
  local deadline=$((SECONDS + UP_TIMEOUT))
  until mariadb-admin --no-defaults --socket="$db/mysqld.sock" ping >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "mariadbd did not answer within ${UP_TIMEOUT}s"
    daemons_alive >/dev/null || die "mariadbd exited"
    sleep 0.2
  done
}

# slurmdbd on the controller's address, then this cluster registered in it
# (slurmctld only reports to a cluster the database knows).
start_slurmdbd() {
  local conf=$PREFIX/etc/slurmdbd.conf
  cat >"$conf" <<EOF
# Generated by $PROG for a throw-away test cluster (id $ID). Do not edit.
AuthType=auth/munge
AuthInfo=socket=$PREFIX/munge/munge.socket
DbdHost=$CTL_HOST
DbdAddr=$CTL_IP
DbdPort=$DBD_PORT
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db_$ID
PidFile=$PREFIX/run/slurmdbd.pid
LogFile=$PREFIX/log/slurmdbd.log
DebugLevel=info
EOF
  chmod 0600 "$conf"  # slurmdbd refuses a readable configuration (it may hold StoragePass)
  # slurmdbd reads slurmdbd.conf next to SLURM_CONF, and runs only on a host
  # named DbdHost: the controller's name, given the way start_daemons gives it.
  SLURM_CONF=$PREFIX/etc/slurm.conf MYSQL_UNIX_PORT=$PREFIX/mysql/mysqld.sock \
    setsid unshare --uts --mount --propagation private -- sh -c '
      echo "$1" >/proc/sys/kernel/hostname &&
      mount --bind "$2" /etc/hosts &&
      exec slurmdbd -D' sh "$CTL_HOST" "$PREFIX/etc/hosts" </dev/null >>"$PREFIX/log/slurmdbd.out" 2>&1 &
  record_pid $! slurmdbd
  local deadline=$((SECONDS + UP_TIMEOUT))
  until SLURM_CONF=$PREFIX/etc/slurm.conf sacctmgr -i add cluster "hpct$ID" >/dev/null 2>&1 ||
    SLURM_CONF=$PREFIX/etc/slurm.conf sacctmgr -n list cluster format=cluster 2>/dev/null | grep -qw "hpct$ID"; do
    ((SECONDS < deadline)) || die "slurmdbd did not register cluster hpct$ID within ${UP_TIMEOUT}s"
    daemons_alive >/dev/null || die "slurmdbd or mariadbd exited"
    sleep 0.2
  done
}

start_munged() {
  local m=$PREFIX/munge
  # munged refuses insecure paths: its directory must be owned by munge and
  # not group/world writable; the key must be 0600/0400 and owned by munge.
  # It runs as user munge, so its log must live in a munge-owned directory
  # too (hence munge/munged.log, not log/munged.log).
  install -d -o munge -g munge -m 0755 "$m"
  runuser -u munge -- test -x "$m" ||
    die "user munge cannot reach $m (a parent directory is not world-traversable; use a prefix under /tmp)"
  head -c 1024 /dev/urandom >"$m/munge.key"
  chown munge:munge "$m/munge.key"
  chmod 0600 "$m/munge.key"
  # munged forks and its parent exits once the daemon is ready, so the pid
  # file is valid when runuser returns. stdio goes to a file: an inherited
  # pipe (e.g. CTest's) would keep the test "running" forever.
  runuser -u munge -- munged \
    --socket="$m/munge.socket" --key-file="$m/munge.key" \
    --pid-file="$m/munged.pid" --log-file="$m/munged.log" \
    --seed-file="$m/munged.seed" </dev/null >>"$PREFIX/log/munged.out" 2>&1 ||
    die "munged failed to start (see $m/munged.log)"
  record_pid "$(cat "$m/munged.pid")" munged
  munge -S "$m/munge.socket" -n </dev/null | unmunge -S "$m/munge.socket" >/dev/null ||
    die "munge credential round trip failed"
}

setup_network() {
  local i ns veth f=/proc/sys/net/bridge/bridge-nf-call-iptables
  # With br_netfilter loaded, bridged frames traverse iptables, whose rules
  # (e.g. a DROP forward policy from docker) can silently eat node traffic.
  if [[ -w $f ]]; then
    record sysctl net.bridge.bridge-nf-call-iptables "$(cat "$f")"
    echo 0 >"$f"
  fi
  # Safety net: once the bridge is gone, the subnet must not fall through
  # to the default route and leak off the machine.
  record route unreachable "$SUBNET.0/24" metric "$UNREACH_METRIC"
  ip route add unreachable "$SUBNET.0/24" metric "$UNREACH_METRIC"

  record link "$BRIDGE"
  ip link add "$BRIDGE" type bridge
  ip addr add "$CTL_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up

  for ((i = 1; i <= NODES; i++)); do
    ns=${NS_PREFIX}$i veth=${VETH_PREFIX}$i
    record netns "$ns"
    ip netns add "$ns"
    record link "$veth"
    # The peer is created directly inside the namespace, already named eth0.
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    ip link set "$veth" master "$BRIDGE" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$SUBNET.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    # Deliberately no default route: nodes can only talk to the subnet.
  done
}

start_daemons() {
  local i pid conf=$PREFIX/etc/slurm.conf hosts=$PREFIX/etc/hosts
  # The daemons must not inherit an outer SLURM job's environment.
  local v
  for v in $(compgen -e | grep '^SLURM_' || true); do unset "$v"; done
  export SLURM_CONF=$conf

  # Each daemon: setsid (own session: a Ctrl-C in the caller's terminal does
  # not hit it; `down` is the only way it ends), unshare --uts for its own
  # hostname, --mount (private propagation) so the /etc/hosts bind mount stays
  # private. setsid/ip netns exec/unshare/sh all exec in place (no fork), so
  # $! is the daemon's PID. -D keeps the daemons in the foreground for that.
  # stdio goes to files for the same CTest-pipe reason as munged.
  setsid unshare --uts --mount --propagation private -- sh -c '
      echo "$1" >/proc/sys/kernel/hostname &&
      mount --bind "$2" /etc/hosts &&
      exec slurmctld -D -f "$3"' sh "$CTL_HOST" "$hosts" "$conf" \
    </dev/null >>"$PREFIX/log/slurmctld.out" 2>&1 &
  record_pid $! slurmctld

  for ((i = 1; i <= NODES; i++)); do
    setsid ip netns exec "${NS_PREFIX}$i" \
      unshare --uts --mount --propagation private -- sh -c '
        echo "$1" >/proc/sys/kernel/hostname &&
        mount --bind "$2" /etc/hosts &&
        exec slurmd -D -N "$1" -f "$3"' sh "node$i" "$hosts" "$conf" \
      </dev/null >>"$PREFIX/log/slurmd-node$i.out" 2>&1 &
    record_pid $! "slurmd-node$i"
  done
}

# All recorded daemons still alive?
daemons_alive() {
  local kind pid start label
  while read -r kind pid start label; do
    [[ $kind == pid ]] || continue
    proc_is "$pid" "$start" || { echo "$label (pid $pid) exited"; return 1; }
  done <"$UNDO"
}

wait_idle() {
  local deadline=$((SECONDS + UP_TIMEOUT)) idle=0 why states
  while ((SECONDS < deadline)); do
    why=$(daemons_alive) || die "$why"
    states=$(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u || true)  # a node in two partitions is listed twice
    idle=$(grep -c ' idle$' <<<"$states" || true)
    ((idle == NODES)) && return 0
    sleep 0.2
  done
  die "timed out after ${UP_TIMEOUT}s waiting for $NODES idle node(s); sinfo says: ${states:-<nothing>}"
}

cmd_up() {
  [[ $NODES =~ ^[1-9]$ ]] && ((NODES <= MAX_NODES)) || die "--nodes must be 1..$MAX_NODES"
  [[ $CPUS =~ ^[1-9][0-9]*$ ]] || die "--cpus must be a positive integer"
  # The prefix goes verbatim into slurm.conf, which has no quoting.
  [[ $PREFIX =~ ^[A-Za-z0-9/._+-]+$ ]] || die "--prefix must not contain spaces or special characters"
  if [[ -e $PREFIX ]]; then
    [[ -d $PREFIX && -z $(ls -A "$PREFIX") ]] || die "$PREFIX exists and is not an empty directory"
  fi
  preflight

  mkdir -p "$PREFIX"/{state,etc,log,run,ctld/state}
  # mktemp -d gives 0700; munged (user munge) must traverse the prefix.
  chmod 0755 "$PREFIX"
  : >"$UNDO"
  # Whatever ends `up` early (error, Ctrl-C, kill) undoes what it created.
  trap on_up_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  # Short random id: makes netns/link names unique to this cluster.
  ID=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
  BRIDGE=hpct${ID}br        # <= 15 chars (IFNAMSIZ)
  VETH_PREFIX=hpct${ID}v    # + node number
  NS_PREFIX=hpct${ID}-n     # + node number
  # Random, checked-free ports, so clusters (or leftovers) don't collide.
  local tries=0
  while :; do
    # Below the kernel's ephemeral range (32768+), so no client socket can
    # be holding it by chance.
    CTLD_PORT=$((10000 + (RANDOM % 11383) * 2))
    SLURMD_PORT=$((CTLD_PORT + 1))
    DBD_PORT=$((CTLD_PORT + 2))
    port_free "$CTLD_PORT" && port_free "$SLURMD_PORT" && port_free "$DBD_PORT" && break
    ((++tries < 50)) || die "no free port pair found"
  done
  for ((i = 1; i <= NODES; i++)); do mkdir -p "$PREFIX/nodes/node$i/spool"; done

  {
    printf 'ID=%q\nNODES=%q\nCPUS=%q\n' "$ID" "$NODES" "$CPUS"
    printf 'BRIDGE=%q\nVETH_PREFIX=%q\nNS_PREFIX=%q\n' "$BRIDGE" "$VETH_PREFIX" "$NS_PREFIX"
    printf 'CTLD_PORT=%q\nSLURMD_PORT=%q\nDBD_PORT=%q\n' "$CTLD_PORT" "$SLURMD_PORT" "$DBD_PORT"
    printf 'SUBNET=%q\n' "$SUBNET"
  } >"$PREFIX/state/cluster.vars"
  mkdir -p "$REGISTRY"
  echo "$PREFIX" >"$REGISTRY/$ID"

  write_configs
  start_munged
  setup_network
  if ((ACCOUNTING)); then
    start_mariadb
    start_slurmdbd
  fi
  start_daemons
  wait_idle

  {
    printf 'export SLURM_CONF=%q\n' "$PREFIX/etc/slurm.conf"
    printf 'export HPCT_CLUSTER_NODES=%q\n' "$NODES"
    printf 'export HPCT_CLUSTER_PREFIX=%q\n' "$PREFIX"
  } >"$PREFIX/env"
  UP_OK=1
  trap - EXIT INT TERM
  log "cluster hpct$ID up: $NODES node(s) x $CPUS CPUs, controller $CTL_HOST($CTL_IP:$CTLD_PORT)"
  echo "$PREFIX/env"
}

# ---------------------------------------------------------------------------
# down
# ---------------------------------------------------------------------------
# TERM the given "pid:start" instances, wait up to $2 seconds, then KILL.
stop_procs() {
  local grace=$1; shift
  local p pid start left
  for p in "$@"; do
    pid=${p%%:*} start=${p#*:}
    proc_is "$pid" "$start" && kill -TERM "$pid" 2>/dev/null || true
  done
  local t=0 # tenths of a second waited
  while :; do
    left=0
    for p in "$@"; do
      proc_is "${p%%:*}" "${p#*:}" && left=1
    done
    ((left)) || return 0
    ((t++ < grace * 10)) || break
    sleep 0.1
  done
  for p in "$@"; do
    pid=${p%%:*} start=${p#*:}
    proc_is "$pid" "$start" && { log "pid $pid ignored SIGTERM, sending SIGKILL"; kill -KILL "$pid" 2>/dev/null; } || true
  done
  sleep 0.2
}

# Everything running inside our namespaces (slurmstepd, job tasks, ...),
# as "pid:start".
netns_procs() {
  local ns pid start
  for ns in "$@"; do
    [[ -e /run/netns/$ns ]] || continue
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
      start=$(proc_starttime "$pid") && echo "$pid:$start"
    done
  done
}

# Descendants of the given PIDs (e.g. slurmctld's slurmscriptd child, which
# lives in the host netns), as "pid:start". Found through the process tree
# (ppid links in /proc), never by name.
descendants() {
  local -A kids=()
  local d stat pid ppid
  for d in /proc/[0-9]*; do
    stat=$(cat "$d/stat" 2>/dev/null) || continue
    pid=${d#/proc/}
    stat=${stat##*) }
    ppid=${stat#* }
    ppid=${ppid%% *}
    kids[$ppid]+=" $pid"
  done
  local -a queue=("$@")
  local start
  while ((${#queue[@]})); do
    pid=${queue[0]}
    queue=("${queue[@]:1}")
    for d in ${kids[$pid]:-}; do
      start=$(proc_starttime "$d") || continue
      echo "$d:$start"
      queue+=("$d")
    done
  done
}

route_exists() { # TYPE PREFIX metric M  (the form recorded by setup_network)
  ip route show type "$1" exact "$2" 2>/dev/null | grep -qw "metric $4"
}

do_down() {
  if [[ ! -f $UNDO ]]; then
    log "nothing to tear down under $PREFIX (no state/undo)"
    return 0
  fi
  local kind a b c rest
  local -a daemons=() munge=() nss=() links=() routes=() sysctls=()
  while read -r kind a b c rest; do
    case $kind in
      pid)
        case $c in
          munged | mariadbd) munge+=("$a:$b") ;;  # last: the others may use them while stopping
          *) daemons+=("$a:$b") ;;
        esac
        ;;
      netns) nss+=("$a") ;;
      link) links+=("$a") ;;
      route) routes+=("$a $b $c $rest") ;;
      sysctl) sysctls+=("$a $b") ;;
    esac
  done <"$UNDO"

  # 1. slurm daemons first (slurmd does not kill running steps on TERM),
  #    then their remaining children (collected before, as they get
  #    reparented once the daemon is gone),
  # 2. then whatever still runs in our namespaces (slurmstepd + tasks),
  #    twice in case something forked meanwhile,
  # 3. munged last: the slurm daemons may talk to it while shutting down.
  local -a alive=() kids=()
  local p
  for p in "${daemons[@]}"; do
    proc_is "${p%%:*}" "${p#*:}" && alive+=("${p%%:*}")
  done
  ((${#alive[@]})) && mapfile -t kids < <(descendants "${alive[@]}")
  ((${#daemons[@]})) && stop_procs 5 "${daemons[@]}"
  ((${#kids[@]})) && stop_procs 3 "${kids[@]}"
  local procs
  for _ in 1 2; do
    mapfile -t procs < <(netns_procs "${nss[@]}")
    ((${#procs[@]})) && stop_procs 3 "${procs[@]}"
  done
  ((${#munge[@]})) && stop_procs 5 "${munge[@]}"

  local x ok=1
  for x in "${links[@]}"; do
    ip link show "$x" &>/dev/null && { ip link del "$x" || ok=0; }
  done
  for x in "${nss[@]}"; do
    [[ -e /run/netns/$x ]] && { ip netns del "$x" || ok=0; }
  done
  for x in "${routes[@]}"; do
    # `ip route show` cannot select by type+metric, so just delete (an absent
    # route makes `del` fail harmlessly) and verify afterwards.
    # shellcheck disable=SC2086  # the recorded spec is several words
    ip route del $x 2>/dev/null || true
    # shellcheck disable=SC2086
    route_exists $x && { log "route $x still exists"; ok=0; }
  done
  for x in "${sysctls[@]}"; do
    local key=${x%% *} val=${x#* }
    local f=/proc/sys/${key//.//}
    [[ -w $f ]] && echo "$val" >"$f"
  done

  # Verify: anything recorded still around means a retry is needed, so keep
  # the undo log; otherwise retire it so a second `down` is a no-op (and
  # cannot e.g. restore a sysctl someone changed since).
  for p in "${daemons[@]}" "${munge[@]}"; do
    proc_is "${p%%:*}" "${p#*:}" && { log "pid ${p%%:*} still alive"; ok=0; }
  done
  for x in "${nss[@]}"; do [[ -e /run/netns/$x ]] && { log "netns $x still exists"; ok=0; }; done
  for x in "${links[@]}"; do ip link show "$x" &>/dev/null && { log "link $x still exists"; ok=0; }; done
  if ((ok)); then
    mv -f "$UNDO" "$UNDO.done"
    unregister
    log "cluster under $PREFIX is down"
  else
    log "teardown incomplete; run down again"
    return 1
  fi
}

cmd_down() {
  ((EUID == 0)) || die "must run as root"
  if [[ ! -d $PREFIX ]]; then
    log "$PREFIX does not exist; nothing to do"
    return 0
  fi
  do_down
  if ((PURGE)); then
    # Only ever delete something that is recognisably one of our prefixes.
    [[ -f $PREFIX/state/cluster.vars || -f $PREFIX/state/undo.done ]] ||
      die "refusing to purge $PREFIX: not a cluster prefix"
    rm -rf -- "$PREFIX"
    log "purged $PREFIX"
  fi
}

# ---------------------------------------------------------------------------
# shape / exec / status
# ---------------------------------------------------------------------------
cmd_shape() {
  ((EUID == 0)) || die "must run as root"
  load_vars
  local i ns veth bps burst
  if [[ $RATE == off ]]; then
    for ((i = 1; i <= NODES; i++)); do
      ns=${NS_PREFIX}$i veth=${VETH_PREFIX}$i
      tc qdisc del dev "$veth" root 2>/dev/null || true
      ip netns exec "$ns" tc qdisc del dev eth0 root 2>/dev/null || true
    done
    log "rate limit removed"
    return 0
  fi
  [[ $RATE =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] || die "--rate must look like 100mbit, 1gbit, 500kbit or be 'off'"
  case ${BASH_REMATCH[2]} in
    bit) bps=${BASH_REMATCH[1]} ;;
    kbit) bps=$((BASH_REMATCH[1] * 1000)) ;;
    mbit) bps=$((BASH_REMATCH[1] * 1000000)) ;;
    gbit) bps=$((BASH_REMATCH[1] * 1000000000)) ;;
  esac
  # Bucket = 10 ms worth of bytes, at least 64 KiB so a full GSO/TSO segment
  # (veth does 64 KiB super-packets) always fits in the bucket.
  burst=$((bps / 8 / 100))
  ((burst >= 65536)) || burst=65536
  for ((i = 1; i <= NODES; i++)); do
    ns=${NS_PREFIX}$i veth=${VETH_PREFIX}$i
    # Egress of the host-side end = traffic towards the node;
    # egress of eth0 inside the namespace = traffic from the node.
    tc qdisc replace dev "$veth" root tbf rate "$RATE" burst "$burst" latency 100ms
    ip netns exec "$ns" tc qdisc replace dev eth0 root tbf rate "$RATE" burst "$burst" latency 100ms
  done
  log "each node link limited to $RATE in both directions (tbf, burst ${burst}B)"
}

node_pid() { # I -> pid of that node's slurmd (if alive)
  local kind pid start label
  while read -r kind pid start label; do
    [[ $kind == pid && $label == "slurmd-node$1" ]] || continue
    proc_is "$pid" "$start" && { echo "$pid"; return 0; }
  done <"$UNDO"
  return 1
}

cmd_exec() {
  ((EUID == 0)) || die "must run as root"
  load_vars
  [[ $NODE =~ ^[1-9]$ ]] && ((NODE <= NODES)) || die "--node must be 1..$NODES"
  ((${#CMD[@]})) || die "exec needs -- CMD..."
  [[ -f $UNDO ]] || die "cluster under $PREFIX is not up"
  local pid
  # Join slurmd's net, UTS and mount namespaces: same view as a job task
  # (eth0, hostname nodeI, private /etc/hosts, netns /sys).
  pid=$(node_pid "$NODE") || die "slurmd of node$NODE is not running"
  exec nsenter -t "$pid" -n -u -m -- "${CMD[@]}"
}

cmd_status() {
  load_vars
  [[ -f $UNDO ]] || { echo "down"; return 1; }
  local why
  why=$(daemons_alive) || { echo "degraded: $why"; return 1; }
  SLURM_CONF=$PREFIX/etc/slurm.conf sinfo -N
}

main() {
  (($#)) || usage
  local sub=$1; shift
  parse_args "$@"
  case $sub in
    up) cmd_up ;;
    down) cmd_down ;;
    shape) [[ -n $RATE ]] || die "shape needs --rate RATE|off"; cmd_shape ;;
    exec) cmd_exec ;;
    status) cmd_status ;;
    *) usage ;;
  esac
}

main "$@"
