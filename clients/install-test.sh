#!/usr/bin/env bash
# shellcheck disable=SC2317  # cleanup and show_logs run from traps
# clients/install-test.sh: the published artifacts of the four clients, installed into clean
# projects outside the repository, each calling a real stack.
#
#   clients/install-test.sh          (make clients-install-test; part of make clients-check)
#
# What: builds the artifacts with clients/dist into a temporary folder (the npm tarball,
# the Python wheel, the PHP archive, the Go module's archive), starts one stack with
# tools/stack, imports one seller and one published product in a category of its own
# (market-admin import) and makes a read-only key for a buyer (market-admin key create),
# then for each language makes a new project in the temporary folder, installs the
# artifact there and runs a short program that lists the category's products with that
# key and prints "<lang> <client version> <first product id>":
#   js      npm install <tarball> (--offline) in a new package; node main.mjs
#   python  python3 -m venv; pip install --no-index <wheel>; the venv's python main.py
#   php     composer install from an artifact repository holding the zip (packagist.org
#           off, COMPOSER_DISABLE_NETWORK=1); php main.php
#   go      a module requiring the client's module path, replaced by the unpacked module
#           archive (GOPROXY=off, GOFLAGS=-mod=mod); go run .
# Each printed line must be exactly "<lang> <version of release.json> <the product id>".
#
# Why: the tests of clients/*/test.sh run from the source folders; this one proves that
# what would be published installs by its published name and works on its own.
#
# Prints one line per language and "install-test: N passed, N failed"; exits non-zero
# when any fails. The stack is always stopped and the folder removed
# (CLIENTS_INSTALL_KEEP=1 keeps it). Needs what clients/dist needs, python3-venv, and the
# stack's packages (tools/install-deps).
set -euo pipefail

HERE=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd -P)
REPO=$(cd -- "$HERE/.." && pwd -P)
# shellcheck source=tools/testlib.sh
. "$REPO/tools/testlib.sh"
PY=/usr/bin/python3

say() { printf 'install-test: %s\n' "$*" >&2; }
die() {
    say "error: $*"
    exit 1
}

while IFS= read -r name; do unset "$name"; done < <(compgen -v MARKET_ || true)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/market-install-test.XXXXXX")
case $WORK in "$REPO"/*) die "the temporary folder must be outside the repository" ;; esac
STACK_DIR=$WORK/stack
status=1
stack_started=0
show_logs() {
    local f
    for f in api.log nginx-error.log postgresql.log; do
        if [ -s "$STACK_DIR/log/$f" ]; then
            say "last lines of $f:"
            tail -n 20 -- "$STACK_DIR/log/$f" | sed 's/^/    | /' >&2
        fi
    done
}
cleanup() {
    trap - EXIT INT TERM
    [ "$status" = 0 ] || [ "$stack_started" = 0 ] || show_logs
    if [ "$stack_started" = 1 ]; then
        "$REPO/tools/stack" down --dir "$STACK_DIR" >"$WORK/down.log" 2>&1 || cat "$WORK/down.log" >&2
    fi
    if [ "${CLIENTS_INSTALL_KEEP:-0}" = 1 ]; then
        say "kept $WORK"
    else
        rm -rf -- "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'status=130; exit 130' INT
trap 'status=143; exit 143' TERM

# --- the artifacts ---------------------------------------------------------------------------
DIST=$WORK/dist
"$HERE/dist" "$DIST"
VERSION=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$HERE/release.json")
GO_MODULE=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["names"]["go"])' "$HERE/release.json")

# --- one stack, one product, one key -----------------------------------------------------------
make -s -C "$REPO" all >&2
PORT=$(free_port 18500-18599) || die "no free port"
t0=$SECONDS
stack_started=1
exports=$("$REPO/tools/stack" up --dir "$STACK_DIR" --port "$PORT" --workers 1)
eval "$exports"
say "stack up on $BASE_URL in $((SECONDS - t0)) s"

X=$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
CATEGORY=pkgtest-$X
PRODUCT=prod_pkgtest_$X
MARKET_FILES_ROOT=$FILES_ROOT MARKET_DOWNLOAD_BASE_URL=$DOWNLOAD_BASE_URL "$MARKET_ADMIN" import - >/dev/null <<EOF
{"mode": "test",
 "accounts": [{"id": "acct_pkgs_$X"}, {"id": "acct_pkgb_$X"}],
 "sellers": [{"id": "pkgseller-$X", "account": "acct_pkgs_$X", "name": "Package Seller", "bio": "", "website": "https://pkg.example"}],
 "products": [{"id": "$PRODUCT", "seller": "pkgseller-$X", "title": "Installed Grotesk",
   "description": "the install test's product", "category": "$CATEGORY", "currency": "USD",
   "status": "published", "created_at": "2026-03-01T00:00:00Z",
   "tiers": [{"id": "tier_pkgtest_$X", "name": "Personal", "description": "one seat", "price": 19.99,
              "licence": {"seats": 1, "commercial": false}}]}]}
EOF
KEY=$("$MARKET_ADMIN" key create --account "acct_pkgb_$X" --mode test --access read-only)
export KEY BASE_URL CATEGORY

# --- one clean project per language ---------------------------------------------------------------
# Each function installs the artifact into $WORK/<lang> and prints the program's line.
run_js() {
    local d=$WORK/js
    mkdir -p "$d" && cd "$d"
    printf '{"name": "install-test", "version": "1.0.0", "private": true, "type": "module"}\n' >package.json
    npm install --offline --no-audit --no-fund --loglevel=error "$DIST/markethq-market-$VERSION.tgz" >&2
    cat >main.mjs <<'EOF'
import { Market, VERSION } from '@markethq/market';
const market = new Market({ apiKey: process.env.KEY, baseUrl: process.env.BASE_URL });
const page = await market.products.list({ category: process.env.CATEGORY, limit: 1 });
console.log(`js ${VERSION} ${page.data[0]?.id}`);
EOF
    node main.mjs
}

run_python() {
    local d=$WORK/python
    mkdir -p "$d" && cd "$d"
    "$PY" -m venv venv
    venv/bin/python -m pip install --quiet --no-index --no-cache-dir --disable-pip-version-check \
        "$DIST/markethq_market-$VERSION-py3-none-any.whl" >&2
    cat >main.py <<'EOF'
import os
import market

assert market.__file__.startswith(os.path.abspath("venv")), market.__file__  # the installed copy
m = market.Market(os.environ["KEY"], base_url=os.environ["BASE_URL"])
page = m.products.list(category=os.environ["CATEGORY"], limit=1)
print("python", market.__version__, page.data[0].id if page.data else None)
EOF
    PYTHONDONTWRITEBYTECODE=1 PYTHONPATH='' venv/bin/python main.py
}

run_php() {
    local d=$WORK/php
    mkdir -p "$d/artifacts" && cd "$d"
    cp -- "$DIST/markethq-market-$VERSION.zip" artifacts/
    cat >composer.json <<EOF
{
    "name": "install-test/php",
    "type": "project",
    "repositories": [{"type": "artifact", "url": "artifacts"}, {"packagist.org": false}],
    "require": {"markethq/market": "$VERSION"}
}
EOF
    COMPOSER_DISABLE_NETWORK=1 COMPOSER_HOME=$d/.composer COMPOSER_CACHE_DIR=$d/.composer/cache \
        composer install --no-interaction --no-progress --quiet >&2
    cat >main.php <<'EOF'
<?php
require __DIR__ . '/vendor/autoload.php';
$market = new Market\Client(getenv('KEY'), ['base_url' => getenv('BASE_URL')]);
$page = $market->products->list(['category' => getenv('CATEGORY'), 'limit' => 1]);
echo 'php ', Market\Client::VERSION, ' ', $page->data[0]->id ?? 'none', "\n";
EOF
    php main.php
}

run_go() {
    local d=$WORK/go
    mkdir -p "$d/mod" "$d/app" && cd "$d"
    unzip -q "$DIST/markethq-market-go-v$VERSION.zip" -d mod
    cd app
    cat >go.mod <<EOF
module example.com/installtest

go 1.19

require $GO_MODULE v$VERSION

replace $GO_MODULE => $d/mod/$GO_MODULE@v$VERSION
EOF
    cat >main.go <<EOF
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	market "$GO_MODULE"
)

func main() {
	c, err := market.NewClient(os.Getenv("KEY"), market.WithBaseURL(os.Getenv("BASE_URL")))
	if err != nil {
		log.Fatal(err)
	}
	page, err := c.Products.List(context.Background(), &market.ProductListParams{Category: os.Getenv("CATEGORY"), Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	if len(page.Data) == 0 {
		log.Fatal("no product")
	}
	fmt.Println("go", market.Version, page.Data[0].ID)
}
EOF
    GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local GOTELEMETRY=off GO111MODULE=on \
        GOCACHE=$d/cache GOPATH=$d/gopath GOMODCACHE=$d/gopath/pkg/mod go run .
}

passed=0 failed=0
for lang in js python php go; do
    want="$lang $VERSION $PRODUCT"
    set +e
    got=$("run_$lang" 2>"$WORK/$lang.log")
    rc=$?
    set -e
    cd "$WORK"
    if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
        passed=$((passed + 1))
        printf 'ok      %s\n' "$got"
    else
        failed=$((failed + 1))
        printf 'FAILED  %s: printed "%s" (exit %d), want "%s"\n' "$lang" "$got" "$rc" "$want"
        sed 's/^/    | /' "$WORK/$lang.log" | tail -n 20
    fi
done
printf 'install-test: %d passed, %d failed\n' "$passed" "$failed"
[ "$failed" = 0 ] && status=0 || status=1
exit "$status"
