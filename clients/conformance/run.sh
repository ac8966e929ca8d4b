#!/usr/bin/env bash
# clients/conformance/run.sh: the conformance suite of the four clients (docs/clients.md).
#
# Builds the Go driver offline (standard library only, GOPROXY=off, the client module by
# a replace directive, caches under clients/go/.cache), then runs run.mjs: a scripted HTTP
# server with real faults (server.mjs) and, for each case and each language, the driver
# making one call; the outcome is checked against the retry and timeout policy and a table
# case x language is printed. Exits non-zero on any failing cell. No stack is needed.
#
#   clients/conformance/run.sh [--lang js,go] [--case get_502,post_reset] [--verbose]
#
# Needs node (>= 18), python3, php-cli with php-curl, go (>= 1.19).
set -euo pipefail

HERE=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd -P)
GOCLIENT=$(cd -- "$HERE/../go" && pwd -P)
export GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local GOTELEMETRY=off GO111MODULE=on
export GOCACHE="$GOCLIENT/.cache/build" GOPATH="$GOCLIENT/.cache/gopath" GOMODCACHE="$GOCLIENT/.cache/gopath/pkg/mod"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/market-conformance.XXXXXX")
trap 'rm -rf -- "$TMP"' EXIT

# The driver's go.mod is copied next to its source in the temporary directory with the
# replace directive pointing at this checkout's client, whatever its module path.
cp "$HERE/drivers/go/main.go" "$HERE/drivers/go/go.mod" "$TMP/"
# The client's module path, from its go.mod (the driver imports the same path: a drift
# fails this build).
MODULE=$(awk '$1 == "module" { print $2 }' "$GOCLIENT/go.mod")
(cd "$TMP" && go mod edit -replace="$MODULE=$GOCLIENT" && go build -o "$TMP/go-driver" .) >&2
export GO_DRIVER=$TMP/go-driver

node "$HERE/run.mjs" "$@"
