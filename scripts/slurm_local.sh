#!/usr/bin/env bash
# A real single-node SLURM cluster on this machine, to try td3x's SLURM sweeps (conf/experiment/*_slurm.yaml) and
# their preemption -> requeue -> resume path without a cluster. Debian 12 (slurm 22.05), run as root.
#
#   scripts/slurm_local.sh start    install (apt) what is missing, write the config, start munged, slurmctld, slurmd
#   scripts/slurm_local.sh status   the daemons and the node as SLURM sees it (exit 0 when all three run)
#   scripts/slurm_local.sh check    submit a one-line sbatch job and wait for its output
#   scripts/slurm_local.sh stop     cancel every job of this cluster, then stop the daemons this script started
#
# What `start` changes on the machine:
#   * apt-get installs slurmctld, slurmd, slurm-client and munge when they are missing (and never removes them);
#   * creates a munge key (mungekey -c) when /etc/munge/munge.key is missing, and gives the munge dirs to munge;
#   * writes /etc/slurm/slurm.conf: one node (this host, nproc CPUs, RealMemory 5% under MemTotal), one default
#     partition `local`, no accounting, no cgroups (proctrack/linuxproc, task/none: no cgroup.conf needed), and
#     a short requeue delay (below). It refuses to overwrite a slurm.conf it did not write;
#   * starts munged (as the munge user), slurmctld, then slurmd, each only if not already running, and waits
#     until the node is idle. Running it again is harmless: it starts only what is not running and restarts the
#     SLURM daemons only when their config changed.
# Pid files and logs: /run/munge, /run/slurm*.pid, /var/log/slurm/; started-by-us markers in $STATE_DIR.
# The daemons are started directly, not through systemd, so this also works in containers without an init system.
# Exit codes: 0 done, 1 something failed (message on stderr), 2 usage, 3 this machine cannot host the cluster
# (not root, no apt-get, or apt-get could not install the packages): tests skip on 3 and fail on 1.
set -euo pipefail

PACKAGES=(slurmctld slurmd slurm-client munge)
SLURM_CONF=/etc/slurm/slurm.conf
MARKER="# written by td3x scripts/slurm_local.sh"
STATE_DIR=/run/td3x-slurm-local # which daemons this script started (stop ends only those)
LOG_DIR=/var/log/slurm
CTLD_PID=/run/slurmctld.pid
SLURMD_PID=/run/slurmd.pid
MUNGE_PID=/run/munge/munged.pid
PARTITION=local
# SLURM holds a requeued job for AuthInfo cred_expire + 1 s (default 120 s) so that the revoked credential of its
# previous run has expired before it starts again. Every credential here travels between processes on one
# machine in milliseconds, so 10 s is ample: a requeued (preempted) job may start again after 11 s, not 121 s.
CRED_EXPIRE_S=10
# The main scheduling pass runs every 60 s by default and a job whose begin time has passed waits for it: every
# 2 s here (one node, a handful of jobs: the passes cost nothing), so the requeued job starts ~12 s after the signal.
SCHED_INTERVAL_S=2

say() { printf 'slurm_local: %s\n' "$*"; }
die() {
    printf 'slurm_local: error: %s\n' "$*" >&2
    exit 1
}
cannot_host() {
    printf 'slurm_local: cannot host a local cluster here: %s\n' "$*" >&2
    exit 3
}

# A pid file whose process is alive and is the named program (a stale pid file may name a reused pid).
running() {
    local pidfile=$1 name=$2 pid
    [[ -f $pidfile ]] || return 1
    pid=$(cat "$pidfile" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] && [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "$name" ]]
}

require_root() {
    [[ $EUID -eq 0 ]] || cannot_host "must run as root (it installs packages, writes /etc/slurm and starts daemons)"
}

install_packages() {
    local missing=() package
    for package in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    ((${#missing[@]} == 0)) && return 0
    command -v apt-get >/dev/null || cannot_host "apt-get not found: install ${missing[*]} (slurm 22.05 + munge) yourself"
    say "installing ${missing[*]} with apt-get (a minute or two)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || cannot_host "apt-get update failed (no network or no package mirror?)"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
        cannot_host "apt-get install ${missing[*]} failed"
}

start_munge() {
    if [[ ! -s /etc/munge/munge.key ]]; then
        say "creating the munge key"
        mungekey -c -k /etc/munge/munge.key
    fi
    mkdir -p /run/munge /var/lib/munge /var/log/munge
    # munged refuses to start unless it owns its key and dirs
    chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge
    chmod 0700 /etc/munge && chmod 0400 /etc/munge/munge.key && chmod 0755 /run/munge
    if running "$MUNGE_PID" munged; then
        say "munged already running (pid $(cat "$MUNGE_PID"))"
        return 0
    fi
    runuser -u munge -- /usr/sbin/munged
    touch "$STATE_DIR/munged"
    munge -n | unmunge >/dev/null || die "munged started but a munge round trip failed; see /var/log/munge/munged.log"
    say "munged started (pid $(cat "$MUNGE_PID"))"
}

write_slurm_conf() {
    local node cpus mem_mb real_mb conf
    node=$(hostname -s)
    cpus=$(nproc)
    mem_mb=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024))
    real_mb=$((mem_mb * 95 / 100)) # slurmd drains a node that reports less memory than configured
    # With CR_Core_Memory, a job that asks for no memory would get the whole node's (and run alone):
    # DefMemPerCPU gives it its CPUs' share instead.
    conf="$MARKER
# A single-node cluster for trying td3x's SLURM sweeps; see the script for what each choice is for.
ClusterName=td3x-local
SlurmctldHost=${node}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=cred_expire=${CRED_EXPIRE_S}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$((real_mb / cpus))
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=${SCHED_INTERVAL_S},bf_interval=${SCHED_INTERVAL_S}
MpiDefault=none
ReturnToService=2
JobRequeue=1
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=${CTLD_PID}
SlurmdPidFile=${SLURMD_PID}
SlurmctldLogFile=${LOG_DIR}/slurmctld.log
SlurmdLogFile=${LOG_DIR}/slurmd.log
NodeName=${node} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${real_mb} State=UNKNOWN
PartitionName=${PARTITION} Nodes=${node} Default=YES MaxTime=INFINITE State=UP"
    if [[ -f $SLURM_CONF ]] && ! head -n1 "$SLURM_CONF" | grep -qF "$MARKER"; then
        die "$SLURM_CONF exists and was not written by this script; refusing to overwrite it"
    fi
    mkdir -p /etc/slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd "$LOG_DIR"
    CONF_CHANGED=0
    if [[ ! -f $SLURM_CONF ]] || [[ "$(cat "$SLURM_CONF")" != "$conf" ]]; then
        printf '%s\n' "$conf" >"$SLURM_CONF"
        CONF_CHANGED=1
        say "wrote $SLURM_CONF (node $node: $cpus CPUs, RealMemory ${real_mb} MB, partition $PARTITION)"
    fi
}

wait_for_node() {
    local node state
    node=$(hostname -s)
    for _ in $(seq 60); do
        state=$(sinfo -h -n "$node" -o %t 2>/dev/null || true)
        case $state in
            idle | mix | alloc)
                say "node $node is $state; partition $PARTITION is the default (sbatch, srun and submitit_slurm work)"
                return 0
                ;;
            down* | drain* | drng*) scontrol update NodeName="$node" State=RESUME 2>/dev/null || true ;;
        esac
        sleep 1
    done
    tail -n 20 "$LOG_DIR/slurmctld.log" "$LOG_DIR/slurmd.log" >&2 || true
    die "node $node did not become idle within 60 s (state: '${state:-unknown}'); logs above"
}

start() {
    require_root
    install_packages
    mkdir -p "$STATE_DIR"
    start_munge
    write_slurm_conf
    if ((CONF_CHANGED)) && { running "$CTLD_PID" slurmctld || running "$SLURMD_PID" slurmd; }; then
        say "the config changed: restarting the SLURM daemons"
        stop_daemon "$SLURMD_PID" slurmd
        stop_daemon "$CTLD_PID" slurmctld
    fi
    if running "$CTLD_PID" slurmctld; then
        say "slurmctld already running (pid $(cat "$CTLD_PID"))"
    else
        slurmctld || die "slurmctld failed to start; see $LOG_DIR/slurmctld.log"
        touch "$STATE_DIR/slurmctld"
        say "slurmctld started"
    fi
    if running "$SLURMD_PID" slurmd; then
        say "slurmd already running (pid $(cat "$SLURMD_PID"))"
    else
        slurmd || die "slurmd failed to start; see $LOG_DIR/slurmd.log"
        touch "$STATE_DIR/slurmd"
        say "slurmd started"
    fi
    wait_for_node
}

# Stop one daemon by the pid in its pid file: SIGTERM, then up to 20 s for it to exit.
stop_daemon() {
    local pidfile=$1 name=$2 pid
    running "$pidfile" "$name" || return 0
    pid=$(cat "$pidfile")
    kill -TERM "$pid"
    for _ in $(seq 40); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null && die "$name (pid $pid) did not exit after SIGTERM"
    say "stopped $name (pid $pid)"
}

cancel_jobs() {
    running "$CTLD_PID" slurmctld || return 0
    local jobs
    jobs=$(squeue -h -o %A 2>/dev/null || true)
    [[ -n $jobs ]] || return 0
    say "cancelling the jobs of this cluster: $(echo "$jobs" | tr '\n' ' ')"
    # shellcheck disable=SC2086 # one job id per word
    scancel $jobs || true
    for _ in $(seq 60); do # their processes end through slurmstepd, which outlives slurmd if left running
        [[ -z "$(squeue -h -t running,completing -o %A 2>/dev/null)" ]] && return 0
        sleep 0.5
    done
    say "warning: some jobs were still ending after 30 s"
}

pidfile_of() {  # the pid file of one of the cluster's daemons
    case $1 in
        slurmd) echo "$SLURMD_PID" ;;
        slurmctld) echo "$CTLD_PID" ;;
        munged) echo "$MUNGE_PID" ;;
    esac
}

stop() {
    require_root
    if [[ -f $SLURM_CONF ]] && ! head -n1 "$SLURM_CONF" | grep -qF "$MARKER"; then
        die "$SLURM_CONF was not written by this script: this is not the local test cluster, not stopping anything"
    fi
    cancel_jobs
    local name pidfile
    for name in slurmd slurmctld munged; do
        pidfile=$(pidfile_of "$name")
        if [[ -f $STATE_DIR/$name ]]; then
            stop_daemon "$pidfile" "$name"
            rm -f "$STATE_DIR/$name"
        elif running "$pidfile" "$name"; then
            say "$name was not started by this script: left running"
        fi
    done
    say "stopped (packages, config and job state are kept; 'start' brings the cluster back)"
}

status() {
    local name pidfile all=0
    for name in munged slurmctld slurmd; do
        pidfile=$(pidfile_of "$name")
        if running "$pidfile" "$name"; then
            say "$name running (pid $(cat "$pidfile"))"
        else
            say "$name not running"
            all=1
        fi
    done
    if running "$CTLD_PID" slurmctld; then
        sinfo
        squeue
    fi
    return $all
}

check() {
    running "$CTLD_PID" slurmctld || die "slurmctld is not running: run '$0 start' first"
    local out
    out=$(mktemp -d)
    # shellcheck disable=SC2016 # expanded inside the job, not here
    sbatch --wait --quiet --time=1 --output="$out/check.out" --wrap='echo "ok from job $SLURM_JOB_ID on $(hostname)"' ||
        die "sbatch --wait failed"
    say "$(cat "$out/check.out")"
    rm -rf "$out"
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    status) status ;;
    check) check ;;
    *)
        echo "usage: $0 start|status|check|stop" >&2
        exit 2
        ;;
esac
