# tests/systemd/lib.sh: the container of tests/systemd/run (make systemd-check), shared with
# bench/sites (make bench-sites): a Debian 12 root booted by systemd-nspawn with systemd as
# its PID 1, the package installed there by apt. Sourced, not run; it sources
# tools/testlib.sh (ok, bad, check, tally, make_test_tls). The script sets before:
#
#   REPO                   the checkout
#   MACHINE                the container's name (its cgroup, nspawn's folders)
#   SUITE, INCLUDE         debootstrap's suite and --include list
#   TOOLS                  an array: packages installed beside the package (test tools)
#   say MESSAGE            a function: a line on stderr, with the script's prefix
#
# and calls, in this order (each records its time with step, and gives up with a FAIL line,
# the tally and status 1 when it cannot do its part):
#
#   ct_preflight LOCK WHAT  root, the tools, and the lock ${TMPDIR:-/tmp}/LOCK (else "another
#                           WHAT is running")
#   ct_scratch PREFIX       the scratch folder WORK (mktemp PREFIX.XXXXXX under
#                           ${TMPDIR:-/var/tmp}) with ROOT and LOG, and the traps: EXIT runs
#                           cleanup (the container stopped, nspawn's cgroups and folders
#                           removed, the last lines of each log in LOG on failure, WORK
#                           removed), INT and TERM exit 130 and 143, ERR names the command
#   ct_package              DEB (its path), DEB_NAME and VERSION: MARKET_DEB=FILE as it is,
#                           else ./market_VERSION_ARCH.deb when newer than every file of the
#                           tree, else make deb
#   ct_root                 ROOT: debootstrap's (cached in var/systemd-check/ for the day,
#                           never in CI nor with SYSTEMD_CHECK_CACHE=0), apt's sources on
#                           this machine's mirror, /etc/hosts, the package in /root/
#   ct_download             apt-get update and install --download-only of the package and
#                           TOOLS in the root, with this machine's network
#   ct_boot                 the container booted in the background on a network of its own
#                           (loopback only), until systemd says the system is running;
#                           NSPAWN_PID and LEADER (its PID 1) set
#   ct_install              apt-get install /root/DEB_NAME and TOOLS there, under systemd
#
# and, once booted:
#
#   in_ct COMMAND...        COMMAND inside the container (nsenter into all its namespaces),
#                           with a clean environment, as root
#   prop UNIT PROPERTY      systemctl show -P PROPERTY UNIT, in the container
#   wait_until S COMMAND... true once COMMAND succeeds, polled every 0.2 s for S seconds
#   now_ms                  this machine's clock in ms
#   nginx_workers, old_workers_gone PIDS, reload_nginx
#                           nginx reloaded and its new workers serving (see there)
#   figures FILE            "p50 X ms, p99 Y ms, max Z ms (n N)" of FILE's numbers
#   step NAME START         the time since START (a $SECONDS) as step NAME, in TIMINGS
#   stop_container          poweroff, then after 30 s SIGKILL (the cleanup calls it too)
#   give_up NAME [DETAIL]   a FAIL line, the tally, exit 1
# shellcheck shell=bash
# shellcheck disable=SC2317  # cleanup and the helpers run from traps and command substitutions

# shellcheck source=tools/testlib.sh
. "$REPO/tools/testlib.sh"

give_up() {
    bad "$1" "${2:-}"
    tally || true
    exit 1
}

ct_preflight() {
    local tool
    [ "$(id -u)" = 0 ] || {
        say "must run as root: debootstrap and systemd-nspawn"
        exit 1
    }
    for tool in debootstrap systemd-nspawn nsenter unshare chroot flock openssl jq dpkg-deb; do
        command -v "$tool" >/dev/null 2>&1 || {
            say "$tool is missing (run: tools/install-deps)"
            exit 1
        }
    done
    exec 9>"${TMPDIR:-/tmp}/$1"
    flock -n 9 || {
        say "another $2 is running"
        exit 1
    }
}

# step NAME START: records how long the step that began at START (a $SECONDS) took.
step() { TIMINGS+=("$(printf '%-22s %4s s' "$1" "$((SECONDS - $2))")"); }

# alive PID: the process runs (and is no zombie waiting for our wait).
alive() {
    local st
    st=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${st:0:1}" != Z ]
}
# The container's PID 1 gets poweroff (nspawn turns SIGTERM into it), then, after 30 s,
# everything left gets SIGKILL; nspawn's mounts live in its own namespace and go with it.
stop_container() {
    local i
    [ -n "$NSPAWN_PID" ] || return 0
    if alive "$NSPAWN_PID"; then
        kill -TERM "$NSPAWN_PID" 2>/dev/null || true
        for ((i = 0; i < 300; i++)); do
            alive "$NSPAWN_PID" || break
            sleep 0.1
        done
        if alive "$NSPAWN_PID"; then
            say "the container did not power off within 30 s: SIGKILL"
            [ -n "$LEADER" ] && kill -KILL "$LEADER" 2>/dev/null
            kill -KILL "$NSPAWN_PID" 2>/dev/null || true
        fi
    fi
    wait "$NSPAWN_PID" 2>/dev/null || true
    NSPAWN_PID=
}
cleanup() {
    local rc=$? cg f
    trap - EXIT INT TERM ERR
    set +e
    exec 1>&7 2>&8
    stop_container
    # What nspawn made outside the root: the cgroups under ours, its propagation folder.
    for cg in "${CGROUPS[@]}"; do
        [ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
    done
    rmdir "/run/systemd/nspawn/propagate/$MACHINE" 2>/dev/null || true
    if [ "$NSPAWN_RUN_EXISTED" = 0 ]; then
        rmdir /run/systemd/nspawn/propagate /run/systemd/nspawn/locks /run/systemd/nspawn 2>/dev/null || true
    fi
    if [ "$rc" != 0 ] && [ -d "$LOG" ]; then
        for f in "$LOG"/*.log; do
            [ -s "$f" ] || continue
            say "last lines of ${f##*/}:"
            tail -n 25 "$f" | sed 's/^/    | /' >&2
        done
    fi
    # Nothing may be mounted below the scratch folder before it goes (nothing should be:
    # debootstrap's second stage and nspawn mount in namespaces of their own).
    if grep -qF " $WORK/" /proc/mounts; then
        grep -F " $WORK/" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n 1 umount -l
    fi
    rm -rf --one-file-system -- "$WORK"
    exit "$rc"
}

ct_scratch() {
    # shellcheck disable=SC2034  # the script's: its total time
    T0=$SECONDS
    TIMINGS=()
    WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/$1.XXXXXX")
    ROOT=$WORK/root
    LOG=$WORK/log
    mkdir -p "$LOG"
    NSPAWN_PID=
    LEADER=
    CGROUPS=()
    NSPAWN_RUN_EXISTED=0
    [ -d /run/systemd/nspawn ] && NSPAWN_RUN_EXISTED=1
    # The script's own output, for the cleanup: a signal's trap runs inside whatever
    # command was running, with its redirections (an apt-get's into its log, say).
    exec 7>&1 8>&2
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    # What set -e stops at, named (in the script's own lines: a trap is not inherited by
    # functions, whose commands give up by name instead).
    trap 'say "failed (status $?) at line $LINENO: $BASH_COMMAND" 2>&8' ERR
}

# ---------------------------------------------------------------------------------------
# The package.
# The files make deb packs (git ls-files, as the Makefile does); one newer than the
# package means it is out of date.
stale() {
    [ -f "$DEB" ] || return 0
    # shellcheck disable=SC2016  # $0 and $f are that sh's
    (cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
        xargs -0 -r sh -c 'for f; do [ "$f" -nt "$0" ] && { echo "$f"; exit 0; }; done; exit 0' "$DEB") | grep -q .
}
ct_package() {
    local start=$SECONDS
    VERSION=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$REPO/debian/changelog")
    DEB_NAME=market_${VERSION}_$(dpkg --print-architecture).deb
    DEB=$REPO/$DEB_NAME
    if [ -n "${MARKET_DEB:-}" ]; then
        DEB=$(readlink -f -- "$MARKET_DEB")
        DEB_NAME=${DEB##*/}
        [ -f "$DEB" ] || give_up "MARKET_DEB=$MARKET_DEB: no such file"
        ok "the package given: $DEB_NAME (MARKET_DEB)"
    elif stale; then
        say "building the package (make deb)"
        make -s -C "$REPO" deb >"$LOG/build.log" 2>&1 || give_up "make deb" "$(tail -n 30 "$LOG/build.log")"
        ok "make deb built $DEB_NAME"
    else
        ok "$DEB_NAME is newer than every file of the tree: used as it is"
    fi
    step "package" "$start"
}

# ---------------------------------------------------------------------------------------
# The root.
# The mirror apt uses here: the URI of the source of $SUITE (deb822 or one-line style),
# and of its security archive.
apt_uri() {
    local suite=$1 f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk -v s="$suite" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++;
            if ($(i + 1) == s) { print $i; exit } }' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v s="$suite" 'BEGIN { RS = ""; FS = "\n" }
            { uri = ""; hit = 0; deb = 0
              for (i = 1; i <= NF; i++) {
                  if ($i ~ /^Types:/ && $i ~ /[ \t]deb([ \t]|$)/) deb = 1
                  if ($i ~ /^URIs:/) { split($i, a, /[ \t]+/); uri = a[2] }
                  if ($i ~ /^Suites:/) { n = split($i, b, /[ \t]+/); for (j = 2; j <= n; j++) if (b[j] == s) hit = 1 }
              }
              if (deb && hit && uri != "") { print uri; exit } }' "$f"
    done
}
ct_root() {
    local cache_dir key cache use_cache=1 start
    # shellcheck disable=SC2153  # SUITE is the script's
    MIRROR=$(apt_uri "$SUITE" | head -n 1)
    MIRROR=${MIRROR:-http://deb.debian.org/debian}
    SECURITY=$(apt_uri "$SUITE-security" | head -n 1)
    SECURITY=${SECURITY:-http://deb.debian.org/debian-security}
    say "mirror $MIRROR, security $SECURITY"

    cache_dir=$REPO/var/systemd-check
    key=$(printf '%s\n' "$SUITE" minbase "$INCLUDE" "$MIRROR" "$(debootstrap --version)" | sha256sum | cut -c 1-12)
    cache=$cache_dir/root-$(date -u +%Y%m%d)-$key.tar
    if [ "${CI:-}" = true ] || [ "${SYSTEMD_CHECK_CACHE:-1}" = 0 ]; then use_cache=0; fi

    start=$SECONDS
    mkdir -p "$ROOT"
    if [ "$use_cache" = 1 ] && [ -f "$cache" ]; then
        tar -C "$ROOT" -xpf "$cache" || give_up "the root from the cache (${cache#"$REPO"/}): tar"
        ok "the root from the cache (${cache#"$REPO"/}: debootstrap's of today, same mirror and packages)"
        step "root (cached)" "$start"
    else
        say "debootstrap --variant=minbase --include=$INCLUDE $SUITE ($MIRROR)"
        debootstrap --variant=minbase --include="$INCLUDE" --foreign "$SUITE" "$ROOT" "$MIRROR" \
            >"$LOG/debootstrap.log" 2>&1 || give_up "debootstrap (first stage)" "$(tail -n 30 "$LOG/debootstrap.log")"
        echo force-unsafe-io >"$ROOT/etc/dpkg/dpkg.cfg.d/market-systemd-check"
        # The second stage in a mount namespace of its own: whatever it mounts goes with it.
        unshare --mount --propagation private chroot "$ROOT" /debootstrap/debootstrap --second-stage \
            >>"$LOG/debootstrap.log" 2>&1 || give_up "debootstrap (second stage)" "$(tail -n 30 "$LOG/debootstrap.log")"
        ok "debootstrap made the root"
        step "root (debootstrap)" "$start"
        if [ "$use_cache" = 1 ]; then
            mkdir -p "$cache_dir"
            find "$cache_dir" -maxdepth 1 -name 'root-*.tar' ! -name "${cache##*/}" -delete
            tar -C "$ROOT" -cpf "$cache.tmp" . && mv "$cache.tmp" "$cache"
        fi
    fi

    # apt's sources (the same mirror), a hosts file as an installed Debian has, the package.
    rm -f "$ROOT/etc/apt/sources.list"
    cat >"$ROOT/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$ROOT/etc/hosts"
    cp "$DEB" "$ROOT/root/" || give_up "the package copied into the root"
}

# ---------------------------------------------------------------------------------------
# Every systemd-nspawn runs in a cgroup of ours (under which it makes its supervisor and
# payload cgroups), removed by the cleanup; with a systemd on this machine, where it
# belongs. own_cgroup COMMAND...: the shell it is called in (a subshell) joins that cgroup
# and becomes COMMAND.
ct_cgroups() {
    local h
    [ ! -d /run/systemd/system ] || return 0
    for h in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified /sys/fs/cgroup; do
        [ -f "$h/cgroup.procs" ] || continue
        [ "$h" = /sys/fs/cgroup ] && [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ] && continue
        mkdir -p "$h/$MACHINE.$$" 2>/dev/null && CGROUPS+=("$h/$MACHINE.$$")
    done
    return 0
}
own_cgroup() {
    local cg
    for cg in "${CGROUPS[@]}"; do
        echo "$BASHPID" >"$cg/cgroup.procs" || say "could not join $cg: nspawn's cgroups may stay behind"
    done
    exec "$@"
}

# Dependencies downloaded with this machine's network (nspawn without --boot shares it),
# resolved by apt from the package's Depends and Recommends.
ct_download() {
    local start
    ct_cgroups
    start=$SECONDS
    (own_cgroup systemd-nspawn -q -D "$ROOT" -M "$MACHINE" --register=no --keep-unit --pipe \
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 \
        sh -c "apt-get -q update && apt-get -q install -y --download-only /root/$DEB_NAME ${TOOLS[*]}") \
        </dev/null >"$LOG/download.log" 2>&1 || give_up "apt-get install --download-only in the root" "$(tail -n 30 "$LOG/download.log")"
    rmdir "/run/systemd/nspawn/propagate/$MACHINE" 2>/dev/null || true
    ok "apt resolved and downloaded the dependencies ($(grep -c '^Get:' "$LOG/download.log" || true) files)"
    step "download" "$start"
}

# ---------------------------------------------------------------------------------------
# Boot, in the background, on a network of its own.
ct_boot() {
    local start=$SECONDS i state failed
    own_cgroup systemd-nspawn -D "$ROOT" -M "$MACHINE" --boot --register=no --keep-unit \
        --private-network --console=read-only </dev/null >"$LOG/console.log" 2>&1 &
    NSPAWN_PID=$!
    for ((i = 0; i < 300; i++)); do
        LEADER=$(pgrep -P "$NSPAWN_PID" 2>/dev/null | head -n 1 || true)
        [ -n "$LEADER" ] && [ "$(cat "/proc/$LEADER/comm" 2>/dev/null)" = systemd ] && break
        LEADER=
        alive "$NSPAWN_PID" || break
        sleep 0.1
    done
    [ -n "$LEADER" ] || give_up "systemd-nspawn --boot started no systemd" "$(tail -n 20 "$LOG/console.log")"

    # systemctl needs the manager's private socket, there once systemd has set itself up.
    wait_until 60 test -S "/proc/$LEADER/root/run/systemd/private" ||
        give_up "systemd made no /run/systemd/private within 60 s" "$(tail -n 20 "$LOG/console.log")"
    state=$(timeout 120 nsenter -t "$LEADER" -a env -i PATH=/usr/bin:/bin systemctl is-system-running --wait 2>&1 || true)
    case "$state" in
    running) ok "systemd is PID 1 of the container and the system is running" ;;
    degraded)
        failed=$(in_ct systemctl list-units --failed --plain --no-legend | awk '{print $1}' | tr '\n' ' ')
        say "the system is degraded before the package is installed: failed units: $failed"
        ok "systemd is PID 1 of the container (degraded by $failed, none of the package's)"
        ;;
    *) give_up "systemctl is-system-running --wait: $state" "$(tail -n 20 "$LOG/console.log")" ;;
    esac
    step "boot" "$start"
}

# A command inside the container (all its namespaces), with a clean environment.
in_ct() {
    nsenter -t "$LEADER" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 HOME=/root \
        DEBIAN_FRONTEND=noninteractive SYSTEMD_PAGER= "$@"
}
prop() { in_ct systemctl show -P "$2" "$1"; }
# wait_until SECONDS COMMAND...: true once COMMAND succeeds, polled every 0.2 s.
wait_until() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}
now_ms() { date +%s%3N; }
# nginx's reload returns once its master has the signal, before the new workers serve the
# new configuration; the master starts them before it retires the old ones, so a caller
# that needs the new configuration waits until the old workers are gone:
#   nginx_workers             the container's nginx worker PIDs, space-separated
#   old_workers_gone PIDS     true once none of PIDS is left
#   reload_nginx              nginx -t, systemctl reload nginx, and that wait (15 s at most)
nginx_workers() { in_ct pgrep -d ' ' -f '^nginx: worker process' || true; }
old_workers_gone() {
    local pid
    for pid in $1; do in_ct kill -0 "$pid" 2>/dev/null && return 1; done
    return 0
}
reload_nginx() {
    local old
    old=$(nginx_workers)
    in_ct nginx -t -q && in_ct systemctl reload nginx && wait_until 15 old_workers_gone "$old"
}
# figures FILE: "p50 X ms, p99 Y ms, max Z ms (n N)" of the numbers of FILE, one a line (the
# median; p99 the value at rank round(0.99 (n - 1)), as bench/coldstart).
figures() {
    sort -n "$1" | awk '{ v[NR] = $1 }
        END { if (NR == 0) { print "none"; exit }
              p50 = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "p50 %.1f ms, p99 %.1f ms, max %.1f ms (n %d)\n", p50, v[int(0.99 * (NR - 1) + 0.5) + 1], v[NR], NR }'
}

# ---------------------------------------------------------------------------------------
# The installation, under systemd, offline: apt takes the downloaded archives.
ct_install() {
    local start=$SECONDS
    in_ct apt-get -q install -y "/root/$DEB_NAME" "${TOOLS[@]}" >"$LOG/apt.log" 2>&1 ||
        give_up "apt-get install ./$DEB_NAME in the container" "$(tail -n 30 "$LOG/apt.log")"
    ok "apt-get install ./$DEB_NAME under systemd"
    step "install" "$start"
}
