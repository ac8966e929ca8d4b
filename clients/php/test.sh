#!/usr/bin/env bash
# shellcheck disable=SC2317  # cleanup runs from a trap
# clients/php/test.sh: every test of the PHP client, unit and integration, against a real
# stack (nginx -> market-api -> PostgreSQL, market-webhookd) started by tools/stack in a
# temporary directory on a free port, stopped again whatever happens.
#
#   clients/php/test.sh [phpunit arguments...]     e.g. --filter WebhookDeliveryTest
#
# Needs php-cli (8.2), php-curl, phpunit (Debian's 9.6), openssl and psql, plus what the
# stack itself needs (tools/install-deps). Builds the C programs first (make all) when
# they are missing or out of date.
#
# The stack runs with:
#   MARKET_API_EXTENSIONS=webhook-management   the calls of contract section 13
#   MARKET_RATE_LIMIT=20                 a real 429 within a few requests (RateLimitTest)
#   MARKET_WEBHOOK_ALLOW_PRIVATE=1       the webhook receiver listens on 127.0.0.1
#   MARKET_WEBHOOK_RETRIES=1s,2s,4s      retries within a test's patience
#   MARKET_WEBHOOK_CA_FILE=<throwaway CA made here>   trusted for the receiver's certificate
# A second, "plain" stack (one worker; its variables exported with the prefix PLAIN_) has
# none of these but MARKET_WEBHOOK_ALLOW_PRIVATE=1: no extension, the specification's six
# routes (ExtensionOffTest).
# PHP_TEST_KEEP=1 keeps the temporary directory (logs, database) after the run.
set -euo pipefail

HERE=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd -P)
REPO=$(cd -- "$HERE/../.." && pwd -P)
# shellcheck source=tools/testlib.sh
. "$REPO/tools/testlib.sh"

say() { printf 'php-test: %s\n' "$*" >&2; }
die() {
    say "error: $*"
    exit 1
}

# --- tools ------------------------------------------------------------------------------
command -v php >/dev/null || die "php is missing (apt-get install php-cli php-curl)"
php -r 'exit(PHP_VERSION_ID >= 80200 ? 0 : 1);' || die "PHP 8.2 or later is needed, found $(php -r 'echo PHP_VERSION;')"
php -r 'exit(extension_loaded("curl") && extension_loaded("json") ? 0 : 1);' || die "the curl extension is missing (apt-get install php-curl)"
PHPUNIT=${PHPUNIT:-$(command -v phpunit || true)}
[ -n "$PHPUNIT" ] || die "phpunit is missing (apt-get install phpunit)"
command -v openssl >/dev/null || die "openssl is missing"
command -v psql >/dev/null || die "psql is missing (apt-get install postgresql-client)"

# --- the C programs -----------------------------------------------------------------------
if ! make -C "$REPO" all >&2; then
    if [ -x "$REPO/build/market-api" ] && [ -x "$REPO/build/market-admin" ] && [ -x "$REPO/build/market-webhookd" ]; then
        say "warning: make all failed; testing against the programs already in build/"
    else
        die "make all failed and build/ has no programs"
    fi
fi

# --- a temporary directory, always cleaned up ---------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/market-php-test.XXXXXX")
STACK_DIR=$WORK/stack
PLAIN_DIR=$WORK/plain
JUNIT=$WORK/junit.xml
status=1
stack_started=0

show_logs() { show_stack_logs say "$STACK_DIR" "$PLAIN_DIR"; }

summary() {
    # One line from PHPUnit's JUnit report: passed, failed (failures + errors), skipped.
    if [ -s "$JUNIT" ]; then
        php -r '
            $x = simplexml_load_file($argv[1]);
            $s = $x->testsuite ?? null;
            if (!$s) { exit(1); }
            $t = (int) $s["tests"]; $f = (int) $s["failures"] + (int) $s["errors"];
            $k = (int) ($s["skipped"] ?? 0);
            printf("php client: %d passed, %d failed, %d skipped (%d tests, %d assertions)\n",
                $t - $f - $k, $f, $k, $t, (int) $s["assertions"]);
        ' "$JUNIT" || echo "php client: tests FAILED (no report)"
    else
        echo "php client: tests FAILED before any ran"
    fi
}

cleanup() {
    trap - EXIT INT TERM
    [ "$status" = 0 ] || [ "$stack_started" = 0 ] || show_logs
    if [ "$stack_started" = 1 ]; then
        [ ! -d "$PLAIN_DIR" ] || "$REPO/tools/stack" down --dir "$PLAIN_DIR" >&2 || true
        [ ! -d "$STACK_DIR" ] || "$REPO/tools/stack" down --dir "$STACK_DIR" >&2 || true
    fi
    local line
    line=$(summary)
    if [ "${PHP_TEST_KEEP:-0}" = 1 ]; then
        say "kept $WORK"
    else
        rm -rf -- "$WORK"
    fi
    if [ "$status" = 0 ]; then
        echo "$line"
    else
        echo "$line; exit status $status"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'status=130; exit 130' INT
trap 'status=143; exit 143' TERM

# --- a throwaway CA and a certificate for 127.0.0.1, for the HTTPS webhook receiver --------
tls=$WORK/tls
make_test_tls "$tls" 'market php client test CA' || {
    echo "could not make the test certificates" >&2
    exit 1
}
export PHP_IT_TLS_CA=$tls/ca.pem PHP_IT_TLS_CERT=$tls/server.pem PHP_IT_TLS_KEY=$tls/server.key

# The plain stack first, with none of this shell's MARKET_* settings (whatever the caller
# exported too): the defaults, no extension. MARKET_WEBHOOK_ALLOW_PRIVATE=1 only lets
# ExtensionOffTest subscribe an https://127.0.0.1 URL (nothing is delivered there).
t0=$SECONDS
stack_started=1
PLAIN_PORT=$(free_port 18300-18399) || die "no free port"
plain_exports=$(plain_stack_up "$PLAIN_DIR" "$PLAIN_PORT")
eval "$plain_exports"

PORT=$(free_port 18300-18399) || die "no free port"

export MARKET_API_EXTENSIONS=webhook-management
export MARKET_RATE_LIMIT=20
export MARKET_WEBHOOK_ALLOW_PRIVATE=1
export MARKET_WEBHOOK_RETRIES=1s,2s,4s
export MARKET_WEBHOOK_CA_FILE=$PHP_IT_TLS_CA
unset MARKET_FILES_ROOT MARKET_DOWNLOAD_BASE_URL MARKET_BASE_URL

exports=$("$REPO/tools/stack" up --dir "$STACK_DIR" --port "$PORT" --workers 2)
eval "$exports"
export BASE_URL DOWNLOAD_BASE_URL MARKET_DB MARKET_SECRET_FILE FILES_ROOT MARKET_ADMIN
say "stacks up in $((SECONDS - t0)) s: $BASE_URL with webhook-management, $PLAIN_BASE_URL without extensions"

# --- the tests ----------------------------------------------------------------------------------
cd "$HERE"
set +e
timeout --foreground -k 10 900 php "$PHPUNIT" -c "$HERE/phpunit.xml.dist" --do-not-cache-result \
    --fail-on-skipped --fail-on-warning --fail-on-risky --fail-on-incomplete \
    --log-junit "$JUNIT" "$@"
status=$?
set -e
[ "$status" != 124 ] || say "the tests did not finish within 15 minutes"
exit "$status"
