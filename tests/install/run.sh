#!/usr/bin/env bash
# tests/install/run.sh: make install and make uninstall, into scratch directories.
#
#   1. DESTDIR staging with the Debian layout (PREFIX=/usr SYSCONFDIR=/etc
#      SYSTEMDUNITDIR=/lib/systemd/system): exactly the expected files, with their modes;
#      the programs answer --version; an installed market-admin finds its migrations in
#      PREFIX/share/market/sql; the settings file is never overwritten; uninstall leaves
#      only the settings file.
#   2. A real prefix in a scratch directory: the installed nginx files, included as the
#      README says (conf.d file in http, the snippet inside a server; the example site),
#      pass nginx -t; the rendered settings file and units name that prefix.
#
# The last line is "N passed, M failed"; the exit status is 0 only when M is 0.
set -u

ROOT=$(cd -- "$(dirname -- "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/market-install-test.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT
# shellcheck source=tools/testlib.sh
. "$ROOT/tools/testlib.sh"
# make quietly, with the build of the checkout (no recompilation with other flags but
# market-admin's site commands, which are built with the layout's paths).
mk() { make -s -C "$ROOT" "$@" >"$WORK/make.log" 2>&1 || { cat "$WORK/make.log"; return 1; }; }

# --- 1. the Debian layout, staged ----------------------------------------------------------
D=$WORK/stage
LAYOUT=(PREFIX=/usr SYSCONFDIR=/etc SYSTEMDUNITDIR=/lib/systemd/system "DESTDIR=$D")
check "make install (staged)" mk install "${LAYOUT[@]}"

expected=$(
    printf '%s\n' \
        '755 usr/bin/market-admin' '755 usr/sbin/market-api' '755 usr/sbin/market-webhookd' \
        '644 usr/share/man/man1/market-admin.1' '644 usr/share/man/man5/market.env.5' \
        '644 usr/share/man/man8/market-api.8' '644 usr/share/man/man8/market-webhookd.8' \
        '644 lib/systemd/system/market-api.socket' '644 lib/systemd/system/market-api.service' \
        '644 lib/systemd/system/market-webhookd.service' '644 lib/systemd/system/market-migrate.service' \
        '644 lib/systemd/system/market-.service.d/hardening.conf' \
        '644 lib/systemd/system/market-api@.socket' '644 lib/systemd/system/market-api@.service' \
        '644 lib/systemd/system/market-webhookd@.service' '644 lib/systemd/system/market-migrate@.service' \
        '644 lib/systemd/system/market-sites.slice' \
        '644 usr/share/market/nginx-site.conf' '644 usr/share/market/site.env' \
        '644 etc/market/market.env' '644 etc/nginx/conf.d/market.conf' \
        '644 etc/nginx/snippets/market.conf' '644 etc/nginx/snippets/market-fastcgi.conf' \
        '644 etc/nginx/snippets/market-sites-fastcgi.conf' \
        '644 usr/share/doc/market/examples/market-site.conf'
    for f in "$ROOT"/sql/migrations/*.sql; do printf '644 usr/share/market/sql/%s\n' "${f##*/}"; done
)
actual=$(cd "$D" && find . -type f -printf '%m %P\n')
if [ "$(sort <<<"$expected")" = "$(sort <<<"$actual")" ]; then
    ok
else
    bad "installed files differ: $(diff <(sort <<<"$expected") <(sort <<<"$actual") | grep '^[<>]' | tr '\n' ' ')"
fi

version=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$ROOT/debian/changelog")
for p in usr/bin/market-admin usr/sbin/market-api usr/sbin/market-webhookd; do
    check "$p --version" test "$("$D/$p" --version)" = "${p##*/} $version"
done

# Without MARKET_MIGRATIONS_DIR the installed tool reads DESTDIR/usr/share/market/sql: it
# gets as far as the database (unreachable here), not a missing folder.
out=$(env -u MARKET_MIGRATIONS_DIR MARKET_DB='host=/nonexistent connect_timeout=1' \
    "$D/usr/bin/market-admin" migrate 2>&1)
case $out in
*/share/market/sql*) bad "installed market-admin did not find its migrations: $out" ;;
*) ok ;;
esac

for f in etc/market/market.env lib/systemd/system/market-api.service etc/nginx/snippets/market.conf; do
    check "$f has no placeholder left" bash -c "! grep -v '^[[:space:]]*#' '$D/$f' | grep -q '@[A-Z_]*@'"
done
check "units name the installed programs" grep -q '^ExecStart=/usr/sbin/market-webhookd$' \
    "$D/lib/systemd/system/market-webhookd.service"
check "units read /etc/market/market.env" grep -q '^EnvironmentFile=/etc/market/market.env$' \
    "$D/lib/systemd/system/market-migrate.service"
check "the snippet aliases the packaged files root" grep -q 'alias "/var/lib/market/files/";' \
    "$D/etc/nginx/snippets/market.conf"
check "the http part limits each address: 100 requests a second" grep -q \
    '^limit_req_zone $binary_remote_addr zone=market_req_per_addr:10m rate=100r/s;$' "$D/etc/nginx/conf.d/market.conf"
check "the snippet limits each address: 64 in progress, a burst of 1000" bash -c \
    "grep -q '^    limit_conn market_conn_per_addr 64;\$' '$D/etc/nginx/snippets/market.conf' &&
     grep -q '^    limit_req zone=market_req_per_addr burst=1000 nodelay;\$' '$D/etc/nginx/snippets/market.conf'"
check "the snippet logs downloads to nginx's log without their token" grep -q \
    '^    access_log /var/log/nginx/access.log market_redacted;$' "$D/etc/nginx/snippets/market.conf"

# The settings file is the administrator's: a second install keeps it.
echo '# changed by the administrator' >>"$D/etc/market/market.env"
check "make install again" mk install "${LAYOUT[@]}"
check "install keeps the settings file" grep -q 'changed by the administrator' "$D/etc/market/market.env"

check "make uninstall" mk uninstall "${LAYOUT[@]}"
left=$(cd "$D" && find . -type f -printf '%P\n')
check "uninstall leaves only the settings file (left: $left)" test "$left" = etc/market/market.env
check "uninstall removes the emptied folders" test ! -e "$D/usr/share/market"

# --- 2. a real prefix: nginx takes the installed files -----------------------------------
P=$WORK/prefix
check "make install (prefix)" mk install "PREFIX=$P" "RUNSTATEDIR=$WORK/run" "LOCALSTATEDIR=$WORK/var"
check "the settings file names the prefix" grep -q "^MARKET_SECRET_FILE=$P/etc/market/secret$" \
    "$P/etc/market/market.env"
check "the pool unit names the prefix" grep -q "$P/sbin/market-api'$" \
    "$P/lib/systemd/system/market-api.service"

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
# The snippet's download locations log to LOCALSTATEDIR/log/nginx/access.log.
mkdir -p "$WORK/nginx/tmp" "$WORK/var/lib/market/files" "$WORK/var/log/nginx"
nginx_t() {
    cat >"$WORK/nginx/nginx.conf" <<EOF
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events {}
http {
    client_body_temp_path $WORK/nginx/tmp;
    fastcgi_temp_path $WORK/nginx/tmp;
    proxy_temp_path $WORK/nginx/tmp;
    uwsgi_temp_path $WORK/nginx/tmp;
    scgi_temp_path $WORK/nginx/tmp;
    access_log off;
    include $P/etc/nginx/conf.d/market.conf;
    $1
}
EOF
    "$NGINX" -t -q -p "$WORK/nginx/" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/error.log" 2>"$WORK/nginx/t.log" || {
        cat "$WORK/nginx/t.log"
        return 1
    }
}
check "nginx -t: the snippet inside an existing server" \
    nginx_t "server { listen 127.0.0.1:1; location = /other { return 204; } include $P/etc/nginx/snippets/market.conf; }"
sed "s|listen 80;|listen 127.0.0.1:1;|" "$P/share/doc/market/examples/market-site.conf" >"$WORK/site.conf"
check "nginx -t: the example site" nginx_t "include $WORK/site.conf;"
# A site's nginx file as market-admin site create fills it in, beside the default
# site's snippet: the two share the http part and the FastCGI parameters.
sed -e 's|{{SITE}}|shop1|g' -e 's|{{SERVER_NAME}}|shop1.example|g' -e 's|{{LISTEN}}|127.0.0.1:1|g' \
    -e "s|{{FILES_ROOT}}|$WORK/var/lib/market/sites/shop1/files|g" "$P/share/market/nginx-site.conf" >"$WORK/shop1.conf"
check "a site's nginx file has no placeholder left" bash -c "! grep -v '^[[:space:]]*#' '$WORK/shop1.conf' | grep -q '@[A-Z_]*@\|{{'"
check "nginx -t: a site's file beside the snippet" \
    nginx_t "include $WORK/shop1.conf; server { listen 127.0.0.1:1; include $P/etc/nginx/snippets/market.conf; }"
check "make uninstall (prefix)" mk uninstall "PREFIX=$P" "RUNSTATEDIR=$WORK/run" "LOCALSTATEDIR=$WORK/var"

tally
