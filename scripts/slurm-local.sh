#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine, running deploy/slurm-array.sh.
#
#   sudo bash scripts/slurm-local.sh        # or as root in a container
#
# It installs Debian's slurm-wlm and munge when they are missing (apt-get), writes a
# one-node slurm.conf (this host as controller and compute node, with its real CPUs and
# memory) and a munge key into a temporary folder, starts munged, slurmctld and slurmd
# there (no systemd needed; nothing under /etc is changed), runs a probe job, then submits
# deploy/slurm-array.sh as an array job over a small sweep and its dependent merge job,
# waits for them, and compares every merged file with an unsharded run (cmp). The daemons
# it started are stopped on exit, and the temporary folder removed (KEEP=1 keeps it).
#
# Environment:
#   SCENARIO       default scenarios/sweep-clients.toml
#   SHARDS         array tasks, default 3
#   REPLICATIONS   default 2 (a small run: the point is the plumbing)
#   HERDSIM        the binary to use (default: cargo build --release, target/release/herdsim)
#   KEEP=1         keep the temporary folder (logs, slurm.conf, results)
#
# Exit status: 0 the merged files equal the unsharded run's; 1 they differ, or a job of
# the trial failed; 3 Slurm cannot run here (not root, packages cannot be installed, a
# daemon does not start, or the probe job fails), with the reason on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
started=$SECONDS

SCENARIO=${SCENARIO:-scenarios/sweep-clients.toml}
SHARDS=${SHARDS:-3}
REPLICATIONS=${REPLICATIONS:-2}

say() { echo "slurm-local: $*" >&2; }
cannot() {
    say "cannot run Slurm here: $*"
    exit 3
}

# --- Packages ---------------------------------------------------------------------------
[[ $(id -u) -eq 0 ]] || cannot "needs root (apt-get, and slurmd runs jobs as their user)"
need=()
for tool in munged slurmctld slurmd sbatch scontrol sinfo; do
    command -v "$tool" >/dev/null || need=(slurm-wlm munge)
done
if [[ ${#need[@]} -gt 0 ]]; then
    command -v apt-get >/dev/null || cannot "slurm-wlm and munge are missing and there is no apt-get"
    say "installing ${need[*]} (apt-get)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"; } \
        >/dev/null 2>&1 || cannot "apt-get install ${need[*]} failed"
fi

if [[ -z "${HERDSIM:-}" ]]; then
    say "building herdsim (cargo build --release)"
    cargo build --release --quiet
    HERDSIM=$repo/target/release/herdsim
fi
HERDSIM=$(realpath "$HERDSIM")

# --- A temporary cluster ----------------------------------------------------------------
work=$(mktemp -d /tmp/herdsim-slurm.XXXXXX)
chmod 0755 "$work" # slurmd and the jobs (root here) read and write in it
mkdir -p "$work"/{ctld,spool,logs}
pids=()
cleanup() {
    local status=$?
    # Only the daemons this script started, by their process IDs, newest first.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill "${pids[$i]}" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    if [[ "${KEEP:-0}" == 1 ]]; then
        say "kept $work"
    else
        rm -rf "$work"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A free TCP port from $1 up (another cluster may use Slurm's 6817/6818).
free_port() {
    local p=$1
    while (: <"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
    echo "$p"
}

# munged with its own key and socket in the temporary folder.
dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 status=none
chmod 0400 "$work/munge.key"
munged --foreground --force --socket="$work/munge.socket" --key-file="$work/munge.key" \
    --pid-file="$work/munged.pid" --log-file="$work/logs/munged.log" \
    --seed-file="$work/munged.seed" 2>>"$work/logs/munged.log" &
pids+=($!)
for _ in $(seq 50); do [[ -S "$work/munge.socket" ]] && break; sleep 0.1; done
[[ -S "$work/munge.socket" ]] || cannot "munged did not start: $(tail -5 "$work/logs/munged.log")"
munge --socket="$work/munge.socket" -n | unmunge --socket="$work/munge.socket" >/dev/null ||
    cannot "munge cannot encode and decode a credential"

# slurm.conf: this host, with the CPUs, sockets, cores and memory slurmd detects.
node=$(hostname -s)
ctld_port=$(free_port 6817)
slurmd_port=$(free_port $((ctld_port + 1)))
hardware=$(slurmd -C | head -1) # NodeName=<host> CPUs=.. Boards=.. ... RealMemory=..
hardware=${hardware#NodeName=* }
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
# Written by scripts/slurm-local.sh: one node, controller and compute, all state in $work.
ClusterName=herdsim-local
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.socket
StateSaveLocation=$work/ctld
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/logs/slurmctld.log
SlurmdLogFile=$work/logs/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: processes tracked through /proc, no task containment.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerType=sched/backfill
# Finished jobs stay visible to scontrol for 5 minutes.
MinJobAge=300
NodeName=$node NodeAddr=127.0.0.1 $hardware State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -i -f "$SLURM_CONF" >>"$work/logs/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" >>"$work/logs/slurmd.out" 2>&1 &
pids+=($!)
daemon_log() { tail -n 8 "$work"/logs/slurm{ctld,d}.{log,out} 2>/dev/null; }
state=
for _ in $(seq 100); do
    for pid in "${pids[@]}"; do
        kill -0 "$pid" 2>/dev/null || cannot "a daemon exited; its logs end with:
$(daemon_log)"
    done
    state=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
    [[ "$state" == idle ]] && break
    sleep 0.2
done
[[ "$state" == idle ]] || cannot "the node is \"${state:-unknown}\" after 20 s, not idle:
$(daemon_log)"
say "cluster up: slurmctld :$ctld_port, slurmd :$slurmd_port, node $node ($hardware) in $((SECONDS - started)) s"

# A probe job: can slurmd launch a batch job at all?
if ! timeout 120 sbatch --quiet --wait --time=1 --output="$work/logs/probe.out" --wrap 'echo probe ok' \
    >/dev/null 2>"$work/logs/probe.err" || ! grep -q 'probe ok' "$work/logs/probe.out"; then
    cannot "the probe job failed: $(cat "$work/logs/probe.err" "$work/logs/probe.out" 2>/dev/null)
$(daemon_log)"
fi

# --- The trial --------------------------------------------------------------------------
say "unsharded reference: $SCENARIO, $REPLICATIONS replications"
"$HERDSIM" run "$SCENARIO" --replications "$REPLICATIONS" --no-charts --quiet --out "$work/whole"

say "submitting deploy/slurm-array.sh: $SHARDS shards, then the merge job"
trial=$SECONDS
# timeout: a job that never starts (or a hung daemon) fails the trial rather than hanging.
if ! SCENARIO=$SCENARIO OUT=$work/sharded SHARDS=$SHARDS HERDSIM=$HERDSIM \
    HERDSIM_ARGS="--replications $REPLICATIONS --quiet" MERGE_ARGS="--no-charts --quiet" \
    LOG_DIR=$work/logs SBATCH_ARGS="--cpus-per-task=1 --mem=500M" WAIT=1 \
    timeout 600 bash deploy/slurm-array.sh; then
    say "the sharded run failed; job logs:"
    tail -n 20 "$work"/logs/herdsim-*.out >&2 || true
    exit 1
fi
say "array and merge jobs done in $((SECONDS - trial)) s"
squeue -h -o '%i %T' >&2 || true

name=$(basename "$(find "$work/whole" -mindepth 1 -maxdepth 1 -type d)")
whole=$work/whole/$name
merged=$work/sharded/$name
ls -d "$merged"/shard-*-of-"$SHARDS" >/dev/null || { say "no shard folders in $merged"; exit 1; }
compared=0
for f in "$whole"/*; do
    cmp "$f" "$merged/$(basename "$f")" || { say "$(basename "$f") differs"; exit 1; }
    compared=$((compared + 1))
done
for f in "$merged"/*; do
    [[ -d "$f" || -e "$whole/$(basename "$f")" ]] || { say "extra file $(basename "$f")"; exit 1; }
done
say "OK: the merged $name equals the unsharded run ($compared files compared with cmp, summary.csv $(wc -c <"$whole/summary.csv") bytes); $((SECONDS - started)) s in all"
