#!/usr/bin/env bash
# A throwaway single-node Slurm cluster for tests (docs/campaigns.md):
#
#   scripts/slurm_local.sh start DIR   # writes DIR/slurm.conf, starts munged, slurmctld and slurmd, waits until
#                                      # the node is idle; then: export SLURM_CONF=DIR/slurm.conf
#   scripts/slurm_local.sh stop DIR    # stops the three daemons (the files stay in DIR)
#
# Everything lives in DIR: the munge key and socket, the state and spool
# directories, pid and log files. This host is the one node (CPUs: $SLURM_LOCAL_CPUS, default 4, more
# than the cores if need be: slurmd takes the configured figure). Needs root and the Debian packages
# slurm-wlm and munge (scripts/setup_slurm.sh). Exit 77 when they are missing, 1 when a daemon does not start.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [[ -z "$cmd" || -z "$dir" ]]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi

stop_pidfile() {  # stop_pidfile FILE: TERM the pid in FILE, wait up to 10 s, then KILL
  local f=$1 pid
  [[ -s "$f" ]] || return 0
  pid=$(cat "$f")
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

if [[ "$cmd" == stop ]]; then
  [[ -d "$dir" ]] || exit 0
  if [[ -f "$dir/slurm.conf" ]] && command -v scontrol >/dev/null; then
    SLURM_CONF="$dir/slurm.conf" timeout 10 scontrol shutdown >/dev/null 2>&1 || true
  fi
  stop_pidfile "$dir/slurmd.pid"
  stop_pidfile "$dir/slurmctld.pid"
  stop_pidfile "$dir/munged.pid"
  exit 0
fi
[[ "$cmd" == start ]] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

for b in munged slurmctld slurmd sbatch sinfo; do
  if ! command -v "$b" >/dev/null && [[ ! -x /usr/sbin/$b ]]; then
    echo "slurm_local: $b not installed (run scripts/setup_slurm.sh)" >&2
    exit 77
  fi
done
if [[ $(id -u) -ne 0 ]]; then
  echo "slurm_local: needs root (SlurmUser=root)" >&2
  exit 77
fi
PATH=$PATH:/usr/sbin

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
host=$(hostname -s)
cpus=${SLURM_LOCAL_CPUS:-4}
# Ports from the directory name's hash, so that two test runs do not collide.
base=$(( 20000 + $(cksum <<<"$dir" | cut -d' ' -f1) % 20000 ))

# munge: a fresh key, its own socket.
head -c 1024 /dev/urandom >"$dir/munge/munge.key"
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed" ||
  { echo "slurm_local: munged did not start (see $dir/munged.log)" >&2; exit 1; }

cat >"$dir/slurm.conf" <<EOF
ClusterName=staxlocal
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
KillWait=5
MinJobAge=600
SchedulerParameters=sched_interval=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"

slurmctld -i -f "$SLURM_CONF" || { echo "slurm_local: slurmctld did not start (see $dir/slurmctld.log)" >&2; exit 1; }
slurmd -f "$SLURM_CONF" -N "$host" || { echo "slurm_local: slurmd did not start (see $dir/slurmd.log)" >&2; exit 1; }

for _ in $(seq 60); do
  state=$(sinfo -h -N -o %T 2>/dev/null | head -1 || true)
  if [[ "$state" == idle ]]; then
    echo "slurm_local: node $host idle; export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.5
done
echo "slurm_local: the node did not become idle within 30 s (state '${state:-none}'; see $dir/*.log)" >&2
exit 1
