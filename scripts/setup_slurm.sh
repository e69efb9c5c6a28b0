#!/usr/bin/env bash
# Installs Slurm and munge from Debian (slurm-wlm, munge) for the single-node
# Slurm test of multi-machine fuzz campaigns (scripts/slurm_local.sh,
# tests/oracle/slurm_fuzz_e2e.sh; docs/campaigns.md). Optional: without them
# that test is skipped. Idempotent. Measured on Debian 12 (slurm-wlm
# 22.05.8): 9 packages, 3.5 MB download, 13.7 MB installed, 6 s for the
# install after an apt-get update. The packages' own daemons are not started
# (there is no systemd in a container; the test starts its own).
set -euo pipefail
pkgs=(slurm-wlm munge)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && { echo "setup_slurm: slurm-wlm and munge are installed"; exit 0; }
echo "setup_slurm: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
