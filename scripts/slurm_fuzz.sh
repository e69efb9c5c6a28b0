#!/usr/bin/env bash
#SBATCH --job-name=stax-fuzz
#SBATCH --array=0-3
#SBATCH --cpus-per-task=1
#SBATCH --ntasks=1
# A `stax fuzz` campaign as a Slurm job array (docs/campaigns.md). Submit it
# with scripts/slurm_fuzz_submit.sh, which sets --array=0-(N-1) and the merge
# job's dependency; by hand:
#
#   sbatch --array=0-$((N-1)) scripts/slurm_fuzz.sh shard DIR N STAX [fuzz args: --seed S --count C | --time SEC, ...]
#   sbatch --dependency=afterany:ARRAYJOB scripts/slurm_fuzz.sh merge DIR N STAX
#
# shard: task K (SLURM_ARRAY_TASK_ID) runs `STAX fuzz --shard K/N --db DIR/shard-K.db ARGS` with
#   --jobs = the task's CPUs. A task killed or cancelled mid-run resumes from its database when the same
#   task is submitted again (sbatch --array=K ...): no finding is lost. On completion it writes
#   DIR/shard-K.done (exit 0 whether or not the shard found something: findings are in the database).
# merge: unions the shard databases there are into DIR/campaign.db (written to a temporary file, then
#   renamed, so a later merge replaces it) and writes DIR/merge.txt; exit 1 when a shard is missing
#   or unfinished (its seeds are then not in campaign.db: resubmit it and merge again).
# DIR must be visible to every node (a shared filesystem); each database has one writer.
set -uo pipefail

mode=${1:-}
dir=${2:-}
n=${3:-}
stax=${4:-}
if [[ $# -lt 4 || ( "$mode" != shard && "$mode" != merge ) ]] || ! [[ "$n" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 shard|merge DIR N STAX [fuzz args...]" >&2
  exit 2
fi
shift 4

if [[ "$mode" == shard ]]; then
  k=${SLURM_ARRAY_TASK_ID:-${STAX_SHARD:-}}
  if ! [[ "$k" =~ ^[0-9]+$ ]]; then
    echo "slurm_fuzz: no SLURM_ARRAY_TASK_ID (submit as a job array) or STAX_SHARD" >&2
    exit 2
  fi
  rm -f "$dir/shard-$k.done"
  echo "slurm_fuzz: shard $k/$n on $(hostname) (job ${SLURM_JOB_ID:-none}), db $dir/shard-$k.db"
  "$stax" fuzz --shard "$k/$n" --db "$dir/shard-$k.db" --jobs "${SLURM_CPUS_PER_TASK:-1}" --quiet "$@"
  rc=$?
  if [[ $rc -le 1 ]]; then
    touch "$dir/shard-$k.done"
    exit 0
  fi
  exit "$rc"
fi

# merge
shards=()
missing=()
for ((k = 0; k < n; ++k)); do
  [[ -f "$dir/shard-$k.db" ]] && shards+=("$dir/shard-$k.db")
  [[ -f "$dir/shard-$k.done" ]] || missing+=("$k")
done
if [[ ${#shards[@]} -eq 0 ]]; then
  echo "slurm_fuzz merge: no shard database in $dir" | tee "$dir/merge.txt" >&2
  exit 1
fi
tmp="$dir/campaign.db.tmp.$$"
rm -f "$tmp" "$tmp-wal" "$tmp-shm"
if ! "$stax" fuzz merge "$tmp" "${shards[@]}" >"$dir/merge.txt" 2>&1; then
  cat "$dir/merge.txt" >&2
  rm -f "$tmp" "$tmp-wal" "$tmp-shm"
  exit 1
fi
rm -f "$dir/campaign.db-wal" "$dir/campaign.db-shm"
mv -f "$tmp" "$dir/campaign.db"
"$stax" fuzz report --db "$dir/campaign.db" >>"$dir/merge.txt" 2>&1
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "unfinished shards (resubmit them, then merge again): ${missing[*]}" >>"$dir/merge.txt"
  cat "$dir/merge.txt"
  exit 1
fi
cat "$dir/merge.txt"
exit 0
