#!/usr/bin/env bash
# scripts/check_layering.py passes on the repository, and fails on a tree
# whose library includes a header of a library it does not depend on (the
# deliberately wrong case), naming the file, the line and the edge.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python3 "$root/scripts/check_layering.py" --quiet
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/low" "$tmp/high" "$tmp/tests/low"
echo 'stax_library(low SOURCES a.cpp DEPS)' > "$tmp/low/CMakeLists.txt"
echo 'stax_library(high SOURCES b.cpp DEPS stax::low)' > "$tmp/high/CMakeLists.txt"
printf '#include "high/b.h"\n' > "$tmp/low/a.cpp"
printf '#include "low/a.h"\n' > "$tmp/high/b.cpp"
printf '#include "low/a.h"\n#include "high/b.h"\n' > "$tmp/tests/low/a_test.cpp"
set +e
out="$(python3 "$root/scripts/check_layering.py" --root "$tmp")"
rc=$?
set -e
echo "$out"
[ "$rc" = 1 ] || { echo "FAIL: exit $rc on a wrong include, expected 1"; exit 1; }
grep -q '^low/a.cpp:1: low includes high/' <<<"$out" || { echo "FAIL: the library's violation is not named"; exit 1; }
grep -q '^tests/low/a_test.cpp:2: tests/low includes high/' <<<"$out" || { echo "FAIL: the test's violation is not named"; exit 1; }
if grep -q 'high/b.cpp' <<<"$out"; then echo "FAIL: a downward include was reported"; exit 1; fi
echo "layering check: the repository passes; the wrong tree is refused"
