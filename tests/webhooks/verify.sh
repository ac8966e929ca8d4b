#!/bin/bash
# Local end-to-end check of the webhook outbox and market-webhookd, without nginx or the
# API: a scratch PostgreSQL cluster with every migration, a local HTTPS receiver that
# verifies each delivery with the standardwebhooks npm package, and market-webhookd.
#
#   tests/webhooks/verify.sh            triggers, delivery, retries, SIGTERM, kill -9,
#                                        throughput and latency (about two minutes)
#   tests/webhooks/verify.sh --quick    without kill -9 (it waits for a lease to expire)
#
# Environment: WH_PG_PORT (55601), WH_RECV_PORT (55611), WH_N (throughput deliveries,
# 10000), WH_OS_USER (the account PostgreSQL runs as when this runs as root: nobody),
# WH_KEEP=1 keeps the scratch directory (logs) at the end, WH_DRAINER runs another build
# of market-webhookd (one built with sanitizers, say).
# Needs PostgreSQL 15 binaries, node and npm (for standardwebhooks and pg). Leaves
# nothing running and removes its scratch directory.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
pg_port=${WH_PG_PORT:-55601}
recv_port=${WH_RECV_PORT:-55611}
n_bulk=${WH_N:-10000}
quick=false
[ "${1:-}" = --quick ] && quick=true
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
work=$(mktemp -d /tmp/wh-verify.XXXXXX)
chmod 755 "$work"
pids=()
fail_count=0

say() { printf '%s\n' "$*"; }
ok() { say "ok   $*"; }
bad() { say "FAIL $*"; fail_count=$((fail_count + 1)); }
check() { # check LABEL ACTUAL EXPECTED
    if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi
}

as_pg() { # from / : the PostgreSQL account may not be allowed into the current directory
    if [ "$(id -u)" = 0 ]; then (cd / && runuser -u "${WH_OS_USER:-nobody}" -- "$@"); else "$@"; fi
}

# Processes started here and not yet waited for; only these are stopped at exit.
forget() {
    local keep=() p
    for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
    pids=("${keep[@]}")
}

cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    [ -d "$work/pg" ] && as_pg "$pg_bin/pg_ctl" -D "$work/pg" stop -m fast -s >/dev/null 2>&1 || true
    if [ "${WH_KEEP:-0}" = 1 ]; then say "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

export PGHOST=127.0.0.1 PGPORT=$pg_port PGUSER=postgres PGDATABASE=wh
export MARKET_DB="host=127.0.0.1 port=$pg_port user=postgres dbname=wh"
export MARKET_SECRET_FILE=$work/server_secret
export MARKET_WEBHOOK_CA_FILE=$work/certs/ca.pem
export MARKET_WEBHOOK_ALLOW_PRIVATE=1
export MARKET_WEBHOOK_RETRIES=1s,1s
export MARKET_WEBHOOK_TIMEOUT=2
export NODE_PATH=$work/node/node_modules
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

say "== build"
make -C "$repo" -s build/market-webhookd build/libmarket.a
cc -I"$repo/lib" -std=c11 -o "$work/seal_secret" "$repo/tests/webhooks/seal_secret.c" \
    "$repo/build/libmarket.a" $(pkg-config --libs libpq json-c libgcrypt)
drainer=${WH_DRAINER:-$repo/build/market-webhookd}

say "== scratch cluster on 127.0.0.1:$pg_port"
mkdir "$work/pg" && chmod 700 "$work/pg"
[ "$(id -u)" = 0 ] && chown "${WH_OS_USER:-nobody}" "$work/pg"
as_pg "$pg_bin/initdb" -D "$work/pg" -U postgres -A trust --no-sync >"$work/initdb.log" 2>&1
as_pg "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg/log" -s -w start \
    -o "-p $pg_port -k '' -c listen_addresses=127.0.0.1 -c track_commit_timestamp=on -c fsync=off"
createdb wh
for f in "$repo"/sql/migrations/*.sql; do q -f "$f"; done
createdb trg
for f in "$repo"/sql/migrations/*.sql; do q -d trg -f "$f"; done
if q -d trg -f "$repo/tests/webhooks/triggers_test.sql" >"$work/trg.out" 2>&1; then
    ok "trigger checks ($(grep -c 'NOTICE:  ok' "$work/trg.out") assertions)"
else
    bad "trigger checks: $(grep -m1 FAIL "$work/trg.out")"
fi

say "== receiver, secrets, fixtures"
"$repo/tests/webhooks/make-certs.sh" "$work/certs"
head -c 48 /dev/urandom | base64 -w0 >"$MARKET_SECRET_FILE"
read -r whsec sealed < <("$work/seal_secret")
npm install --silent --no-audit --no-fund --prefix "$work/node" standardwebhooks@1.1.1 pg@8 >/dev/null
: >"$work/recv.log"
node "$repo/tests/webhooks/receiver.js" "$recv_port" "$work/certs" "$whsec" "$work/recv.log" \
    2>"$work/recv.err" &
pids+=($!)
for _ in $(seq 50); do
    curl -fsS --cacert "$work/certs/ca.pem" "https://localhost:$recv_port/stats" >/dev/null 2>&1 && break
    sleep 0.2
done
curl -fsS --cacert "$work/certs/ca.pem" "https://localhost:$recv_port/stats" >/dev/null ||
    { cat "$work/recv.err"; say "the receiver did not start"; exit 1; }
q -v sealed="$sealed" -v base="https://localhost:$recv_port" <<'EOF'
INSERT INTO accounts (id) VALUES ('acct_ann'), ('acct_cy'), ('acct_bob');
INSERT INTO sellers (id, account_id, name) VALUES ('pixelforge', 'acct_ann', 'Pixel Forge'),
                                                  ('cyfonts', 'acct_cy', 'Cy Fonts');
INSERT INTO products (id, mode, seller_id, title, category, currency, exponent, status) VALUES
    ('prod_a', 'test', 'pixelforge', 'A', 'fonts', 'USD', 2, 'published'),
    ('prod_c', 'test', 'cyfonts', 'C', 'fonts', 'USD', 2, 'published');
INSERT INTO tiers (id, product_id, name, price_minor) VALUES
    ('tier_a', 'prod_a', 'Personal', 1999), ('tier_c', 'prod_c', 'Team', 120050);
INSERT INTO webhook_subscriptions (id, account_id, mode, url, events, secret_sealed) VALUES
    ('we_ann', 'acct_ann', 'test', :'base' || '/ok',
     ARRAY['sale.completed', 'sale.refunded', 'review.created', 'payout.sent'], :'sealed'),
    ('we_cy_500', 'acct_cy', 'test', :'base' || '/status/500', ARRAY['sale.completed'], :'sealed'),
    ('we_cy_slow', 'acct_cy', 'test', :'base' || '/slow/2500', ARRAY['sale.refunded'], :'sealed');
EOF

order() { # order ID: a paid order of one item of each seller, items after the order row
    q -c "BEGIN" -c "INSERT INTO orders (id, mode, account_id, status, currency)
                     VALUES ('$1', 'test', 'acct_bob', 'paid', 'USD')" \
      -c "INSERT INTO order_items VALUES ('$1', 1, 'prod_a', 'tier_a', 'A', 'Personal', 1999),
                                         ('$1', 2, 'prod_c', 'tier_c', 'C', 'Team', 120050)" \
      -c "COMMIT"
}
wait_for() { # wait_for SECONDS SQL: until the query answers t
    local end=$((SECONDS + $1))
    while [ "$(q -c "$2")" != t ]; do
        [ $SECONDS -ge $end ] && return 1
        sleep 0.2
    done
}

say "== delivery, signatures, retries"
"$drainer" 2>"$work/d1.log" &
d1=$!
pids+=($d1)
order ord_1
q -c "INSERT INTO reviews (id, mode, product_id, account_id, rating, body)
      VALUES ('rev_1', 'test', 'prod_a', 'acct_bob', 5, 'Lovely')"
q -c "INSERT INTO payouts (id, mode, seller_id, amount_minor, currency, status)
      VALUES ('po_1', 'test', 'pixelforge', 123450, 'EUR', 'sent')"
wait_for 15 "SELECT count(*) = 4 FROM webhook_deliveries WHERE status <> 'pending'" ||
    bad "deliveries did not settle"
check "ann: sale, review, payout delivered" \
    "$(q -c "SELECT string_agg(e.type, ',' ORDER BY e.type) FROM webhook_deliveries d
             JOIN events e ON e.id = d.event_id WHERE d.subscription_id = 'we_ann'
              AND d.status = 'delivered'")" "payout.sent,review.created,sale.completed"
check "cy /status/500: failed after 3 attempts" \
    "$(q -c "SELECT status || ' ' || attempts || ' ' || last_status FROM webhook_deliveries
             WHERE subscription_id = 'we_cy_500'")" "failed 3 500"
check "every attempt recorded" "$(q -c "SELECT count(*) FROM webhook_attempts")" 6
check "every request verified by standardwebhooks, X-Signature equal, JSON" \
    "$(node -e 'const l=require("fs").readFileSync(process.argv[1],"utf8").trim().split("\n").map(JSON.parse);
                console.log(l.every(r=>r.ok&&r.xsig&&r.ctype==="application/json")+" "+l.length)' \
        "$work/recv.log")" "true 6"
check "payload of the sale" \
    "$(grep '"path":"/ok"' "$work/recv.log" | grep -m1 '"type":"sale.completed"' | node -e 'const r=JSON.parse(require("fs").readFileSync(0));
        console.log(JSON.stringify(r.data))')" \
    '{"order":"ord_1","product":"prod_a","tier":"tier_a","amount":19.99,"currency":"USD"}'

say "== SIGTERM with a request in flight"
q -c "UPDATE orders SET status = 'refunded' WHERE id = 'ord_1'" # cy's refund goes to /slow/2500
sleep 0.5
kill -TERM $d1
wait $d1 && rc=0 || rc=$?
forget $d1
check "exit status 0 after the request in flight finished" "$rc" 0
check "the slow delivery's outcome recorded (timed out at 2 s)" \
    "$(q -c "SELECT attempts || ' ' || (lease_until IS NULL) || ' ' || (last_error LIKE '%timed out%')
             FROM webhook_deliveries WHERE subscription_id = 'we_cy_slow'")" "1 true true"
q -c "DELETE FROM webhook_subscriptions WHERE id LIKE 'we_cy%'"

if ! $quick; then
    say "== kill -9 mid-batch (the second drainer waits for the lease: ~32 s)"
    q -c "TRUNCATE webhook_attempts, webhook_deliveries, events"
    q -c "UPDATE webhook_subscriptions SET url = 'https://localhost:$recv_port/slow/200'"
    : >"$work/recv.log"
    q -c "BEGIN" \
      -c "INSERT INTO orders SELECT 'ord_k' || g, 'test', 'acct_bob', 'paid', 'USD'
          FROM generate_series(1, 1500) g" \
      -c "INSERT INTO order_items SELECT 'ord_k' || g, 1, 'prod_a', 'tier_a', 'A', 'P', 1999
          FROM generate_series(1, 1500) g" -c "COMMIT"
    "$drainer" 2>"$work/k1.log" &
    k1=$!
    pids+=($k1)
    sleep 2
    kill -9 $k1
    wait $k1 2>/dev/null || true
    forget $k1
    leased=$(q -c "SELECT count(*) FROM webhook_deliveries WHERE lease_until IS NOT NULL")
    "$drainer" 2>"$work/k2.log" &
    k2=$!
    pids+=($k2)
    wait_for 90 "SELECT bool_and(status = 'delivered') FROM webhook_deliveries" ||
        bad "not all delivered after kill -9"
    kill -TERM $k2
    wait $k2 || true
    forget $k2
    ok "kill -9 with $leased leased: all 1500 delivered"
    check "events that arrived twice (at least once) <= leased at the kill" \
        "$(node -e 'const c=new Map();for(const l of require("fs").readFileSync(process.argv[1],"utf8").trim().split("\n")){const id=JSON.parse(l).id;c.set(id,(c.get(id)||0)+1)}
                    const twice=[...c.values()].filter(v=>v>1).length;console.log(c.size+" "+(twice<=+process.argv[2]))' \
            "$work/recv.log" "$leased")" "1500 true"
fi

say "== throughput: $n_bulk deliveries queued, then one drainer"
q -c "TRUNCATE webhook_attempts, webhook_deliveries, events"
q -c "UPDATE webhook_subscriptions SET url = 'https://localhost:$recv_port/ok'"
start=$(date +%s.%N)
q -c "BEGIN" \
  -c "INSERT INTO orders SELECT 'ord_t' || g, 'test', 'acct_bob', 'paid', 'USD'
      FROM generate_series(1, $n_bulk) g" \
  -c "INSERT INTO order_items SELECT 'ord_t' || g, 1, 'prod_a', 'tier_a', 'A', 'P', 1999
      FROM generate_series(1, $n_bulk) g" -c "COMMIT"
say "     $n_bulk paid orders committed in $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s (triggers included)"
"$drainer" 2>"$work/t.log" &
t=$!
pids+=($t)
wait_for 300 "SELECT bool_and(status = 'delivered') FROM webhook_deliveries" || bad "throughput run"
say "     $(q -c "SELECT count(*) || ' delivered at ' ||
               round(count(*) / extract(epoch FROM max(attempted_at) - min(attempted_at))) || '/s'
               FROM webhook_attempts") (load average $(cut -d' ' -f1-3 /proc/loadavg))"

say "== latency: 500 orders, one per transaction, 50 per second"
q -c "TRUNCATE webhook_attempts, webhook_deliveries, events"
: >"$work/recv.log"
node "$repo/tests/webhooks/latency.js" "postgresql://postgres@127.0.0.1:$pg_port/wh" 500 50 lat \
    >/dev/null
sleep 1
say "     $(node "$repo/tests/webhooks/latency-report.js" \
        "postgresql://postgres@127.0.0.1:$pg_port/wh" "$work/recv.log")"
kill -TERM $t
wait $t || true
forget $t

if [ $fail_count -gt 0 ]; then
    say "$fail_count check(s) failed"
    exit 1
fi
say "all checks passed"
