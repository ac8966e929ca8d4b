# tools/nslib.sh: the network-namespace harness helpers of tests/failover/run (a private
# bridge of Linux network namespaces, processes started in them and stopped by pid, a
# table of figures checked against expectations). Sourced, not run, after setting:
#
#   PFX=mkfo            prefix of the namespaces (PFX-sw holds the bridge), the lock
#                       and the run directories (TMP_ROOT/PFX.XXXXXX)
#   HARNESS=failover    the harness's name in its messages and summary
#   LOG=DIR RUN=DIR     set once the run directory exists (start_bg writes there)
#
#   say/die/step MSG         a line on stderr (die exits 1)
#   now_ms                   milliseconds since the epoch, the clock node's Date.now reads
#   row/expect/info ...      one figure of the summary (see expect); summary prints them
#   ns HOST / in_ns HOST CMD the namespace of HOST / CMD run inside it
#   net_up HOST...           the bridge and a veth per HOST, addressed IP[HOST]/24
#   link_down HOST / link_up HOST   the switch side of HOST's link: packets to and from
#                            it are dropped, nothing is closed or reset
#   start_bg HOST NAME CMD   a long-running process in HOST's namespace, its own session,
#                            output in LOG/NAME.log, pid in PIDS[NAME] and RUN/pids
#   running PID / stop_pid NAME [TIMEOUT] / stop_all TIMEOUT / sweep_namespaces
#   render TEMPLATE OUT NAME=VALUE...   fills @NAME@ placeholders, refuses one left over
# shellcheck shell=bash

say() { printf '%s: %s\n' "$HARNESS" "$*" >&2; }
die() {
    say "error: $*"
    exit 1
}
step() { printf '\n== %s\n' "$*" >&2; }
now_ms() { date +%s%3N; }

# ---------------------------------------------------------------------------------------
# Results: one row per figure, printed as a table at the end.
ROWS=()
FAILED=0
row() { # group, figure, value, expectation, verdict
    ROWS+=("$(printf '%-3s|%-58s|%20s|%-14s|%s' "$1" "$2" "$3" "$4" "$5")")
    [ "$5" = ok ] || [ "$5" = info ] || FAILED=$((FAILED + 1))
    printf '   %-58s %20s   %-14s %s\n' "$2" "$3" "$4" "$5" >&2
}
expect() { # group, figure, value, op (eq le ge gt), bound
    local verdict=FAIL sym
    case $4 in
    eq) sym="= $5"; [ "$3" = "$5" ] && verdict=ok ;;
    le) sym="<= $5"; [[ "$3" =~ ^-?[0-9.]+$ ]] && awk -v a="$3" -v b="$5" 'BEGIN{exit !(a<=b)}' && verdict=ok ;;
    ge) sym=">= $5"; [[ "$3" =~ ^-?[0-9.]+$ ]] && awk -v a="$3" -v b="$5" 'BEGIN{exit !(a>=b)}' && verdict=ok ;;
    gt) sym="> $5"; [[ "$3" =~ ^-?[0-9.]+$ ]] && awk -v a="$3" -v b="$5" 'BEGIN{exit !(a>b)}' && verdict=ok ;;
    esac
    row "$1" "$2" "$3" "$sym" "$verdict"
}
info() { row "$1" "$2" "$3" "" info; }
summary() { # seconds the run took
    local a b c d e
    printf '\n== %s-check: figures (%s s in all)\n' "$HARNESS" "$1"
    printf '%-3s %-58s %20s %-14s %s\n' '#' figure value expected verdict
    while IFS='|' read -r a b c d e; do
        printf '%-3s %-58s %20s %-14s %s\n' "$a" "$b" "$c" "$d" "$e"
    done < <(printf '%s\n' "${ROWS[@]}")
    printf '%s passed, %s failed\n' "$((${#ROWS[@]} - FAILED))" "$FAILED"
}

# ---------------------------------------------------------------------------------------
# Namespaces and processes.
ns() { printf '%s-%s' "$PFX" "$1"; }
in_ns() {
    local host=$1
    shift
    ip netns exec "$(ns "$host")" "$@"
}
our_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep "^$PFX-" || true; }

# A bridge in a namespace of its own (PFX-sw) and one namespace per host, each joined to
# it by a veth pair made inside the namespaces: nothing appears in the host's network.
declare -A IP=()
net_up() { # HOST...; IP[HOST] must be set
    local h
    ip netns add "$(ns sw)"
    ip -n "$(ns sw)" link set lo up
    ip -n "$(ns sw)" link add br0 type bridge
    ip -n "$(ns sw)" link set br0 up
    for h in "$@"; do
        ip netns add "$(ns "$h")"
        ip -n "$(ns sw)" link add "v-$h" type veth peer name eth0 netns "$(ns "$h")"
        ip -n "$(ns sw)" link set "v-$h" master br0 up
        ip -n "$(ns "$h")" addr add "${IP[$h]}/24" dev eth0
        ip -n "$(ns "$h")" link set eth0 up
        ip -n "$(ns "$h")" link set lo up
    done
}
link_down() { ip -n "$(ns sw)" link set "v-$1" down; }
link_up() { ip -n "$(ns sw)" link set "v-$1" up; }

running() {
    local state
    state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    [[ "$state" != Z* ]]
}

declare -A PIDS=()
start_bg() {
    local host=$1 name=$2
    shift 2
    ip netns exec "$(ns "$host")" setsid "$@" </dev/null >>"$LOG/$name.log" 2>&1 9>&- &
    PIDS[$name]=$!
    printf '%s %s\n' "$!" "$name" >>"$RUN/pids"
}

# TERM, then KILL after TIMEOUT seconds; only the pid we started.
stop_pid() {
    local name=$1 timeout=${2:-10} pid i
    pid=${PIDS[$name]:-}
    [ -n "$pid" ] || return 0
    unset 'PIDS[$name]'
    running "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < timeout * 10; i++)); do
        running "$pid" || return 0
        sleep 0.1
    done
    say "$name (pid $pid) did not stop within ${timeout}s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
}

# Every process started with start_bg and still running: TERM to all at once, then KILL
# after TIMEOUT seconds.
stop_all() {
    local timeout=$1 pids=() name pid i left
    for name in "${!PIDS[@]}"; do
        pid=${PIDS[$name]}
        if running "$pid"; then pids+=("$pid"); fi
    done
    PIDS=()
    [ "${#pids[@]}" -gt 0 ] || return 0
    kill -TERM "${pids[@]}" 2>/dev/null || true
    for ((i = 0; i < timeout * 10; i++)); do
        left=()
        for pid in "${pids[@]}"; do
            if running "$pid"; then left+=("$pid"); fi
        done
        [ "${#left[@]}" -gt 0 ] || return 0
        sleep 0.1
    done
    say "killing what did not stop within ${timeout}s: ${left[*]}"
    kill -KILL "${left[@]}" 2>/dev/null || true
}

# Every process still inside one of our namespaces is one of ours (the namespaces are
# the harness's own): TERM, then KILL after 10 s. Then the namespaces go, and with them
# the veth links and the bridge.
sweep_namespaces() {
    local n pids=() i left
    for n in $(our_namespaces); do
        mapfile -t -O "${#pids[@]}" pids < <(ip netns pids "$n" 2>/dev/null || true)
    done
    if [ "${#pids[@]}" -gt 0 ]; then
        kill -TERM "${pids[@]}" 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do
            left=0
            for n in "${pids[@]}"; do running "$n" && left=1; done
            [ "$left" = 0 ] && break
            sleep 0.1
        done
        [ "$left" = 0 ] || kill -KILL "${pids[@]}" 2>/dev/null || true
    fi
    for n in $(our_namespaces); do
        ip netns del "$n" 2>/dev/null || say "could not delete namespace $n"
    done
}

render() { # template out NAME=VALUE...
    local template=$1 out=$2 kv value args=()
    shift 2
    for kv in "$@"; do
        value=$(printf '%s' "${kv#*=}" | sed -e 's/[\\&|]/\\&/g')
        args+=(-e "s|@${kv%%=*}@|${value}|g")
    done
    sed "${args[@]}" -- "$template" >"$out"
    if grep -v '^[[:space:]]*#' -- "$out" | grep -q '@[A-Z_]*@'; then
        die "$template: a placeholder is left: $(grep -v '^[[:space:]]*#' -- "$out" | grep -o '@[A-Z_]*@' | head -n 1)"
    fi
}
