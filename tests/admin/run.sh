#!/usr/bin/env bash
# tests/admin/run.sh: market-admin against a scratch PostgreSQL cluster of its own.
#
# Creates a cluster in a temporary directory (as the user `market`, or `nobody`, when run
# as root: PostgreSQL refuses to run as root), exercises every command, checks outputs,
# exit statuses and the rows written, then stops the cluster and removes the directory.
# The last line is "N passed, M failed"; the exit status is 0 only when M is 0.
#
#   MARKET_ADMIN   the binary to test (default: build/market-admin, built if needed)
#   MARKET_UNIT_TESTS  the unit tests whose PostgreSQL cases (lib/db's transactions and
#                  array literals) run against the cluster too (default: build/unit-tests)
#
# Takes a quarter of a minute or so (most of it seeding).
set -u

ROOT=$(cd -- "$(dirname -- "$0")/../.." && pwd)
if [ -z "${MARKET_ADMIN:-}" ]; then
    make -s -C "$ROOT" build/market-admin >/dev/null || exit 1
    MARKET_ADMIN=$ROOT/build/market-admin
fi
ADMIN=$MARKET_ADMIN
if [ -z "${MARKET_UNIT_TESTS:-}" ]; then
    make -s -C "$ROOT" build/unit-tests >/dev/null || exit 1
    MARKET_UNIT_TESTS=$ROOT/build/unit-tests
fi
UNIT_TESTS=$MARKET_UNIT_TESTS
# Only what this script sets reaches the tool.
for v in $(env | sed -n 's/^\(MARKET_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
# A binary outside a checkout (a sanitizer build, say) cannot find the migrations beside
# itself.
if [ ! -d "$(dirname -- "$ADMIN")/../sql/migrations" ]; then
    export MARKET_MIGRATIONS_DIR=$ROOT/sql/migrations
fi

pg_bindir() {
    local d
    for d in /usr/lib/postgresql/15/bin $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -rV); do
        if [ -x "$d/initdb" ]; then
            printf '%s\n' "$d"
            return 0
        fi
    done
    command -v initdb >/dev/null 2>&1 && dirname -- "$(command -v initdb)"
}
PG_BIN=$(pg_bindir) || {
    echo "PostgreSQL server binaries not found" >&2
    exit 1
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/market-admin-test.XXXXXX")
chmod 755 "$WORK"
OWNER=''
if [ "$(id -u)" = 0 ]; then
    if id market >/dev/null 2>&1; then OWNER=market; else OWNER=nobody; fi
fi
as_owner() {
    if [ -n "$OWNER" ]; then (cd / && runuser -u "$OWNER" -- "$@"); else (cd / && "$@"); fi
}
cleanup() {
    as_owner "$PG_BIN/pg_ctl" stop -D "$WORK/pg" -m immediate >/dev/null 2>&1
    rm -rf -- "$WORK"
}
trap cleanup EXIT

free_port() {
    local p
    # Below the kernel's ephemeral range (32768-60999), where outgoing connections take
    # ports at any moment.
    for p in $(seq $((29000 + RANDOM % 2000)) 31999); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

mkdir -p "$WORK/pg" && [ -z "$OWNER" ] || chown "$OWNER" "$WORK/pg"
as_owner "$PG_BIN/initdb" -D "$WORK/pg" -U admin_test -E UTF8 --locale=C.UTF-8 --auth=trust \
    >"$WORK/initdb.log" 2>&1 || {
    cat "$WORK/initdb.log" >&2
    exit 1
}
PORT=$(free_port)
# fsync and synchronous_commit off: a scratch cluster, deleted at exit and never
# crashed on purpose; a crash of the machine ends the run, so a lost write changes
# nothing (what the stack and the package run keep both on: tools/stack).
cat >>"$WORK/pg/postgresql.conf" <<EOF
port = $PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
fsync = off
synchronous_commit = off
shared_buffers = 128MB
max_wal_size = 2GB
EOF
as_owner "$PG_BIN/pg_ctl" start -w -D "$WORK/pg" -l "$WORK/pg/log.txt" >/dev/null || {
    cat "$WORK/pg/log.txt" >&2
    exit 1
}
CONN="host=127.0.0.1 port=$PORT user=admin_test"
"$PG_BIN/psql" -X -q -d "$CONN dbname=postgres" -c "CREATE DATABASE market" \
    -c "CREATE DATABASE race" || exit 1
export MARKET_DB="$CONN dbname=market"

# --- helpers ------------------------------------------------------------------------------

PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)); }
bad() {
    FAILED=$((FAILED + 1))
    printf 'FAIL: %s\n' "$*" >&2
}
# check NAME COMMAND...: passes when COMMAND succeeds
check() {
    local name=$1
    shift
    if "$@"; then ok; else bad "$name"; fi
}
# run ARGS...: runs market-admin, keeps OUT, ERR and RC
run() {
    OUT=$("$ADMIN" "$@" 2>"$WORK/stderr")
    RC=$?
    ERR=$(cat "$WORK/stderr")
}
# expect NAME RC [STDOUT-REGEX [STDERR-REGEX]]: checks the last run
expect() {
    local name=$1 rc=$2 out=${3:-} err=${4:-}
    if [ "$RC" != "$rc" ]; then
        bad "$name: exit status $RC, expected $rc (stderr: $ERR)"
    elif [ -n "$out" ] && ! grep -Eq -- "$out" <<<"$OUT"; then
        bad "$name: stdout '$OUT' does not match '$out'"
    elif [ -n "$err" ] && ! grep -Eq -- "$err" <<<"$ERR"; then
        bad "$name: stderr '$ERR' does not match '$err'"
    else
        ok
    fi
}
# eq NAME ACTUAL EXPECTED
eq() {
    if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', expected '$3'"; fi
}
sql() { "$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -d "$MARKET_DB" -c "$1"; }
# A fingerprint of everything import writes, to show that a failed import changed nothing.
fingerprint() {
    sql "SELECT md5(string_agg(t, '|' ORDER BY t)) FROM (
           SELECT 'a' || a::text AS t FROM accounts a UNION ALL
           SELECT 's' || s::text FROM sellers s UNION ALL
           SELECT 'p' || p::text FROM products p UNION ALL
           SELECT 't' || t::text FROM tiers t UNION ALL
           SELECT 'f' || f::text FROM files f UNION ALL
           SELECT 'o' || o::text FROM orders o UNION ALL
           SELECT 'i' || i::text FROM order_items i UNION ALL
           SELECT 'd' || d::text FROM downloads d UNION ALL
           SELECT 'r' || r::text FROM reviews r) x"
}

# --- lib/db on a real server ---------------------------------------------------------------

# The unit tests' "postgres" cases: transactions (each level, commit, rollback, each way a
# commit fails) and array literals read back as text[]. They use temporary tables only.
UNIT_OUT=$(MARKET_TEST_DB="$MARKET_DB" CK_RUN_CASE=postgres "$UNIT_TESTS" 2>&1)
RC=$?
grep -E '^(db_array:|[0-9]+%: Checks)' <<<"$UNIT_OUT" >&2
if [ "$RC" = 0 ]; then ok; else bad "the PostgreSQL unit cases: $UNIT_OUT"; fi
NCASES=$(sed -n 's/^100%: Checks: \([0-9]*\),.*/\1/p' <<<"$UNIT_OUT")
check "at least 13 PostgreSQL unit cases ran (${NCASES:-none})" test "${NCASES:-0}" -ge 13

# --- usage ----------------------------------------------------------------------------------

run
expect "no arguments" 2 '' '^Usage: market-admin'
run --help
expect "--help" 0 '^Usage: market-admin'
run frobnicate
expect "unknown command" 2 '' '^market-admin: unknown command frobnicate'
run key
expect "key without subcommand" 2 '' '^market-admin: key:'

# --- migrate --------------------------------------------------------------------------------

NMIG=$(find "$ROOT/sql/migrations" -maxdepth 1 -name '*.sql' | wc -l)
OUT=$(cd / && "$ADMIN" migrate 2>"$WORK/stderr")
RC=$?
ERR=$(cat "$WORK/stderr")
expect "migrate from another directory" 0 '^applied 001_core.sql$'
eq "migrate prints a line per file" "$(grep -c '^applied ' <<<"$OUT")" "$NMIG"
eq "migrate ends with a vacuum of the catalogue" "$(tail -n 1 <<<"$OUT")" "vacuumed products"
eq "the catalogue was vacuumed" "$(sql "SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'products'")" "t"
run migrate
expect "migrate again" 0
eq "migrate again applies nothing" "$OUT" ""
eq "schema_migrations" "$(sql 'SELECT count(*) FROM schema_migrations')" "$NMIG"
# Two at once on a fresh database: the advisory lock makes one wait for the other.
(MARKET_DB="$CONN dbname=race" "$ADMIN" migrate >"$WORK/race1" 2>&1; echo $? >>"$WORK/race1.rc") &
(MARKET_DB="$CONN dbname=race" "$ADMIN" migrate >"$WORK/race2" 2>&1; echo $? >>"$WORK/race2.rc") &
wait
eq "concurrent migrates succeed" "$(cat "$WORK/race1.rc" "$WORK/race2.rc" | tr -d '\n')" "00"
eq "concurrent migrates apply each file once" "$(cat "$WORK/race1" "$WORK/race2" | grep -c '^applied ')" "$NMIG"
mkdir "$WORK/nomigrations"
OUT=$(MARKET_MIGRATIONS_DIR=$WORK/nomigrations "$ADMIN" migrate 2>&1)
RC=$?
expect "MARKET_MIGRATIONS_DIR is honoured" 0
OUT=$(MARKET_MIGRATIONS_DIR=$WORK/missing "$ADMIN" migrate 2>&1)
RC=$?
eq "missing migrations directory fails" "$RC" 1

# --- the sites' databases: each refuses every role but its own ----------------------------

# Three sites' roles, plain ones, each the owner of its database as docs/operations.md
# has them made (the default site's market, two sites' market-NAME), each migrated as
# itself: 019_database_connect.sql takes CONNECT and TEMPORARY from PUBLIC. (This cluster
# trusts every login over TCP, so each role logs in as itself here; the package check
# does it with Debian's peer authentication and the sites' own system users.)
SITE_DBS=(main shop-a shop-b)
declare -A DB_ROLE=([main]=market [shop-a]=market-shop-a [shop-b]=market-shop-b)
for d in "${SITE_DBS[@]}"; do
    "$PG_BIN/psql" -X -q -d "$CONN dbname=postgres" -c "CREATE ROLE \"${DB_ROLE[$d]}\" LOGIN" \
        -c "CREATE DATABASE \"$d\" OWNER \"${DB_ROLE[$d]}\"" || exit 1
done
# as_role ROLE DB [SQL]: psql as ROLE into DB (SELECT 1 by default); its stderr in ERR.
as_role() {
    OUT=$("$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -d "host=127.0.0.1 port=$PORT user=$1 dbname=$2" \
        -c "${3:-SELECT 1}" 2>"$WORK/stderr")
    RC=$?
    ERR=$(cat "$WORK/stderr")
}
for d in "${SITE_DBS[@]}"; do
    OUT=$(MARKET_DB="host=127.0.0.1 port=$PORT user=${DB_ROLE[$d]} dbname=$d" "$ADMIN" migrate 2>"$WORK/stderr")
    RC=$?
    ERR=$(cat "$WORK/stderr")
    expect "migrate as ${DB_ROLE[$d]}, the owner of $d" 0 '^applied 019_database_connect.sql$'
    eq "... without a warning" "$ERR" ""
    eq "... recorded in schema_migrations" "$(MARKET_DB="$CONN dbname=$d" sql \
        "SELECT count(*) FROM schema_migrations WHERE name = '019_database_connect.sql'")" "1"
    eq "$d: PUBLIC has neither CONNECT nor TEMPORARY" \
        "$(sql "SELECT has_database_privilege('public', '$d', 'CONNECT') OR has_database_privilege('public', '$d', 'TEMPORARY')")" "f"
    eq "$d: of the roles that log in, only the superuser and ${DB_ROLE[$d]} may connect" \
        "$(sql "SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles
                 WHERE rolcanlogin AND has_database_privilege(oid, '$d', 'CONNECT')")" "admin_test,${DB_ROLE[$d]}"
done
for d in "${SITE_DBS[@]}"; do
    for r in "${DB_ROLE[@]}"; do
        if [ "$r" = "${DB_ROLE[$d]}" ]; then
            as_role "$r" "$d" "CREATE TEMP TABLE t (i int); NOTIFY market_auth; SELECT 1"
            expect "$r connects to its own database $d (a temporary table, a NOTIFY)" 0 '^1$'
        else
            # Refused at the connection: nothing runs, so no NOTIFY reaches the database.
            as_role "$r" "$d" "NOTIFY market_auth; NOTIFY market_catalogue; NOTIFY market_webhooks"
            expect "$r is refused by $d, its NOTIFY never sent" 2 '' "permission denied for database \"$d\""
        fi
    done
done
as_role admin_test shop-a
expect "the superuser still connects to a site's database" 0 '^1$'
# The database the tests above migrated as the superuser admin_test (its owner): the
# sites' roles are refused by it as well.
as_role market-shop-a market
expect "a site's role is refused by a database its superuser owner migrated" 2 '' 'permission denied for database'
# A role that can act as neither the owner nor a superuser revokes nothing: it warns,
# naming the statements, and the migration does not fail.
"$PG_BIN/psql" -X -q -d "$CONN dbname=postgres" -c "CREATE DATABASE shared" || exit 1
OUT=$("$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$CONN dbname=shared" -c 'SET ROLE "market-shop-a"' \
    -f "$ROOT/sql/migrations/019_database_connect.sql" 2>&1)
RC=$?
ERR=$OUT
expect "019 run by a role that does not own the database: a warning, no failure" 0 '' \
    'WARNING: +the database shared still grants CONNECT to PUBLIC: the role "market-shop-a" is not its owner admin_test.*REVOKE CONNECT, TEMPORARY ON DATABASE shared FROM PUBLIC'
eq "... and CONNECT stays with PUBLIC there" "$(sql "SELECT has_database_privilege('public', 'shared', 'CONNECT')")" "t"

# --- import ---------------------------------------------------------------------------------

cat >"$WORK/example.json" <<'EOF'
{"mode": "test",
 "accounts": [{"id": "acct_bob", "email": "bob@example.com"}],
 "sellers":  [{"id": "pixelforge", "account": "acct_ann", "name": "Pixel Forge",
               "bio": "Fonts and icons", "website": "https://pixelforge.example"}],
 "products": [{"id": "prod_font1", "seller": "pixelforge", "title": "Grotesk Sans",
               "description": "A neo-grotesque family", "category": "fonts",
               "currency": "USD", "status": "published",
               "created_at": "2026-01-02T03:04:05Z",
               "tiers": [{"id": "tier_font1_p", "name": "Personal", "description": "...",
                          "price": 19.0, "licence": {"seats": 1, "commercial": false}}],
               "files": [{"id": "file_font1", "filename": "grotesk.zip",
                          "path": "pixelforge/grotesk.zip", "size_bytes": 1048576}]}],
 "orders":   [{"id": "ord_1", "account": "acct_bob", "status": "paid",
               "created_at": "2026-02-03T04:05:06Z",
               "items": [{"product": "prod_font1", "tier": "tier_font1_p"}]}],
 "reviews":  [{"id": "rev_1", "product": "prod_font1", "account": "acct_bob",
               "rating": 5, "body": "Lovely"}]}
EOF
run import "$WORK/example.json"
expect "import the contract's example" 0 '^imported '
eq "price in minor units" "$(sql "SELECT min_price_minor || ' ' || exponent || ' ' || price FROM products WHERE id = 'prod_font1'")" "1900 2 19.0000000000000000"
eq "product mode" "$(sql "SELECT mode FROM products WHERE id = 'prod_font1'")" "test"
eq "order copies" "$(sql "SELECT position || ' ' || title || ' ' || tier_name || ' ' || price_minor FROM order_items WHERE order_id = 'ord_1'")" "0 Grotesk Sans Personal 1900"
eq "order currency and paid_at" "$(sql "SELECT currency || ' ' || (paid_at = created_at) FROM orders WHERE id = 'ord_1'")" "USD true"
DL=$(sql "SELECT id FROM downloads WHERE order_id = 'ord_1'")
check "one download with a random id" grep -Eq '^dl_[A-Za-z0-9]{24}$' <<<"$DL"
eq "implicit account" "$(sql "SELECT count(*) FROM accounts WHERE id = 'acct_ann'")" "1"
eq "licence stored as jsonb" "$(sql "SELECT licence->>'seats' FROM tiers WHERE id = 'tier_font1_p'")" "1"
BEFORE=$(fingerprint)
run import - <"$WORK/example.json"
expect "import again from standard input" 0
eq "import is idempotent" "$(fingerprint)" "$BEFORE"
run import "$ROOT/tests/fixtures/demo.json"
expect "import tests/fixtures/demo.json" 0 '10 products'
eq "import: no progress line in a log for a short import" "$ERR" ""
# On a terminal (script(1) gives it one), the line is redrawn and ends at 100%.
script -qec "\"$ADMIN\" import \"$ROOT/tests/fixtures/demo.json\"" /dev/null >"$WORK/tty" 2>&1
check "import on a terminal ends its progress line at 100%" grep -Eq $'\r\033\\[Kmarket-admin import 100% \\([0-9]+ rows, [0-9]+ rows/s, 0:00 left\\)\r?$' "$WORK/tty"
eq "demo: lowest tier is the list price" "$(sql "SELECT count(*) FROM products p WHERE min_price_minor <> (SELECT min(price_minor) FROM tiers t WHERE t.product_id = p.id)")" "0"
eq "demo: JPY price" "$(sql "SELECT min_price_minor || ' ' || exponent FROM products WHERE id = 'prod_icons2'")" "800 0"
eq "demo: refunded order" "$(sql "SELECT status || ' ' || refunded_at FROM orders WHERE id = 'ord_3'")" "refunded 2026-06-03 10:00:00+00"
eq "demo: one download per item and file" "$(sql "SELECT count(*) FROM downloads WHERE order_id = 'ord_6'")" "3"

# import_fails NAME EXPECTED-STDERR JSON: the document is refused with that exact message
# and nothing changes.
BEFORE=$(fingerprint)
import_fails() {
    printf '%s' "$3" >"$WORK/bad.json"
    run import "$WORK/bad.json"
    expect "$1" 1 '' "^market-admin: $2\$"
}
P='"seller":"pixelforge","title":"T","category":"fonts","status":"published"'
import_fails "too many decimals" 'products\[1\]\.tiers\[0\]\.price: must be a number with at most 2 decimals' \
    '{"mode":"test","products":[{"id":"prod_ok","currency":"USD",'"$P"',"tiers":[{"id":"tier_ok","name":"P","price":1}]},{"id":"prod_x","currency":"USD",'"$P"',"tiers":[{"id":"tier_x","name":"P","price":1.234}]}]}'
import_fails "JPY has no decimals" 'products\[0\]\.tiers\[0\]\.price: must be a number with at most 0 decimals' \
    '{"mode":"test","products":[{"id":"prod_x","currency":"JPY",'"$P"',"tiers":[{"id":"tier_x","name":"P","price":100.5}]}]}'
import_fails "price as a string" 'products\[0\]\.tiers\[0\]\.price: must be a number with at most 2 decimals' \
    '{"mode":"test","products":[{"id":"prod_x","currency":"USD",'"$P"',"tiers":[{"id":"tier_x","name":"P","price":"1.00"}]}]}'
import_fails "negative price" 'products\[0\]\.tiers\[0\]\.price: must be a number with at most 2 decimals' \
    '{"mode":"test","products":[{"id":"prod_x","currency":"USD",'"$P"',"tiers":[{"id":"tier_x","name":"P","price":-1}]}]}'
import_fails "unknown currency" 'products\[0\]\.currency: unknown currency XYZ' \
    '{"mode":"test","products":[{"id":"prod_x","currency":"XYZ",'"$P"',"tiers":[{"id":"tier_x","name":"P","price":1}]}]}'
import_fails "bad id prefix" 'products\[0\]\.id: must be prod_ followed by 1 to 60 of \[A-Za-z0-9_\]' \
    '{"mode":"test","products":[{"id":"item_x","currency":"USD",'"$P"',"tiers":[{"id":"tier_x","name":"P","price":1}]}]}'
import_fails "unknown seller" 'products\[0\]\.seller: no such seller ghost' \
    '{"mode":"test","products":[{"id":"prod_x","seller":"ghost","title":"T","category":"fonts","currency":"USD","status":"published","tiers":[{"id":"tier_x","name":"P","price":1}]}]}'
import_fails "bad status" 'orders\[0\]\.status: must be one of pending, paid, refunded' \
    '{"mode":"test","orders":[{"id":"ord_x","account":"acct_bob","status":"shipped","items":[{"product":"prod_font1","tier":"tier_font1_p"}]}]}'
import_fails "bad timestamp" 'reviews\[0\]\.created_at: must be an RFC 3339 timestamp such as 2026-01-02T03:04:05Z' \
    '{"mode":"test","reviews":[{"id":"rev_x","product":"prod_font1","account":"acct_bob","rating":4,"created_at":"2026-02-30T00:00:00Z"}]}'
import_fails "product of the other mode" 'orders\[0\]\.items\[0\]\.product: prod_font1 is a test product, not live' \
    '{"mode":"live","orders":[{"id":"ord_x","account":"acct_bob","status":"paid","items":[{"product":"prod_font1","tier":"tier_font1_p"}]}]}'
import_fails "id taken in the other mode" 'products\[0\]\.id: prod_font1 already exists in test mode' \
    '{"mode":"live","products":[{"id":"prod_font1","currency":"USD",'"$P"',"tiers":[{"id":"tier_font1_p","name":"P","price":1}]}]}'
import_fails "tier of another product" 'orders\[0\]\.items\[0\]\.tier: tier_font2_p is a tier of prod_font2, not of prod_font1' \
    '{"mode":"test","orders":[{"id":"ord_x","account":"acct_bob","status":"paid","items":[{"product":"prod_font1","tier":"tier_font2_p"}]}]}'
import_fails "mixed currencies" 'orders\[0\]\.items\[1\]\.product: its currency EUR differs from the order.s USD' \
    '{"mode":"test","orders":[{"id":"ord_x","account":"acct_bob","status":"paid","items":[{"product":"prod_font1","tier":"tier_font1_p"},{"product":"prod_font2","tier":"tier_font2_p"}]}]}'
import_fails "path climbing out" 'products\[0\]\.files\[0\]\.path: must be a relative path without empty, \. or \.\. segments' \
    '{"mode":"test","products":[{"id":"prod_x","currency":"USD",'"$P"',"tiers":[{"id":"tier_x","name":"P","price":1}],"files":[{"id":"file_x","filename":"x.zip","path":"a/../../etc/passwd","size_bytes":1}]}]}'
import_fails "rating out of range" 'reviews\[0\]\.rating: must be an integer from 1 to 5' \
    '{"mode":"test","reviews":[{"id":"rev_x","product":"prod_font1","account":"acct_bob","rating":6}]}'
import_fails "unknown field" 'accounts\[0\]\.mail: unknown field' \
    '{"mode":"test","accounts":[{"id":"acct_x","mail":"x@example.com"}]}'
import_fails "duplicate id" 'accounts\[1\]\.id: duplicate id acct_x' \
    '{"mode":"test","accounts":[{"id":"acct_x"},{"id":"acct_x"}]}'
import_fails "missing mode" 'mode: is required \(test or live\) when the document has products, orders or reviews' \
    '{"reviews":[{"id":"rev_x","product":"prod_font1","account":"acct_bob","rating":4}]}'
import_fails "not JSON" 'import: .*/bad\.json: invalid JSON.*' '{"mode": "test",'
import_fails "NUL in a string" 'accounts\[0\]\.email: must be valid UTF-8 without NUL characters' \
    '{"accounts":[{"id":"acct_x","email":"a\u0000b"}]}'
eq "refused documents changed nothing" "$(fingerprint)" "$BEFORE"
run import
expect "import without a file" 2 '' '^market-admin: import:'

# --- keys -----------------------------------------------------------------------------------

run key create --account acct_bob --mode test --access read-only
expect "key create" 0 '^sk_test_[A-Za-z0-9]{40}$'
KEY1=$OUT
HASH=$(printf '%s' "$KEY1" | sha256sum | cut -d' ' -f1)
eq "stored as its SHA-256 and prefix" "$(sql "SELECT prefix || ' ' || mode || ' ' || access FROM api_keys WHERE key_hash = decode('$HASH', 'hex')")" "${KEY1:0:12} test read-only"
eq "the key is nowhere in clear" "$(sql "SELECT count(*) FROM api_keys a WHERE position('$KEY1' IN a::text) > 0")" "0"
run key create --account acct_nobody --mode test --access read-only
expect "key create for an unknown account" 1 '' '^market-admin: key create: no such account acct_nobody$'
run key create --account acct_bob --mode test --access admin
expect "key create with a bad access" 2
run key create --account acct_bob --access read-only
expect "key create without mode" 2 '' '--mode is required'
run key list --account acct_bob
expect "key list" 0 "^${KEY1:0:12}	test	read-only	[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z	-	-$"
eq "key list: a header row first" "$(head -n 1 <<<"$OUT")" "prefix	mode	access	created_at	expires_at	revoked_at"
run key list --account acct_bob --json
expect "key list --json" 0
eq "key list --json: one document, NULL as null" "$(jq -c '[length, .[0].prefix, .[0].mode, .[0].expires_at, .[0].revoked_at, (.[0].created_at | test("^[0-9-]{10}T[0-9:]{8}Z$"))]' <<<"$OUT")" "[1,\"${KEY1:0:12}\",\"test\",null,null,true]"
run key rotate "$KEY1"
expect "key rotate" 0 '^sk_test_[A-Za-z0-9]{40}$'
KEY2=$OUT
eq "rotation keeps account, mode and access" "$(sql "SELECT account_id || ' ' || mode || ' ' || access FROM api_keys WHERE prefix = '${KEY2:0:12}'")" "acct_bob test read-only"
eq "old key lives 24 h more" "$(sql "SELECT expires_at - now() BETWEEN interval '23 hours 59 minutes' AND interval '24 hours' FROM api_keys WHERE key_hash = decode('$HASH', 'hex')")" "t"
eq "old key points to the new one" "$(sql "SELECT n.prefix FROM api_keys o JOIN api_keys n ON n.id = o.replaced_by WHERE o.key_hash = decode('$HASH', 'hex')")" "${KEY2:0:12}"
run key rotate "$KEY1"
expect "rotating a rotated key" 1 '' '^market-admin: key rotate: the key was already rotated'
check "errors never show the key" bash -c '! grep -q -- "$1" <<<"$2"' _ "$KEY1" "$ERR"
OUT=$(printf '%s\n' "$KEY2" | MARKET_KEY_GRACE=0 "$ADMIN" key rotate - 2>"$WORK/stderr")
RC=$?
ERR=$(cat "$WORK/stderr")
expect "key rotate - with MARKET_KEY_GRACE=0" 0 '^sk_test_[A-Za-z0-9]{40}$'
KEY3=$OUT
run key rotate "$KEY2"
expect "rotating an expired key" 1 '' 'the key has expired$'
run key revoke "$KEY3"
expect "key revoke" 0 "^revoked ${KEY3:0:12}$"
run key rotate "$KEY3"
expect "rotating a revoked key" 1 '' 'the key is revoked$'
run key rotate "sk_test_Unknown0000000000000000000000000000000000"
expect "rotating an unknown key" 1 '' '^market-admin: key rotate: unknown key$'
run key revoke "not-a-key"
expect "revoking garbage" 1 '' 'not an API key'
run key list --account acct_bob
eq "key list shows every key, after its header" "$(wc -l <<<"$OUT")" "4"
check "key list shows the revocation" grep -Eq "^${KEY3:0:12}	test	read-only	\S+Z	-	\S+Z$" <<<"$OUT"
check "key list never shows a secret" bash -c '! grep -Eq "sk_test_[A-Za-z0-9]{13}" <<<"$1"' _ "$OUT"
run key create --account acct_bob --mode live --access read-write
expect "live key" 0 '^sk_live_[A-Za-z0-9]{40}$'

# --- refund ---------------------------------------------------------------------------------

sql "INSERT INTO download_tokens (download_id, token_hash, expires_at)
     SELECT id, sha256(convert_to(id, 'UTF8')), now() + interval '1 hour' FROM downloads
     WHERE order_id = 'ord_1'" >/dev/null
# A commit that fails (here a deferred trigger of the test's own) is reported with the
# server's message, and the transaction leaves nothing behind.
sql "CREATE FUNCTION admin_test_refuse() RETURNS trigger LANGUAGE plpgsql
       AS \$\$ BEGIN RAISE EXCEPTION 'refused at commit'; END \$\$;
     CREATE CONSTRAINT TRIGGER admin_test_refuse AFTER UPDATE ON orders
       DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION admin_test_refuse()" >/dev/null
run refund ord_1
expect "a refund whose commit fails" 1 '' '^market-admin: refund: refused at commit$'
eq "a failed commit prints no result" "$OUT" ""
eq "a failed commit refunds nothing" "$(sql "SELECT status || ' ' || (refunded_at IS NULL) FROM orders WHERE id = 'ord_1'")" "paid true"
eq "a failed commit revokes no link" "$(sql "SELECT count(*) FROM download_tokens t JOIN downloads d ON d.id = t.download_id WHERE d.order_id = 'ord_1' AND t.revoked_at IS NULL")" "1"
sql "DROP TRIGGER admin_test_refuse ON orders; DROP FUNCTION admin_test_refuse()" >/dev/null
run refund ord_1
expect "refund" 0 '^refunded ord_1 \(1 links revoked\)$'
eq "order refunded" "$(sql "SELECT status || ' ' || (refunded_at IS NOT NULL) FROM orders WHERE id = 'ord_1'")" "refunded true"
eq "links revoked" "$(sql "SELECT count(*) FROM download_tokens t JOIN downloads d ON d.id = t.download_id WHERE d.order_id = 'ord_1' AND t.revoked_at IS NULL")" "0"
run refund ord_1
expect "refund twice" 1 '' '^market-admin: refund: order ord_1 is refunded, not paid$'
run refund ord_5
expect "refund a pending order" 1 '' 'is pending, not paid$'
run refund ord_nothing
expect "refund an unknown order" 1 '' '^market-admin: refund: no such order ord_nothing$'
run refund
expect "refund without an order" 2

# --- payout, deliveries, redeliver ------------------------------------------------------------

sql "INSERT INTO webhook_subscriptions (id, account_id, mode, url, events, secret_sealed)
     VALUES ('we_test1', 'acct_ann', 'test', 'https://hooks.example/in',
             ARRAY['payout.sent', 'sale.completed'], 'sealed')" >/dev/null
run payout --seller pixelforge --amount 12.34 --currency USD --mode test
expect "payout" 0 '^po_[A-Za-z0-9]{24}$'
PO=$OUT
eq "payout row" "$(sql "SELECT seller_id || ' ' || amount_minor || ' ' || currency || ' ' || status || ' ' || (sent_at IS NOT NULL) || ' ' || mode FROM payouts WHERE id = '$PO'")" "pixelforge 1234 USD sent true test"
run payout --seller pixelforge --amount 12.345 --currency USD --mode test
expect "payout with too many decimals" 1 '' 'at most 2 decimals'
run payout --seller pixelforge --amount 1500.5 --currency JPY --mode test
expect "payout with decimals in JPY" 1 '' 'at most 0 decimals'
run payout --seller ghost --amount 1 --currency USD --mode test
expect "payout to an unknown seller" 1 '' 'no such seller ghost'
run payout --seller pixelforge --amount 1 --currency USD
expect "payout without mode" 2

DELIVERIES_HEAD="event	type	subscription	status	attempts	last_status	last_error	next_attempt_at	account	mode	created_at"
T='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'
run deliveries
expect "deliveries" 0 "^evt_[A-Za-z0-9_]+	payout\\.sent	we_test1	pending	0	-	-	$T	acct_ann	test	$T\$"
eq "deliveries: a header row first" "$(head -n 1 <<<"$OUT")" "$DELIVERIES_HEAD"
EVT=$(sed -n 2p <<<"$OUT" | cut -f1)
run deliveries --failed
expect "no failed deliveries" 0
eq "deliveries --failed: the header alone" "$OUT" "$DELIVERIES_HEAD"
run deliveries --status pending --account acct_ann --since 2020-01-01T00:00:00Z
eq "deliveries --status --account --since" "$(tail -n +2 <<<"$OUT" | cut -f1,4)" "$EVT	pending"
run deliveries --account acct_nobody
eq "deliveries --account of another" "$OUT" "$DELIVERIES_HEAD"
run deliveries --since 2999-01-01T00:00:00+01:00
eq "deliveries --since after them all" "$OUT" "$DELIVERIES_HEAD"
run deliveries --since yesterday
expect "deliveries --since not a date-time" 2 '' 'must be an RFC 3339 date-time'
run deliveries --status lost
expect "deliveries --status unknown" 2 '' '--status must be pending, delivered, failed or endpoint_deleted'
run deliveries --failed --status pending
expect "deliveries --failed with --status" 2
run deliveries --limit 0
expect "deliveries --limit 0" 2
run payout --seller pixelforge --amount 1 --currency USD --mode test
expect "a second payout" 0
run deliveries --limit 1
expect "deliveries --limit 1 says there are more" 0 '' 'the newest 1 shown; there are more'
eq "deliveries --limit 1: the newest" "$(tail -n +2 <<<"$OUT" | wc -l) $(tail -n +2 <<<"$OUT" | cut -f1 | grep -c "^$EVT$")" "1 0"
run deliveries --limit 2
eq "deliveries --limit 2 is all: no note" "$ERR" ""
run deliveries
eq "deliveries without --limit: every one, newest first" "$(tail -n +2 <<<"$OUT" | wc -l) $(tail -n 1 <<<"$OUT" | cut -f1)" "2 $EVT"
run deliveries --json --status pending
expect "deliveries --json" 0
eq "deliveries --json: typed values" "$(jq -c '[length, .[1].event, .[1].attempts, .[1].last_status, .[1].last_error, (.[1].next_attempt_at | type)]' <<<"$OUT")" "[2,\"$EVT\",0,null,null,\"string\"]"
sql "DELETE FROM events WHERE id <> '$EVT' AND type = 'payout.sent'" >/dev/null
sql "UPDATE webhook_deliveries SET status = 'failed', attempts = 8, last_status = 503,
            lease_until = now() + interval '1 minute', leased_by = 'x' WHERE event_id = '$EVT';
     INSERT INTO webhook_attempts (delivery_id, attempted_at, duration_ms, http_status)
     SELECT id, now(), 12, 503 FROM webhook_deliveries WHERE event_id = '$EVT'" >/dev/null
run deliveries --failed
expect "deliveries --failed" 0 "^$EVT	payout\\.sent	we_test1	failed	8	503	-	-	acct_ann	test	$T\$"
# A listener sees the NOTIFY of redeliver.
("$PG_BIN/psql" -X -q -d "$MARKET_DB" -c "LISTEN market_webhooks" -c "SELECT pg_sleep(3)" \
    >"$WORK/listen" 2>&1) &
sleep 1
run redeliver "$EVT"
expect "redeliver" 0 "^redelivering $EVT \(1 deliveries\)$"
wait
check "redeliver wakes the drainers" grep -q 'notification "market_webhooks"' "$WORK/listen"
eq "delivery pending again" "$(sql "SELECT status || ' ' || attempts || ' ' || (next_attempt_at <= now()) || ' ' || (lease_until IS NULL) FROM webhook_deliveries WHERE event_id = '$EVT'")" "pending 0 true true"
eq "attempt history kept" "$(sql "SELECT count(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.event_id = '$EVT'")" "1"
run redeliver evt_nothing
expect "redeliver an unknown event" 1 '' '^market-admin: redeliver: no such event evt_nothing$'

# --- webhooks list|disable|enable|delete ----------------------------------------------------

sql "INSERT INTO webhook_subscriptions (id, account_id, mode, url, events, secret_sealed)
     VALUES ('we_test2', 'acct_ann', 'live', 'https://hooks.example/live', ARRAY['payout.sent'], 'sealed')" >/dev/null
run webhooks list
expect "webhooks list" 0 '^we_test1	acct_ann	test	enabled	https://hooks\.example/in	sale\.completed,payout\.sent|^we_test1	acct_ann	test	enabled	https://hooks\.example/in	payout\.sent,sale\.completed'
eq "webhooks list: a header, then a line each" "$(head -n 1 <<<"$OUT") $(wc -l <<<"$OUT")" "id	account	mode	status	url	events	created_at 3"
run webhooks list --mode live
eq "webhooks list --mode" "$(tail -n +2 <<<"$OUT" | cut -f1)" "we_test2"
run webhooks list --mode live --json
eq "webhooks list --json: events as an array" "$(jq -c '[.[0].id, .[0].events, .[0].status]' <<<"$OUT")" '["we_test2",["payout.sent"],"enabled"]'
run webhooks list --account acct_nobody
eq "webhooks list --account" "$OUT" "id	account	mode	status	url	events	created_at"
run webhooks disable we_test2
expect "webhooks disable" 0 '^disabled we_test2$'
eq "disabled" "$(sql "SELECT status FROM webhook_subscriptions WHERE id = 'we_test2'")" "disabled"
run webhooks enable we_test2
expect "webhooks enable" 0 '^enabled we_test2$'
# Delete ends the pending delivery of we_test1 (redelivered above), unsent; one whose send
# has begun is left to it.
run webhooks delete we_test1
expect "webhooks delete" 0 '^deleted we_test1 \(1 pending deliveries ended\)$'
eq "delivery ended" "$(sql "SELECT status || ' ' || (leased_by IS NULL) FROM webhook_deliveries WHERE event_id = '$EVT'")" "endpoint_deleted true"
run redeliver "$EVT"
expect "redeliver leaves deliveries of a deleted subscription ended" 0 "^redelivering $EVT \(0 deliveries\)$"
run webhooks list
eq "a deleted subscription is not listed" "$(tail -n +2 <<<"$OUT" | cut -f1)" "we_test2"
run webhooks delete we_test1
expect "delete twice" 1 '' 'no such subscription we_test1'
run webhooks enable we_test1
expect "enable a deleted one" 1 '' 'no such subscription we_test1'
run webhooks disable bogus
expect "not a subscription id" 1 '' 'not a subscription id'
run webhooks frobnicate
expect "webhooks: unknown subcommand" 2 '' 'unknown subcommand frobnicate'
run webhooks delete
expect "webhooks delete without id" 2
sql "UPDATE webhook_subscriptions SET status = 'enabled' WHERE id = 'we_test1';
     UPDATE webhook_deliveries SET status = 'pending', send_started_at = now() WHERE event_id = '$EVT'" >/dev/null
run webhooks delete we_test1
expect "a send already begun is left to it" 0 '^deleted we_test1 \(0 pending deliveries ended\)$'

# --- site create --extensions ---------------------------------------------------------------
# What can be tried without the package installed: the options are checked before anything
# is written (as any user). The settings a site gets (the line written with the option,
# none without it) are checked where site create runs in full: tests/package/run.sh.

# Where this build's site commands write (build/dist/paths: the layout's directories).
SITE_ETC=$(sed -n 4p "$ROOT/build/dist/paths" 2>/dev/null)
SITE_ETC=${SITE_ETC:-/usr/local/etc}/market/sites
XSITE=admin-test-ext
run site create --help
expect "site create --help names --extensions" 0 '\[--extensions LIST\]'
for list in frob 'webhook-management,frob' 'webhook-management, Webhook-Management'; do
    run site create "$XSITE" --db dbname=x --server-name x.test --extensions "$list"
    expect "site create refuses --extensions '$list'" 2 '' \
        '^market-admin: site create: --extensions: unknown extension "(frob|Webhook-Management)" \(known: webhook-management\)$'
done
check "a refused site create made no user" bash -c "! getent passwd market-$XSITE >/dev/null"
check "a refused site create wrote no settings ($SITE_ETC/$XSITE.env)" test ! -e "$SITE_ETC/$XSITE.env"
run site create "$XSITE" --db dbname=x --server-name x.test --extensions "$(printf 'webhook-management\t')"
expect "site create refuses a control character in --extensions" 2 '' 'cannot hold a control character'
# Without --extensions, site create sets no MARKET_API_EXTENSIONS: the site keeps the
# template's, which must be the commented default (none: the specification's six routes).
if make -s -C "$ROOT" build/dist/site/site.env >/dev/null 2>&1; then
    check "the site template has MARKET_API_EXTENSIONS commented out" \
        grep -qx '#MARKET_API_EXTENSIONS=' "$ROOT/build/dist/site/site.env"
    check "the site template turns no extension on" bash -c \
        "! grep -q '^MARKET_API_EXTENSIONS=' '$ROOT/build/dist/site/site.env'"
else
    bad "make build/dist/site/site.env"
fi

# --- seed -----------------------------------------------------------------------------------

START=$SECONDS
# Progress lines when standard error is not a terminal: one every MARKET_PROGRESS_SECONDS
# (here as often as the main process looks at its writers, every 250 ms).
OUT=$(MARKET_PROGRESS_SECONDS=0.01 "$ADMIN" seed --mode test --products 20000 --orders 500 --random-seed 7 2>"$WORK/stderr")
RC=$?
ERR=$(cat "$WORK/stderr")
expect "seed 20000 products" 0 '' '^seeded test mode: 20000 products'
check "seed shows the catalogue's progress" grep -Eq '^market-admin seed: catalogue [0-9]{1,3}% \([0-9]+ rows, [0-9]+ rows/s, ([0-9]+:[0-9]{2}|\?) left\)$' <<<"$ERR"
check "seed names its phases" grep -q '^market-admin seed: vacuum and analyze$' <<<"$ERR"
check "seed shows the orders' progress" grep -Eq '^market-admin seed: orders [0-9]{1,3}% ' <<<"$ERR"
echo "seed of 20000 products: $((SECONDS - START)) s" >&2
eq "seeded products" "$(sql "SELECT count(*) FROM products WHERE id ~ '^prod_t[0-9]{7}' AND mode = 'test'")" "20000"
check "phase times in the summary" grep -Eq 'catalogue [0-9.]+ s with [0-9]+ jobs, indexes [0-9.]+ s, orders [0-9.]+ s, vacuum [0-9.]+ s\)$' <<<"$ERR"
# VACUUM moved the GIN pending list of the load into the index: nothing left to clean.
eq "search index has no pending list" "$(sql "SELECT gin_clean_pending_list('products_search')")" "0"
eq "1 to 3 tiers each" "$(sql "SELECT min(n) || ' ' || max(n) FROM (SELECT count(*) n FROM tiers WHERE id ~ '^tier_t[0-9]{7}' GROUP BY product_id) x")" "1 3"
eq "list price is the lowest tier" "$(sql "SELECT count(*) FROM products p WHERE id ~ '^prod_t[0-9]{7}' AND min_price_minor <> (SELECT min(price_minor) FROM tiers t WHERE t.product_id = p.id)")" "0"
eq "a file per product" "$(sql "SELECT count(*) FROM files WHERE id ~ '^file_t[0-9]{7}'")" "20000"
eq "sellers" "$(sql "SELECT count(*) FROM sellers WHERE id ~ '-[0-9]+$'")" "200"
check "a dozen categories" test "$(sql "SELECT count(DISTINCT category) FROM products WHERE id ~ '^prod_t[0-9]{7}'")" -ge 12
eq "three currencies" "$(sql "SELECT string_agg(DISTINCT currency, ',') FROM products WHERE id ~ '^prod_t[0-9]{7}'")" "EUR,JPY,USD"
eq "three statuses" "$(sql "SELECT string_agg(DISTINCT status, ',') FROM products WHERE id ~ '^prod_t[0-9]{7}'")" "archived,draft,published"
check "full-text search finds grotesk" test "$(sql "SELECT count(*) FROM products WHERE mode = 'test' AND status = 'published' AND search @@ websearch_to_tsquery('english', 'grotesk')")" -gt 10
check "full-text search finds retro minimal" test "$(sql "SELECT count(*) FROM products WHERE mode = 'test' AND status = 'published' AND search @@ websearch_to_tsquery('english', 'retro minimal')")" -gt 0
eq "created within the two years" "$(sql "SELECT min(created_at) >= '2024-11-01' AND max(created_at) < '2026-11-01' FROM products WHERE id ~ '^prod_t[0-9]{7}'")" "t"
eq "orders" "$(sql "SELECT count(*) FROM orders WHERE id ~ '^ord_t[0-9]{7}' AND status IN ('paid', 'refunded')")" "500"
check "some refunded" test "$(sql "SELECT count(*) FROM orders WHERE id ~ '^ord_t[0-9]{7}' AND status = 'refunded'")" -gt 0
eq "a download per item" "$(sql "SELECT (SELECT count(*) FROM order_items WHERE order_id ~ '^ord_t[0-9]{7}') = (SELECT count(*) FROM downloads WHERE order_id ~ '^ord_t[0-9]{7}')")" "t"
eq "one currency per order" "$(sql "SELECT count(*) FROM order_items i JOIN orders o ON o.id = i.order_id JOIN products p ON p.id = i.product_id WHERE o.id ~ '^ord_t[0-9]{7}' AND p.currency <> o.currency")" "0"
eq "items bought at the tier price" "$(sql "SELECT count(*) FROM order_items i JOIN tiers t ON t.id = i.tier_id WHERE i.order_id ~ '^ord_t[0-9]{7}' AND (t.price_minor <> i.price_minor OR t.product_id <> i.product_id)")" "0"
eq "buyers" "$(sql "SELECT count(DISTINCT account_id) <= 50 FROM orders WHERE id ~ '^ord_t[0-9]{7}'")" "t"
run seed --mode test --products 10
expect "seeding a mode twice is refused" 1 '' 'test mode already has seeded rows'

SEEDPRINT="SELECT md5(string_agg(p.id || p.title || p.description || p.price || p.created_at || p.seller_id, ',' ORDER BY p.id)) FROM products p WHERE p.id ~ '^prod_l[0-9]{7}'"
run seed --mode live --products 300 --orders 20 --random-seed 42
expect "seed live" 0
PRINT1=$(sql "$SEEDPRINT")
eq "modes do not collide" "$(sql "SELECT count(*) FROM products WHERE id ~ '^prod_l[0-9]{7}' AND mode = 'live'")" "300"
mkdir "$WORK/files"
OUT=$(MARKET_FILES_ROOT=$WORK/files "$ADMIN" seed --mode live --products 300 --orders 20 --random-seed 42 --replace --files 2>"$WORK/stderr")
RC=$?
ERR=$(cat "$WORK/stderr")
expect "seed --replace --files" 0 '' '300 files written'
eq "same seed, same data" "$(sql "$SEEDPRINT")" "$PRINT1"
eq "files written" "$(find "$WORK/files" -type f | wc -l)" "300"
F=$(sql "SELECT path || ' ' || size_bytes FROM files WHERE id = 'file_l0000007'")
eq "file size matches the catalogue" "$(stat -c %s "$WORK/files/${F% *}")" "${F#* }"
OUT=$(MARKET_PROGRESS_SECONDS=0 "$ADMIN" seed --mode live --products 300 --random-seed 43 --replace 2>"$WORK/stderr")
RC=$?
ERR=$(cat "$WORK/stderr")
expect "another seed" 0
eq "MARKET_PROGRESS_SECONDS=0: no progress line" "$(grep -c '^market-admin seed: ' <<<"$ERR")" "0"
check "another seed, other data" test "$(sql "$SEEDPRINT")" != "$PRINT1"
# The same data whatever the number of slices: every table the seed writes.
LIVEPRINT="SELECT md5(string_agg(t, '|' ORDER BY t)) FROM (
             SELECT 'p' || p::text AS t FROM products p WHERE id ~ '^prod_l[0-9]{7}$' UNION ALL
             SELECT 't' || t::text FROM tiers t WHERE id ~ '^tier_l[0-9]{7}_[0-9]$' UNION ALL
             SELECT 'f' || f::text FROM files f WHERE id ~ '^file_l[0-9]{7}$' UNION ALL
             SELECT 'o' || o::text FROM orders o WHERE id ~ '^ord_l[0-9]{7}$' UNION ALL
             SELECT 'i' || i::text FROM order_items i WHERE order_id ~ '^ord_l[0-9]{7}$' UNION ALL
             SELECT 'd' || d::text FROM downloads d WHERE id ~ '^dl_l[0-9]{7}_[0-9]$') x"
run seed --mode live --products 500 --orders 40 --random-seed 5 --replace --jobs 1 --no-vacuum
expect "seed --jobs 1 --no-vacuum" 0 '' 'with 1 jobs, indexes [0-9.]+ s, orders [0-9.]+ s, analyze [0-9.]+ s\)$'
PRINT1=$(sql "$LIVEPRINT")
run seed --mode live --products 500 --orders 40 --random-seed 5 --replace --jobs 3
expect "seed --jobs 3" 0 '' 'with 3 jobs'
eq "--jobs 1 and --jobs 3 write the same data" "$(sql "$LIVEPRINT")" "$PRINT1"
eq "no seeded row twice" "$(sql "SELECT count(*) FROM products WHERE id ~ '^prod_l[0-9]{7}$'")" "500"
# A slice that fails (its last tier collides with a row already there) takes the whole
# catalogue of the run with it: the replaced catalogue stays, the other slices roll back.
CATPRINT="SELECT md5(string_agg(t, '|' ORDER BY t)) FROM (
            SELECT 'p' || p::text AS t FROM products p WHERE id ~ '^prod_l[0-9]{7}$' UNION ALL
            SELECT 't' || t::text FROM tiers t WHERE id ~ '^tier_l[0-9]{7}_[0-9]$' UNION ALL
            SELECT 'f' || f::text FROM files f WHERE id ~ '^file_l[0-9]{7}$') x"
sql "INSERT INTO tiers (id, product_id, name, price_minor) VALUES ('tier_l0000900_1', 'prod_font1', 'X', 1)" >/dev/null
BEFORE=$(sql "$CATPRINT")
run seed --mode live --products 900 --random-seed 6 --replace --jobs 3
expect "a failing slice fails the seed" 1 '' '^market-admin: seed: tiers: duplicate key value'
eq "one line on stderr" "$(wc -l <<<"$ERR")" "1"
eq "a failed seed leaves the replaced catalogue" "$(sql "$CATPRINT")" "$BEFORE"
eq "no product of the failed seed" "$(sql "SELECT count(*) FROM products WHERE id BETWEEN 'prod_l0000501' AND 'prod_l0000900'")" "0"
sql "DELETE FROM tiers WHERE id = 'tier_l0000900_1'" >/dev/null
# The mode's lock: two seeds at once run one after the other instead of colliding.
("$ADMIN" seed --mode live --products 2000 --random-seed 8 --replace --jobs 2 2>"$WORK/seed1"; echo $? >"$WORK/seed1.rc") &
("$ADMIN" seed --mode live --products 2000 --random-seed 8 --replace --jobs 2 2>"$WORK/seed2"; echo $? >"$WORK/seed2.rc") &
wait
eq "concurrent seeds of a mode both succeed" "$(cat "$WORK/seed1.rc" "$WORK/seed2.rc" | tr -d '\n')" "00"
eq "concurrent seeds leave one catalogue" "$(sql "SELECT count(*) FROM products WHERE id ~ '^prod_l[0-9]{7}$'")" "2000"
# A large seed sets the products' secondary indexes aside and builds them after its load:
# the same indexes afterwards, and nothing left set aside.
INDEXPRINT="SELECT string_agg(pg_get_indexdef(indexrelid), E'\n' ORDER BY indexrelid::regclass::text)
              FROM pg_index WHERE indrelid = 'products'::regclass"
INDEXES=$(sql "$INDEXPRINT")
run seed --mode live --products 100000 --random-seed 9 --replace --no-vacuum
expect "a seed of 100000 products" 0 '' 'indexes [0-9.]+ s'
eq "its indexes rebuilt as they were" "$(sql "$INDEXPRINT")" "$INDEXES"
eq "nothing left set aside" "$(sql "SELECT count(*) FROM seed_deferred_indexes")" "0"
eq "every product of the large seed" "$(sql "SELECT count(*) FROM products WHERE id ~ '^prod_l[0-9]{7}$'")" "100000"
# A seed that died after setting indexes aside: the next seed rebuilds them first.
sql "INSERT INTO seed_deferred_indexes (name, definition, pages)
     SELECT 'products_price', regexp_replace(pg_get_indexdef('products_price'::regclass),
            '^CREATE INDEX ', 'CREATE INDEX IF NOT EXISTS '), 1;
     DROP INDEX products_price" >/dev/null
eq "an index left set aside" "$(sql "SELECT count(*) FROM pg_class WHERE relname = 'products_price'")" "0"
run seed --mode live --products 300 --random-seed 10 --replace
expect "the next seed" 0
eq "rebuilds it" "$(sql "$INDEXPRINT")" "$INDEXES"
eq "and forgets it" "$(sql "SELECT count(*) FROM seed_deferred_indexes")" "0"
run seed --mode test --products 10 --jobs 0
expect "seed --jobs 0" 2 '' '--jobs must be an integer'
run seed --mode live --products 300 --files
expect "--files without MARKET_FILES_ROOT" 1 '' 'MARKET_FILES_ROOT'
run seed --products 10
expect "seed without mode" 2 '' '--mode is required'
run seed --mode test --products 0
expect "seed with zero products" 2 '' '--products must be an integer'

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
