#!/usr/bin/env bash
# Queues a sharded tauguard run on Slurm: a job array of SHARDS tasks (grid.sbatch, one
# `tauguard run --shard auto` each) and a merge job that starts only once every array task has
# succeeded (--dependency=afterok:<array job id>) and writes results/<name>/merged.
#
#   scripts/slurm/submit.sh CONFIG SHARDS [NAME]
#
# Run from the project directory, with `tauguard` on PATH on the compute nodes and the
# τ²-bench data where the config (or TAUGUARD_DATA_DIR, exported to the jobs) points.
# If a shard fails the merge never starts (Slurm cancels it as DependencyNeverSatisfied):
# resubmit that task with `sbatch --array=<id> scripts/slurm/grid.sbatch CONFIG NAME`
# — it resumes — then run the merge command below by hand.
set -euo pipefail

CONFIG=${1:?usage: submit.sh CONFIG SHARDS [NAME]}
SHARDS=${2:?usage: submit.sh CONFIG SHARDS [NAME]}
NAME=${3:-$(basename "$CONFIG" .toml)}
HERE=$(cd "$(dirname "$0")" && pwd)

if ! [[ $SHARDS =~ ^[1-9][0-9]*$ ]]; then
  echo "submit.sh: SHARDS must be a positive whole number, not \`$SHARDS\`" >&2
  exit 2
fi
mkdir -p logs "results/$NAME"

# --parsable prints "<job id>[;<cluster>]".
ARRAY_JOB=$(sbatch --parsable --array="0-$((SHARDS - 1))" "$HERE/grid.sbatch" "$CONFIG" "$NAME")
ARRAY_JOB=${ARRAY_JOB%%;*}

DIRS=()
for ((i = 0; i < SHARDS; i++)); do
  DIRS+=("results/$NAME/shard-$i")
done
MERGE_JOB=$(sbatch --parsable --dependency="afterok:$ARRAY_JOB" --kill-on-invalid-dep=yes \
  --job-name=tauguard-merge --output="logs/%x-%j.out" --time=00:30:00 \
  --wrap="tauguard merge ${DIRS[*]} --out results/$NAME/merged")
MERGE_JOB=${MERGE_JOB%%;*}

echo "array job $ARRAY_JOB: $SHARDS shards of $CONFIG into results/$NAME/shard-*"
echo "merge job $MERGE_JOB (after array job $ARRAY_JOB succeeds): results/$NAME/merged"
