#!/usr/bin/env bash
# start-slurm.sh - start/stop a throw-away Slurm cluster on this one machine, for warmbench's Slurm tests
# (test/integration/slurm-env.test.ts) and CI (.ci/run): munged, slurmctld and, by default, two nodes (one
# slurmd each) on 127.0.0.1, so that `srun -N 2` works as on a real cluster. Based on the measured reference
# in shared/docs/slurm/start-slurm.sh (one node); facts and pitfalls in shared/docs/slurm.md.
#
# Usage (as root):
#   start-slurm.sh [start]   install packages if missing, write config, start
#                            munged + slurmctld + one slurmd per node, wait until
#                            the nodes are idle and a smoke srun works, print PIDs.
#                            Idempotent: if the cluster is already up, it only
#                            prints its status.
#   start-slurm.sh stop      cancel all jobs, kill the daemons by PID.
#   start-slurm.sh status    print PIDs and sinfo; exit 1 if not fully up.
#   start-slurm.sh missing-packages  print the Debian packages start would install (nothing when none);
#                            any user may ask (test/provision installs them in its one apt-get run).
#   start-slurm.sh restart   stop then start.
#
# After start, clients need SLURM_CONF (also written to $DIR/env.sh), unless
# the /etc/slurm/slurm.conf symlink could be created (the default):
#   export SLURM_CONF=/tmp/slurm-ci/slurm.conf
#   srun -n 4 bash -c 'echo $SLURM_PROCID/$SLURM_NTASKS'
#
# Settings (environment variables):
#   SLURM_CI_DIR=/tmp/slurm-ci   where config, state, logs, munge key/socket go
#   SLURM_CI_CPUS=8              CPUs advertised per node (oversubscribes the
#                                real cores; srun -n N needs N <= this, or --overcommit)
#   SLURM_CI_NODES=2             N > 1: nodes wbnode1..wbnodeN, each its own slurmd on this
#                                machine (own port), so that `srun -N 2 -n 8` runs and
#                                SLURM_STEP_NODELIST reads "wbnode[1-2]" as on a real cluster;
#                                "127.0.0.1 wbnode1 ..." is put in /etc/hosts (stop removes it)
#                                so the names resolve. 1: the reference's single node "localhost".
#   SLURM_CI_CTLD_PORT=6817      slurmctld port
#   SLURM_CI_SLURMD_PORT=6818    slurmd port of the first node (node i: +i-1)
#   SLURM_CI_TIMEOUT=60          seconds to wait for each readiness step
#   SLURM_CI_INSTALL=1           0: never run apt-get, fail if binaries missing
#   SLURM_CI_LINK_ETC=1          0: do not create /etc/slurm/slurm.conf symlink
#   SLURM_CI_SMOKE=1             0: skip the final `srun -n 2` check (-N <nodes> -n max(2, nodes))
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

NODE_COUNT=${SLURM_CI_NODES:-2}
[[ "$NODE_COUNT" =~ ^[1-9][0-9]*$ ]] || { echo "[start-slurm] ERROR: SLURM_CI_NODES must be a positive integer" >&2; exit 1; }
if [ "$NODE_COUNT" = 1 ]; then NODES=(localhost); else mapfile -t NODES < <(printf 'wbnode%s\n' $(seq "$NODE_COUNT")); fi
CONF=$DIR/slurm.conf
MUNGE_DIR=$DIR/munge
MUNGE_SOCK=$MUNGE_DIR/munge.socket
MUNGE_PID=$MUNGE_DIR/munged.pid
CTLD_PID=$DIR/slurmctld.pid
# One slurmd per node: slurmd-<node>.pid (slurm.conf's %n). stop and status go by the files that exist,
# so they find every slurmd that start started, whatever SLURM_CI_NODES says now.
slurmd_pid_files() { compgen -G "$DIR/slurmd-*.pid" || true; }
LOG=$DIR/log
ETC_CONF=/etc/slurm/slurm.conf

say() { echo "[start-slurm] $*" >&2; }
die() { echo "[start-slurm] ERROR: $*" >&2; exit 1; }

show_logs() {
  local f
  for f in "$MUNGE_DIR/munged.log" "$LOG/slurmctld.log" "$LOG"/slurmd-*.log; do
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

PACKAGES=(slurmctld slurmd slurm-client munge)
# missing_packages: the Debian packages to install (all of them when any binary is missing), or nothing.
missing_packages() {
  local b
  for b in munged munge unmunge slurmctld slurmd srun sbatch scontrol sinfo squeue scancel; do
    command -v "$b" >/dev/null 2>&1 || { echo "${PACKAGES[*]}"; return 0; }
  done
}

install_pkgs() {
  [ -z "$(missing_packages)" ] && return 0
  [ "$INSTALL" = 1 ] || die "Slurm/munge binaries missing and SLURM_CI_INSTALL=0"
  say "installing slurmctld slurmd slurm-client munge (apt-get)"
  local t0; t0=$(now)
  export DEBIAN_FRONTEND=noninteractive
  # Other jobs on a shared machine may hold apt's locks: wait for them instead of failing at once.
  local lock=(-o DPkg::Lock::Timeout=300)
  apt-get "${lock[@]}" update -qq || die "apt-get update failed"
  apt-get "${lock[@]}" install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null \
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
  local h a
  h=$(hostname)
  ADDR=127.0.0.1; COMM=""
  case "$BIND" in any|auto|loopback) ;; *) die "SLURM_CI_BIND must be auto, loopback or any" ;; esac
  [ "$BIND" = any ] && return 0
  a=$(resolve_self)
  if [ "$a" != 127.0.0.1 ] && { [ -z "$a" ] || [ "$BIND" = loopback ]; }; then
    say "hostname '$h' resolves to '${a:-nothing}'; adding '127.0.0.1 $h' at the top of /etc/hosts (stop removes it)"
    add_hosts_line "127.0.0.1 $h $HOSTS_MARK"
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
# Generated by start-slurm.sh - CI cluster on 127.0.0.1 ($NODE_COUNT node(s), one slurmd each).
ClusterName=ci
SlurmctldHost=localhost($ADDR)
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
# %n: the node name, so that several slurmd on this machine keep apart.
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$DIR/slurmd-%n.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd-%n.log
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
EOF
  local i
  for i in "${!NODES[@]}"; do
    echo "NodeName=${NODES[$i]} NodeHostname=localhost NodeAddr=$ADDR Port=$((SLURMD_PORT + i)) CPUs=$CPUS RealMemory=$mem State=UNKNOWN" >> "$CONF"
  done
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >> "$CONF"
}

# add_hosts_line LINE: put LINE (which ends with $HOSTS_MARK) first in /etc/hosts; stop removes it.
# Rewritten in place (no rename): /etc/hosts is often a bind mount in containers.
add_hosts_line() {
  local kept; kept=$(cat /etc/hosts)
  printf '%s\n%s\n' "$1" "$kept" > /etc/hosts
}

# Several nodes: their names resolve to 127.0.0.1, as node names resolve on a real cluster.
add_node_names_to_hosts() {
  [ "$NODE_COUNT" -gt 1 ] || return 0
  local n missing=()
  for n in "${NODES[@]}"; do
    [ "$(getent ahostsv4 "$n" 2>/dev/null | awk 'NR==1{print $1}')" = 127.0.0.1 ] || missing+=("$n")
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  say "adding '127.0.0.1 ${missing[*]}' to /etc/hosts (stop removes it)"
  add_hosts_line "127.0.0.1 ${missing[*]} $HOSTS_MARK"
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
# conf_nodes: the node names in the slurm.conf that start wrote, one a line.
conf_nodes() { if [ -f "$CONF" ]; then awk -F'[= ]' '/^NodeName=/{print $2}' "$CONF"; fi; }
# nodes_in STATE_REGEX: do all $NODE_COUNT nodes report a state matching STATE_REGEX?
nodes_in() {
  [ "$(sinfo -h -N -o '%N %T' 2>/dev/null | awk -v re="^($1)\$" '$2 ~ re {print $1}' | sort -u | wc -l)" = "$NODE_COUNT" ]
}
nodes_idle() { nodes_in idle; }

# slurmd_pids: "PID,PID,..." (none for a node whose slurmd is not running) for the nodes in the
# written slurm.conf; returns 1 unless all of them run.
slurmd_pids() {
  local n p ok=0 out=()
  for n in $(conf_nodes); do
    p=$(pid_of "$DIR/slurmd-$n.pid" slurmd)
    out+=("${p:-none}")
    [ -n "$p" ] || ok=1
  done
  [ "${#out[@]}" -gt 0 ] || { out=(none); ok=1; }
  (IFS=,; echo "${out[*]}")
  return "$ok"
}

print_status() {
  local m c d ok=0
  m=$(pid_of "$MUNGE_PID" munged); c=$(pid_of "$CTLD_PID" slurmctld); d=$(slurmd_pids) || ok=1
  echo "munged_pid=${m:-none} slurmctld_pid=${c:-none} slurmd_pid=$d"
  echo "SLURM_CONF=$CONF"
  if [ -n "$c" ]; then sinfo -N -o '%N %T %c' 2>/dev/null || true; fi
  [ -n "$m" ] && [ -n "$c" ] && [ "$ok" = 0 ]
}

# all_up: everything runs, with the node list that SLURM_CI_NODES asks for now.
all_up() {
  [ -n "$(pid_of "$MUNGE_PID" munged)" ] && [ -n "$(pid_of "$CTLD_PID" slurmctld)" ] \
    && [ "$(conf_nodes | tr '\n' ' ')" = "${NODES[*]} " ] && slurmd_pids >/dev/null \
    && ctld_ok >/dev/null 2>&1 && nodes_in 'idle|mixed|allocated|completing'
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
  local m c f i d=()
  m=$(pid_of "$MUNGE_PID" munged); c=$(pid_of "$CTLD_PID" slurmctld)
  for f in $(slurmd_pid_files); do d+=("$(pid_of "$f" slurmd)"); done
  if [ -n "$c" ] && ctld_ok >/dev/null 2>&1; then
    # Cancel jobs so that their slurmstepd/task processes go away too.
    if squeue -h -o %i 2>/dev/null | grep -q .; then
      say "cancelling running jobs"
      scancel --full $(squeue -h -o %i) 2>/dev/null || true
      for i in $(seq 50); do squeue -h -o %i 2>/dev/null | grep -q . || break; sleep 0.2; done
    fi
  fi
  for i in "${d[@]}"; do kill_pid slurmd "$i"; done
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
  rm -f "$CTLD_PID" "$MUNGE_PID" $(slurmd_pid_files)
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
  local f any=""
  for f in $(slurmd_pid_files); do any+=$(pid_of "$f" slurmd); done
  if [ -n "$(pid_of "$MUNGE_PID" munged)$(pid_of "$CTLD_PID" slurmctld)$any" ]; then
    say "cluster partly running, or with other nodes than SLURM_CI_NODES asks for: stopping it first"
    do_stop
  fi
  local p
  for p in "$CTLD_PORT" $(seq "$SLURMD_PORT" $((SLURMD_PORT + NODE_COUNT - 1))); do
    if port_busy "$p"; then
      die "port $p is already in use (set SLURM_CI_CTLD_PORT / SLURM_CI_SLURMD_PORT)"
    fi
  done

  STARTING=1
  rm -rf "$DIR/state" "$DIR/spool" "$LOG" "$MUNGE_DIR"
  mkdir -p "$DIR/state" "$LOG" "$MUNGE_DIR"
  for p in "${NODES[@]}"; do mkdir -p "$DIR/spool/$p"; done
  chmod 755 "$DIR" "$MUNGE_DIR"   # munged: socket dir must be world-searchable
  # munged (as root): key must be owned by root and not readable by others.
  head -c 1024 /dev/urandom > "$MUNGE_DIR/munge.key"
  chmod 400 "$MUNGE_DIR/munge.key"
  choose_addr
  add_node_names_to_hosts
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

  local n
  for n in "${NODES[@]}"; do slurmd -f "$CONF" -N "$n" || fail "slurmd for node $n failed to start"; done
  wait_for "$TIMEOUT" "node(s) ${NODES[*]} to become idle (sinfo)" nodes_idle

  if [ "$SMOKE" = 1 ]; then
    local out tasks=$(( NODE_COUNT > 2 ? NODE_COUNT : 2 ))
    out=$(timeout "$TIMEOUT" srun -Q -N "$NODE_COUNT" -n "$tasks" bash -c 'echo $SLURM_PROCID' 2>&1 | sort -n | tr '\n' ' ') || true
    [ "$out" = "$(seq 0 $((tasks - 1)) | tr '\n' ' ')" ] || fail "smoke test 'srun -N $NODE_COUNT -n $tasks' failed: $out"
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
  missing-packages) missing_packages ;;
  *) echo "usage: $0 [start|stop|restart|status|missing-packages]" >&2; exit 2 ;;
esac
