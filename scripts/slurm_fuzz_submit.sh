#!/usr/bin/env bash
# Submits, resubmits and waits for a `stax fuzz` campaign on Slurm (docs/campaigns.md):
#
#   scripts/slurm_fuzz_submit.sh submit DIR N [--stax BIN] [--sbatch "OPTS"] -- FUZZ ARGS
#       a job array of N shards (scripts/slurm_fuzz.sh shard) and a merge job that runs after all of
#       them (afterany); FUZZ ARGS as for `stax fuzz`: --seed S --count C (or --time SEC), --mutant,
#       --backends, ... (not --db, --shard or --jobs). Records the jobs in DIR/submit.env.
#   scripts/slurm_fuzz_submit.sh resubmit DIR K [K ...]
#       submits shards K again (they resume from DIR/shard-K.db), cancels the pending merge job and
#       submits a new one after the resubmitted shards and whatever is still queued.
#   scripts/slurm_fuzz_submit.sh wait DIR [TIMEOUT_S]
#       waits (default 3600 s) until the latest merge job has left the queue; prints DIR/merge.txt;
#       exit 0 when the merge found every shard finished, 1 otherwise, 124 on timeout.
#   scripts/slurm_fuzz_submit.sh status DIR
#
# BIN defaults to `stax` on the PATH (resolved to an absolute path); DIR must be on a filesystem that
# every node sees. Job outputs: DIR/logs/.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
job_script="$here/slurm_fuzz.sh"

usage() {
  sed -n '2,/^set /p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

cmd=${1:-}
dir=${2:-}
[[ -n "$cmd" && -n "$dir" ]] || usage
shift 2

in_queue() {  # in_queue JOBID: whether Slurm still has it pending or running
  [[ -n "$(squeue -h -j "$1" -o %i 2>/dev/null || true)" ]]
}

submit_merge() {  # submit_merge DEPS...: the merge job after DEPS (those still queued)
  local deps=() j
  for j in "$@"; do in_queue "$j" && deps+=("$j"); done
  local dep=()
  if [[ ${#deps[@]} -gt 0 ]]; then dep=(--dependency="afterany:$(IFS=:; echo "${deps[*]}")"); fi
  # --array=0: one task, overriding the job script's `#SBATCH --array` (else N merges would race).
  # shellcheck disable=SC2086
  sbatch --parsable ${SBATCH_OPTS:-} "${dep[@]}" --job-name=stax-fuzz-merge --array=0 \
    -o "$dir/logs/merge-%j.out" "$job_script" merge "$dir" "$N" "$STAX"
}

save() {
  {
    declare -p N STAX SBATCH_OPTS ARGS ARRAY MERGE EXTRA
  } >"$dir/submit.env"
}

case "$cmd" in
  submit)
    N=${1:-}
    shift || true
    [[ "$N" =~ ^[1-9][0-9]*$ ]] || { echo "submit: N must be a positive number" >&2; exit 2; }
    STAX=$(command -v stax || true)
    SBATCH_OPTS=""
    while [[ $# -gt 0 && "$1" != -- ]]; do
      case "$1" in
        --stax) STAX=$2; shift 2 ;;
        --sbatch) SBATCH_OPTS=$2; shift 2 ;;
        *) echo "submit: unknown option $1 (fuzz arguments go after --)" >&2; exit 2 ;;
      esac
    done
    [[ "${1:-}" == -- ]] && shift
    ARGS=("$@")
    for a in "${ARGS[@]}"; do
      case "$a" in --db|--db=*|--shard|--shard=*|--jobs|--jobs=*)
        echo "submit: $a is set per shard by the job script" >&2; exit 2 ;;
      esac
    done
    [[ -n "$STAX" && -x "$STAX" ]] || { echo "submit: no stax binary (--stax BIN)" >&2; exit 2; }
    STAX=$(cd "$(dirname "$STAX")" && pwd)/$(basename "$STAX")
    mkdir -p "$dir/logs"
    dir=$(cd "$dir" && pwd)
    # shellcheck disable=SC2086
    ARRAY=$(sbatch --parsable ${SBATCH_OPTS} --array=0-$((N - 1)) -o "$dir/logs/shard-%a-%A.out" \
      "$job_script" shard "$dir" "$N" "$STAX" "${ARGS[@]}")
    EXTRA=()
    MERGE=$(submit_merge "$ARRAY")
    save
    echo "submitted: shards job $ARRAY (array 0-$((N - 1))), merge job $MERGE; outputs in $dir/logs"
    ;;
  resubmit)
    [[ -f "$dir/submit.env" ]] || { echo "resubmit: no $dir/submit.env (submit first)" >&2; exit 2; }
    # shellcheck disable=SC1091
    source "$dir/submit.env"
    [[ $# -gt 0 ]] || { echo "resubmit: which shards?" >&2; exit 2; }
    for k in "$@"; do
      [[ "$k" =~ ^[0-9]+$ && $k -lt $N ]] || { echo "resubmit: shard $k not in 0..$((N - 1))" >&2; exit 2; }
    done
    list=$(IFS=,; echo "$*")
    # shellcheck disable=SC2086
    job=$(sbatch --parsable ${SBATCH_OPTS} --array="$list" -o "$dir/logs/shard-%a-%A.out" \
      "$job_script" shard "$dir" "$N" "$STAX" "${ARGS[@]}")
    EXTRA+=("$job")
    if in_queue "$MERGE"; then scancel "$MERGE" 2>/dev/null || true; fi
    MERGE=$(submit_merge "$ARRAY" "${EXTRA[@]}")
    save
    echo "resubmitted shards $list as job $job; merge job $MERGE"
    ;;
  wait)
    [[ -f "$dir/submit.env" ]] || { echo "wait: no $dir/submit.env" >&2; exit 2; }
    # shellcheck disable=SC1091
    source "$dir/submit.env"
    limit=${1:-3600}
    start=$SECONDS
    while in_queue "$MERGE"; do
      if ((SECONDS - start >= limit)); then
        echo "wait: merge job $MERGE still queued after $limit s" >&2
        exit 124
      fi
      sleep 1
    done
    cat "$dir/merge.txt" 2>/dev/null || { echo "wait: the merge job left no $dir/merge.txt" >&2; exit 1; }
    grep -q "^unfinished shards" "$dir/merge.txt" && exit 1
    exit 0
    ;;
  status)
    # shellcheck disable=SC1091
    source "$dir/submit.env"
    echo "shards job $ARRAY (N=$N), resubmissions: ${EXTRA[*]:-none}, merge job $MERGE"
    squeue -j "$(IFS=,; echo "${ARRAY},${EXTRA[*]}${EXTRA[*]:+,}${MERGE}")" 2>/dev/null || true
    for ((k = 0; k < N; ++k)); do
      printf 'shard %d: %s\n' "$k" "$([[ -f $dir/shard-$k.done ]] && echo finished || echo unfinished)"
    done
    ;;
  *) usage ;;
esac
