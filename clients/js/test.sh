#!/usr/bin/env bash
# shellcheck disable=SC2317  # cleanup and show_logs run from traps
# clients/js/test.sh: every test of the JavaScript client.
#
#   1. builds the C programs (make all), unless MARKET_JS_SKIP_BUILD=1;
#   2. installs the dev dependencies (TypeScript) from package-lock.json with `npm ci`,
#      skipped when node_modules already matches the lock file, and type-checks the
#      declarations (tsc --noEmit over test/types/usage.ts);
#   3. makes a throwaway CA and a certificate for 127.0.0.1 signed by it;
#   4. starts two stacks with tools/stack in a new temporary directory, on free ports:
#        main: MARKET_API_EXTENSIONS=webhook-management (the calls of contract section 13),
#              MARKET_WEBHOOK_ALLOW_PRIVATE=1, MARKET_WEBHOOK_RETRIES=1s,2s,4s,
#              MARKET_WEBHOOK_CA_FILE=<the CA>
#        rl:   MARKET_RATE_LIMIT=3, MARKET_WEBHOOK_ALLOW_PRIVATE=1, one worker, and no
#              extension: the specification's six routes (the 429 tests, and
#              extension.test.mjs: the section 13 calls fail with the client's 404)
#   5. runs the unit tests (test/unit) and the integration tests (test/integration) in one
#      `node --test` run, which prints the summary;
#   6. always stops both stacks and removes the directory (MARKET_JS_KEEP=1 keeps it).
#
# Exits with the tests' status. Arguments replace the list of test files, e.g.
#   clients/js/test.sh test/integration/webhook.test.mjs
set -euo pipefail

HERE=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd -P)
REPO=$(cd -- "$HERE/../.." && pwd -P)
# shellcheck source=tools/testlib.sh
. "$REPO/tools/testlib.sh"
cd "$HERE"

say() { printf 'clients/js: %s\n' "$*" >&2; }

# A free port: 18100-18199 first, else anywhere in 20000-32767 (tools/testlib.sh).

DIR=$(mktemp -d "${TMPDIR:-/tmp}/market-js.XXXXXX")
status=1
show_logs() {
    local s f
    for s in main rl; do
        for f in api.log webhookd.log nginx-error.log postgresql.log migrate.log; do
            if [ -s "$DIR/$s/log/$f" ]; then
                say "last lines of $DIR/$s/log/$f:"
                tail -n 30 -- "$DIR/$s/log/$f" | sed 's/^/    | /' >&2
            fi
        done
    done
}
cleanup() {
    trap - EXIT INT TERM
    [ "$status" = 0 ] || show_logs
    "$REPO/tools/stack" down --dir "$DIR/rl" || true
    "$REPO/tools/stack" down --dir "$DIR/main" || true
    if [ "${MARKET_JS_KEEP:-0}" = 1 ]; then
        say "kept $DIR"
    else
        rm -rf -- "$DIR"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'status=130; exit 130' INT
trap 'status=143; exit 143' TERM

# The stacks get exactly the MARKET_* settings below, whatever the caller's shell holds
# (a MARKET_DOWNLOAD_BASE_URL or MARKET_RATE_LIMIT of another stack would leak into them).
while IFS= read -r name; do unset "$name"; done < <(compgen -v MARKET_ || true)

# 1. The programs.
if [ "${MARKET_JS_SKIP_BUILD:-0}" != 1 ]; then
    make -s -C "$REPO" all >&2
fi

# 2. TypeScript, then the type check of the declarations.
if [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
    say "dev dependencies up to date"
else
    npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2
fi
say "type-checking index.d.ts with $(node_modules/.bin/tsc --version)"
node_modules/.bin/tsc -p test/types/tsconfig.json

# 3. A throwaway CA and a certificate for 127.0.0.1 (the HTTPS webhook receiver).
tls=$DIR/tls
make_test_tls "$tls" 'market js client test CA' || {
    echo "could not make the test certificates" >&2
    exit 1
}
export TLS_CA=$tls/ca.pem TLS_CERT=$tls/server.pem TLS_KEY=$tls/server.key

# 4. The stacks. Their variables must not leak into each other: each `up` runs with a
# clean MARKET_* set of its own.
PORT=$(free_port 18100-18199) || {
    say "no free port"
    exit 1
}
t0=$SECONDS
main_exports=$(env MARKET_API_EXTENSIONS=webhook-management \
    MARKET_WEBHOOK_ALLOW_PRIVATE=1 MARKET_WEBHOOK_RETRIES=1s,2s,4s \
    MARKET_WEBHOOK_CA_FILE="$TLS_CA" \
    "$REPO/tools/stack" up --dir "$DIR/main" --port "$PORT" --workers 2)
RL_PORT=$(free_port 18100-18199) || {
    say "no free port"
    exit 1
}
# No MARKET_API_EXTENSIONS here: this stack is the default, the specification's six routes.
rl_exports=$(env MARKET_RATE_LIMIT=3 MARKET_WEBHOOK_ALLOW_PRIVATE=1 \
    "$REPO/tools/stack" up --dir "$DIR/rl" --port "$RL_PORT" --workers 1)
say "stacks up in $((SECONDS - t0)) s (main with webhook-management on $PORT, rate limit 3 without extensions on $RL_PORT; dir $DIR)"
eval "$(printf '%s\n' "$rl_exports" | sed -n 's/^export /export RL_/p')"
eval "$main_exports"

# 5. The tests.
if [ $# -gt 0 ]; then
    files=("$@")
else
    files=(test/unit/*.test.mjs test/integration/*.test.mjs)
fi
node_args=(--test)
# Files run side by side so that the rate-limit file's wait for the next minute overlaps
# the others (node 20.10+; older versions run them one after another).
if node --help 2>/dev/null | grep -q -- '--test-concurrency'; then
    node_args+=(--test-concurrency=4)
fi
say "running ${#files[@]} test file(s) with node $(node --version)"
set +e
timeout --foreground -k 10 600 node "${node_args[@]}" "${files[@]}"
status=$?
set -e
if [ "$status" = 124 ]; then say "the tests did not finish within 10 minutes"; fi
exit "$status"
