#!/usr/bin/env bash
# Queues a sharded tauguard run on Slurm: a job array of SHARDS tasks (grid.sbatch, one
# `tauguard run --shard I/SHARDS --resume` each, into results/<NAME>/shard-<I>) and a merge
# job (merge.sh) that starts only once every array task has succeeded
# (--dependency=afterok:<array job id>) and writes results/<NAME>/merged.
#
#   scripts/slurm/submit.sh CONFIG SHARDS [NAME]
#
# What it relies on:
#   - run from the project directory, on a filesystem every node shares: the config, results/
#     and logs/ are named by relative path, and the jobs start in the submission directory;
#   - the jobs inherit the submitting shell's environment (sbatch's default --export=ALL):
#     `tauguard` on PATH, TAUGUARD_DATA_DIR (or the config's data_dir) and API keys;
#   - working `flock` on that filesystem: a run locks its directory, merge takes a shared lock
#     so it never reads a shard still running (NFS needs its lock service).
#
# Output: the array's logs are logs/tauguard-grid-<array job>_<task>.out; the merge job's
# (what it merged, or why it refused) logs/tauguard-merge-<job>.out.
#
# Recovery. If a task fails or is cancelled, Slurm cancels the merge job
# (DependencyNeverSatisfied). Either resubmit those tasks alone — each continues its own
# shard, and one that never started runs exactly its part —
#   sbatch --array=<task ids> scripts/slurm/grid.sbatch CONFIG NAME SHARDS
# and once they have finished merge by hand:
#   scripts/slurm/merge.sh NAME SHARDS
# or run this script again with the same arguments: finished shards run nothing, the rest
# continue, and the merge job is queued again.
#
# Running it again once results/<NAME>/merged is a complete merge does nothing (exit 0); a
# merged directory that is not complete (written with --allow-incomplete) is refused with the
# commands to fill it or set it aside.
set -euo pipefail

usage="usage: submit.sh CONFIG SHARDS [NAME]"
CONFIG=${1:?$usage}
SHARDS=${2:?$usage}
NAME=${3:-$(basename "$CONFIG" .toml)}
HERE=$(cd "$(dirname "$0")" && pwd)

if ! [[ $SHARDS =~ ^[1-9][0-9]*$ ]]; then
  echo "submit.sh: SHARDS must be a positive whole number, not \`$SHARDS\`" >&2
  exit 2
fi
MERGED="results/$NAME/merged"
if [ -e "$MERGED" ]; then
  if grep -Eq '"complete": *true' "$MERGED/merge.json" 2>/dev/null; then
    echo "$MERGED is already a complete merge: nothing to submit"
    echo "(to run the config again, choose another NAME: submit.sh $CONFIG $SHARDS <new name>)"
    exit 0
  fi
  cat >&2 <<EOF
submit.sh: $MERGED exists but is not a complete merge (see $MERGED/merge.json).
  Fill it in place:            tauguard run $CONFIG --resume --out $MERGED
  or set it aside and finish:  mv $MERGED $MERGED.partial && scripts/slurm/submit.sh $CONFIG $SHARDS $NAME
EOF
  exit 2
fi
# Shards written before must be of this shard count: another count splits the plan otherwise.
for config_json in "results/$NAME"/shard-*/config.json; do
  [ -f "$config_json" ] || continue
  saved=$(grep -Eo '"shard": *"[0-9]+/[0-9]+"' "$config_json" | grep -Eo '[0-9]+/[0-9]+' || true)
  if [ -n "$saved" ] && [ "${saved#*/}" != "$SHARDS" ]; then
    echo "submit.sh: $(dirname "$config_json") holds shard $saved; resubmit with SHARDS=${saved#*/}, or choose another NAME" >&2
    exit 2
  fi
done
mkdir -p logs "results/$NAME"

# --parsable prints "<job id>[;<cluster>]".
ARRAY_JOB=$(sbatch --parsable --array="0-$((SHARDS - 1))" "$HERE/grid.sbatch" "$CONFIG" "$NAME" "$SHARDS")
ARRAY_JOB=${ARRAY_JOB%%;*}
MERGE_JOB=$(sbatch --parsable --dependency="afterok:$ARRAY_JOB" --kill-on-invalid-dep=yes \
  --job-name=tauguard-merge --output="logs/%x-%j.out" --time=00:30:00 \
  --wrap="$(printf '%q ' "$HERE/merge.sh" "$NAME" "$SHARDS")")
MERGE_JOB=${MERGE_JOB%%;*}

echo "array job $ARRAY_JOB: $SHARDS shards of $CONFIG into results/$NAME/shard-*"
echo "merge job $MERGE_JOB (after array job $ARRAY_JOB succeeds): $MERGED, log logs/tauguard-merge-$MERGE_JOB.out"
echo "if a task fails: sbatch --array=<task ids> $HERE/grid.sbatch $CONFIG $NAME $SHARDS, then $HERE/merge.sh $NAME $SHARDS"
