#!/usr/bin/env bash
# A `stax fuzz` campaign as a Slurm job array end to end (docs/campaigns.md),
# on a single-node Slurm this test starts (scripts/slurm_local.sh) and always
# stops: 3 shards with a seeded mutant, one shard cancelled mid-run and
# resubmitted, the merge job's campaign.db against the same campaign run
# locally without Slurm: the same programs and the same findings (the
# reproducers byte for byte). The wrong case: the killed shard's database as
# it was when it was cancelled, merged without the resubmission, must be
# reported unfinished and hold fewer programs.
# Usage: slurm_fuzz_e2e.sh STAX_BINARY. Exit 77 (skipped) without Slurm/munge or root.
set -euo pipefail
stax=${1:?usage: $0 STAX_BINARY}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PATH=$PATH:/usr/sbin
for b in slurmctld slurmd munged sbatch; do
  command -v "$b" >/dev/null || { echo "SKIP: $b not installed (scripts/setup_slurm.sh installs slurm-wlm and munge)"; exit 77; }
done
[[ $(id -u) -eq 0 ]] || { echo "SKIP: the local Slurm needs root"; exit 77; }

work=$(mktemp -d /tmp/stax-slurm-e2e.XXXXXX)
cleanup() {
  "$src/scripts/slurm_local.sh" stop "$work/slurm" >/dev/null 2>&1 || true
  if [[ "${KEEP:-0}" == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
t0=$SECONDS
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/camp/logs/* "$work"/slurm/slurmctld.log; do [[ -f "$f" ]] && { echo "== $f"; tail -n 20 "$f"; }; done >&2
  exit 1
}

rc=0
"$src/scripts/slurm_local.sh" start "$work/slurm" || rc=$?
if [[ $rc -ne 0 ]]; then
  [[ $rc -eq 77 ]] && exit 77
  echo "SKIP: the local Slurm cannot start here (rc $rc):"; tail -n 5 "$work"/slurm/*.log 2>/dev/null || true
  exit 77
fi
export SLURM_CONF=$work/slurm/slurm.conf
echo "slurm up after $((SECONDS - t0)) s"

# The campaign: 3 x 400 seeds; the mutant gives findings (about 1 in 12 programs).
args=(--seed 4200 --count 1200 --mutant view-offset-off-by-one --no-shrink)
camp=$work/camp
"$src/scripts/slurm_fuzz_submit.sh" submit "$camp" 3 --stax "$stax" -- "${args[@]}" || fail "submit"
# shellcheck disable=SC1091
source "$camp/submit.env"

programs_of() {  # programs_of DB: the programs stored so far (0 when there is no database yet)
  [[ -f "$1" ]] || { echo 0; return; }
  local n
  n=$("$stax" fuzz report --db "$1" 2>/dev/null | grep -m1 -o '^[0-9]* programs' | grep -o '^[0-9]*' || true)
  echo "${n:-0}"
}

# Cancel shard 1 once it is running and has stored some programs.
deadline=$((SECONDS + 60))
while :; do
  ((SECONDS < deadline)) || fail "shard 1 never ran with stored programs within 60 s"
  state=$(squeue -h -j "${ARRAY}_1" -o %T 2>/dev/null || true)
  if [[ "$state" == RUNNING ]] && (($(programs_of "$camp/shard-1.db") > 0)); then break; fi
  [[ -f "$camp/shard-1.done" ]] && fail "shard 1 finished before it could be cancelled (make it longer)"
  sleep 0.2
done
scancel "${ARRAY}_1"
deadline=$((SECONDS + 30))
while [[ -n "$(squeue -h -j "${ARRAY}_1" -o %i 2>/dev/null || true)" ]]; do
  ((SECONDS < deadline)) || fail "shard 1 still queued 30 s after scancel"
  sleep 0.2
done
[[ ! -f "$camp/shard-1.done" ]] || fail "shard 1 completed although cancelled"
killed_at=$(programs_of "$camp/shard-1.db")
((killed_at < 400)) || fail "shard 1 had all its 400 programs when cancelled"
mkdir -p "$work/snap"
cp "$camp"/shard-1.db* "$work/snap/"
echo "cancelled shard 1 with $killed_at of 400 programs stored, after $((SECONDS - t0)) s"

"$src/scripts/slurm_fuzz_submit.sh" resubmit "$camp" 1 || fail "resubmit"

# Meanwhile the same campaign without Slurm.
ref=$work/ref.db
rc=0
"$stax" fuzz "${args[@]}" --quiet --db "$ref" >/dev/null || rc=$?
[[ $rc -eq 1 ]] || fail "the local campaign exited $rc (expected 1: findings)"

rc=0
"$src/scripts/slurm_fuzz_submit.sh" wait "$camp" 120 >"$work/wait.txt" || rc=$?
[[ $rc -eq 0 ]] || { cat "$work/wait.txt"; fail "the merge job did not find every shard finished (wait exit $rc)"; }
head -n 1 "$work/wait.txt"
echo "merged after $((SECONDS - t0)) s"
nmerge=$(find "$camp/logs" -name 'merge-*.out' | wc -l)
[[ $nmerge -eq 1 ]] || fail "$nmerge merge jobs ran, not 1"

# Same programs, same findings.
[[ $(programs_of "$camp/campaign.db") -eq 1200 ]] || fail "campaign.db holds $(programs_of "$camp/campaign.db") programs, not 1200"
"$stax" fuzz report --db "$ref" --extract "$work/x-ref" >/dev/null || true
"$stax" fuzz report --db "$camp/campaign.db" --extract "$work/x-slurm" >/dev/null || true
nref=$(find "$work/x-ref" -maxdepth 1 -name 'finding-*' | wc -l)
((nref > 0)) || fail "the reference campaign has no finding"
diff -r "$work/x-ref" "$work/x-slurm" >/dev/null || fail "the merged findings differ from the local campaign's"
echo "campaign.db: 1200 programs, the same $nref findings as the local campaign"

# The wrong case: the killed shard without its resubmission.
bad=$work/bad
mkdir -p "$bad"
cp "$camp"/shard-0.db "$camp"/shard-2.db "$camp"/shard-0.done "$camp"/shard-2.done "$work"/snap/shard-1.db* "$bad/"
rc=0
"$src/scripts/slurm_fuzz.sh" merge "$bad" 3 "$stax" >/dev/null 2>&1 || rc=$?
[[ $rc -eq 1 ]] || fail "a merge without the resubmitted shard exited $rc, not 1"
grep -q "^unfinished shards.*: 1$" "$bad/merge.txt" || fail "the merge did not name shard 1 unfinished"
nbad=$(programs_of "$bad/campaign.db")
((nbad == 800 + killed_at)) || fail "the merge without the resubmission holds $nbad programs, not $((800 + killed_at))"
echo "wrong case: without the resubmission the merge says shard 1 is unfinished ($nbad programs)"
echo "PASS in $((SECONDS - t0)) s"
