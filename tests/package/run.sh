#!/usr/bin/env bash
# shellcheck disable=SC2317  # cleanup and the helpers run from traps and pipelines
# tests/package/run.sh: what `make package-check` runs. As root, on a Debian 12 machine
# without market installed (CI's own machine stands in for a fresh root):
#
#   1. builds the package (make deb) and lints it: lintian --pedantic, every tag fails the
#      check except the documented overrides (debian/market.lintian-overrides);
#   2. installs it with apt-get (dependencies from the mirror), then checks what the
#      installation did: the user market, the secret (0640, group market), the
#      configuration files, the man pages, and `systemd-analyze verify` of the installed
#      units, which must print nothing;
#   3. starts a PostgreSQL cluster of its own (as the user postgres with Debian's peer
#      authentication, so that each system user logs in as its own role only; on a free
#      port, its socket in a scratch folder), makes the role and database market as
#      docs/operations.md does, points /etc/market/market.env at it as an
#      administrator would, and runs the units' own commands, read from the installed
#      unit files (systemd is not running here): market-migrate's ExecStart, the pool's
#      ExecStart on the socket market-api.socket describes (spawn-fcgi makes it with the
#      same path, owner, group and mode, as systemd would, and hands it over as standard
#      input), and market-webhookd's ExecStart, each as its User= with its EnvironmentFile=;
#   4. starts nginx (a private configuration: its own pid, logs, temporary files, a free
#      port; workers as www-data like Debian's) with the installed conf.d file in http and
#      the installed snippet in a plain server, and runs a smoke test: an authenticated
#      list, a download link minted and its file downloaded, /healthz 200, then 503 with
#      PostgreSQL stopped, then 200 again, and a /metrics scrape read by the strict
#      Prometheus reader of the end-to-end tests;
#   5. many sites on one host (docs/operations.md): `market-admin site create` of two
#      sites over two databases, their files, users and modes, `systemd-analyze verify`
#      and `security` of the template units through an instance (market-api@shop1...),
#      each site's pool and drainer run from the expanded template units as the site's
#      user, each site's own catalogue through nginx by server name with its own key, a
#      key of one refused by the other, one site's user unable to read the other's
#      secret, settings and files, each site's role refused by the other's database and
#      the default site's (and market's by both), so no NOTIFY of one reaches another; the package's postinst run as for an upgrade with a
#      new migration and one site's database refusing connections (that site named and
#      alone left behind, the configuration still succeeding); one site removed and the
#      other still serving;
#   6. stops what it started, `apt-get remove` (the configuration stays in /etc/market)
#      and `apt-get purge` (it goes, with the sites' settings, secrets and nginx files).
#
# Whatever fails, it stops what it started, purges the package and removes its scratch
# folder. The last line is "N passed, M failed"; the exit status is 0 only when M is 0.
set -uo pipefail

ROOT=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../.." && pwd -P)
# shellcheck source=tools/testlib.sh
. "$ROOT/tools/testlib.sh"
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8

say() { printf 'package-check: %s\n' "$*" >&2; }
# Every check is shown (ok/bad/check/tally: tools/testlib.sh).
CHECKS_VERBOSE=1
# Stops here: the cleanup runs from the EXIT trap.
give_up() {
    bad "$1" "${2:-}"
    tally
    exit 1
}

[ "$(id -u)" = 0 ] || {
    say "must run as root: it installs the package on this machine"
    exit 1
}
getent passwd postgres >/dev/null || {
    say "the user postgres is missing (run: tools/install-deps: postgresql-15 makes it)"
    exit 1
}
for tool in dpkg-buildpackage dh lintian help2man systemd-analyze spawn-fcgi runuser curl jq node /usr/bin/python3; do
    command -v "$tool" >/dev/null 2>&1 || {
        say "$tool is missing (run: tools/install-deps)"
        exit 1
    }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
PG_BIN=/usr/lib/postgresql/15/bin
[ -x "$PG_BIN/initdb" ] ||
    PG_BIN=$(dirname -- "$(printf '%s\n' /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")

# One run at a time on a machine: the package and its paths are the machine's.
exec 9>"${TMPDIR:-/tmp}/market-package-check.lock"
flock -n 9 || {
    say "another package-check is running"
    exit 1
}
if dpkg-query -W -f='${Status}' market 2>/dev/null | grep -q 'installed\|config-files'; then
    say "market is already installed here ($(dpkg-query -W -f='${Status}' market)); purge it first: apt-get purge market"
    exit 1
fi
if [ -e /etc/market ] || [ -e /run/market ] || [ -e /run/market-api ]; then
    say "/etc/market, /run/market or /run/market-api exists without the package; remove it first"
    exit 1
fi
# The second name has a hyphen: its slice is market-sites-shop_2.slice.
SITES=(shop1 shop-2)
for site in "${SITES[@]}"; do
    if getent passwd "market-$site" >/dev/null || getent group "market-$site" >/dev/null ||
        [ -e "/var/lib/market/sites/$site" ]; then
        say "the user market-$site or /var/lib/market/sites/$site exists without the package; remove it first"
        exit 1
    fi
done

WORK=$(mktemp -d /tmp/market-pkg.XXXXXX)
chmod 755 "$WORK"
mkdir -p "$WORK/log"
PIDS=() # what this script started, stopped by pid in reverse order
PG_STARTED=0
SITES_MADE=0

stop_pid() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    pkill -KILL -P "$pid" 2>/dev/null
    kill -KILL "$pid" 2>/dev/null
}
stop_started() {
    local i
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[i]}"; done
    PIDS=()
}
# A PostgreSQL program (pg NAME ARGS...) as the user postgres, the cluster's owner and
# superuser as on Debian, from / (postgres complains when it cannot read its working
# directory).
pg() {
    local prog=$1
    shift
    (cd / && runuser -u postgres -- "$PG_BIN/$prog" "$@")
}
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop_started
    if [ "$PG_STARTED" = 1 ]; then pg pg_ctl stop -D "$WORK/pg" -m immediate -s >/dev/null 2>&1; fi
    if dpkg-query -W -f='${Status}' market 2>/dev/null | grep -q 'installed\|config-files'; then
        say "purging the package"
        apt-get purge -y -q market >>"$WORK/log/apt.log" 2>&1 || say "apt-get purge failed: see above"
    fi
    rm -rf /run/market /run/market-api
    # What the sites' part made on this machine: their users, files, runtime directories
    # and nginx logs.
    if [ "$SITES_MADE" = 1 ]; then
        for site in "${SITES[@]}"; do
            getent passwd "market-$site" >/dev/null && userdel "market-$site" 2>/dev/null
            getent group "market-$site" >/dev/null && groupdel "market-$site" 2>/dev/null
            rm -rf "/var/lib/market/sites/$site" "/run/market-api-$site" \
                "/var/log/nginx/market-$site.access.log" "/var/log/nginx/market-$site.error.log"
        done
        rmdir /var/lib/market/sites 2>/dev/null
        rm -f /usr/share/market/sql/999_package_check.sql
    fi
    if [ "$rc" != 0 ] && [ -d "$WORK/log" ]; then
        for f in "$WORK"/log/*.log; do
            [ -s "$f" ] || continue
            say "last lines of ${f##*/}:"
            tail -n 25 "$f" | sed 's/^/    | /' >&2
        done
    fi
    rm -rf -- "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

timed() {
    local name=$1 start=$SECONDS
    shift
    "$@"
    local rc=$?
    say "$name: $((SECONDS - start)) s"
    return "$rc"
}

# --- 1. build and lint -----------------------------------------------------------------------
if timed "make deb" make -s -C "$ROOT" deb >"$WORK/log/build.log" 2>&1; then
    ok "make deb builds the package"
else
    give_up "make deb" "$(tail -n 30 "$WORK/log/build.log")"
fi
VERSION=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$ROOT/debian/changelog")
DEB=$ROOT/market_${VERSION}_$(dpkg --print-architecture).deb
CHANGES=$ROOT/build/deb/market_${VERSION}_$(dpkg --print-architecture).changes
[ -f "$DEB" ] || give_up "the package file $DEB"

# lintian refuses nothing when run as root, it only warns about it.
start=$SECONDS
lint=$(lintian --pedantic -I -E --fail-on error,warning,info,pedantic,experimental "$CHANGES" 2>&1)
lint_rc=$?
say "lintian: $((SECONDS - start)) s"
lint=$(grep -v '^running with root privileges' <<<"$lint")
printf '%s\n' "${lint:-lintian: no tag}" | sed 's/^/      lintian: /'
if [ "$lint_rc" = 0 ] && [ -z "$lint" ]; then ok "lintian --pedantic: no tag"; else bad "lintian" "$lint"; fi

# The maintainer scripts: enable at installation without starting (the database comes
# first), restart what runs after an upgrade without a stop before it, stop on removal.
mkdir -p "$WORK/control"
dpkg-deb -e "$DEB" "$WORK/control"
check "postinst enables the units" grep -q "deb-systemd-helper enable 'market-api.socket'" "$WORK/control/postinst"
check "postinst try-restarts them after an upgrade" grep -q "deb-systemd-invoke try-restart" "$WORK/control/postinst"
check "postinst upgrades every site (market-admin site upgrade)" grep -q "market-admin site upgrade" "$WORK/control/postinst"
# shellcheck disable=SC2016  # the prerm's own text
check "prerm stops every site's instances" grep -q 'deb-systemd-invoke stop "market-api@$site.socket"' "$WORK/control/prerm"
check "postinst restarts no slice" bash -c "! grep -q 'try-restart.*market-sites.slice' '$WORK/control/postinst'"
check "postinst never starts them" bash -c "! grep -q 'deb-systemd-invoke start' '$WORK/control/postinst'"
check "prerm stops them on removal" grep -q "deb-systemd-invoke stop market-api.socket market-api.service" "$WORK/control/prerm"
check "no stop before an upgrade" bash -c "! grep -qs 'deb-systemd-invoke stop' '$WORK/control/preinst'"

# --- 2. install ---------------------------------------------------------------------------
# No Recommends: the postgresql metapackage would create and start a cluster of its own.
if timed "apt-get install" apt-get install -y -q --no-install-recommends "$DEB" >"$WORK/log/apt.log" 2>&1; then
    ok "apt-get install ./$(basename "$DEB")"
else
    give_up "apt-get install" "$(tail -n 20 "$WORK/log/apt.log")"
fi
check "dpkg says installed" test "$(dpkg-query -W -f='${Status}' market)" = "install ok installed"
check "the system user market" id -u market
check "the group market" getent group market
check "the secret is 0640 root:market" test "$(stat -c '%a %U:%G' /etc/market/secret)" = "640 root:market"
check "the secret holds at least 32 bytes" test "$(wc -c </etc/market/secret)" -ge 32
check "the files folder belongs to market" test "$(stat -c '%U' /var/lib/market/files)" = market
conffiles=$(dpkg-query -W -f='${Conffiles}\n' market | awk 'NF {print $1}' | sort | tr '\n' ' ')
check "conffiles: market.env and the nginx files" test "$conffiles" = \
    "/etc/market/market.env /etc/nginx/conf.d/market.conf /etc/nginx/snippets/market-fastcgi.conf /etc/nginx/snippets/market-sites-fastcgi.conf /etc/nginx/snippets/market.conf "
# Read from the package itself: a machine may be set to skip installing man pages.
contents=$(dpkg-deb -c "$DEB")
for page in market-api.8 market-webhookd.8 market-admin.1 market.env.5; do
    check "man page ${page%.*}(${page##*.})" grep -q "usr/share/man/man${page##*.}/$page.gz\$" <<<"$contents"
done
# The HTML API reference and the documents beside it (make reference; debian/rules), and
# the reference registered with doc-base.
for doc in doc/market/reference/index.html doc/market/openapi.json doc/market/deploy.md.gz \
    doc-base/market.market-api-reference; do
    check "/usr/share/$doc" grep -q "usr/share/$doc\$" <<<"$contents"
done
check "every setting of market.env is commented" bash -c \
    "grep -c '^## MARKET_' /etc/market/market.env | grep -qx \"\$(grep -c '^#\\?MARKET_[A-Z_]*=' /etc/market/market.env)\""

UNITS=(/lib/systemd/system/market-api.socket /lib/systemd/system/market-api.service
    /lib/systemd/system/market-webhookd.service /lib/systemd/system/market-migrate.service)
verify=$(systemd-analyze verify "${UNITS[@]}" 2>&1)
verify_rc=$?
printf '%s\n' "${verify:-systemd-analyze verify: no message}" | sed 's/^/      verify: /'
if [ "$verify_rc" = 0 ] && [ -z "$verify" ]; then ok "systemd-analyze verify: clean"; else bad "systemd-analyze verify" "$verify"; fi
# The shared sandbox (the drop-in market-.service.d/hardening.conf) reaches every
# service: systemd's offline security analysis reads each unit with its drop-ins.
for unit in market-api market-webhookd market-migrate; do
    exposure=$(systemd-analyze security --offline=true --no-pager "/lib/systemd/system/$unit.service" 2>&1 |
        sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
    check "$unit.service: systemd-analyze security exposure ${exposure:-?} (at most 2.0)" \
        awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 2.0) }'
done

# --- 3. PostgreSQL and the units' commands -------------------------------------------------------
# The value of KEY in a unit file (the last one given), as systemd reads it.
unit_value() { sed -n "s/^$2=//p" "$1" | tail -n 1; }
# A unit's ExecStart as a shell command: systemd's "$$" is a literal "$"; the quoting of
# our units is the shell's.
unit_command() { unit_value "$1" ExecStart | sed 's/\$\$/$/g'; }
# The environment of a unit: systemd's clean one, then its EnvironmentFile.
unit_env_prefix() {
    printf 'set -a; . %s; set +a; ' "$(unit_value "$1" EnvironmentFile)"
}
UNIT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# setpriv's arguments that run a command as a unit's User= and Group=, the way systemd
# does: no login session, and the same process (setpriv changes its ids and execs).
unit_ids() {
    printf '%s\n' "--reuid=$(unit_value "$1" User)" "--regid=$(unit_value "$1" Group)" --init-groups
}

# Starts a pool and its drainer from their installed units, as systemd would (it is not
# running here): the socket made by spawn-fcgi as SOCKET_UNIT describes it (path, mode,
# owner, group) and handed to the pool's command, run as its user in the runtime directory
# systemd would make; the drainer's command as its user. Their output goes to
# $WORK/log/api$4.log and webhookd$4.log. Waits up to 5 s for the socket; POOL_PID is the
# pool's pid.
start_units() { # SOCKET_UNIT API_UNIT WEBHOOKD_UNIT LOG_SUFFIX
    local socket_unit=$1 api_unit=$2 webhookd_unit=$3 suffix=$4 sock i
    local -a ids
    sock=$(unit_value "$socket_unit" ListenStream)
    install -d -m "$(unit_value "$socket_unit" DirectoryMode)" "$(dirname "$sock")"
    install -d -m "$(unit_value "$api_unit" RuntimeDirectoryMode)" -o "$(unit_value "$api_unit" User)" \
        -g "$(unit_value "$api_unit" Group)" "/run/$(unit_value "$api_unit" RuntimeDirectory)"
    env -i PATH="$UNIT_PATH" setsid spawn-fcgi -n -s "$sock" -M "$(unit_value "$socket_unit" SocketMode)" \
        -U "$(unit_value "$socket_unit" SocketUser)" -G "$(unit_value "$socket_unit" SocketGroup)" \
        -u "$(unit_value "$api_unit" User)" -g "$(unit_value "$api_unit" Group)" -- \
        /bin/sh -c "$(unit_env_prefix "$api_unit")exec $(unit_command "$api_unit")" \
        </dev/null >>"$WORK/log/api$suffix.log" 2>&1 &
    POOL_PID=$!
    PIDS+=("$POOL_PID")
    mapfile -t ids < <(unit_ids "$webhookd_unit")
    env -i PATH="$UNIT_PATH" setsid setpriv "${ids[@]}" -- \
        /bin/sh -c "$(unit_env_prefix "$webhookd_unit")exec $(unit_command "$webhookd_unit")" \
        </dev/null >>"$WORK/log/webhookd$suffix.log" 2>&1 &
    PIDS+=($!)
    for ((i = 0; i < 50; i++)); do
        [ -S "$sock" ] && break
        sleep 0.1
    done
}

PGPORT=$(free_port) || give_up "a free port for PostgreSQL"
PORT=$(free_port) || give_up "a free port for nginx"
mkdir -p "$WORK/run" "$WORK/pg"
touch "$WORK/log/postgresql.log"
chown postgres:postgres "$WORK/run" "$WORK/pg" "$WORK/log/postgresql.log"
chmod 700 "$WORK/pg"
# Debian's pg_hba.conf for local connections: `local all all peer`. The role market is
# not a superuser, as on a host: the database's CONNECT privilege binds it.
if pg initdb -D "$WORK/pg" -U postgres -E UTF8 --locale=C.UTF-8 --auth-local=peer \
    --auth-host=scram-sha-256 >"$WORK/log/initdb.log" 2>&1 &&
    pg pg_ctl start -D "$WORK/pg" -l "$WORK/log/postgresql.log" -w -t 60 -s \
        -o "-p $PGPORT -k $WORK/run -c listen_addresses=''" &&
    PG_STARTED=1 &&
    pg createuser -h "$WORK/run" -p "$PGPORT" market &&
    pg createdb -h "$WORK/run" -p "$PGPORT" -O market market; then
    ok "a PostgreSQL cluster of its own on port $PGPORT"
else
    give_up "PostgreSQL" "$(tail -n 20 "$WORK/log/postgresql.log" "$WORK/log/initdb.log" 2>/dev/null)"
fi

# The administrator's edits of /etc/market/market.env.
sed -i -e "s|^MARKET_DB=.*|MARKET_DB=\"host=$WORK/run port=$PGPORT dbname=market user=market\"|" \
    -e "s|^MARKET_DOWNLOAD_BASE_URL=.*|MARKET_DOWNLOAD_BASE_URL=http://127.0.0.1:$PORT/files|" \
    -e 's|^#MARKET_WORKERS=.*|MARKET_WORKERS=2|' /etc/market/market.env

# market-migrate.service
MIGRATE=/lib/systemd/system/market-migrate.service
mapfile -t ids < <(unit_ids "$MIGRATE")
check "market-migrate runs as $(unit_value "$MIGRATE" User)" \
    env -i PATH="$UNIT_PATH" setpriv "${ids[@]}" -- \
    /bin/sh -c "$(unit_env_prefix "$MIGRATE")exec $(unit_command "$MIGRATE")"
check "the schema is there" test "$(runuser -u market -- psql -X -A -t -h "$WORK/run" -p "$PGPORT" -d market \
    -c 'SELECT count(*) FROM schema_migrations')" = "$(find "$ROOT/sql/migrations" -maxdepth 1 -name '*.sql' | wc -l)"

# market-api.socket + market-api.service: the socket as systemd makes it, then the pool's
# command as its user, in the runtime directory systemd would make.
SOCKET_UNIT=/lib/systemd/system/market-api.socket
SOCK=$(unit_value "$SOCKET_UNIT" ListenStream)
start_units "$SOCKET_UNIT" /lib/systemd/system/market-api.service \
    /lib/systemd/system/market-webhookd.service ""
check "the pool's socket is $(stat -c '%a %U:%G' "$SOCK" 2>/dev/null)" \
    test "$(stat -c '%a %U:%G' "$SOCK" 2>/dev/null)" = "660 market:www-data"
sleep 0.5
workers=$(pgrep -P "${PIDS[0]}" -u market -x market-api | wc -l)
check "multiwatch runs MARKET_WORKERS=2 workers as market ($workers)" test "$workers" = 2
check "market-webhookd runs as market" test "$(ps -o user=,comm= -p "${PIDS[1]}" | tr -s ' ')" = "market market-webhookd"

# --- 4. nginx with the installed files, and the smoke test ----------------------------------------
mkdir -p "$WORK/nginx/tmp"
chown -R www-data "$WORK/nginx/tmp"
cat >"$WORK/nginx/nginx.conf" <<EOF
user www-data;
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/log/nginx-error.log warn;
events { worker_connections 64; }
http {
    default_type application/octet-stream;
    access_log $WORK/log/nginx-access.log;
    client_body_temp_path $WORK/nginx/tmp/body;
    fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
    proxy_temp_path $WORK/nginx/tmp/proxy;
    uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
    scgi_temp_path $WORK/nginx/tmp/scgi;
    include /etc/nginx/conf.d/market.conf;
    server {
        listen 127.0.0.1:$PORT;
        location = /already-here { return 204; }
        include /etc/nginx/snippets/market.conf;
    }
}
EOF
NGINX_ARGS=(-p "$WORK/nginx/" -c "$WORK/nginx/nginx.conf" -e "$WORK/log/nginx-error.log")
check "nginx -t with the installed conf.d file and snippet" "$NGINX" -t -q "${NGINX_ARGS[@]}"
"$NGINX" "${NGINX_ARGS[@]}" -g 'daemon off;' </dev/null >>"$WORK/log/nginx-error.log" 2>&1 &
PIDS+=($!)
BASE=http://127.0.0.1:$PORT
for ((i = 0; i < 50; i++)); do
    curl -s -o /dev/null "$BASE/healthz" && break
    sleep 0.1
done

# market-admin as an administrator runs it: the services' settings, as the user market.
admin() {
    runuser -u market -- env -i PATH="$UNIT_PATH" \
        sh -c 'set -a; . /etc/market/market.env; set +a; exec market-admin "$@"' market-admin "$@"
}
RUN=$(date +%s)
FILE_PATH=smoke/$RUN/font.zip
runuser -u market -- install -d "/var/lib/market/files/smoke/$RUN"
head -c 5000 /dev/urandom | runuser -u market -- tee "/var/lib/market/files/$FILE_PATH" >/dev/null
doc=$(jq -n --arg f "$FILE_PATH" --arg r "$RUN" '{mode: "test",
    accounts: [{id: "acct_pkg_\($r)", email: "pkg@example.com"}],
    sellers: [{id: "pkg-\($r)", account: "acct_pkg_\($r)", name: "Package Shop"}],
    products: [{id: "prod_pkg_\($r)", seller: "pkg-\($r)", title: "Packaged Font", description: "d",
        category: "fonts", currency: "USD", status: "published",
        tiers: [{id: "tier_pkg_\($r)", name: "Personal", price: 9.5, licence: {}}],
        files: [{id: "file_pkg_\($r)", filename: "font.zip", path: $f, size_bytes: 5000}]}],
    orders: [{id: "ord_pkg_\($r)", account: "acct_pkg_\($r)", status: "paid",
        items: [{product: "prod_pkg_\($r)", tier: "tier_pkg_\($r)"}]}]}')
check "market-admin import" admin import - <<<"$doc"
KEY=$(admin key create --account "acct_pkg_$RUN" --mode test --access read-write) ||
    give_up "market-admin key create"

list=$(curl -s -w '\n%{http_code}' -H "Authorization: Bearer $KEY" "$BASE/v1/products?limit=10")
check "an authenticated list: 200 with the product" bash -c \
    "[ \"\$(tail -n 1 <<<'$list')\" = 200 ] && head -n -1 <<<'$list' | jq -e '.data[] | select(.id == \"prod_pkg_$RUN\")' >/dev/null"
# The default is the specification: six routes, no extension (contract section 13). With a
# read-write key (every scope the default has), the extension's paths answer as any other.
# answers STATUS METHOD HOST KEY PATH [CODE]: the request answers STATUS (and the error
# CODE when given); the body is left in $WORK/api.json, the head in $WORK/api.head.
answers() {
    local status
    status=$(curl -s -o "$WORK/api.json" -D "$WORK/api.head" -w '%{http_code}' -X "$2" \
        -H "Host: $3" -H "Authorization: Bearer $4" "$BASE$5")
    [ "$status" = "$1" ] || return 1
    [ -z "${6:-}" ] || jq -e --arg c "$6" '.error.code == $c' "$WORK/api.json" >/dev/null
}
allows_post_only() { grep -qix $'allow: POST\r' "$WORK/api.head"; }
# no_extension HOST KEY NAME: GET /v1/events and /v1/webhooks/we_x are 404
# route_not_found; GET /v1/webhooks is 405 with Allow: POST (its one method of the six).
no_extension() {
    local path
    for path in /v1/events /v1/webhooks/we_x; do
        check "$3: GET $path is 404 route_not_found (no extension)" \
            answers 404 GET "$1" "$2" "$path" route_not_found
    done
    check "$3: GET /v1/webhooks is 405 method_not_allowed (no extension)" \
        answers 405 GET "$1" "$2" /v1/webhooks method_not_allowed
    check "$3: ... with Allow: POST" allows_post_only
}
check "market.env turns no extension on" bash -c "! grep -q '^MARKET_API_EXTENSIONS=' /etc/market/market.env"
no_extension 127.0.0.1 "$KEY" "the default site"

download=$(curl -s -H "Authorization: Bearer $KEY" "$BASE/v1/orders?limit=1" | jq -r '.data[0].downloads[0].id // empty')
check "the order's download id ($download)" test -n "$download"
link=$(curl -s -X POST -H "Authorization: Bearer $KEY" "$BASE/v1/downloads/$download/link" | jq -r '.url // empty')
check "a download link minted ($link)" test -n "$link"
curl -s -o "$WORK/downloaded" -w '%{http_code}' "$link" >"$WORK/download.status"
check "the file downloaded through nginx, byte for byte" bash -c \
    "[ \"\$(cat '$WORK/download.status')\" = 200 ] && cmp -s '$WORK/downloaded' '/var/lib/market/files/$FILE_PATH'"

health() { curl -s -o "$WORK/health.json" -w '%{http_code}' "$BASE/healthz"; }
check "/healthz 200 {\"status\":\"ok\"}" bash -c "[ \"\$(curl -s -o '$WORK/h' -w '%{http_code}' '$BASE/healthz')\" = 200 ] && jq -e '.status == \"ok\"' '$WORK/h'"
pg pg_ctl stop -D "$WORK/pg" -m fast -w -s
check "/healthz 503 service_unavailable with PostgreSQL stopped" bash -c \
    "[ \"\$(curl -s -o '$WORK/h' -w '%{http_code}' '$BASE/healthz')\" = 503 ] && jq -e '.error.code == \"service_unavailable\"' '$WORK/h'"
pg pg_ctl start -D "$WORK/pg" -l "$WORK/log/postgresql.log" -w -t 60 -s \
    -o "-p $PGPORT -k $WORK/run -c listen_addresses=''"
code=''
for ((i = 0; i < 50; i++)); do
    code=$(health)
    [ "$code" = 200 ] && break
    sleep 0.1
done
check "/healthz 200 again once PostgreSQL is back" test "$code" = 200

# A worker whose connection failed while PostgreSQL was down waits DB_RETRY_MS (0.2 s)
# before it tries again, and the scrape may reach it within that: scrape until a worker
# says the database is up (each does within a fraction of a second), at most 5 s.
for ((i = 0; i < 20; i++)); do
    curl -s -D "$WORK/metrics.head" -o "$WORK/metrics" "$BASE/metrics"
    grep -qx 'market_database_up 1' "$WORK/metrics" && break
    sleep 0.25
done
check "/metrics is the Prometheus text format, and parses" node --input-type=module -e "
import { readFileSync } from 'node:fs';
import { parsePrometheus, value } from '$ROOT/tests/e2e/fixtures/prometheus.mjs';
const head = readFileSync('$WORK/metrics.head', 'utf8');
if (!/^content-type: text\/plain; version=0\.0\.4/im.test(head)) throw new Error('content type: ' + head);
const m = parsePrometheus(readFileSync('$WORK/metrics', 'utf8'));
const need = (name, labels, test) => {
  const v = value(m, name, labels);
  if (!test(v)) throw new Error(name + JSON.stringify(labels) + ' = ' + v);
};
need('market_build_info', { version: '$VERSION', host: m.get('market_build_info').samples[0].labels.host }, (v) => v === 1);
need('market_api_workers', {}, (v) => v === 2);
need('market_http_requests_total', { route: 'products_list', status: '200' }, (v) => v >= 1);
need('market_http_requests_total', { route: 'file', status: '200' }, (v) => v >= 1);
need('market_db_reconnects_total', {}, (v) => v >= 1);
need('market_database_up', {}, (v) => v === 1);
need('market_webhook_deliveries', { status: 'pending' }, (v) => v >= 0);
console.log(m.size + ' families');
"

# The per-address limits, tuned down as an administrator would (the rate in conf.d, the
# burst in the snippet, then a reload): 1 request a second and a burst of 5. Of 20
# downloads at once from 127.0.0.1, the first 6 pass and the rest are the API's JSON 429.
sed -i 's|rate=100r/s;|rate=1r/s;|' /etc/nginx/conf.d/market.conf
sed -i 's|burst=1000 nodelay;|burst=5 nodelay;|' /etc/nginx/snippets/market.conf
"$NGINX" "${NGINX_ARGS[@]}" -s reload
# A reload is done once the old workers are gone: wait until a second has passed.
sleep 1.5
for ((i = 0; i < 20; i++)); do
    curl -s -o "$WORK/limited.json" -D "$WORK/limited.head" -w '%{http_code}\n' "$link"
done >"$WORK/limited.codes"
passed=$(grep -cx 200 "$WORK/limited.codes")
limited=$(grep -cx 429 "$WORK/limited.codes")
# 6 pass at once; a slow machine may let one more through for each second the 20 took.
check "limit_req per address: 20 downloads at once, $passed × 200 (6 or a few more) and the rest 429 ($limited)" \
    test "$passed" -ge 6 -a "$passed" -le 8 -a $((passed + limited)) = 20
check "the 429 is the API's JSON error, rate_limited, with Retry-After: 1" bash -c \
    "jq -e '.error.type == \"rate_limit_error\" and .error.code == \"rate_limited\"' '$WORK/limited.json' >/dev/null &&
     grep -qi '^retry-after: 1' '$WORK/limited.head'"
# Every header docs/openapi.json marks required on a 429, with nginx's figures (the keys'
# limit of conf.d/market.conf's map, the packaged 600; nothing left; free in a second).
check "the 429 has X-RateLimit-Limit: 600, -Remaining: 0, -Reset: 1, X-Request-Id and JSON" bash -c \
    "grep -qi '^x-ratelimit-limit: 600[[:space:]]*\$' '$WORK/limited.head' &&
     grep -qi '^x-ratelimit-remaining: 0[[:space:]]*\$' '$WORK/limited.head' &&
     grep -qi '^x-ratelimit-reset: 1[[:space:]]*\$' '$WORK/limited.head' &&
     grep -qi '^x-request-id: [A-Za-z0-9._-]' '$WORK/limited.head' &&
     grep -qi '^content-type: application/json; charset=utf-8[[:space:]]*\$' '$WORK/limited.head'"

# No log holds the download link's token: nginx's access log (where the snippet writes the
# files location: /var/log/nginx/access.log), its error log (not even the limit_req
# rejections above, which nginx logs with the request line), the services' logs.
TOKEN=${link##*/}
sleep 0.5
check "nginx's access log has the download as /files/<token>" \
    grep -q '"GET /files/<token> HTTP/1.1" 200 ' /var/log/nginx/access.log
check "the download's token is in no log" bash -c \
    "! grep -rsqF -- '$TOKEN' '$WORK/log' /var/log/nginx/access.log /var/log/nginx/error.log"

# --- 5. many sites on one host --------------------------------------------------------------------
# Two sites over two databases of the cluster, each with a role of its own, created as an
# administrator would, on nginx's port under their own server names.
for site in "${SITES[@]}"; do
    if ! pg createuser -h "$WORK/run" -p "$PGPORT" "market-$site" ||
        ! pg createdb -h "$WORK/run" -p "$PGPORT" -O "market-$site" "$site"; then
        give_up "the database of site $site"
    fi
done
SITES_MADE=1
check "the site templates are installed" test -f /usr/share/market/site.env -a -f /usr/share/market/nginx-site.conf
site_create() {
    local site=$1
    shift
    market-admin site create "$site" --db "host=$WORK/run port=$PGPORT dbname=$site user=market-$site" \
        --server-name "$site.test www.$site.test" --listen "127.0.0.1:$PORT" "$@" >"$WORK/log/site-$site.log" 2>&1
}
check "market-admin site create shop1 (2 workers, CPUQuota 50%, MemoryMax 256M)" \
    site_create shop1 --workers 2 --cpu-quota 50% --memory-max 256M
# shop-2 turns the extension on, shop1 keeps the default (the specification's six routes).
check "market-admin site create shop-2 (1 worker, --extensions webhook-management)" \
    site_create shop-2 --workers 1 --extensions webhook-management
check "site create prints the three commands that start it" bash -c "
    grep -qx '  systemctl enable --now market-api@shop1.socket market-api@shop1.service market-webhookd@shop1.service' '$WORK/log/site-shop1.log' &&
    grep -qx '  ln -s /etc/nginx/sites-available/market-shop1.conf /etc/nginx/sites-enabled/' '$WORK/log/site-shop1.log' &&
    grep -qx '  nginx -t && systemctl reload nginx' '$WORK/log/site-shop1.log'"
check "site create says systemd is not running instead of calling systemctl" \
    grep -q '^systemd is not running: no daemon-reload' "$WORK/log/site-shop1.log"
out=$(market-admin site create shop-2 --db dbname=x --server-name x.test 2>&1)
rc=$?
check "site create refuses an existing site (exit $rc: $out)" bash -c "[ $rc = 1 ] && grep -q 'site shop-2 exists' <<<'$out'"
for name in default ../etc Shop 'a;b' -x; do
    market-admin site create "$name" --db dbname=x --server-name x.test >/dev/null 2>&1
    check "site create refuses the name '$name' (exit 2)" test $? = 2
done
check "site create refuses --server-name 'a;b' (exit 2)" bash -c \
    "market-admin site create shop3 --db dbname=x --server-name 'a;b' 2>/dev/null; [ \$? = 2 ]"
out=$(market-admin site create shop3 --db dbname=x --server-name x.test --extensions webhook-management,frob 2>&1)
rc=$?
check "site create refuses an unknown extension (exit $rc: $out)" bash -c \
    "[ $rc = 2 ] && grep -qx 'market-admin: site create: --extensions: unknown extension \"frob\" (known: webhook-management)' <<<'$out'"
check "site create made no user for a refused site" bash -c "! getent passwd market-shop3"
check "site create wrote nothing for a refused site" bash -c \
    "! ls /etc/market/sites/shop3.env /etc/market/sites/shop3.secret /etc/nginx/sites-available/market-shop3.conf 2>/dev/null | grep -q ."

for site in "${SITES[@]}"; do
    check "the user market-$site with its own group" test "$(id -gn "market-$site" 2>/dev/null)" = "market-$site"
    for f in "$site.env" "$site.secret"; do
        check "/etc/market/sites/$f is 0640 root:market-$site" \
            test "$(stat -c '%a %U:%G' "/etc/market/sites/$f")" = "640 root:market-$site"
    done
    check "site $site: its files folder is 2750 market-$site:www-data" \
        test "$(stat -c '%a %U:%G' "/var/lib/market/sites/$site")" = "2750 market-$site:www-data"
    check "site $site: the schema is there" test "$(pg psql -X -A -t -h "$WORK/run" -p "$PGPORT" \
        -d "$site" -c 'SELECT count(*) FROM schema_migrations')" = "$(find "$ROOT/sql/migrations" -maxdepth 1 -name '*.sql' | wc -l)"
done
check "the two sites' secrets differ" bash -c "! cmp -s /etc/market/sites/shop1.secret /etc/market/sites/shop-2.secret"
check "site shop1's settings name its database, secret, files and metrics" bash -c "
    grep -qx 'MARKET_DB=\"host=$WORK/run port=$PGPORT dbname=shop1 user=market-shop1\"' /etc/market/sites/shop1.env &&
    grep -qx 'MARKET_SECRET_FILE=\"/etc/market/sites/shop1.secret\"' /etc/market/sites/shop1.env &&
    grep -qx 'MARKET_FILES_ROOT=\"/var/lib/market/sites/shop1\"' /etc/market/sites/shop1.env &&
    grep -qx 'MARKET_METRICS_FILE=\"/run/market-api-shop1/metrics\"' /etc/market/sites/shop1.env &&
    grep -qx 'MARKET_WORKERS=\"2\"' /etc/market/sites/shop1.env"
check "site shop1 (no --extensions) turns no extension on: the template's commented default" bash -c "
    ! grep -q '^MARKET_API_EXTENSIONS=' /etc/market/sites/shop1.env &&
    grep -qx '#MARKET_API_EXTENSIONS=' /etc/market/sites/shop1.env"
check "site shop-2's settings turn webhook-management on, once" bash -c "
    [ \"\$(grep -c '^#\\?MARKET_API_EXTENSIONS=' /etc/market/sites/shop-2.env)\" = 1 ] &&
    grep -qx 'MARKET_API_EXTENSIONS=\"webhook-management\"' /etc/market/sites/shop-2.env"
check "site shop-2's units run in market-sites-shop_2.slice (a hyphen is a level of slices)" bash -c "
    [ -f /etc/systemd/system/market-sites-shop_2.slice ] &&
    grep -qx 'Slice=market-sites-shop_2.slice' /etc/systemd/system/market-api@shop-2.service.d/site.conf"
check "site shop1's slice has its limits" bash -c "
    grep -qx 'CPUQuota=50%' /etc/systemd/system/market-sites-shop1.slice &&
    grep -qx 'MemoryMax=256M' /etc/systemd/system/market-sites-shop1.slice"
for unit in market-api market-webhookd market-migrate; do
    check "$unit@shop1.service runs in the site's slice (drop-in)" \
        grep -qx 'Slice=market-sites-shop1.slice' "/etc/systemd/system/$unit@shop1.service.d/site.conf"
done
# Isolation: one site's user reads its own secret, and nothing of the other site's.
check "market-shop1 reads its own secret" runuser -u market-shop1 -- test -r /etc/market/sites/shop1.secret
for f in /etc/market/sites/shop-2.secret /etc/market/sites/shop-2.env; do
    check "market-shop1 cannot read $f" bash -c "! runuser -u market-shop1 -- cat '$f' >/dev/null 2>&1"
done
check "market-shop1 cannot list site shop-2's files" bash -c "! runuser -u market-shop1 -- ls /var/lib/market/sites/shop-2 >/dev/null 2>&1"
check "market-shop-2 cannot read /etc/market/sites/shop1.secret" bash -c \
    "! runuser -u market-shop-2 -- cat /etc/market/sites/shop1.secret >/dev/null 2>&1"
check "market-shop1 cannot read the default site's secret" bash -c \
    "! runuser -u market-shop1 -- cat /etc/market/secret >/dev/null 2>&1"
# The databases: peer authentication lets each system user log in as its own role (and
# no other), and 019_database_connect.sql (run by site create as the site's user, by
# market-migrate as market) left CONNECT and TEMPORARY to each database's owner alone: a
# site's role is refused by every database but its own, the default site's role market
# by every site's, so no site sends NOTIFY market_auth (its caches emptied) or
# market_webhooks into another.
db_as() { # USER DB SQL: psql as the system user USER into DB; its output and errors
    runuser -u "$1" -- psql -X -q -A -t -v ON_ERROR_STOP=1 -h "$WORK/run" -p "$PGPORT" -d "$2" -c "$3" 2>&1
}
declare -A DB_OF=([market]=market [market-shop1]=shop1 [market-shop-2]=shop-2)
for db in "${DB_OF[@]}"; do
    owner=$(pg psql -X -A -t -h "$WORK/run" -p "$PGPORT" -d postgres -c "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '$db'")
    got=$(pg psql -X -A -t -h "$WORK/run" -p "$PGPORT" -d postgres -c "SELECT string_agg(rolname, ',' ORDER BY rolname)
        FROM pg_roles WHERE NOT rolsuper AND (has_database_privilege(oid, '$db', 'CONNECT') OR has_database_privilege(oid, '$db', 'TEMPORARY'))")
    check "the database $db: CONNECT and TEMPORARY for its owner $owner alone ($got)" test "$got" = "$owner"
done
for user in "${!DB_OF[@]}"; do
    for db in "${DB_OF[@]}"; do
        out=$(db_as "$user" "$db" 'NOTIFY market_auth; NOTIFY market_catalogue; NOTIFY market_webhooks; SELECT 1')
        if [ "$db" = "${DB_OF[$user]}" ]; then
            if [ "$out" = 1 ]; then ok "$user connects to its own database $db"; else bad "$user connects to its own database $db" "$out"; fi
        elif grep -q "permission denied for database \"$db\"" <<<"$out" && ! grep -qx 1 <<<"$out"; then
            ok "$user is refused by the database $db: its NOTIFY never reaches it"
        else
            bad "$user is refused by the database $db" "$out"
        fi
    done
done
out=$(runuser -u market-shop1 -- psql -X -A -t -h "$WORK/run" -p "$PGPORT" -U market-shop-2 -d shop-2 -c 'SELECT 1' 2>&1)
if grep -q 'Peer authentication failed for user "market-shop-2"' <<<"$out"; then
    ok "market-shop1 cannot log in as the role market-shop-2 (peer authentication)"
else
    bad "market-shop1 cannot log in as the role market-shop-2" "$out"
fi

# The template units, through an instance: verify (with the site's drop-ins and slice)
# and the sandbox's exposure.
INSTANCES=(market-api@shop1.socket market-api@shop1.service market-webhookd@shop1.service
    market-migrate@shop1.service market-sites-shop1.slice market-sites.slice)
verify=$(systemd-analyze verify "${INSTANCES[@]}" 2>&1)
verify_rc=$?
printf '%s\n' "${verify:-systemd-analyze verify: no message}" | sed 's/^/      verify: /'
if [ "$verify_rc" = 0 ] && [ -z "$verify" ]; then ok "systemd-analyze verify of site shop1's instances: clean"; else bad "systemd-analyze verify (instances)" "$verify"; fi
for unit in market-api@shop1 market-webhookd@shop1 market-migrate@shop1; do
    exposure=$(systemd-analyze security --offline=true --no-pager "$unit.service" 2>&1 |
        sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
    check "$unit.service: systemd-analyze security exposure ${exposure:-?} (at most 2.0)" \
        awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 2.0) }'
done
list=$(market-admin site list)
printf '%s\n' "$list" | sed 's/^/      site list: /'
check "site list: both sites, state unknown without systemd, their limits" bash -c "
    grep -qP '^shop1\tunknown \(systemd not running\)\tunknown\tshop1.test www.shop1.test\t$WORK/run/shop1\t2\t50%\t256M\tdisabled\t-\$' <<<'$list' &&
    grep -qP '^shop-2\tunknown \(systemd not running\)\t.*\twebhook-management\$' <<<'$list'"
check "site list: the default site first" bash -c "grep -qP '^default\tunknown \(systemd not running\)\tunknown\t-\t$WORK/run/market\t2\t-\t-\tsnippet\t-\$' <<<'$list'"
check "site list --json" bash -c "market-admin site list --json |
    jq -e 'length == 3 and .[0].name == \"default\" and map(.name) == [\"default\", \"shop-2\", \"shop1\"] and
        .[1].cpu_quota == null and .[2].cpu_quota == \"50%\" and
        .[0].extensions == null and .[1].extensions == \"webhook-management\" and .[2].extensions == null' >/dev/null"

# Each site's units from the templates, %i expanded as systemd would: the socket (made by
# spawn-fcgi as the .socket describes), the pool and the drainer, as the site's user.
mkdir -p "$WORK/units"
instance() { sed "s/%i/$2/g" "/lib/systemd/system/$1" >"$WORK/units/${1/@/@$2}"; echo "$WORK/units/${1/@/@$2}"; }
declare -A SITE_POOL
for site in "${SITES[@]}"; do
    socket_unit=$(instance market-api@.socket "$site")
    api_unit=$(instance market-api@.service "$site")
    webhookd_unit=$(instance market-webhookd@.service "$site")
    sock=$(unit_value "$socket_unit" ListenStream)
    start_units "$socket_unit" "$api_unit" "$webhookd_unit" "-$site"
    SITE_POOL[$site]=$POOL_PID
    check "site $site: its socket $sock is $(stat -c '%a %U:%G' "$sock" 2>/dev/null)" \
        test "$(stat -c '%a %U:%G' "$sock" 2>/dev/null)" = "660 market-$site:www-data"
done
sleep 0.5
for site in "${SITES[@]}"; do
    want=$(sed -n 's/^MARKET_WORKERS="\(.*\)"$/\1/p' "/etc/market/sites/$site.env")
    workers=$(pgrep -P "${SITE_POOL[$site]}" -u "market-$site" -x market-api | wc -l)
    check "site $site: multiwatch runs $want workers as market-$site ($workers)" test "$workers" = "$want"
done
# connect(2) to a socket as a user: refused without write permission on it.
can_connect() {
    runuser -u "$1" -- /usr/bin/python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$2" 2>/dev/null
}
check "www-data (nginx's workers) can connect to site shop-2's socket" can_connect www-data /run/market/shop-2/api.sock
check "market-shop-2 can connect to its own socket" can_connect market-shop-2 /run/market/shop-2/api.sock
if can_connect market-shop1 /run/market/shop-2/api.sock; then
    bad "market-shop1 connects to site shop-2's socket"
else
    ok "market-shop1 cannot connect to site shop-2's socket"
fi
check "site shop-2's drainer runs as market-shop-2" bash -c "pgrep -u market-shop-2 -x market-webhookd >/dev/null"

# nginx with the sites' files beside the default site: the administrator's include (here
# in this private configuration instead of sites-enabled), then a reload.
# The per-address limits back as packaged (lowered above), since the sites share their
# zones; then the sites' servers after the plain server, which stays the default one of
# the port.
sed -i 's|rate=1r/s;|rate=100r/s;|' /etc/nginx/conf.d/market.conf
sed -i 's|burst=5 nodelay;|burst=1000 nodelay;|' /etc/nginx/snippets/market.conf
sed -i '$i\    include /etc/nginx/sites-available/market-shop1.conf;\n    include /etc/nginx/sites-available/market-shop-2.conf;' \
    "$WORK/nginx/nginx.conf"
check "nginx -t with the two sites' files" "$NGINX" -t -q "${NGINX_ARGS[@]}"
"$NGINX" "${NGINX_ARGS[@]}" -s reload
sleep 1.5
# market-admin as a site's administrator runs it: its settings, as its user.
site_admin() {
    local site=$1
    shift
    # shellcheck disable=SC2016  # expanded by that sh
    runuser -u "market-$site" -- env -i PATH="$UNIT_PATH" \
        sh -c 'set -a; . "$0"; set +a; exec market-admin "$@"' "/etc/market/sites/$site.env" "$@"
}
declare -A SITE_KEY SITE_RW_KEY
for site in "${SITES[@]}"; do
    # The ids without the hyphen, which an id may not hold.
    doc=$(jq -n --arg s "${site//-/_}" --arg r "$RUN" '{mode: "test",
        accounts: [{id: "acct_\($s)_\($r)", email: "\($s)@example.com"}],
        sellers: [{id: "\($s)-\($r)", account: "acct_\($s)_\($r)", name: "Shop \($s)"}],
        products: [{id: "prod_\($s)_\($r)", seller: "\($s)-\($r)", title: "Font of \($s)", description: "d",
            category: "fonts", currency: "USD", status: "published",
            tiers: [{id: "tier_\($s)_\($r)", name: "Personal", price: 5, licence: {}}], files: []}]}')
    check "site $site: market-admin import as market-$site" site_admin "$site" import - <<<"$doc"
    SITE_KEY[$site]=$(site_admin "$site" key create --account "acct_${site//-/_}_$RUN" --mode test --access read-only) ||
        give_up "site $site: key create"
    SITE_RW_KEY[$site]=$(site_admin "$site" key create --account "acct_${site//-/_}_$RUN" --mode test --access read-write) ||
        give_up "site $site: key create (read-write)"
done
# products HOST KEY: the ids of the products a list answers, or the HTTP status.
products() {
    curl -s -H "Host: $1" -H "Authorization: Bearer $2" -w '\n%{http_code}' "$BASE/v1/products?limit=10" |
        { mapfile -t lines; code=${lines[-1]}; if [ "$code" = 200 ]; then printf '%s\n' "${lines[@]:0:${#lines[@]}-1}" | jq -r '[.data[].id] | join(",")'; else echo "$code"; fi; }
}
for site in "${SITES[@]}"; do
    got=$(products "$site.test" "${SITE_KEY[$site]}")
    check "$site.test serves site $site's own catalogue ($got)" test "$got" = "prod_${site//-/_}_$RUN"
    got=$(products "www.$site.test" "${SITE_KEY[$site]}")
    check "www.$site.test too ($got)" test "$got" = "prod_${site//-/_}_$RUN"
    check "$site.test: /healthz 200 from site $site's pool" \
        test "$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $site.test" "$BASE/healthz")" = 200
done
# The extension per site: on for shop-2 only (--extensions), off for shop1 as by default.
no_extension shop1.test "${SITE_RW_KEY[shop1]}" "site shop1"
check "site shop-2 (webhook-management): GET /v1/webhooks is 200" \
    answers 200 GET shop-2.test "${SITE_RW_KEY[shop-2]}" /v1/webhooks
check "... the account's subscriptions: none yet" jq -e '.data == []' "$WORK/api.json"
check "site shop-2 (webhook-management): GET /v1/events is 200" \
    answers 200 GET shop-2.test "${SITE_RW_KEY[shop-2]}" /v1/events
check "site shop-2: a read-only key lacks webhooks:read (403 insufficient_scope)" \
    answers 403 GET shop-2.test "${SITE_KEY[shop-2]}" /v1/webhooks insufficient_scope
check "a key of site shop1 is refused by site shop-2 (401)" test "$(products shop-2.test "${SITE_KEY[shop1]}")" = 401
check "a key of site shop-2 is refused by site shop1 (401)" test "$(products shop1.test "${SITE_KEY[shop-2]}")" = 401
check "a key of site shop1 is refused by the default site (401)" test "$(products 127.0.0.1 "${SITE_KEY[shop1]}")" = 401
check "the default site's key is refused by site shop1 (401)" test "$(products shop1.test "$KEY")" = 401
check "site shop1's requests are in its own nginx log" grep -q '"GET /v1/products?limit=10 HTTP/1.1" 200 ' \
    /var/log/nginx/market-shop1.access.log
check "site shop1's nginx logs are 0640 root:adm" bash -c \
    "[ \"\$(stat -c '%a %U:%G' /var/log/nginx/market-shop1.access.log /var/log/nginx/market-shop1.error.log | sort -u)\" = '640 root:adm' ]"
check "market-shop-2 cannot read site shop1's nginx log" bash -c \
    "! runuser -u market-shop-2 -- cat /var/log/nginx/market-shop1.access.log >/dev/null 2>&1"

# An upgrade: a new version's migration, and site shop-2's database refusing connections.
# The package's own postinst, run as dpkg runs it for an upgrade from 0.9, runs it for
# every site (market-admin site upgrade): shop1 migrated, shop-2 named as failed, and the
# configuration still succeeds.
cat >/usr/share/market/sql/999_package_check.sql <<'EOF'
CREATE TABLE package_check_upgrade (id int);
EOF
pg psql -X -q -h "$WORK/run" -p "$PGPORT" -d postgres -c 'ALTER DATABASE "shop-2" ALLOW_CONNECTIONS false'
DPKG_MAINTSCRIPT_PACKAGE=market DPKG_MAINTSCRIPT_NAME=postinst \
    /var/lib/dpkg/info/market.postinst configure 0.9 >"$WORK/log/postinst-upgrade.log" 2>&1
postinst_rc=$?
sed 's/^/      postinst: /' "$WORK/log/postinst-upgrade.log" | grep -v '^      postinst: applied\|vacuumed' | head -n 20
check "the postinst of an upgrade succeeds though one site's migrations fail" test "$postinst_rc" = 0
check "it says site shop1 migrated and site shop-2 failed" bash -c "
    grep -q '^site shop1: migrated' '$WORK/log/postinst-upgrade.log' &&
    grep -q '^site shop-2: the migrations failed' '$WORK/log/postinst-upgrade.log' &&
    grep -q 'the migrations of these sites failed (see above): shop-2\$' '$WORK/log/postinst-upgrade.log'"
table() { pg psql -X -A -t -h "$WORK/run" -p "$PGPORT" -d "$1" -c "SELECT to_regclass('package_check_upgrade') IS NOT NULL"; }
check "site shop1's database has the new migration" test "$(table shop1)" = t
check "the default site's database was not touched by the sites' upgrade" test "$(table market)" = f
upgrade_out=$(market-admin site upgrade 2>&1)
rc=$?
check "market-admin site upgrade: exit $rc, naming shop-2 only" bash -c "
    [ $rc = 1 ] && grep -q 'failed (see above): shop-2\$' <<<'$upgrade_out' && grep -q '^site shop1: migrated' <<<'$upgrade_out'"
pg psql -X -q -h "$WORK/run" -p "$PGPORT" -d postgres -c 'ALTER DATABASE "shop-2" ALLOW_CONNECTIONS true'
check "once its database answers, site upgrade shop-2 migrates it" market-admin site upgrade shop-2
check "site shop-2's database has the new migration" test "$(table shop-2)" = t
rm -f /usr/share/market/sql/999_package_check.sql

# One site removed: its units' state and nginx file go, its settings stay (without
# --purge), and the other site still serves.
check "market-admin site remove shop1" bash -c "market-admin site remove shop1 >'$WORK/log/site-remove.log' 2>&1"
check "site remove says systemd is not running" grep -q '^systemd is not running' "$WORK/log/site-remove.log"
check "removed: site shop1's slice, drop-ins and nginx file are gone" bash -c \
    "! ls /etc/systemd/system/market-sites-shop1.slice /etc/systemd/system/market-api@shop1.service.d \
        /etc/nginx/sites-available/market-shop1.conf 2>/dev/null | grep -q ."
check "removed: site shop1's settings and secret stay" test -f /etc/market/sites/shop1.env -a -f /etc/market/sites/shop1.secret
check "site list: shop1 removed (settings kept)" bash -c "market-admin site list | grep -qP '^shop1\tremoved \(settings kept\)\t'"
stop_pid "${SITE_POOL[shop1]}"
sed -i '/market-shop1.conf;/d' "$WORK/nginx/nginx.conf"
"$NGINX" "${NGINX_ARGS[@]}" -s reload
sleep 1.5
got=$(products shop-2.test "${SITE_KEY[shop-2]}")
check "site shop-2 still serves its catalogue ($got)" test "$got" = "prod_shop_2_$RUN"
check "market-admin site remove shop1 --purge: its settings and secret go" bash -c \
    "market-admin site remove shop1 --purge >/dev/null && [ ! -e /etc/market/sites/shop1.env ] && [ ! -e /etc/market/sites/shop1.secret ]"
check "the database of site shop1 stays" test "$(pg psql -X -A -t -h "$WORK/run" -p "$PGPORT" -d shop1 -c 'SELECT 1')" = 1

# --- 6. remove, then purge -------------------------------------------------------------------------
stop_started
pg pg_ctl stop -D "$WORK/pg" -m fast -w -s && PG_STARTED=0
if timed "apt-get remove" apt-get remove -y -q market >>"$WORK/log/apt.log" 2>&1; then ok "apt-get remove"; else bad "apt-get remove" "$(tail -n 20 "$WORK/log/apt.log")"; fi
check "removed: the programs are gone" test ! -e /usr/sbin/market-api
check "removed: dpkg keeps the configuration" test "$(dpkg-query -W -f='${Status}' market)" = "deinstall ok config-files"
check "removed: /etc/market/market.env stays" test -f /etc/market/market.env
check "removed: the secret stays" test -f /etc/market/secret
if timed "apt-get purge" apt-get purge -y -q market >>"$WORK/log/apt.log" 2>&1; then ok "apt-get purge"; else bad "apt-get purge" "$(tail -n 20 "$WORK/log/apt.log")"; fi
check "purged: /etc/market is gone" test ! -e /etc/market
check "purged: the nginx files are gone" test ! -e /etc/nginx/snippets/market.conf -a ! -e /etc/nginx/conf.d/market.conf \
    -a ! -e /etc/nginx/snippets/market-sites-fastcgi.conf
check "purged: the sites' settings, nginx file, slice and drop-ins are gone" bash -c \
    "! ls /etc/nginx/sites-available/market-shop-2.conf /etc/systemd/system/market-sites-shop_2.slice \
        /etc/systemd/system/market-api@shop-2.service.d 2>/dev/null | grep -q ."
check "purged: dpkg forgets the package" bash -c "! dpkg-query -W -f='\${Status}' market 2>/dev/null | grep -q 'installed\|config-files'"

tally
