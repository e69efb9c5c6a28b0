#!/usr/bin/env bash
# Installs Slurm and munge from Debian (slurm-wlm, munge) for the single-node
# Slurm test of multi-machine fuzz campaigns (scripts/slurm_local.sh,
# tests/oracle/slurm_fuzz_e2e.sh; docs/campaigns.md). Optional: without them
# that test is skipped. Idempotent. Measured on Debian 12 (slurm-wlm
# 22.05.8): 9 packages, 3.5 MB download, 13.7 MB installed, 6 s for the
# install after an apt-get update. The packages' own daemons are not started
# (there is no systemd in a container; the test starts its own).
set -euo pipefail
source "$(dirname "$0")/apt_install_missing.sh"
apt_install_missing setup_slurm slurm-wlm munge
echo "setup_slurm: slurm-wlm and munge are installed"
