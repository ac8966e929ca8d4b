#!/usr/bin/env bash
# shellcheck disable=SC2317  # cleanup and show_logs run from traps
# clients/python/test.sh: the Python client's tests, unit and integration, against a real
# stack (nginx -> market-api -> PostgreSQL, market-webhookd).
#
#   clients/python/test.sh [unittest arguments]
#
# Builds the programs if needed (make all), makes a throwaway CA and a certificate for
# 127.0.0.1 signed by it, starts a stack (tools/stack up) in a new temporary folder on a
# free port with
#   MARKET_API_EXTENSIONS=webhook-management   (the calls of contract section 13)
#   MARKET_WEBHOOK_ALLOW_PRIVATE=1  MARKET_WEBHOOK_RETRIES=1s,2s,4s
#   MARKET_WEBHOOK_CA_FILE=<the throwaway CA>
# and a second, "plain" one (one worker, its variables exported with the prefix PLAIN_)
# with no MARKET_* setting but MARKET_WEBHOOK_ALLOW_PRIVATE=1: no extension, the
# specification's six routes (tests/test_integration_extension_off.py),
# runs `python3 -m unittest discover -v` in clients/python (or the given arguments, e.g.
# `tests.test_integration_webhooks`), always stops both stacks and removes the folder, and
# exits with the tests' status. The last line is a summary:
#   python-client: N passed, 0 failed, 0 skipped
#
# Environment: PYTHON (default /usr/bin/python3, Debian's), PY_CLIENT_KEEP=1 keeps the
# stack's folder (logs, database) after the run.
set -euo pipefail

HERE=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd -P)
REPO=$(cd -- "$HERE/../.." && pwd -P)
# shellcheck source=tools/testlib.sh
. "$REPO/tools/testlib.sh"
PY=${PYTHON:-/usr/bin/python3}

say() { printf 'python-client: %s\n' "$*" >&2; }

show_logs() { show_stack_logs say "$STACK_DIR" "$PLAIN_DIR"; }

command -v "$PY" >/dev/null || {
    say "no $PY (Debian package python3)"
    exit 1
}

make -s -C "$REPO" all >&2

STACK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/market-pyclient.XXXXXX")
PLAIN_DIR=$STACK_DIR/plain
status=1
summary=''
cleanup() {
    trap - EXIT INT TERM
    [ "$status" = 0 ] || show_logs
    [ ! -d "$PLAIN_DIR" ] || "$REPO/tools/stack" down --dir "$PLAIN_DIR" || true
    "$REPO/tools/stack" down --dir "$STACK_DIR" || true
    if [ "${PY_CLIENT_KEEP:-0}" = 1 ]; then
        say "kept $STACK_DIR"
    else
        rm -rf -- "$STACK_DIR"
    fi
    [ -z "$summary" ] || printf '%s\n' "$summary"
    exit "$status"
}
trap cleanup EXIT
trap 'status=130; exit 130' INT
trap 'status=143; exit 143' TERM

# A throwaway CA, and a certificate for 127.0.0.1 and localhost signed by it: the tests'
# HTTPS webhook receiver uses the certificate, market-webhookd trusts the CA.
tls=$STACK_DIR/tls
make_test_tls "$tls" 'market python client test CA' || {
    echo "could not make the test certificates" >&2
    exit 1
}
export MARKET_TEST_TLS_CA=$tls/ca.pem MARKET_TEST_TLS_CERT=$tls/server.pem MARKET_TEST_TLS_KEY=$tls/server.key
export MARKET_WEBHOOK_CA_FILE=$MARKET_TEST_TLS_CA
export MARKET_WEBHOOK_ALLOW_PRIVATE=1
export MARKET_WEBHOOK_RETRIES=1s,2s,4s
# The tests expect the default limit (600); the rate-limit test lowers it itself.
unset MARKET_RATE_LIMIT
# The routes of contract section 13 (webhooks.list ... events.get) for their tests; the
# rate-limit test's restarts keep it (they pass this environment on).
export MARKET_API_EXTENSIONS=webhook-management

# The plain stack first, with none of this shell's MARKET_* settings (whatever the caller
# exported too): the defaults, no extension. MARKET_WEBHOOK_ALLOW_PRIVATE=1 only lets the
# extension-off test subscribe an https://127.0.0.1 URL (nothing is delivered there).
t0=$SECONDS
PLAIN_PORT=$(free_port 18200-18299)
plain_exports=$(plain_stack_up "$PLAIN_DIR" "$PLAIN_PORT")
eval "$plain_exports"

PORT=$(free_port 18200-18299)
exports=$("$REPO/tools/stack" up --dir "$STACK_DIR" --port "$PORT")
eval "$exports"
say "stacks up in $((SECONDS - t0)) s: $BASE_URL with webhook-management, $PLAIN_BASE_URL without extensions (dir $STACK_DIR)"
export MARKET_TEST_REQUIRE_STACK=1

if [ $# -gt 0 ]; then
    args=(-v "$@")
else
    args=(discover -v -s tests -t .)
fi
log=$STACK_DIR/unittest.log
say "running $PY -m unittest ${args[*]} ($("$PY" --version 2>&1))"
set +e
(cd "$HERE" && PYTHONDONTWRITEBYTECODE=1 timeout --foreground -k 10 900 "$PY" -m unittest "${args[@]}") 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$log" | tail -n 1)
count() { sed -n "s/.*[(,] *$1=\([0-9]*\).*/\1/p" "$log" | tail -n 1; }
failures=$(count failures)
errors=$(count errors)
skipped=$(count skipped)
ran=${ran:-0} failures=${failures:-0} errors=${errors:-0} skipped=${skipped:-0}
failed=$((failures + errors))
passed=$((ran - failed - skipped))
if [ "$status" = 0 ] && [ "$ran" -gt 0 ]; then
    summary=$(printf 'python-client: %d passed, %d failed, %d skipped' "$passed" "$failed" "$skipped")
else
    [ "$status" != 0 ] || status=1
    summary=$(printf 'python-client: %d passed, %d failed, %d skipped (exit status %d)' "$passed" "$failed" "$skipped" "$status")
fi
exit "$status"
