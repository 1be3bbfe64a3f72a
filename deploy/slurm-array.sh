#!/usr/bin/env bash
# herdsim on a Slurm cluster: one array task per shard, then one job that merges them.
#
# This file is both halves. Run it with bash on a login node (outside any job) and it
# checks the scenario, then submits itself as a job array of SHARDS tasks and a merge job
# that starts once every task has succeeded:
#
#   SCENARIO=scenarios/sweep-clients.toml OUT=results SHARDS=8 bash deploy/slurm-array.sh
#
# Run by sbatch (SLURM_ARRAY_TASK_ID is set) it is one array task: `herdsim run --shard
# auto` takes its shard from (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP and the shard
# count from SLURM_ARRAY_TASK_COUNT, and writes OUT/<name>/shard-<i>-of-<n>/.
#
# The same by hand, without the wrapper:
#
#   export SCENARIO=$PWD/scenarios/sweep-clients.toml OUT=$PWD/results
#   jobid=$(sbatch --parsable --array=0-7 deploy/slurm-array.sh)
#   sbatch --dependency=afterok:$jobid --kill-on-invalid-dep=yes \
#          --wrap "herdsim merge $OUT/sweep-clients"
#
# (<name> is the scenario's `name`, which `herdsim check FILE` prints.) The merged files
# in OUT/<name>/ are byte for byte those of `herdsim run SCENARIO --out OUT`.
#
# Requirements: SCENARIO, OUT and the herdsim binary on a file system every node sees
# (NFS, Lustre, GPFS...). Array task IDs must be evenly spaced: a range (0-7, or 1-8, with
# an optional %limit such as 0-99%10) or a stepped range (0-14:2), not a list with gaps
# (0,1,5), which every task refuses: the shard index is the task ID minus the smallest ID,
# divided by the step, and the shard count is the number of tasks.
#
# Environment (the wrapper reads these; sbatch passes them on to the tasks):
#   SCENARIO      scenario file                       (default scenarios/sweep-clients.toml)
#   OUT           output folder                       (default results)
#   SHARDS        array tasks = shards                (default 4; wrapper only)
#   HERDSIM       the herdsim binary                  (default: herdsim on PATH)
#   HERDSIM_ARGS  more `herdsim run` flags, the same for every shard, e.g.
#                 "--replications 100 --seed 7 --set clients.count=5000"
#   MERGE_ARGS    more `herdsim merge` flags, e.g. "--no-charts"
#   LOG_DIR       where the jobs' logs go             (default .; wrapper only)
#   SBATCH_ARGS   more sbatch flags for both jobs, e.g. "--partition=short --account=ops"
#   WAIT          1: the wrapper waits for the merge job and returns its exit status
#
# A failed task can be run again without touching the others: a shard replaces its own
# folder, so `scontrol requeue <jobid>_<task>` (which keeps the array's variables) or
# `herdsim run SCENARIO --shard <i>/<n> --out OUT` on any node, then `herdsim merge
# OUT/<name>`. Do not resubmit a single task with `sbatch --array=<task>`: that array
# has one task, so --shard auto would read shard 0 of 1.

# The array task's resources (the wrapper's command-line flags override these):
#SBATCH --job-name=herdsim
#   the shards: tasks 0..3, at most as many at once as the cluster allows
#SBATCH --array=0-3
#   one task per shard, on one node
#SBATCH --ntasks=1
#   herdsim runs its jobs in parallel on these CPUs (passed as --threads below)
#SBATCH --cpus-per-task=2
#   herdsim refuses to start above 80% of this (it reads the job's cgroup memory.max)
#SBATCH --mem=2G
#   wall-clock limit per shard
#SBATCH --time=01:00:00
#   one log per task: %A the array's job ID, %a the task ID
#SBATCH --output=herdsim-%A_%a.out

set -euo pipefail

# Defaults for everything the wrapper and the tasks read.
SCENARIO=${SCENARIO:-scenarios/sweep-clients.toml}
OUT=${OUT:-results}
HERDSIM=${HERDSIM:-herdsim}

if [[ -n "${SLURM_ARRAY_TASK_ID:-}" ]]; then
    # --- One array task: run this task's shard. ---
    echo "herdsim shard: task ${SLURM_ARRAY_TASK_ID} (from ${SLURM_ARRAY_TASK_MIN:-0}) of ${SLURM_ARRAY_TASK_COUNT:-?} in job ${SLURM_ARRAY_JOB_ID:-?} on $(hostname)"
    # HERDSIM_ARGS is split into words on purpose (several flags in one variable).
    # shellcheck disable=SC2086
    exec "$HERDSIM" run "$SCENARIO" --shard auto --out "$OUT" \
        --threads "${SLURM_CPUS_PER_TASK:-1}" ${HERDSIM_ARGS:-}
fi

if [[ "${ENVIRONMENT:-}" == BATCH ]]; then
    # A batch job (sbatch sets ENVIRONMENT=BATCH) but not an array task: no shard to take.
    echo "deploy/slurm-array.sh: submitted without --array; submit it with sbatch --array=0-N, or run it with bash to submit the array and the merge" >&2
    exit 2
fi

# --- The wrapper: check, then submit the array and the merge job. ---
SHARDS=${SHARDS:-4}
LOG_DIR=${LOG_DIR:-.}
if ! [[ "$SHARDS" =~ ^[1-9][0-9]*$ ]]; then
    echo "SHARDS must be a whole number of at least 1, found \"$SHARDS\"" >&2
    exit 2
fi

# Absolute paths, so the jobs find everything whatever folder they start in.
HERDSIM=$(command -v "$HERDSIM") || {
    echo "no herdsim binary \"${HERDSIM}\" (set HERDSIM=/shared/path/to/herdsim)" >&2
    exit 2
}
HERDSIM=$(realpath "$HERDSIM")
SCENARIO=$(realpath "$SCENARIO")
OUT=$(realpath -m "$OUT")
LOG_DIR=$(realpath -m "$LOG_DIR")
export SCENARIO OUT HERDSIM HERDSIM_ARGS="${HERDSIM_ARGS:-}" MERGE_ARGS="${MERGE_ARGS:-}"

# Check the scenario (with HERDSIM_ARGS' --set settings) now rather than in every task;
# its `name` names the output folder.
read -r -a run_args <<<"$HERDSIM_ARGS"
check_args=()
for ((i = 0; i < ${#run_args[@]}; i++)); do
    case ${run_args[$i]} in
    --set) check_args+=(--set "${run_args[$((i + 1))]:-}") && i=$((i + 1)) ;;
    --set=*) check_args+=("${run_args[$i]}") ;;
    esac
done
checked=$("$HERDSIM" check "$SCENARIO" "${check_args[@]}")
NAME=$(sed -n 's/.*: ok (\([a-z0-9_-]*\): .*/\1/p' <<<"$checked")
if [[ -z "$NAME" ]]; then
    echo "cannot read the scenario's name from: $checked" >&2
    exit 2
fi
export MERGE_DIR="$OUT/$NAME"
mkdir -p "$OUT" "$LOG_DIR"

script=$(realpath "${BASH_SOURCE[0]}")
# SBATCH_ARGS is split into words on purpose.
# shellcheck disable=SC2086
array=$(sbatch --parsable --export=ALL ${SBATCH_ARGS:-} \
    --array="0-$((SHARDS - 1))" \
    --output="$LOG_DIR/herdsim-%A_%a.out" \
    "$script")
array=${array%%;*} # --parsable prints "jobid" or "jobid;cluster"
echo "submitted array job $array: $SHARDS shards of $SCENARIO into $MERGE_DIR/shard-*-of-$SHARDS/"

# The merge job: starts when every task of the array has ended with exit 0 (afterok),
# and is cancelled if one fails (--kill-on-invalid-dep), instead of pending forever.
# With WAIT=1, sbatch --wait returns when it ends, with its exit status.
wait_flag=()
[[ "${WAIT:-0}" == 1 ]] && wait_flag=(--wait)
status=0
# The single quotes are on purpose: the job's shell expands the variables exported above.
# shellcheck disable=SC2016,SC2086
merge=$(sbatch --parsable --export=ALL ${SBATCH_ARGS:-} "${wait_flag[@]}" \
    --job-name=herdsim-merge --ntasks=1 --cpus-per-task=1 --time=00:30:00 \
    --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --output="$LOG_DIR/herdsim-merge-%j.out" \
    --wrap='exec "$HERDSIM" merge "$MERGE_DIR" $MERGE_ARGS') || status=$?
merge=${merge%%;*}
echo "merge job ${merge:-?}: herdsim merge $MERGE_DIR (log: $LOG_DIR/herdsim-merge-${merge:-?}.out)"
if [[ "${WAIT:-0}" == 1 && $status -eq 0 ]]; then
    # A merge job cancelled because a task failed never ran, so sbatch --wait reports
    # exit 0 for it: ask for its final state.
    state=$(scontrol show job "$merge" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -1 || true)
    echo "merge job $merge: ${state:-JobState=unknown}"
    [[ -z "$state" || "$state" == JobState=COMPLETED ]] || status=1
fi
if [[ $status -ne 0 ]]; then
    echo "the merge did not complete (a task failed, or the merge itself): see the logs in $LOG_DIR" >&2
fi
exit "$status"
