#!/usr/bin/env bash
# start-slurm.sh - start/stop a throw-away single-node Slurm cluster on localhost, for warmbench's
# Slurm tests (test/integration/slurm-env.test.ts) and CI (.ci/run). Based on the measured reference
# in shared/docs/slurm/start-slurm.sh; facts and pitfalls in shared/docs/slurm.md.
#
# Usage (as root):
#   start-slurm.sh [start]   install packages if missing, write config, start
#                            munged + slurmctld + slurmd, wait until the node is
#                            idle and a 2-task srun works, print PIDs.
#                            Idempotent: if the cluster is already up, it only
#                            prints its status.
#   start-slurm.sh stop      cancel all jobs, kill the three daemons by PID.
#   start-slurm.sh status    print PIDs and sinfo; exit 1 if not fully up.
#   start-slurm.sh restart   stop then start.
#
# After start, clients need SLURM_CONF (also written to $DIR/env.sh), unless
# the /etc/slurm/slurm.conf symlink could be created (the default):
#   export SLURM_CONF=/tmp/slurm-ci/slurm.conf
#   srun -n 4 bash -c 'echo $SLURM_PROCID/$SLURM_NTASKS'
#
# Settings (environment variables):
#   SLURM_CI_DIR=/tmp/slurm-ci   where config, state, logs, munge key/socket go
#   SLURM_CI_CPUS=8              CPUs advertised for the node (oversubscribes the
#                                real cores; srun -n N needs N <= this, or --overcommit)
#   SLURM_CI_CTLD_PORT=6817      slurmctld port
#   SLURM_CI_SLURMD_PORT=6818    slurmd port
#   SLURM_CI_TIMEOUT=60          seconds to wait for each readiness step
#   SLURM_CI_INSTALL=1           0: never run apt-get, fail if binaries missing
#   SLURM_CI_LINK_ETC=1          0: do not create /etc/slurm/slurm.conf symlink
#   SLURM_CI_SMOKE=1             0: skip the final `srun -n 2 true` check
#   SLURM_CI_BIND=auto           where daemons listen. Slurm's loopback-only mode
#                                (CommunicationParameters=NoCtldInAddrAny,NoInAddrAny)
#                                binds to whatever `hostname` resolves to, and only
#                                works if that is exactly 127.0.0.1. So:
#                                auto: hostname -> 127.0.0.1: listen on 127.0.0.1 only;
#                                      hostname unresolvable: put "127.0.0.1 <hostname>"
#                                      at the top of /etc/hosts (stop removes it), ditto;
#                                      hostname -> other IP: warn, listen on 0.0.0.0.
#                                loopback: also rewrite /etc/hosts in the last case.
#                                any: always listen on 0.0.0.0 (clients still use 127.0.0.1).
set -Eeuo pipefail
trap 'on_err $? $LINENO "$BASH_COMMAND"' ERR

DIR=${SLURM_CI_DIR:-/tmp/slurm-ci}
CPUS=${SLURM_CI_CPUS:-8}
CTLD_PORT=${SLURM_CI_CTLD_PORT:-6817}
SLURMD_PORT=${SLURM_CI_SLURMD_PORT:-6818}
TIMEOUT=${SLURM_CI_TIMEOUT:-60}
INSTALL=${SLURM_CI_INSTALL:-1}
LINK_ETC=${SLURM_CI_LINK_ETC:-1}
SMOKE=${SLURM_CI_SMOKE:-1}
BIND=${SLURM_CI_BIND:-auto}
HOSTS_MARK="# added by start-slurm.sh"

NODE=localhost
CONF=$DIR/slurm.conf
MUNGE_DIR=$DIR/munge
MUNGE_SOCK=$MUNGE_DIR/munge.socket
MUNGE_PID=$MUNGE_DIR/munged.pid
CTLD_PID=$DIR/slurmctld.pid
SLURMD_PID=$DIR/slurmd.pid
LOG=$DIR/log
ETC_CONF=/etc/slurm/slurm.conf

say() { echo "[start-slurm] $*" >&2; }
die() { echo "[start-slurm] ERROR: $*" >&2; exit 1; }

show_logs() {
  local f
  for f in "$MUNGE_DIR/munged.log" "$LOG/slurmctld.log" "$LOG/slurmd.log"; do
    [ -f "$f" ] && { echo "----- tail $f" >&2; tail -n 20 "$f" >&2; }
  done
  return 0
}

STARTING=0
# fail MSG: report, show log tails, and (during start) stop whatever this run
# already started so that a failed start leaves no daemons behind.
fail() {
  echo "[start-slurm] ERROR: $*" >&2
  show_logs
  if [ "$STARTING" = 1 ]; then STARTING=0; do_stop || true; fi
  exit 1
}

on_err() {
  trap - ERR
  echo "[start-slurm] ERROR: unexpected failure (exit $1) at line $2: $3" >&2
  if [ "$STARTING" = 1 ]; then STARTING=0; show_logs; do_stop || true; fi
  exit 1
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }

# pid_of FILE NAME: print the PID in FILE if that process is alive, not a
# zombie, and its command name is NAME; otherwise print nothing.
pid_of() {
  local f=$1 name=$2 p state comm
  [ -s "$f" ] || return 0
  p=$(tr -dc '0-9' < "$f")
  [ -n "$p" ] && [ -r "/proc/$p/stat" ] || return 0
  comm=$(cat "/proc/$p/comm" 2>/dev/null || true)
  state=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null || true)
  if [ "$comm" = "$name" ] && [ "$state" != "Z" ]; then echo "$p"; fi
}

alive() { # alive PID: running and not a zombie (PID 1 here may reap late)
  local s
  [ -r "/proc/$1/stat" ] || return 1
  s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$s" ] && [ "$s" != "Z" ]
}

# wait_for SECONDS DESCRIPTION COMMAND...: retry COMMAND every 0.2 s.
wait_for() {
  local t=$1 what=$2 start; shift 2
  start=$(date +%s)
  until "$@" >/dev/null 2>&1; do
    if [ $(( $(date +%s) - start )) -ge "$t" ]; then
      fail "timed out after ${t}s waiting for: $what"
    fi
    sleep 0.2
  done
}

export SLURM_CONF=$CONF

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (slurmd has to be root)"; }

install_pkgs() {
  local missing=0 b
  for b in munged munge unmunge slurmctld slurmd srun sbatch scontrol sinfo squeue scancel; do
    command -v "$b" >/dev/null 2>&1 || missing=1
  done
  [ "$missing" = 0 ] && return 0
  [ "$INSTALL" = 1 ] || die "Slurm/munge binaries missing and SLURM_CI_INSTALL=0"
  say "installing slurmctld slurmd slurm-client munge (apt-get)"
  local t0; t0=$(now)
  export DEBIAN_FRONTEND=noninteractive
  # Other jobs on a shared machine may hold apt's locks: wait for them instead of failing at once.
  local lock=(-o DPkg::Lock::Timeout=300)
  apt-get "${lock[@]}" update -qq || die "apt-get update failed"
  apt-get "${lock[@]}" install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null \
    || die "apt-get install failed"
  say "installed in $(elapsed "$t0")s: $(dpkg-query -W -f='${Package}=${Version} ' slurmctld slurmd slurm-client munge)"
}

port_busy() { # port_busy PORT: is something listening on it (any address)?
  if command -v ss >/dev/null 2>&1; then
    ss -Htln "sport = :$1" 2>/dev/null | grep -q .
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}

# choose_addr: set ADDR (address in slurm.conf) and COMM (CommunicationParameters).
# With NoCtldInAddrAny,NoInAddrAny Slurm daemons *and srun* bind to what
# `hostname` resolves to; that only works here if it is exactly 127.0.0.1
# (with 127.0.1.1, slurmd cannot connect back to srun: "Slurmd could not connect IO").
resolve_self() { getent ahostsv4 "$(hostname)" 2>/dev/null | awk 'NR==1{print $1}' || true; }
choose_addr() {
  local h a kept
  h=$(hostname)
  ADDR=127.0.0.1; COMM=""
  case "$BIND" in any|auto|loopback) ;; *) die "SLURM_CI_BIND must be auto, loopback or any" ;; esac
  [ "$BIND" = any ] && return 0
  a=$(resolve_self)
  if [ "$a" != 127.0.0.1 ] && { [ -z "$a" ] || [ "$BIND" = loopback ]; }; then
    say "hostname '$h' resolves to '${a:-nothing}'; adding '127.0.0.1 $h' at the top of /etc/hosts (stop removes it)"
    kept=$(cat /etc/hosts)
    # Rewrite in place (no rename): /etc/hosts is often a bind mount in containers.
    printf '127.0.0.1 %s %s\n%s\n' "$h" "$HOSTS_MARK" "$kept" > /etc/hosts
    a=$(resolve_self)
  fi
  if [ "$a" = 127.0.0.1 ]; then
    COMM=NoCtldInAddrAny,NoInAddrAny
  elif [ "$BIND" = loopback ]; then
    fail "hostname '$h' still resolves to '${a:-nothing}', not 127.0.0.1"
  else
    say "warning: hostname '$h' resolves to $a, not 127.0.0.1: slurmctld/slurmd/srun will listen on 0.0.0.0 (clients still connect to 127.0.0.1); use SLURM_CI_BIND=loopback to force loopback-only via /etc/hosts"
  fi
}

write_conf() {
  local mem
  mem=$(awk '/^MemTotal:/{m=int($2/1024*0.9); if (m<100) m=100; print m}' /proc/meminfo)
  cat > "$CONF" <<EOF
# Generated by start-slurm.sh - single node CI cluster on 127.0.0.1.
ClusterName=ci
SlurmctldHost=$NODE($ADDR)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
# NoCtldInAddrAny,NoInAddrAny: slurmctld/slurmd/srun listen on the address
# that \`hostname\` resolves to ($ADDR) instead of 0.0.0.0.
${COMM:+CommunicationParameters=$COMM}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCK
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
# No cgroups anywhere.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
# Start a batch job at submit time instead of up to 3 s later (the default): sbatch --wait polls every 2 s,
# then 8 s, so the default often turned a 0.2 s job into a 10 s wait.
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# Trust the CPU count below even though the machine has fewer cores.
SlurmdParameters=config_overrides
ReturnToService=2
# Reject requests that can never fit (e.g. srun -n 9 with CPUs=8) at once
# instead of leaving them pending forever.
EnforcePartLimits=ALL
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=60
KillWait=5
Waittime=0
NodeName=$NODE NodeHostname=$NODE NodeAddr=$ADDR CPUs=$CPUS RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
}

link_etc() {
  [ "$LINK_ETC" = 1 ] || return 0
  mkdir -p /etc/slurm
  if [ -L "$ETC_CONF" ] || [ ! -e "$ETC_CONF" ]; then
    ln -sfn "$CONF" "$ETC_CONF"
  else
    say "note: $ETC_CONF exists and is not a symlink; left alone - use SLURM_CONF=$CONF"
  fi
}

unlink_etc() {
  if [ -L "$ETC_CONF" ] && [ "$(readlink "$ETC_CONF")" = "$CONF" ]; then rm -f "$ETC_CONF"; fi
}

munge_ok() { munge -n -S "$MUNGE_SOCK" | unmunge -S "$MUNGE_SOCK"; }
ctld_ok() { [[ "$(scontrol ping 2>&1)" == *"is UP"* ]]; }
node_idle() { [ "$(sinfo -h -n "$NODE" -o '%T' 2>/dev/null)" = idle ]; }

print_status() {
  local m c d
  m=$(pid_of "$MUNGE_PID" munged); c=$(pid_of "$CTLD_PID" slurmctld); d=$(pid_of "$SLURMD_PID" slurmd)
  echo "munged_pid=${m:-none} slurmctld_pid=${c:-none} slurmd_pid=${d:-none}"
  echo "SLURM_CONF=$CONF"
  if [ -n "$c" ]; then sinfo -N -o '%N %T %c' 2>/dev/null || true; fi
  [ -n "$m" ] && [ -n "$c" ] && [ -n "$d" ]
}

all_up() {
  [ -n "$(pid_of "$MUNGE_PID" munged)" ] && [ -n "$(pid_of "$CTLD_PID" slurmctld)" ] \
    && [ -n "$(pid_of "$SLURMD_PID" slurmd)" ] && ctld_ok >/dev/null 2>&1 && node_idle_or_busy
}
node_idle_or_busy() {
  case "$(sinfo -h -n "$NODE" -o '%T' 2>/dev/null)" in idle|mixed|allocated|completing) return 0 ;; esac
  return 1
}

# kill_pid NAME PID: SIGTERM, wait up to 15 s, then SIGKILL.
kill_pid() {
  local name=$1 p=$2 i
  [ -n "$p" ] || return 0
  kill "$p" 2>/dev/null || true
  for i in $(seq 75); do alive "$p" || { say "stopped $name (pid $p)"; return 0; }; sleep 0.2; done
  say "$name (pid $p) ignored SIGTERM; sending SIGKILL"
  kill -9 "$p" 2>/dev/null || true
  for i in $(seq 25); do alive "$p" || return 0; sleep 0.2; done
  say "warning: $name (pid $p) still alive"
}

# ours_stepd PID: is PID a live slurmstepd launched by *this* cluster's slurmd? The daemons are
# started with SLURM_CONF=$CONF exported, and slurmstepd inherits it; a Slurm that is not ours
# (another install on the same machine) has another or no SLURM_CONF, so it is never touched.
ours_stepd() {
  [ "$(cat "/proc/$1/comm" 2>/dev/null)" = slurmstepd ] && alive "$1" \
    && tr '\0' '\n' < "/proc/$1/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$CONF"
}

# descendants PID: PID's live children, grandchildren, ... (from /proc/*/stat).
descendants() {
  local kids k
  kids=$(awk -v p="$1" '$4 == p {print $1}' /proc/[0-9]*/stat 2>/dev/null || true)
  for k in $kids; do echo "$k"; descendants "$k"; done
}

# kill_leftover_steps: when scancel could not run (slurmctld or slurmd already dead), slurmstepd
# and the tasks under it outlive the daemons. Kill exactly those, by PID.
kill_leftover_steps() {
  local f p pids=""
  for f in $(grep -lxsF slurmstepd /proc/[0-9]*/comm || true); do
    p=${f#/proc/}; p=${p%/comm}
    if ours_stepd "$p"; then pids="$pids $p $(descendants "$p" | tr '\n' ' ')"; fi
  done
  [ -n "${pids// /}" ] || return 0
  say "killing leftover job steps and their tasks (pids:$pids)"
  # shellcheck disable=SC2086
  kill -9 $pids 2>/dev/null || true
  for p in $pids; do
    for _ in $(seq 25); do alive "$p" || break; sleep 0.2; done
    alive "$p" && say "warning: pid $p still alive"
  done
  return 0
}

do_stop() {
  need_root
  local m c d i
  m=$(pid_of "$MUNGE_PID" munged); c=$(pid_of "$CTLD_PID" slurmctld); d=$(pid_of "$SLURMD_PID" slurmd)
  if [ -n "$c" ] && [ -n "$d" ] && ctld_ok >/dev/null 2>&1; then
    # Cancel jobs so that their slurmstepd/task processes go away too.
    if squeue -h -o %i 2>/dev/null | grep -q .; then
      say "cancelling running jobs"
      scancel --full $(squeue -h -o %i) 2>/dev/null || true
      for i in $(seq 50); do squeue -h -o %i 2>/dev/null | grep -q . || break; sleep 0.2; done
    fi
  fi
  kill_pid slurmd "$d"
  kill_pid slurmctld "$c"
  kill_pid munged "$m"
  kill_leftover_steps
  unlink_etc
  if grep -qF "$HOSTS_MARK" /etc/hosts 2>/dev/null; then
    # Edit in place (no rename): /etc/hosts may be a bind mount.
    local kept; kept=$(grep -vF "$HOSTS_MARK" /etc/hosts || true)
    printf '%s\n' "$kept" > /etc/hosts
    say "removed our line from /etc/hosts"
  fi
  rm -f "$CTLD_PID" "$SLURMD_PID" "$MUNGE_PID"
  say "stopped (logs kept in $DIR)"
}

do_start() {
  need_root
  local t0; t0=$(now)
  install_pkgs
  if all_up; then
    say "already running"
    print_status || true
    return 0
  fi
  # Partially up or stale: clean up what we started before.
  if [ -n "$(pid_of "$MUNGE_PID" munged)$(pid_of "$CTLD_PID" slurmctld)$(pid_of "$SLURMD_PID" slurmd)" ]; then
    say "cluster partially running; stopping it first"
    do_stop
  fi
  local p
  for p in "$CTLD_PORT" "$SLURMD_PORT"; do
    if port_busy "$p"; then
      die "port $p is already in use (set SLURM_CI_CTLD_PORT / SLURM_CI_SLURMD_PORT)"
    fi
  done

  STARTING=1
  rm -rf "$DIR/state" "$DIR/spool" "$LOG" "$MUNGE_DIR"
  mkdir -p "$DIR/state" "$DIR/spool" "$LOG" "$MUNGE_DIR"
  chmod 755 "$DIR" "$MUNGE_DIR"   # munged: socket dir must be world-searchable
  # munged (as root): key must be owned by root and not readable by others.
  head -c 1024 /dev/urandom > "$MUNGE_DIR/munge.key"
  chmod 400 "$MUNGE_DIR/munge.key"
  choose_addr
  write_conf
  link_etc
  cat > "$DIR/env.sh" <<EOF
export SLURM_CONF=$CONF
EOF

  munged --key-file="$MUNGE_DIR/munge.key" --socket="$MUNGE_SOCK" \
    --pid-file="$MUNGE_PID" --log-file="$MUNGE_DIR/munged.log" \
    --seed-file="$MUNGE_DIR/munged.seed" || fail "munged failed to start"
  wait_for "$TIMEOUT" "munged to answer on $MUNGE_SOCK" munge_ok

  # Daemon mode (no -D): they detach from our stdout/stderr, so callers that
  # capture this script's output do not hang.
  slurmctld -f "$CONF" -c || fail "slurmctld failed to start"
  wait_for "$TIMEOUT" "slurmctld to answer scontrol ping" ctld_ok

  slurmd -f "$CONF" -N "$NODE" || fail "slurmd failed to start"
  wait_for "$TIMEOUT" "node $NODE to become idle (sinfo)" node_idle

  if [ "$SMOKE" = 1 ]; then
    local out
    out=$(timeout "$TIMEOUT" srun -Q -n 2 bash -c 'echo $SLURM_PROCID' 2>&1 | sort | tr '\n' ' ') || true
    [ "$out" = "0 1 " ] || fail "smoke test 'srun -n 2' failed: $out"
  fi
  STARTING=0
  say "up in $(elapsed "$t0")s"
  print_status || fail "a daemon died right after start"
}

case "${1:-start}" in
  start) do_start ;;
  stop) do_stop ;;
  restart) do_stop; do_start ;;
  status) print_status || exit 1 ;;
  *) echo "usage: $0 [start|stop|restart|status]" >&2; exit 2 ;;
esac
