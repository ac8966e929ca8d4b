#!/usr/bin/env bash
# clients/go/test.sh: the tests of the Go client, against a real stack.
#
#   clients/go/test.sh            # unit tests, then integration tests on a fresh stack
#   clients/go/test.sh -run Walk  # extra arguments go to `go test`
#
# Builds the C programs if needed (make all), makes a throwaway CA and a certificate for
# 127.0.0.1 signed by it, starts a stack (tools/stack up) in a new temporary directory on
# a free port with
#   MARKET_API_EXTENSIONS=webhook-management   the calls of contract section 13
#   MARKET_RATE_LIMIT=10                 so that a test can meet a real 429 quickly
#   MARKET_WEBHOOK_ALLOW_PRIVATE=1       the tests' HTTPS receiver is on 127.0.0.1
#   MARKET_WEBHOOK_RETRIES=1s,2s,4s      retries within a test's patience
#   MARKET_WEBHOOK_CA_FILE=<the CA>      market-webhookd trusts the receiver
# and a second, "plain" stack (one worker; its variables exported with the prefix PLAIN_)
# with none of these but MARKET_WEBHOOK_ALLOW_PRIVATE=1: no extension, the
# specification's six routes (TestITExtensionOff),
# then runs gofmt, go vet and `go test -v ./...` with MARKET_IT=1 (the integration tests
# import their own data with market-admin). The stacks are always stopped and the
# directory removed (GO_IT_KEEP=1 keeps the directory, logs included). Exits non-zero on
# failure.
#
# Go runs offline: standard library only, GOPROXY=off, caches under clients/go/.cache.
# Needs: golang-go (Go >= 1.19), openssl, psql (postgresql-client), and what tools/stack
# needs.
set -euo pipefail

HERE=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd -P)
REPO=$(cd -- "$HERE/../.." && pwd -P)
# shellcheck source=tools/testlib.sh
. "$REPO/tools/testlib.sh"

say() { printf 'go-client: %s\n' "$*" >&2; }
die() {
    say "error: $*"
    exit 1
}

command -v go >/dev/null || die "go is not installed (Debian: apt-get install golang-go)"
command -v openssl >/dev/null || die "openssl is not installed"
command -v psql >/dev/null || die "psql is not installed (Debian: postgresql-client)"

export GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local GOTELEMETRY=off GO111MODULE=on
export GOCACHE="$HERE/.cache/build" GOPATH="$HERE/.cache/gopath" GOMODCACHE="$HERE/.cache/gopath/pkg/mod"


STACK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/market-go-client.XXXXXX")
PLAIN_DIR=$STACK_DIR/plain
status=1
stack_started=0
show_logs() { show_stack_logs say "$STACK_DIR" "$PLAIN_DIR"; }
cleanup() {
    trap - EXIT INT TERM
    [ "$status" = 0 ] || show_logs
    if [ "$stack_started" = 1 ] || [ -d "$PLAIN_DIR/run" ]; then
        "$REPO/tools/stack" down --dir "$PLAIN_DIR" >"$STACK_DIR/down-plain.log" 2>&1 || cat "$STACK_DIR/down-plain.log" >&2
    fi
    if [ "$stack_started" = 1 ] || [ -d "$STACK_DIR/run" ]; then
        "$REPO/tools/stack" down --dir "$STACK_DIR" >"$STACK_DIR/down.log" 2>&1 || cat "$STACK_DIR/down.log" >&2
    fi
    if [ "${GO_IT_KEEP:-0}" = 1 ]; then
        say "kept $STACK_DIR"
    else
        rm -rf -- "$STACK_DIR"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'status=130; exit 130' INT
trap 'status=143; exit 143' TERM

# Format and vet first: no stack needed for those.
cd "$HERE"
unformatted=$(gofmt -l -- *.go)
[ -z "$unformatted" ] || die "not gofmt-formatted: $unformatted"
go vet ./...

make -C "$REPO" all >&2 || die "make all failed"

# A throwaway CA and a certificate for 127.0.0.1 and localhost signed by it.
tls=$STACK_DIR/tls
make_test_tls "$tls" 'market go client test CA' || {
    echo "could not make the test certificates" >&2
    exit 1
}

# The plain stack first, with none of this shell's MARKET_* settings (whatever the caller
# exported too): the defaults, no extension. MARKET_WEBHOOK_ALLOW_PRIVATE=1 only lets
# TestITExtensionOff subscribe an https://127.0.0.1 URL (nothing is delivered there).
t0=$SECONDS
stack_started=1
PLAIN_PORT=$(free_port 18400-18499) || die "no free port"
plain_exports=$(plain_stack_up "$PLAIN_DIR" "$PLAIN_PORT")
eval "$plain_exports"

export MARKET_API_EXTENSIONS=webhook-management
export MARKET_RATE_LIMIT=10
export MARKET_WEBHOOK_ALLOW_PRIVATE=1
export MARKET_WEBHOOK_RETRIES=1s,2s,4s
export MARKET_WEBHOOK_CA_FILE=$tls/ca.pem
export MARKET_IT_TLS_CERT=$tls/server.pem MARKET_IT_TLS_KEY=$tls/server.key

PORT=$(free_port 18400-18499) || die "no free port"
exports=$("$REPO/tools/stack" up --dir "$STACK_DIR" --port "$PORT" --workers 2)
eval "$exports"
say "stacks up in $((SECONDS - t0)) s: $BASE_URL with webhook-management, $PLAIN_BASE_URL without extensions (dir $STACK_DIR)"

export MARKET_IT=1
set +e
go test -count=1 -timeout 10m -v "$@" ./...
status=$?
set -e
exit "$status"
