#!/usr/bin/env bash
# Merges the N shards of results/<NAME> into results/<NAME>/merged: what submit.sh's merge
# job runs, and the command to run by hand after a recovery.
#
#   scripts/slurm/merge.sh NAME N [--allow-incomplete]
#
# which is exactly
#   tauguard merge results/NAME/shard-0 … results/NAME/shard-<N-1> --out results/NAME/merged
# A shard that never started has no directory; it is left out here, and the merge then
# refuses (exit 2), naming each shard and how many of its simulations are missing — unless
# --allow-incomplete, which writes the union marked incomplete in merge.json.
set -euo pipefail

usage="usage: merge.sh NAME N [--allow-incomplete]"
NAME=${1:?$usage}
SHARDS=${2:?$usage}
shift 2
if ! [[ $SHARDS =~ ^[1-9][0-9]*$ ]]; then
  echo "merge.sh: N (the shard count) must be a positive whole number, not \`$SHARDS\`" >&2
  exit 2
fi
DIRS=()
for ((i = 0; i < SHARDS; i++)); do
  dir="results/$NAME/shard-$i"
  if [ -d "$dir" ]; then
    DIRS+=("$dir")
  else
    echo "merge.sh: $dir does not exist (its task never started)" >&2
  fi
done
if [ ${#DIRS[@]} = 0 ]; then
  echo "merge.sh: no shard directory of results/$NAME exists" >&2
  exit 2
fi
exec tauguard merge "${DIRS[@]}" --out "results/$NAME/merged" "$@"
