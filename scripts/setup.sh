#!/usr/bin/env bash
# Installs the Debian packages Stax Verify builds against. Idempotent: installs
# only what is missing, so a warm machine pays one dpkg query.
set -euo pipefail
pkgs=(
  cmake ninja-build g++ pkg-config
  llvm-15-dev libz3-dev libboost-graph-dev libeigen3-dev
  libmpfr-dev libmpfi-dev libgmp-dev catch2 libsqlite3-dev nlohmann-json3-dev libcli11-dev
  python3-numpy python3-scipy gnuplot-nox graphviz
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
