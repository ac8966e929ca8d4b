#!/usr/bin/env bash
# tests/webhooks/run.sh: the event triggers of the webhook outbox (which events a write
# to orders, reviews and payouts records, and for which subscriptions) against a real
# PostgreSQL: what `make triggers-test` runs.
#
# Creates a scratch cluster in a temporary directory on a free port of 127.0.0.1 (as the
# user market when run as root, since PostgreSQL refuses root; created like tools/stack
# does if missing), applies every migration with market-admin migrate, runs
# triggers_test.sql with psql, then stops that cluster and removes the directory.
# triggers_test.sql stops at its first failing assertion; the last line is
# "triggers: N passed, M failed" and the exit status is 0 only when M is 0.
#
#   MARKET_ADMIN   the binary that applies the migrations (default: build/market-admin,
#                  built if needed)
#
# Takes a few seconds, most of them initdb.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../.." && pwd -P)
# shellcheck source=tools/testlib.sh
. "$ROOT/tools/testlib.sh"

say() { printf 'triggers: %s\n' "$*" >&2; }

if [ -z "${MARKET_ADMIN:-}" ]; then
    make -s -C "$ROOT" build/market-admin >/dev/null
    MARKET_ADMIN=$ROOT/build/market-admin
fi
PG_BIN=/usr/lib/postgresql/15/bin
[ -x "$PG_BIN/initdb" ] || {
    say "PostgreSQL 15 server binaries not found in $PG_BIN (run: tools/install-deps)"
    exit 1
}

OWNER=''
if [ "$(id -u)" = 0 ]; then
    OWNER=market
    id -u market >/dev/null 2>&1 ||
        useradd --system --user-group --home-dir /nonexistent --no-create-home \
            --shell /usr/sbin/nologin --comment "market stack (PostgreSQL)" market
fi
as_owner() { # from /: the owner may not be allowed into the current directory
    if [ -n "$OWNER" ]; then (cd / && runuser -u "$OWNER" -- "$@"); else (cd / && "$@"); fi
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/market-triggers.XXXXXX")
chmod 755 "$WORK"
cleanup() {
    if [ -f "$WORK/pg/postmaster.pid" ]; then
        as_owner "$PG_BIN/pg_ctl" stop -D "$WORK/pg" -m immediate -s >/dev/null 2>&1 || true
    fi
    rm -rf -- "$WORK"
}
trap cleanup EXIT

mkdir -m 700 "$WORK/pg"
[ -z "$OWNER" ] || chown "$OWNER" "$WORK/pg"
if ! as_owner "$PG_BIN/initdb" -D "$WORK/pg" -U postgres -E UTF8 --locale=C.UTF-8 \
    --auth=trust --no-sync >"$WORK/initdb.log" 2>&1; then
    cat "$WORK/initdb.log" >&2
    exit 1
fi
PORT=$(free_port) || {
    say "no free port"
    exit 1
}
if ! as_owner "$PG_BIN/pg_ctl" start -D "$WORK/pg" -l "$WORK/pg/log.txt" -w -s \
    -o "-p $PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c fsync=off"; then
    cat "$WORK/pg/log.txt" >&2
    exit 1
fi

CONN="host=127.0.0.1 port=$PORT user=postgres"
"$PG_BIN/psql" -X -q -d "$CONN dbname=postgres" -c "CREATE DATABASE triggers"
# The schema as a deployment gets it: every migration, applied by market-admin.
MARKET_DB="$CONN dbname=triggers" MARKET_MIGRATIONS_DIR="$ROOT/sql/migrations" \
    "$MARKET_ADMIN" migrate >/dev/null

# Each assertion that holds says "NOTICE:  ok LABEL"; the first that does not raises
# "FAIL LABEL: got X, want Y", and ON_ERROR_STOP makes psql exit non-zero there.
status=0
"$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -d "$CONN dbname=triggers" \
    -f "$ROOT/tests/webhooks/triggers_test.sql" >"$WORK/out.txt" 2>&1 || status=$?
passed=$(grep -c 'NOTICE:  ok ' "$WORK/out.txt" || true)
if [ "$status" = 0 ] && grep -q '^all trigger checks passed$' "$WORK/out.txt"; then
    echo "triggers: $passed passed, 0 failed"
    exit 0
fi
grep -v 'NOTICE:  ok ' "$WORK/out.txt" | sed 's/^/    | /' >&2
echo "triggers: $passed passed, 1 failed"
exit 1
