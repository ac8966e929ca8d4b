#!/usr/bin/env bash
# tests/cli/run.sh: the command lines of the three programs (--help, --version, a wrong
# argument, market-admin COMMAND --help), without a database. The last line is
# "N passed, M failed"; the exit status is 0 only when M is 0.
#
#   BIN_DIR   where the programs are (default: build/, built by make cli-test)
set -u

ROOT=$(cd -- "$(dirname -- "$0")/../.." && pwd)
BIN=${BIN_DIR:-$ROOT/build}
VERSION=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$ROOT/debian/changelog")
passed=0
failed=0

ok() { passed=$((passed + 1)); }
bad() {
    failed=$((failed + 1))
    printf 'FAIL: %s\n' "$*"
}

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
for cmd in migrate import seed key refund payout deliveries redeliver; do
    expect "admin $cmd --help" 0 "^Usage: market-admin $cmd" stdout_of "$A" "$cmd" --help
done
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

printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" = 0 ]
