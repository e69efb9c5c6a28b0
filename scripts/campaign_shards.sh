#!/usr/bin/env bash
# A long `stax fuzz` campaign on one machine, in N seed-range shards run one
# after another (each with scripts/slurm_fuzz.sh's shard and merge modes, as a
# Slurm array would), so that a machine lost mid-campaign loses one shard's
# progress at most and the finished shards' reports can be kept:
#
#   scripts/campaign_shards.sh DIR N RECORD [fuzz args: --seed S --count C --backends ... ]
#
# DIR holds the shard databases (shard-K.db, shard-K.done) and, at the end,
# campaign.db and merge.txt. After each shard, `stax fuzz report --json` of
# its database goes to RECORD/shard-K.json (a folder that can be committed:
# the reports are a few kB, the databases about 100 bytes per program), and
# the first 16 hex digits of the binary's SHA-256 to RECORD/shard-K.binary;
# scripts/campaign_record.py sums the reports. A
# shard whose report is already in RECORD is skipped, so the same command
# resumes on another machine. Runs $STAX (default build/cli/stax; a copy keeps
# rebuilds out of a running campaign) at nice 19 with --jobs $STAX_JOBS
# (default 2).
set -uo pipefail
# Under autogroup scheduling (Linux's default), nice only ranks processes
# within a session: a run started with `setsid` gets a session of its own
# and, at nice 19, still half the cores against an interactive shell. When
# this script or its parent leads a session without a terminal, that
# session's autogroup is lowered too.
sid="$(ps -o sid= -p $$ | tr -d ' ')"
if [[ "$(ps -o tty= -p $$ | tr -d ' ')" == "?" && ("$sid" == "$$" || "$sid" == "$PPID") ]]; then
  { echo 19 > /proc/self/autogroup; } 2>/dev/null || true
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ $# -lt 3 ]] || ! [[ "$2" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 DIR N RECORD [fuzz args...]" >&2
  exit 2
fi
dir=$1 n=$2 record=$3
shift 3
stax="${STAX:-$root/build/cli/stax}"
[[ -x "$stax" ]] || { echo "campaign_shards: $stax missing (scripts/build.sh)" >&2; exit 2; }
mkdir -p "$dir" "$record"
for ((k = 0; k < n; ++k)); do
  [[ -f "$record/shard-$k.json" ]] && continue
  STAX_SHARD=$k SLURM_CPUS_PER_TASK="${STAX_JOBS:-2}" \
    nice -n 19 bash "$root/scripts/slurm_fuzz.sh" shard "$dir" "$n" "$stax" "$@" || exit $?
  # The report exits 1 when the shard has findings: recorded all the same.
  "$stax" fuzz report --db "$dir/shard-$k.db" --json > "$record/shard-$k.json.tmp"
  rc=$?
  [[ $rc -le 1 ]] &&
    sha256sum "$stax" | cut -c1-16 > "$record/shard-$k.binary" &&
    mv "$record/shard-$k.json.tmp" "$record/shard-$k.json"
  echo "campaign_shards: shard $k/$n done: $(date -u +%FT%TZ)"
done
# The merged report covers the shards whose databases are in DIR (all of
# them when the campaign ran on this machine throughout).
bash "$root/scripts/slurm_fuzz.sh" merge "$dir" "$n" "$stax"
