#!/usr/bin/env bash
# tests/cli/run.sh: the command lines of the three programs (--help, --version, a wrong
# argument, market-admin COMMAND --help), without a database; their man pages (built
# from --help by help2man, and market.env(5) from the settings file) free of roff
# warnings; every setting of lib/settings.c in the settings file and market.env(5); and
# tests/cli/settings.sh (nothing reads a MARKET_* variable but through that table, and
# the README's table is its). The last line is "N passed, M failed"; the exit status is 0
# only when M is 0.
#
#   BIN_DIR   where the programs are (default: build/, built by make cli-test)
set -u

ROOT=$(cd -- "$(dirname -- "$0")/../.." && pwd)
BIN=${BIN_DIR:-$ROOT/build}
VERSION=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$ROOT/debian/changelog")
# shellcheck source=tools/testlib.sh
. "$ROOT/tools/testlib.sh"

# expect NAME STATUS PATTERN COMMAND...: COMMAND exits with STATUS and its stdout and
# stderr together match the extended regular expression PATTERN.
expect() {
    local name=$1 want=$2 pattern=$3 out status
    shift 3
    out=$("$@" 2>&1)
    status=$?
    if [ "$status" != "$want" ]; then
        bad "$name: exit status $status, want $want; output: $(printf '%s' "$out" | head -n 3)"
    elif ! printf '%s\n' "$out" | grep -Eq -- "$pattern"; then
        bad "$name: output does not match /$pattern/: $(printf '%s' "$out" | head -n 3)"
    else
        ok
    fi
}

# Standard output only, for what must not go to stderr.
stdout_of() { "$@" 2>/dev/null; }

[ -n "$VERSION" ] || bad "no version in debian/changelog"
for prog in market-api market-webhookd market-admin; do
    expect "$prog --version" 0 "^$prog ${VERSION//./\\.}\$" "$BIN/$prog" --version
    # help2man reads stdout: the help must be there, with a Usage line and the options.
    expect "$prog --help on stdout" 0 "^Usage: $prog " stdout_of "$BIN/$prog" --help
    expect "$prog --help names the settings' man page" 0 'market\.env\(5\)' "$BIN/$prog" --help
done
for prog in market-api market-webhookd; do
    expect "$prog -h" 0 "^Usage: $prog " "$BIN/$prog" -h
    expect "$prog wrong argument" 2 "^$prog: unexpected argument --bogus \\(see $prog --help\\)\$" \
        "$BIN/$prog" --bogus
    expect "$prog two arguments" 2 "unexpected argument x" "$BIN/$prog" --help x
    # The environment is not read for --help: it works with none of the required settings.
    expect "$prog --help without settings" 0 '^Options:' env -i "$BIN/$prog" --help
done

A=$BIN/market-admin
expect "admin without command" 2 '^Usage: market-admin COMMAND' "$A"
expect "admin unknown command" 2 '^market-admin: unknown command frob \(see market-admin --help\)$' "$A" frob
expect "admin help lists every command" 0 'redeliver EVENT_ID' "$A" help
for cmd in migrate import seed key refund payout deliveries redeliver webhooks site; do
    expect "admin $cmd --help" 0 "^Usage: market-admin $cmd" stdout_of "$A" "$cmd" --help
done
expect "admin site --help shows the four" 0 'site upgrade \[NAME\.\.\.\]' "$A" site --help
expect "admin site create --help is that one" 0 '^Usage: market-admin site create NAME --db' "$A" site create --help
expect "admin site without a command" 2 '^market-admin: site: create, list, remove or upgrade' "$A" site
expect "admin site frob" 2 '^market-admin: site: unknown command frob' "$A" site frob
expect "admin site create without NAME" 2 '^market-admin: site create: NAME is required$' "$A" site create --db x --server-name y
expect "admin site create without --db" 2 '^market-admin: site create: --db is required$' "$A" site create shop1 --server-name y
for name in default ../x Shop1 1a a- a--b a_b abcdefghijklmnopqrstuvwxy ''; do
    expect "admin site create refuses the name '$name'" 2 "^market-admin: site create: invalid site name" \
        "$A" site create "$name" --db x --server-name y
done
expect "admin site create refuses --server-name 'a;b'" 2 'server-name takes host names' \
    "$A" site create shop1 --db x --server-name 'a;b'
expect "admin site create refuses a --db with a quote" 2 'cannot hold a control character' \
    "$A" site create shop1 --db 'dbname="x"' --server-name y
expect "admin site create refuses --cpu-quota 50" 2 'cpu-quota is a share' \
    "$A" site create shop1 --db x --server-name y --cpu-quota 50
for idle in -1 86401 10s ''; do
    expect "admin site create refuses --idle-exit '$idle'" 2 \
        '^market-admin: site create: --idle-exit must be an integer from 0 to 86400$' \
        "$A" site create shop1 --db x --server-name y --idle-exit "$idle"
done
expect "admin site remove refuses the name ../x" 2 'invalid site name' "$A" site remove ../x
expect "admin site upgrade refuses the name a/b" 2 'invalid site name' "$A" site upgrade a/b
expect "admin webhooks --help shows the three" 0 'webhooks delete SUBSCRIPTION_ID' "$A" webhooks --help
expect "admin seed --help after options" 0 '^Usage: market-admin seed --mode' "$A" seed --mode test --help
expect "admin key create --help is that one" 0 '^Usage: market-admin key create --account' "$A" key create --help
if "$A" key create --help | grep -q 'market-admin key rotate'; then
    bad "admin key create --help shows other key commands"
else
    ok
fi
expect "admin key --help shows the four" 0 'key list --account' "$A" key --help
expect "admin help key revoke" 0 '^Usage: market-admin key revoke' "$A" help key revoke
expect "admin help key frob" 2 '^market-admin: key: unknown command frob' "$A" help key frob
expect "admin help frob" 2 '^market-admin: unknown command frob' "$A" help frob
# --help needs no database: it must answer even when MARKET_DB points nowhere.
expect "admin migrate --help without a database" 0 'share/market/sql' \
    env MARKET_DB='host=/nonexistent' "$A" migrate --help

# --- man pages ----------------------------------------------------------------------------
if make -s -C "$ROOT" man >/dev/null 2>"${TMPDIR:-/tmp}/market-cli-man.log"; then
    ok
else
    bad "make man: $(cat "${TMPDIR:-/tmp}/market-cli-man.log")"
fi
MAN=$ROOT/build/dist/man
for page in market-api.8 market-webhookd.8 market-admin.1 market.env.5; do
    warnings=$(LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$MAN/$page" 2>&1)
    if [ -f "$MAN/$page" ] && [ -z "$warnings" ]; then ok; else bad "$page: ${warnings:-missing}"; fi
done
rendered() { LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$MAN/$1" 2>/dev/null; }
expect "market-api(8) has the options" 0 '^ +--version' rendered market-api.8
expect "market-api(8) has the files" 0 '/run/market/api.sock' rendered market-api.8
expect "market-webhookd(8) says how it stops" 0 'SIGTERM' rendered market-webhookd.8
for cmd in migrate import seed 'key create' 'key rotate' 'key revoke' 'key list' refund payout deliveries redeliver \
    'webhooks list' 'webhooks disable' 'webhooks delete' 'site create' 'site list' 'site remove' 'site upgrade'; do
    expect "market-admin(1) documents $cmd" 0 "^ +$cmd" rendered market-admin.1
done

# --- every setting documented, and read only through its table ------------------------------
# lib/settings.c declares every setting; the settings file and market.env(5) are written
# from it: each setting must come out in both, once.
settings=$("$BIN/settings-doc" names)
[ "$(wc -l <<<"$settings")" -ge 20 ] || bad "settings-doc names lists only $(wc -l <<<"$settings") settings"
for name in $settings; do
    count=$(grep -cx "## $name" "$ROOT/build/dist/market.env")
    if [ "$count" = 1 ]; then ok; else bad "$name is described $count times in build/dist/market.env"; fi
    if grep -qE "^#?$name=" "$ROOT/build/dist/market.env"; then ok; else bad "build/dist/market.env has no line $name="; fi
    expect "market.env(5) describes $name" 0 "^ +$name\$" rendered market.env.5
done
if out=$("$ROOT/tests/cli/settings.sh" 2>&1); then ok; else bad "tests/cli/settings.sh" "$out"; fi

tally
