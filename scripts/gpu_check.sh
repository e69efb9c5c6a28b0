#!/usr/bin/env bash
# The GPU backend's device check. Prepared for a machine with an
# NVIDIA GPU, the driver (libcuda.so.1) and NVRTC; never run in CI. One
# command, under 5 minutes on an H200 ($STAX_GPU_BUDGET_S, default 285 s: a
# step that would start past it is skipped and recorded as skipped; the long
# ones run under `timeout` with what is left). What it checks, and only that:
#   1. builds stax and the GPU tests (CMake + Ninja, RelWithDebInfo);
#   2. the host-side tests: gpu_codegen_test (NVRTC + ptxas on every
#      supported example) and gpu_emu_test (the emulator against the
#      interpreter);
#   3. on the device, bit for bit against the interpreter, ⊥ included, over
#      the oracle's five input kinds: every supported example and
#      $STAX_GPU_PROGRAMS generated programs (default 1000; transcendental
#      ops on every float dtype and rand included), every binary64 function
#      on its hard cases (Payne-Hanek included) and rand on every float
#      dtype, and the codegen mutants max-drops-nan, fma-contract,
#      addr32-overflow and neg-index-unwrapped caught
#      (tests/backends/gpu_device_test.cpp, tag [.gpu]);
#   4. `stax run --backend gpu` on each supported example, its printed
#      outputs identical to `--backend interp`;
#   5. Example 6.2 in the GPU order of Algorithm 6.1 (split-reduction:k=2,
#      gpu-reduce:threads=256:warp=32) checked on the device: class real
#      within its bounds, bit-identical to the interpreter on T(P);
#   6. the bandwidth benchmark (`stax bench --backend gpu --json`): fused
#      memory-bound kernels ($STAX_BW_PROGRAMS, default chain6,
#      gelu_backward and a 256 MiB map) against a device-to-device copy of
#      the same bytes measured in the same run (cuMemcpyDtoD, CUDA events);
#      target: every kernel at >= 85% of the copy's bandwidth (reported as
#      bandwidth.target_met; it does not change the exit code, the bits do),
#      each program benched twice: the backend's launch (enough 128-thread
#      blocks for 2,048 threads per SM, grid-stride; + $STAX_BW_FLAGS) and one thread per
#      element ($STAX_BW_WIDE_FLAGS, default --block 256 --max-grid 1048576),
#      the better of the two counted;
#      each bench also checks its outputs against the interpreter;
#   7. timings of Example 1.1 (program order, and gpu-reduce:threads=256:
#      warp=32) and Example 6.2 (split-reduction:k=2,gpu-reduce:threads=256:
#      warp=32), also bit-checked;
#   8. a differential campaign on the device: `stax fuzz --backends gpu`
#      over $STAX_GPU_FUZZ programs (default 500) with random transform
#      pipelines, zero findings expected (last: it gets what time is left).
# Run order: 1, then 6 and 7 (the figures, cheap), 3, 4, 5, 2, 8, so that
# a slow build leaves the budget's end to the most elastic steps.
#
# Environment: OUT (report folder), BUILD, STAX_GPU_BUDGET_S, STAX_GPU_FUZZ,
# STAX_GPU_PROGRAMS, STAX_BENCH_REPEATS, STAX_BW_PROGRAMS, STAX_EX11,
# STAX_EX62, STAX_GPU_EXAMPLES (a glob; default examples/*.stx),
# STAX_BW_FLAGS (more `stax bench` flags for the bandwidth programs, e.g.
# "--block 256 --max-grid 2112").
#
# --dry-run: host only, for a machine without a GPU: no build unless
# --build (uses $BUILD, default ./build), no device tests, and every other
# step on the emulator (--backend gpu-emu, fewer repeats and programs), so
# that the script's own logic and its report are tested
# (tests/cli/gpu_check_script_test.cpp).
#
# --prebuilt: device mode without step 1, for a device machine that cannot
# build the project (no LLVM, Z3 or MPFR headers there): $BUILD must hold
# cli/stax and tests/backends_gpu_{codegen,emu,device}_test, built on a
# machine that can (with their shared libraries on LD_LIBRARY_PATH;
# scripts/gpu_bundle.sh packs both and writes the device command). The
# report says "prebuilt": true.
#
# Writes the JSON report to $OUT/gpu_report.json (or ./gpu_report.json) —
# also when a step fails or the script is interrupted — prints a summary,
# and exits non-zero when a correctness check fails.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=device
DO_BUILD=1
PREBUILT=0
for arg in "$@"; do
  case "$arg" in
    --dry-run) MODE=dry ;;
    --build) DO_BUILD=2 ;;
    --prebuilt) PREBUILT=1 ;;
    -h | --help) sed -n '2,64p' "$0"; exit 0 ;;
    *) echo "error: unknown option '$arg' (expected --dry-run, --build, --prebuilt, --help)" >&2; exit 2 ;;
  esac
done
if [ "$PREBUILT" = 1 ]; then
  [ "$MODE" = device ] && [ "$DO_BUILD" = 1 ] || { echo "error: --prebuilt goes alone (device mode, no build)" >&2; exit 2; }
  DO_BUILD=0
fi
if [ "$MODE" = dry ]; then
  BACKEND=gpu-emu
  BUILD="${BUILD:-build}"
  [ "$DO_BUILD" = 2 ] || DO_BUILD=0
  REPEATS="${STAX_BENCH_REPEATS:-2}"
  FUZZ_COUNT="${STAX_GPU_FUZZ:-10}"
else
  BACKEND=gpu
  BUILD="${BUILD:-build-gpu}"
  REPEATS="${STAX_BENCH_REPEATS:-20}"
  FUZZ_COUNT="${STAX_GPU_FUZZ:-500}"
fi
REPORT_DIR="${OUT:-.}"
REPORT="$REPORT_DIR/gpu_report.json"
BUDGET="${STAX_GPU_BUDGET_S:-285}"
BW_PROGRAMS="${STAX_BW_PROGRAMS:-bench/programs/chain6.stx bench/programs/gelu_backward.stx bench/programs/map_256mib.stx}"
EX11="${STAX_EX11:-bench/programs/example_1_1.stx}"
EX62="${STAX_EX62:-examples/example_6_2.stx}"
GPU_ORDER="split-reduction:k=2,gpu-reduce:threads=256:warp=32"
TARGET=0.85
BW_WIDE_FLAGS="${STAX_BW_WIDE_FLAGS:---block 256 --max-grid 1048576}"
STAX="$BUILD/cli/stax"
mkdir -p "$REPORT_DIR"
start=$(date +%s)

steps=""                          # the report's step entries, comma-separated
declare -A RC=()                  # each step's exit code ("skipped" when not run)
run_ok=0; run_bad=0; bad_list=""  # step 4
bench_names=""                    # the bench reports written, in order
BW_MET=false                      # every bandwidth kernel at >= TARGET of the copy

elapsed() { echo $(( $(date +%s) - start )); }
json_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }
# A file's JSON document, or null when it is missing or not one.
json_doc() { if [ -s "$1" ] && [ "$(head -c1 "$1")" = "{" ]; then cat "$1"; else echo null; fi; }

# step NAME CMD...: runs CMD (its output in $REPORT_DIR/NAME.log unless the
# command redirects it) under `timeout` with the budget left; records the
# exit code and seconds. A step that would start with under 5 s left is skipped.
step() {
  local name=$1; shift
  local t0 left rc
  t0=$(date +%s)
  left=$(( BUDGET - (t0 - start) ))
  if [ "$left" -lt 5 ]; then
    RC[$name]=skipped
    steps="$steps{\"name\": \"$name\", \"exit\": null, \"skipped\": true, \"seconds\": 0},"
    echo "[$(elapsed)s] $name: skipped (budget of ${BUDGET}s spent)"
    return 0
  fi
  if declare -F "$1" > /dev/null; then
    if ( "$@" ) > "$REPORT_DIR/$name.log" 2>&1; then rc=0; else rc=$?; fi
  else
    if timeout "$left" "$@" > "$REPORT_DIR/$name.log" 2>&1; then rc=0; else rc=$?; fi
  fi
  RC[$name]=$rc
  steps="$steps{\"name\": \"$name\", \"exit\": $rc, \"skipped\": false, \"seconds\": $(( $(date +%s) - t0 ))},"
  echo "[$(elapsed)s] $name: exit $rc"
}

# bench NAME FILE [TRANSFORM [FLAGS...]]: `stax bench --json` into
# $OUT_JSON (bench_NAME.json).
bench() {
  local name=$1 file=$2 transform=${3:-}
  shift 2; [ $# -gt 0 ] && shift
  local args=(bench "$file" --backend "$BACKEND" --json --repeats "$REPEATS" "$@")
  [ -n "$transform" ] && args+=(--transform "$transform")
  bench_names="$bench_names $name"
  step "bench_$name" sh -c '"$0" "$@" > "$OUT_JSON"' "$STAX" "${args[@]}"
}

# The smallest ratio_to_copy of a bench report ("null" when none).
min_ratio() {
  [ -s "$1" ] || { echo null; return; }
  awk '/"ratio_to_copy"/ { gsub(/,/, "", $2); v = $2 + 0; if (n == 0 || v < m) m = v; n++ }
       END { if (n == 0) print "null"; else printf "%.4f\n", m }' "$1"
}
bits_identical() { if [ -s "$1" ] && grep -q '"bits_identical": true' "$1"; then echo true; else echo false; fi; }
rc_json() { local v=${RC[$1]:-skipped}; if [ "$v" = skipped ]; then echo null; else echo "$v"; fi; }
ok() { [ "${RC[$1]:-skipped}" = 0 ]; }

write_report() {
  local bw="" all_met=true any=false f name wide r w best met
  for f in $BW_PROGRAMS; do
    name=bw_$(basename "$f" .stx)
    wide=bw_wide_$(basename "$f" .stx)
    r=$(min_ratio "$REPORT_DIR/bench_$name.json")
    w=$(min_ratio "$REPORT_DIR/bench_$wide.json")
    # The better of the two launches.
    best=$(awk -v r="$r" -v w="$w" 'BEGIN { if (r == "null") print w; else if (w == "null" || r + 0 >= w + 0) print r; else print w }')
    met=false
    if [ "$best" != null ]; then
      any=true
      met=$(awk -v r="$best" -v t="$TARGET" 'BEGIN { print (r >= t) ? "true" : "false" }')
    fi
    [ "$met" = true ] || all_met=false
    bw="$bw{\"program\": $(json_str "$f"), \"min_ratio_to_copy\": $r, \"wide_min_ratio_to_copy\": $w,"
    bw="$bw \"best_ratio_to_copy\": $best, \"target_met\": $met,"
    bw="$bw \"bits_identical\": $(bits_identical "$REPORT_DIR/bench_$name.json"),"
    bw="$bw \"wide_bits_identical\": $(bits_identical "$REPORT_DIR/bench_$wide.json"),"
    bw="$bw \"exit\": $(rc_json "bench_$name"), \"wide_exit\": $(rc_json "bench_$wide")},"
  done
  [ "$any" = true ] || all_met=false
  BW_MET=$all_met
  local benches=""
  for name in $bench_names; do
    benches="$benches$(json_str "$name"): $(json_doc "$REPORT_DIR/bench_$name.json"),"
  done
  {
    echo "{"
    echo "  \"mode\": \"$MODE\","
    echo "  \"prebuilt\": $([ "$PREBUILT" = 1 ] && echo true || echo false),"
    echo "  \"backend\": \"$BACKEND\","
    echo "  \"gpu_driver\": \"$(driver_state)\","
    echo "  \"budget_seconds\": $BUDGET,"
    echo "  \"total_seconds\": $(elapsed),"
    echo "  \"steps\": [${steps%,}],"
    echo "  \"host_tests_pass\": $(ok host_codegen && ok host_emu && echo true || echo false),"
    echo "  \"device_tests_pass\": $(ok device_tests && echo true || echo false),"
    echo "  \"device_detail\": $(json_doc "$REPORT_DIR/gpu_device.json"),"
    echo "  \"cli_examples_identical\": $run_ok,"
    echo "  \"cli_examples_different\": [${bad_list%,}],"
    echo "  \"fuzz_exit\": $(rc_json fuzz),"
    echo "  \"example_6_2_gpu_order_exit\": $(rc_json check_example_6_2),"
    echo "  \"bandwidth\": {\"target_ratio_to_copy\": $TARGET, \"target_met\": $all_met, \"programs\": [${bw%,}]},"
    echo "  \"bench\": {${benches%,}},"
    echo "  \"pass\": $(passed && echo true || echo false)"
    echo "}"
  } > "$REPORT.tmp"
  mv "$REPORT.tmp" "$REPORT"
}

# The correctness verdict: every step that ran passed (benches: bits
# identical), and in device mode the build and device tests ran.
passed() {
  local s
  [ "$run_bad" -eq 0 ] || return 1
  for s in "${!RC[@]}"; do
    case "${RC[$s]}" in
      0) ;;
      skipped) [ "$s" = build ] && { [ "$MODE" = dry ] || [ "$PREBUILT" = 1 ]; } || return 1 ;;
      *) return 1 ;;
    esac
  done
  [ "$MODE" = dry ] || { { ok build || [ "$PREBUILT" = 1 ]; } && ok device_tests; }
}

# "missing" when a step said there is no GPU driver, "used" when a device
# bench ran, else "not used".
driver_state() {
  if grep -qs "no GPU driver" "$REPORT_DIR"/*.log; then echo missing
  elif [ "$MODE" = device ] && grep -qs '"time_source": "cuda events"' "$REPORT_DIR"/bench_*.json; then echo used
  else echo "not used"; fi
}

summary() {
  local name f
  echo "== gpu_check ($MODE, --backend $BACKEND): $(elapsed)s of ${BUDGET}s; report: $REPORT"
  local host=skipped
  [ -n "${RC[host_codegen]:-}" ] && { ok host_codegen && ok host_emu && host=pass || host=FAIL; }
  echo "host tests: $host" \
       "| device tests: $(ok device_tests && echo pass || echo "${RC[device_tests]:-skipped}")" \
       "| stax run: $run_ok identical, $run_bad different" \
       "| Example 6.2 GPU order check: exit ${RC[check_example_6_2]:-skipped} | fuzz: exit ${RC[fuzz]:-skipped}"
  for name in $bench_names; do
    f="$REPORT_DIR/bench_$name.json"
    printf '%-28s exit %-7s bits identical: %-5s min ratio to copy: %s\n' "$name" "${RC[bench_$name]:-skipped}" \
      "$(bits_identical "$f")" "$(min_ratio "$f")"
    # stax bench --json: one key a line, keys sorted, "text" last in a kernel.
    [ -s "$f" ] && awk '{ v = $2; gsub(/[",]/, "", v) }
      /^      "kernel":/ { k = v } /^        "grid":/ { g = v } /^        "block":/ { b = v }
      /^      "run_ms":/ { t = v } /^      "gb_per_s":/ { gb = v } /^      "copy_gb_per_s":/ { c = v }
      /^      "ratio_to_copy":/ { r = v }
      /^      "text":/ { printf "    %-10s grid %7s x block %4s  %10.4f ms  %9.2f GB/s  copy %9.2f GB/s  ratio %.3f\n",
                         k, g, b, t, gb, c, r }' "$f"
  done
  echo "bandwidth target (>= $TARGET of the copy on every kernel of: $BW_PROGRAMS): $([ "$BW_MET" = true ] && echo MET || echo "NOT MET")"
  [ "$(driver_state)" = missing ] && echo "no GPU driver here (libcuda.so.1): the device steps failed; --dry-run runs the host side"
  echo "verdict: $(passed && echo PASS || echo FAIL)"
}

finish() {
  local code=$?
  trap - EXIT
  set +e
  write_report
  summary
  if [ "$code" -ne 0 ]; then echo "gpu_check: stopped early (exit $code)" >&2; exit "$code"; fi
  passed
  exit $?
}
trap finish EXIT

if [ "$DO_BUILD" != 0 ]; then
  step cmake cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  ok cmake || exit 2
  step build ninja -C "$BUILD" -j"$(nproc)" stax backends_gpu_codegen_test backends_gpu_emu_test backends_gpu_device_test
  ok build || exit 2
else
  RC[build]=skipped
  need=("$STAX")
  [ "$PREBUILT" = 1 ] && need+=("$BUILD"/tests/backends_gpu_{codegen,emu,device}_test)
  for f in "${need[@]}"; do
    [ -x "$f" ] || { echo "error: no $f (build it, or pass --build)" >&2; exit 2; }
  done
fi

# The figures first (cheap, and each bench is bit-checked too).
export OUT_JSON
for f in $BW_PROGRAMS; do
  OUT_JSON="$REPORT_DIR/bench_bw_$(basename "$f" .stx).json"
  bench "bw_$(basename "$f" .stx)" "$f" "" ${STAX_BW_FLAGS:-}
done
# The same kernels with one thread per element (the grid uncapped): which
# launch reaches the copy's bandwidth is for the device to say.
for f in $BW_PROGRAMS; do
  OUT_JSON="$REPORT_DIR/bench_bw_wide_$(basename "$f" .stx).json"
  bench "bw_wide_$(basename "$f" .stx)" "$f" "" $BW_WIDE_FLAGS
done
# The examples' timings, with each kernel's own NVRTC time (--compile-each).
OUT_JSON="$REPORT_DIR/bench_example_1_1.json"; bench example_1_1 "$EX11" "" --compile-each
OUT_JSON="$REPORT_DIR/bench_example_1_1_gpu_reduce.json"
bench example_1_1_gpu_reduce "$EX11" "gpu-reduce:threads=256:warp=32" --compile-each
OUT_JSON="$REPORT_DIR/bench_example_6_2_gpu_order.json"; bench example_6_2_gpu_order "$EX62" "$GPU_ORDER" --compile-each


# Step 3 in $STAX_GPU_SHARDS processes side by side (default: the cores
# less two, at most 12): each checks every N-th example and generated
# program (STAX_GPU_SHARD=K/N), shard 0 also the block reductions, the
# mutants and binary64 math. gpu_device.json sums their reports and keeps
# each one under "shards".
device_shards() {
  local n=${STAX_GPU_SHARDS:-$(( $(nproc) > 3 ? $(nproc) - 2 : 1 ))} k rc=0 left pids=()
  [ "$n" -le 12 ] || n=12
  left=$(( BUDGET - $(elapsed) ))
  for ((k = 0; k < n; k++)); do
    STAX_GPU_SHARD=$k/$n STAX_GPU_REPORT="$REPORT_DIR/gpu_device.$k.json" \
      timeout "$left" "$BUILD/tests/backends_gpu_device_test" "[.gpu]" > "$REPORT_DIR/device_tests.$k.log" 2>&1 &
    pids+=($!)
  done
  for k in "${!pids[@]}"; do
    wait "${pids[$k]}" || { rc=1; echo "shard $k/$n failed:"; tail -30 "$REPORT_DIR/device_tests.$k.log"; }
  done
  {
    local docs="" f
    for ((k = 0; k < n; k++)); do docs="$docs$(json_doc "$REPORT_DIR/gpu_device.$k.json"),"; done
    echo "{"
    for f in examples generated_programs block_reduction_programs mutants_caught mutants; do
      echo "  \"$f\": $(cat "$REPORT_DIR"/gpu_device.*.json 2>/dev/null |
        awk -v f="\"$f\":" '$1 == f { gsub(/,/, "", $2); s += $2 } END { print s + 0 }'),"
    done
    echo "  \"shard_count\": $n,"
    echo "  \"shards\": [${docs%,}]"
    echo "}"
  } > "$REPORT_DIR/gpu_device.json"
  return $rc
}
[ "$MODE" = device ] && step device_tests device_shards

run_examples() {
  local f ref got rc_ref rc_got
  for f in ${STAX_GPU_EXAMPLES:-examples/*.stx}; do
    if ref=$("$STAX" run "$f" --random-inputs 5 --show 1000000 2>&1); then rc_ref=0; else rc_ref=$?; fi
    if got=$("$STAX" run "$f" --random-inputs 5 --show 1000000 --backend "$BACKEND" 2>&1); then rc_got=0; else rc_got=$?; fi
    if [ "$rc_got" -eq 2 ] && grep -q "not supported by the GPU backend yet" <<< "$got"; then echo "$f: not supported"; continue; fi
    # Equal results: the same bits, or both NaN (docs/design.md §3): NaN's sign and
    # payload are not compared.
    ref=$(sed -E 's/-?nan \(0x[0-9a-f]+\)/nan/g' <<< "$ref"); got=$(sed -E 's/-?nan \(0x[0-9a-f]+\)/nan/g' <<< "$got")
    if [ "$rc_ref" -eq "$rc_got" ] && [ "$ref" == "$got" ]; then echo "$f: identical"; else echo "$f: DIFFERENT"; fi
  done
}
step run_examples run_examples
run_ok=$(grep -c ': identical$' "$REPORT_DIR/run_examples.log" 2> /dev/null || true)
run_bad=$(grep -c ': DIFFERENT$' "$REPORT_DIR/run_examples.log" 2> /dev/null || true)
run_ok=${run_ok:-0}; run_bad=${run_bad:-0}
bad_list=$(grep ': DIFFERENT$' "$REPORT_DIR/run_examples.log" 2> /dev/null | sed 's/: DIFFERENT$//; s/.*/"&",/' | tr -d '\n' || true)

step check_example_6_2 "$STAX" check "$EX62" --transform "$GPU_ORDER" --backend "$BACKEND" --trials 3

if [ "$MODE" = device ]; then
  step host_codegen "$BUILD/tests/backends_gpu_codegen_test"
  step host_emu "$BUILD/tests/backends_gpu_emu_test"
fi

fuzz_db="$REPORT_DIR/fuzz.db"
rm -f "$fuzz_db"
step fuzz "$STAX" fuzz --backends "$BACKEND" --count "$FUZZ_COUNT" --seed 7000 --quiet --db "$fuzz_db"
"$STAX" fuzz report --db "$fuzz_db" >> "$REPORT_DIR/fuzz.log" 2>&1 || true
