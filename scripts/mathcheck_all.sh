#!/usr/bin/env bash
# Exhaustive binary32 checks of every correctly rounded function against MPFR
# (the "Full 2^32 runs" table of mathlib/README.md), one function
# after another, at nice 19, resumable: rerun the same command to continue.
#   scripts/mathcheck_all.sh [DIR] [FUNCTION...]
# DIR (default mathcheck-runs/, ignored by git) receives F.out (the report),
# F.err (the progress lines), F.state (the resume point) and F.done. With
# STAX_MATHCHECK_STATE=DIR2 the state files live in DIR2 instead: the
# repository keeps them in results/exhaustive/, so a run lost with its
# machine resumes from the last committed chunk on the next.
# Needs build/cli/stax (scripts/build.sh) or $STAX. About 20-40 min of one core per
# function on this 2-core machine; a long campaign, not a test.
set -euo pipefail
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
dir="${1:-$root/mathcheck-runs}"
shift || true
fns=("$@")
[ ${#fns[@]} -gt 0 ] || fns=(exp erf expm1 tanh log log2 log10 log1p sin cos)
stax="${STAX:-$root/build/cli/stax}"
[ -x "$stax" ] || { echo "mathcheck_all: $stax missing (scripts/build.sh)" >&2; exit 2; }
state="${STAX_MATHCHECK_STATE:-$dir}"
mkdir -p "$dir" "$state"
state="$(cd "$state" && pwd)"
cd "$dir"
for f in "${fns[@]}"; do
  [ -f "$f.done" ] && { echo "mathcheck_all: $f done: $(tail -n 3 "$f.out" | tr '\n' ' ')"; continue; }
  echo "mathcheck_all: $f"
  nice -n 19 "$stax" mathcheck "$f" --exhaustive --jobs 1 --against host --resume "$state/$f.state" > "$f.out" 2> "$f.err"
  touch "$f.done"
done
