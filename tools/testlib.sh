# tools/testlib.sh: what the test scripts share (tests/e2e/run, clients/*/test.sh). Sourced,
# not run:
#
#   . "$REPO/tools/testlib.sh"
#   port=$(free_port [FIRST-LAST])   a TCP port nothing listens on: one of FIRST-LAST when
#                                    given and one is free, else one of 20000-32767 (below
#                                    the kernel's ephemeral range, 32768-60999 on Linux,
#                                    where outgoing connections take ports at any moment)
#   make_test_tls DIR NAME [SAN...]  a throwaway CA named NAME and a certificate for
#                                    localhost and 127.0.0.1 (and each extra SAN given,
#                                    such as IP:10.1.2.3 or DNS:recv.test) signed by it:
#                                    DIR/ca.pem, DIR/server.pem, DIR/server.key (readable
#                                    by the test processes). On failure prints openssl's
#                                    output on stderr and returns 1.
#   plain_stack_up DIR PORT          a stack (tools/stack up) of one worker in DIR on PORT
#                                    with none of this shell's MARKET_* settings (the
#                                    defaults: no extension) but MARKET_WEBHOOK_ALLOW_PRIVATE=1;
#                                    prints its lines to eval, each variable prefixed PLAIN_
#   show_stack_logs SAY DIR...       the last 30 lines of each stack's logs on stderr, each
#                                    introduced by the function SAY (the script's own say)
#
#   ok NAME / bad NAME [DETAIL]      count a check that passed / failed (a failure is
#                                    printed, DETAIL indented under it; a pass only with
#                                    CHECKS_VERBOSE=1)
#   check NAME COMMAND...            ok when COMMAND succeeds, else bad with its output
#   tally                            prints "N passed, M failed"; true when none failed
# shellcheck shell=bash

port_in_use() { ss -ltnH "sport = :$1" 2>/dev/null | grep -q .; }

free_port() {
    local range p i
    for range in ${1:+"$1"} 20000-32767; do
        for ((i = 0; i < 100; i++)); do
            p=$(shuf -i "$range" -n 1)
            if ! port_in_use "$p"; then
                printf '%s\n' "$p"
                return 0
            fi
        done
    done
    return 1
}

plain_stack_up() {
    local dir=$1 port=$2 name exports
    local unset_market=()
    while IFS= read -r name; do unset_market+=(-u "$name"); done < <(compgen -v MARKET_ || true)
    exports=$(env "${unset_market[@]}" MARKET_WEBHOOK_ALLOW_PRIVATE=1 \
        "$(dirname -- "${BASH_SOURCE[0]}")/stack" up --dir "$dir" --port "$port" --workers 1) || return 1
    printf '%s\n' "$exports" | sed -n 's/^export /export PLAIN_/p'
}

show_stack_logs() {
    local say=$1 d f
    shift
    for d in "$@"; do
        for f in api.log webhookd.log nginx-error.log postgresql.log migrate.log; do
            if [ -s "$d/log/$f" ]; then
                "$say" "last lines of $d/log/$f:"
                tail -n 30 -- "$d/log/$f" | sed 's/^/    | /' >&2
            fi
        done
    done
}

make_test_tls() {
    local dir=$1 name=$2 san='DNS:localhost,IP:127.0.0.1,IP:::1' extra
    shift 2
    for extra in "$@"; do san+=",$extra"; done
    mkdir -p -- "$dir"
    if ! {
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
            -subj "/CN=$name" -keyout "$dir/ca.key" -out "$dir/ca.pem" \
            -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign &&
            openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                -subj '/CN=localhost' -keyout "$dir/server.key" -out "$dir/server.csr" &&
            printf '%s\n' "subjectAltName=$san" 'basicConstraints=CA:FALSE' \
                'keyUsage=critical,digitalSignature' 'extendedKeyUsage=serverAuth' >"$dir/server.ext" &&
            openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
                -CAcreateserial -days 2 -extfile "$dir/server.ext" -out "$dir/server.pem"
    } >"$dir/openssl.log" 2>&1; then
        cat "$dir/openssl.log" >&2
        return 1
    fi
    # The tests' own processes (and the webhook receivers they start) read the key; the
    # directory is removed with the test's.
    chmod 644 -- "$dir"/*.key "$dir"/*.pem
}

CHECKS_PASSED=0
CHECKS_FAILED=0
ok() {
    CHECKS_PASSED=$((CHECKS_PASSED + 1))
    if [ "${CHECKS_VERBOSE:-0}" = 1 ]; then printf 'ok    %s\n' "${1:-}"; fi
}
bad() {
    CHECKS_FAILED=$((CHECKS_FAILED + 1))
    printf 'FAIL  %s\n' "$1"
    if [ -n "${2:-}" ]; then printf '%s\n' "$2" | sed 's/^/      | /'; fi
}
check() {
    local name=$1 out
    shift
    if out=$("$@" 2>&1); then ok "$name"; else bad "$name" "$out"; fi
}
tally() {
    printf '%d passed, %d failed\n' "$CHECKS_PASSED" "$CHECKS_FAILED"
    [ "$CHECKS_FAILED" = 0 ]
}
