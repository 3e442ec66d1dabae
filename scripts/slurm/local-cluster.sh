#!/usr/bin/env bash
# A throwaway single-node Slurm cluster in one directory, to try scripts/slurm/ on one machine
# and for the cluster test (crates/cli/tests/cli/slurm_cluster.rs). It starts munged,
# slurmctld and slurmd as the calling user, with every file under DIR, no cgroups, no
# accounting and no systemd; only Debian's `slurm-wlm` and `munge` packages are needed.
#
#   scripts/slurm/local-cluster.sh start DIR   # prints `export SLURM_CONF=DIR/slurm.conf`
#   scripts/slurm/local-cluster.sh stop DIR    # ends the three daemons it started
#
# Clients (sbatch, squeue, scancel, sinfo) find the cluster through SLURM_CONF. The node is
# the machine as `slurmd -C` sees it (its CPUs and memory), in one partition `local`.
set -euo pipefail

# The daemons live in sbin, which a non-root PATH often lacks.
export PATH="$PATH:/usr/sbin:/sbin"
ACTION=${1:?usage: local-cluster.sh start|stop DIR}
DIR=${2:?usage: local-cluster.sh start|stop DIR}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

stop() {
  local name pid
  for name in slurmd slurmctld munged; do
    [ -f "$DIR/$name.pid" ] || continue
    pid=$(cat "$DIR/$name.pid")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$DIR/$name.pid"
  done
}

# A TCP port nothing listens on, from a range starting at $1.
free_port() {
  local p=$1
  while (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}

# The pid a daemon wrote, waiting up to 10 s for it to appear.
wait_pid() {
  for _ in $(seq 100); do
    [ -s "$DIR/$1.pid" ] && return 0
    sleep 0.1
  done
  echo "local-cluster: $1 did not start; see $DIR/$1.log" >&2
  return 1
}

start() {
  stop
  local user node base
  user=$(id -un)
  node=$(hostname -s)
  mkdir -p "$DIR/state" "$DIR/spool" "$DIR/munge"
  chmod 700 "$DIR/munge"
  if [ ! -f "$DIR/munge/munge.key" ]; then
    head -c 1024 /dev/urandom >"$DIR/munge/munge.key"
    chmod 400 "$DIR/munge/munge.key"
  fi
  munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.socket" \
    --pid-file="$DIR/munged.pid" --log-file="$DIR/munged.log" --seed-file="$DIR/munge/seed"
  wait_pid munged
  base=$((20000 + ($$ % 200) * 50))
  local ctld_port slurmd_port
  ctld_port=$(free_port "$base")
  slurmd_port=$(free_port $((ctld_port + 1)))
  # The node as slurmd detects it, without its uptime.
  local hardware
  hardware=$(slurmd -C | head -n1 | sed "s/^NodeName=[^ ]*//")
  cat >"$DIR/slurm.conf" <<EOF
ClusterName=tauguard-local
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
MaxArraySize=1001
NodeName=$node NodeAddr=127.0.0.1 $hardware State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$DIR/slurm.conf"
  slurmctld -c -f "$SLURM_CONF"
  wait_pid slurmctld
  slurmd -f "$SLURM_CONF"
  wait_pid slurmd
  # Up once the node takes jobs.
  for _ in $(seq 150); do
    if sinfo -h -N -o '%T' 2>/dev/null | grep -qx 'idle'; then
      echo "export SLURM_CONF=$SLURM_CONF"
      return 0
    fi
    sleep 0.1
  done
  echo "local-cluster: the node never became idle; see $DIR/slurmctld.log and $DIR/slurmd.log" >&2
  sinfo -N -l >&2 || true
  return 1
}

case $ACTION in
  start) start ;;
  stop) stop ;;
  *)
    echo "local-cluster.sh: unknown action \`$ACTION\` (start or stop)" >&2
    exit 2
    ;;
esac
