#!/usr/bin/env bash
# Packs what scripts/gpu_check.sh --prebuilt needs on a device machine that
# cannot build the project (this workplace's GPU machines: CUDA and a C++
# compiler, but no LLVM 15, Z3, MPFR or SQLite, and nothing can be fetched):
#   scripts/gpu_bundle.sh [BUILD [DIR]]     # BUILD default build-release, DIR default .devrun
# builds stax and the three GPU test programs in BUILD, then writes to DIR
#   bins.tar.xz  cli/stax and tests/backends_gpu_{codegen,emu,device}_test, stripped;
#   libs.tar.xz  every shared library they load except glibc's, libgcc_s
#                and libstdc++ (the device's own are newer);
#   run.sh       the device command: unpacks both under /tmp, links the
#                source and build paths compiled into the tests, runs
#                gpu_check.sh --prebuilt ($BUDGET s, default 280) and packs
#                its report folder into $OUT/report.tar.xz (the tool returns
#                at most 8 files), with gpu_report.json and the summary.
# DIR is meant to travel with the working tree (list it in
# .git/info/exclude and carry it); about 43 MB with LLVM 15's library.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-release}
DIR=${2:-.devrun}
tests=(backends_gpu_codegen_test backends_gpu_emu_test backends_gpu_device_test)
ninja -C "$BUILD" stax "${tests[@]}"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bins/cli" "$stage/bins/tests" "$stage/libs" "$DIR"
cp "$BUILD/cli/stax" "$stage/bins/cli/"
for t in "${tests[@]}"; do cp "$BUILD/tests/$t" "$stage/bins/tests/"; done
ldd "$stage"/bins/cli/stax "$stage"/bins/tests/* | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
  grep -vE '/(libc|libm|libgcc_s|libstdc\+\+|libpthread|libdl|librt)\.so' | while read -r l; do cp -L "$l" "$stage/libs/"; done
strip "$stage"/bins/cli/stax "$stage"/bins/tests/* "$stage"/libs/*
tar -cf - -C "$stage/bins" . | xz -6 -T0 > "$DIR/bins.tar.xz"
tar -cf - -C "$stage/libs" . | xz -9 -T0 > "$DIR/libs.tar.xz"
src=$(pwd) build=$(cd "$BUILD" && pwd)
cat > "$DIR/run.sh" <<RUN
#!/usr/bin/env bash
# Written by scripts/gpu_bundle.sh: gpu_check.sh --prebuilt on the device.
set -u
R=/tmp/rep; mkdir -p \$R /tmp/b /tmp/dl
{ date -u; nvidia-smi; nproc; head -3 /etc/os-release; ldd --version | head -1; command -v c++ nvcc; } > \$R/machine.txt 2>&1
tar -xJf $DIR/libs.tar.xz -C /tmp/dl && tar -xJf $DIR/bins.tar.xz -C /tmp/b || exit 2
export LD_LIBRARY_PATH=/tmp/dl:/usr/local/cuda/lib64\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} PATH=\$PATH:/usr/local/cuda/bin
# The paths compiled into the tests (STAX_SOURCE_DIR, STAX_BINARY).
[ -e "$src" ] || { mkdir -p "\$(dirname "$src")"; ln -sfn "\$PWD" "$src"; }
[ -e "$build/cli/stax" ] || { mkdir -p "\$(dirname "$build")"; ln -sfn /tmp/b "$build"; }
OUT_DIR=\${OUT:-.}
OUT=\$R BUILD=/tmp/b STAX_GPU_BUDGET_S=\${BUDGET:-280} bash scripts/gpu_check.sh --prebuilt 2>&1 | tee \$R/gpu_check.txt
rc=\${PIPESTATUS[0]}
tar -cJf "\$OUT_DIR/report.tar.xz" -C /tmp rep
cp \$R/gpu_report.json \$R/gpu_check.txt "\$OUT_DIR/" 2>/dev/null
exit \$rc
RUN
chmod +x "$DIR/run.sh"
du -ch "$DIR"/*.tar.xz | tail -1
