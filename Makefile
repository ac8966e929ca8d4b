# market: the catalogue, orders and downloads API.
#
#   make run     the whole stack with a demo sandbox on 127.0.0.1:8080 (Ctrl-C stops it)
#   make check   every test: unit tests (plain and under ASan/UBSan), fuzz smoke runs,
#                end-to-end tests through real nginx, spawn-fcgi and PostgreSQL, and the
#                test suites of the four client libraries (clients/)
#   make scale-check  (root) the scale-out proof: pools on two hosts, a primary and its
#                replica, on network namespaces (tests/scale/run)
#   make soak [DURATION=3600]  a mixed load at half the measured capacity for DURATION
#                seconds, with a verdict on errors, memory, connections and table sizes
#   make search-exact-check  search pages whole and exact: 1,000+ searches walked to their
#                end on 200,000 products, each against a reference without index
#                (tests/search_exact/run)
#
# Both install missing Debian packages first (tools/install-deps).
#
#   make install [PREFIX=/usr/local] [DESTDIR=]   programs, migrations, man pages, the
#                settings file, systemd units and nginx configuration (see "Installing")
#   make reference  the HTML API reference, build/reference/index.html (make run serves
#                it at /docs/; the package ships it in /usr/share/doc/market/reference/)
#   make deb     the Debian package (dpkg-buildpackage), in ../
#   make package-check   builds the package, lints it, installs it here and tries it
#   make systemd-check   (root) the package's units under a real systemd: a Debian 12
#                root booted by systemd-nspawn, the package installed and tried there
#   make bench-sites [SITES=100]  (root) that container with N sites of market-admin
#                site create: their creation, idle footprint, cold first requests, an
#                upgrade of the package and their removal, measured (bench/sites)

CC       ?= cc
BUILD    ?= build
# The version has one home, the first line of debian/changelog; the three programs get it
# as MARKET_VERSION (--version) and the man pages through their --version.
VERSION  := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
CPPFLAGS += -Ilib -D_DEFAULT_SOURCE -D_GNU_SOURCE -D_FORTIFY_SOURCE=2
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wvla \
            -fstack-protector-strong -fPIE
LDFLAGS  += -pie -Wl,-z,relro,-z,now
PKGS      = libpq json-c libgcrypt
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CPPFLAGS += $(PKG_CFLAGS)
# c-ares (lib/resolver.c): market-webhookd resolves the receivers' names without blocking
# its loop, market-api a new webhook URL's host within a deadline.
CARES_LIBS := $(shell pkg-config --libs libcares 2>/dev/null || echo -lcares)

LIB_SRC      := $(wildcard lib/*.c)
# market-api's rooms (app/api/*/: http, keys, ops, catalogue, orders, webhooks) each on the
# include path of its sources, as nginx's src/core, src/event and src/http are of its own:
# a header is named by itself, and the folder it lives in says which room owns it.
API_DIRS     := $(sort $(wildcard app/api/*/))
API_SRC      := $(wildcard app/api/*.c app/api/*/*.c)
API_INCLUDES := $(patsubst %/,-I%,$(API_DIRS))
# The retention pass (app/retention) runs on market-webhookd's loop.
WEBHOOKD_SRC := $(wildcard app/webhookd/*.c app/retention/*.c)
ADMIN_SRC    := $(wildcard app/admin/*.c)
UNIT_SRC     := $(wildcard tests/unit/*.c)
# The pure parts of the programs, unit tested beside lib/: linked into the unit binary
# without the programs' main.c; of market-api every file but main.c, so that a test can
# run its route table, key and idempotency checks on a request made in memory. The tests
# include them as "webhookd/retry.h", "api/routes.h" and so on.
UNIT_APP_SRC := app/webhookd/retry.c app/webhookd/duetimes.c app/webhookd/target.c \
                app/webhookd/cabundle.c app/webhookd/webhook_sign.c app/retention/prune_pass.c \
                $(filter-out app/api/main.c,$(API_SRC)) \
                app/admin/site_text.c

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

PROGRAMS = $(BUILD)/market-api $(BUILD)/market-webhookd $(BUILD)/market-admin

.PHONY: hostile-check search-exact-check all run check deps unit unit-asan cli-test readme-settings admin-test triggers-test e2e clients-check \
        clients-release-check clients-dist clients-install-test \
        fuzz fuzz-long bench bench-sites soak format lint lint-format tidy cppcheck clean scale-check \
        failover-check man dist install \
        uninstall install-test deb package-check systemd-check openapi-lint reference reference-test FORCE
all: $(PROGRAMS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# Only the three main.c see the version, so a new one rebuilds only them.
MAINS := $(call obj,app/api/main.c app/webhookd/main.c app/admin/main.c)
$(MAINS): CPPFLAGS += -DMARKET_VERSION='"$(VERSION)"'
$(MAINS): debian/changelog

$(call obj,$(API_SRC)): CPPFLAGS += $(API_INCLUDES)
$(call obj,$(WEBHOOKD_SRC)): CPPFLAGS += -Iapp/webhookd -Iapp/retention

$(BUILD)/libmarket.a: $(call obj,$(LIB_SRC))
	rm -f $@ && ar rcs $@ $^

$(BUILD)/market-api: $(call obj,$(API_SRC)) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ -lfcgi $(CARES_LIBS) $(PKG_LIBS)

$(BUILD)/market-webhookd: $(call obj,$(WEBHOOKD_SRC)) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcurl $(CARES_LIBS) $(PKG_LIBS)

$(BUILD)/market-admin: $(call obj,$(ADMIN_SRC)) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# What the documentation takes from the table of settings, lib/settings.c: the settings
# file's blocks and the README's table (tools/settings-doc.c).
$(BUILD)/settings-doc: $(call obj,tools/settings-doc.c) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# The README's table of settings, between its two marker comments, made again from the
# table (tests/cli/settings.sh fails while they differ).
readme-settings: $(BUILD)/settings-doc
	$(BUILD)/settings-doc markdown >$(BUILD)/settings.md
	awk -v table=$(BUILD)/settings.md '/^<!-- settings: /{print; while ((getline l <table) > 0) print l; skip=1; next} \
	    /^<!-- end of settings -->/{skip=0} !skip; END {exit skip}' README.md >README.md.new
	mv -f README.md.new README.md

$(call obj,$(UNIT_SRC)): CPPFLAGS += -Iapp $(API_INCLUDES) -Iapp/webhookd -Iapp/retention


$(BUILD)/unit-tests: $(call obj,$(UNIT_SRC) $(UNIT_APP_SRC)) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs check) -lcurl -lfcgi $(CARES_LIBS) $(PKG_LIBS)

-include $(shell find $(BUILD) -type f -name '*.d' 2>/dev/null)

deps:
	tools/install-deps

run: deps
	$(MAKE) all reference
	tools/run

unit: $(BUILD)/unit-tests
	$(BUILD)/unit-tests

# The pure parts again, built with AddressSanitizer and UndefinedBehaviorSanitizer. The
# flags go through the environment so the warning flags above still apply. Check runs the
# tests in-process (CK_FORK=no) so that LeakSanitizer checks the whole run at exit.
ASAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
unit-asan:
	CFLAGS="-O1 -g $(ASAN_FLAGS)" LDFLAGS="$(ASAN_FLAGS)" \
	        $(MAKE) BUILD=build/asan CC=clang build/asan/unit-tests
	CK_FORK=no ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 build/asan/unit-tests

# --help, --version and wrong arguments of the three programs; no database needed.
cli-test: all $(BUILD)/settings-doc
	tests/cli/run.sh

# market-admin against a scratch PostgreSQL cluster of its own, and the unit tests' cases
# that need PostgreSQL (lib/db's transactions and array literals) against the same cluster.
admin-test: $(BUILD)/market-admin $(BUILD)/unit-tests
	tests/admin/run.sh

# The event triggers of the webhook outbox (tests/webhooks/triggers_test.sql) against a
# scratch PostgreSQL cluster of their own, migrated by market-admin.
triggers-test: $(BUILD)/market-admin
	tests/webhooks/run.sh

fuzz:
	tests/fuzz/run

# Each harness to FUZZ_RUNS executions (10 million), however long it takes (about an hour
# in all on 2 cores); new coverage is merged into tests/fuzz/corpus/ (commit it). Not in CI.
FUZZ_RUNS ?= 10000000
fuzz-long:
	FUZZ_RUNS=$(FUZZ_RUNS) tests/fuzz/run

e2e: all
	tests/e2e/run

# The client libraries (clients/js, python, php, go), each through its own test.sh: it
# starts its own stack with tools/stack in a temporary folder, runs the client's unit and
# integration tests against it and always stops it. One after another, not in parallel:
# each suite starts a stack of its own and has timing-sensitive tests (a real 429 from a
# low MARKET_RATE_LIMIT, webhook retries), so four at once on a small machine would only
# make them flaky. Make stops at the first line that fails, so the first failing client
# ends the step. Each script also runs `make all` so that it works on its own; here `all`
# is already built, and an empty MAKEFLAGS keeps that inner make from warning that it
# cannot reach the jobserver of a `make -j`.
# The four clients' packaging (issue 22): clients/release.json holds the one version and the
# repository URL; clients/release-check finds a copy that drifted (--write sets them all);
# clients/dist builds the artifacts into build/clients-dist; clients/install-test.sh installs
# each into a clean project outside the repository and calls a real stack with it.
clients-release-check:
	clients/release-check

clients-dist:
	clients/dist $(BUILD)/clients-dist

clients-install-test: all
	MAKEFLAGS= clients/install-test.sh

clients-check: all
	clients/release-check
	MAKEFLAGS= clients/js/test.sh
	MAKEFLAGS= clients/python/test.sh
	MAKEFLAGS= clients/php/test.sh
	MAKEFLAGS= clients/go/test.sh
	MAKEFLAGS= clients/install-test.sh
	clients/conformance/run.sh

check: deps
	$(MAKE) all $(BUILD)/unit-tests
	$(MAKE) unit
	$(MAKE) cli-test
	$(MAKE) install-test
	$(MAKE) openapi-lint
	$(MAKE) reference-test
	$(MAKE) unit-asan
	$(MAKE) fuzz
	$(MAKE) admin-test
	$(MAKE) triggers-test
	$(MAKE) e2e
	$(MAKE) clients-check

bench: all
	bench/run

# A hundred sites on one host, measured (bench/sites, as root, about 15 minutes on 2
# cores): in the container of systemd-check (tests/systemd/lib.sh), SITES sites made by
# market-admin site create and started as it says; the time of each site create, what the
# host holds once they are all idle (processes, memory, database sessions), a cold first
# request to each, an upgrade of the package migrating them all and the removal of each;
# a summary table, also in var/bench-sites/. Not part of check nor of CI.
SITES ?= 100
bench-sites:
	bench/sites --sites $(SITES)

# The soak (tests/soak/run): a mixed load at half the measured capacity against a whole
# stack for DURATION seconds, with webhook deliveries, sampling RSS, PostgreSQL's
# connections and table sizes; prints the samples and a verdict. Not part of check (CI
# runs it for 60 s as a phase of its own).
DURATION ?= 3600
soak: all
	tests/soak/run --duration $(DURATION)

# The attacks of issue 21 against a real stack (tests/hostile/run): a search attack from
# one key, a connection flood from one address, a crash loop of the pool, PostgreSQL
# killed -9 under acknowledged writes, tokens in logs; each figure beside its bound. Not
# part of check (.ci/run runs it after check).
hostile-check: all
	tests/hostile/run

# Whole and exact search pages (issue 33; tests/search_exact/run): on a stack of its own with
# 200,000 seeded products and the page cache off, 1,000+ cases (q x sort x filters x
# limit, and sellers' catalogues) drawn from the catalogue's vocabulary, each walked
# through next_cursor to its end: ceil(N / limit) requests, every page but the last full,
# the ids exactly those of a reference PostgreSQL computes without any index. About 3
# minutes on 2 cores, so not part of check (.ci/run runs it after check, as hostile-check).
# SEARCH_EXACT_SEED draws other cases.
search-exact-check: all
	tests/search_exact/run

# The scale-out proof (as root: network namespaces): two app hosts, a PostgreSQL primary
# and its streaming replica, a front nginx and a webhook receiver, each in a namespace of
# its own on a private bridge; prints its figures. Not part of check (.ci/run runs it
# after check).
scale-check: all
	tests/scale/run

# The failover proof (as root: network namespaces): Patroni and etcd manage a primary and
# its synchronous standby; the primary is cut off under load and the standby promoted,
# then the old primary rejoins as a replica; prints its figures. Not part of check
# (.ci/run runs it after scale-check).
failover-check: all
	tests/failover/run

# make lint: the static checks CI runs before the tests; each part fails on any finding.
#   lint-format  clang-format --dry-run with .clang-format (`make format` applies it)
#   tidy         clang-tidy with .clang-tidy (which says why each check it turns off is
#                off), one process per core
#   cppcheck     cppcheck, told that `noreturn` functions never return (it does not read
#                <stdnoreturn.h>); a false positive is suppressed where it is, with the
#                reason. unusedStructMember is off: a struct that lays out a file or a
#                message is written and compared whole (write, memcmp), which it reads as
#                members never used
#   lint-comments  every C file of lib/ and app/ opens with a comment saying why it exists
#                (tools/check-comments)
#   lint-db      libpq (its header, PGresult, PGconn, PQ*) appears only in lib/db*.[ch]
#                (tools/check-db-boundary)
LINT_C   := $(wildcard lib/*.[ch] app/*/*.[ch] app/*/*/*.[ch] tests/unit/*.[ch] tests/fuzz/*.[ch] \
                      tools/*.c)
# Every room's headers, for the linters that read each file on its own.
LINT_INCLUDES := -Iapp $(API_INCLUDES) -Iapp/webhookd -Iapp/retention -Iapp/admin
LINT_SRC := $(filter %.c,$(LINT_C))
lint: lint-format lint-comments lint-db tidy cppcheck

.PHONY: lint-comments lint-db
lint-comments:
	tools/check-comments

lint-db:
	tools/check-db-boundary

format:
	clang-format -i $(LINT_C)

lint-format:
	clang-format --dry-run -Werror $(LINT_C)

# clang-tidy counts what it suppresses in system headers ("N warnings generated"): that
# line is dropped, clang-tidy's exit status kept.
tidy:
	printf '%s\n' $(LINT_SRC) | xargs -P "$$(nproc)" -n 8 bash -c 'set -o pipefail; \
	    clang-tidy --quiet "$$@" -- $(CPPFLAGS) $(LINT_INCLUDES) $(shell pkg-config --cflags check) \
	        -DMARKET_VERSION=\"$(VERSION)\" \
	        -std=c11 2>&1 | { grep -v "warnings\? generated\.$$" || true; }' clang-tidy

cppcheck:
	cppcheck -q --std=c11 -j "$$(nproc)" --enable=style,performance,portability --inline-suppr \
	        --error-exitcode=1 --suppress=missingIncludeSystem --suppress=unusedStructMember \
	        -Ilib $(LINT_INCLUDES) -D_GNU_SOURCE '-Dnoreturn=__attribute__((noreturn))' $(LINT_SRC)

clean:
	rm -rf $(BUILD)

# ---------------------------------------------------------------------------------------
# Installing. The GNU directory variables, each overridable; debian/rules sets PREFIX=/usr
# and SYSCONFDIR=/etc. RUNSTATEDIR and LOCALSTATEDIR are where the services keep their
# socket, counters and product files whatever the prefix.
PREFIX         ?= /usr/local
BINDIR         ?= $(PREFIX)/bin
SBINDIR        ?= $(PREFIX)/sbin
DATADIR        ?= $(PREFIX)/share
MANDIR         ?= $(DATADIR)/man
DOCDIR         ?= $(DATADIR)/doc/market
SYSCONFDIR     ?= $(PREFIX)/etc
NGINXDIR       ?= $(SYSCONFDIR)/nginx
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
LOCALSTATEDIR  ?= /var
RUNSTATEDIR    ?= /run
MULTIWATCH     ?= /usr/bin/multiwatch
# The group nginx's workers run as: it may connect to the pool's socket.
NGINX_GROUP    ?= www-data
# The packaged nginx site's address, and the files location's path.
SITE_LISTEN    ?= 80
FILES_PATH     ?= /files
# The per-address limits of the nginx configuration (nginx/*.template, docs/deploy.md):
# requests one client address may have in progress, its average rate per second, and
# the burst above that rate (a key's whole minute, 600, fits); and where the locations
# that may see a download token log, in the format that leaves the token out.
NGINX_CONN_PER_ADDR ?= 64
NGINX_REQ_PER_ADDR  ?= 100
NGINX_REQ_BURST     ?= 1000
NGINX_ACCESS_LOG    ?= $(LOCALSTATEDIR)/log/nginx/access.log

DIST := $(BUILD)/dist
# market-admin site writes where the units read (the same directory variables), so the
# site commands are built with them; debian/rules builds with the Debian layout.
SITE_OBJS := $(call obj,app/admin/site.c app/admin/site_sys.c app/admin/site_list.c)
$(SITE_OBJS): CPPFLAGS += -DSITE_SYSCONFDIR='"$(SYSCONFDIR)"' -DSITE_DATADIR='"$(DATADIR)"' \
        -DSITE_LOCALSTATEDIR='"$(LOCALSTATEDIR)"' -DSITE_RUNSTATEDIR='"$(RUNSTATEDIR)"' \
        -DSITE_NGINX_GROUP='"$(NGINX_GROUP)"' -DSITE_LISTEN='"$(SITE_LISTEN)"'
$(SITE_OBJS): $(DIST)/paths

MANS := $(DIST)/man/market-api.8 $(DIST)/man/market-webhookd.8 $(DIST)/man/market-admin.1 \
        $(DIST)/man/market.env.5
UNITS := $(DIST)/systemd/market-api.socket $(DIST)/systemd/market-api.service \
         $(DIST)/systemd/market-webhookd.service $(DIST)/systemd/market-migrate.service \
         $(DIST)/systemd/market-api@.socket $(DIST)/systemd/market-api@.service \
         $(DIST)/systemd/market-webhookd@.service $(DIST)/systemd/market-migrate@.service \
         $(DIST)/systemd/market-sites.slice
NGINX_FILES := $(DIST)/nginx/conf.d/market.conf $(DIST)/nginx/snippets/market.conf \
               $(DIST)/nginx/snippets/market-fastcgi.conf $(DIST)/nginx/market-site.conf \
               $(DIST)/nginx/snippets/market-sites-fastcgi.conf
# What market-admin site create starts from (DATADIR/market): the nginx file of a site and
# the settings file of a site (the packaged market.env, every setting described).
SITE_FILES := $(DIST)/site/nginx-site.conf $(DIST)/site/site.env
DIST_FILES := $(MANS) $(UNITS) $(DIST)/systemd/market-.service.d/hardening.conf \
              $(DIST)/market.env $(NGINX_FILES) $(SITE_FILES)

# The rendered files depend on the directory variables: this file changes when they do.
$(DIST)/paths: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' $(BINDIR) $(SBINDIR) $(DATADIR) $(SYSCONFDIR) $(NGINXDIR) $(LOCALSTATEDIR) \
	        $(RUNSTATEDIR) $(MULTIWATCH) $(NGINX_GROUP) $(SITE_LISTEN) $(FILES_PATH) \
	        $(NGINX_CONN_PER_ADDR) $(NGINX_REQ_PER_ADDR) $(NGINX_REQ_BURST) $(NGINX_ACCESS_LOG) >$@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

# @NAME@ placeholders of our own .in files, everywhere in them.
RENDER = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SBINDIR@|$(SBINDIR)|g' \
             -e 's|@DATADIR@|$(DATADIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
             -e 's|@LOCALSTATEDIR@|$(LOCALSTATEDIR)|g' -e 's|@RUNSTATEDIR@|$(RUNSTATEDIR)|g' \
             -e 's|@MULTIWATCH@|$(MULTIWATCH)|g' -e 's|@NGINX_GROUP@|$(NGINX_GROUP)|g'
# The nginx templates document their placeholders in comments: only the directives are
# rendered (as tools/stack does), and none may be left there. Installed, the server part
# is the snippet NGINXDIR/snippets/market.conf, so the site includes it by that name.
NGINX_RENDER = sed -e '/^[[:space:]]*\#/!{' \
    -e 's|@UPSTREAM_SERVERS@|server unix:$(RUNSTATEDIR)/market/api.sock;|g' \
    -e 's|@UPSTREAM_KEEPALIVE@|keepalive 32;|g' \
    -e 's|@CONF_DIR@/market-server\.conf|$(NGINXDIR)/snippets/market.conf|g' \
    -e 's|@CONF_DIR@|$(NGINXDIR)/snippets|g' -e 's|@FILES_ROOT@|$(LOCALSTATEDIR)/lib/market/files|g' \
    -e 's|@FILES_PATH@|$(FILES_PATH)|g' -e 's|@LISTEN@|$(SITE_LISTEN)|g' \
    -e 's|@CONN_PER_ADDR@|$(NGINX_CONN_PER_ADDR)|g' -e 's|@REQ_PER_ADDR@|$(NGINX_REQ_PER_ADDR)|g' \
    -e 's|@REQ_BURST@|$(NGINX_REQ_BURST)|g' -e 's|@ACCESS_LOG@|$(NGINX_ACCESS_LOG) market_redacted|g' \
    -e 's|@REFERENCE_DIR@|$(DOCDIR)/reference|g' -e '}'
# render INPUT OUTPUT SED-COMMAND: renders and refuses a placeholder left outside comments.
define render
	@mkdir -p $(dir $(2))
	$(3) $(1) >$(2).new
	@if grep -v '^[[:space:]]*#' $(2).new | grep -n '@[A-Z_]*@'; then \
	    echo "$(1): a placeholder left in $(2)" >&2; rm -f $(2).new; exit 1; fi
	@mv -f $(2).new $(2)
endef

# The settings file: etc/market.env.in's header, then a block per setting of lib/settings.c.
$(DIST)/market.env.in: etc/market.env.in $(BUILD)/settings-doc
	@mkdir -p $(@D)
	{ grep -v '^#%' etc/market.env.in && $(BUILD)/settings-doc env; } >$@.new
	@mv -f $@.new $@
$(DIST)/market.env: $(DIST)/market.env.in $(DIST)/paths
	$(call render,$<,$@,$(RENDER))
$(DIST)/systemd/%: systemd/%.in $(DIST)/paths
	$(call render,$<,$@,$(RENDER))
$(DIST)/systemd/market-sites.slice: systemd/market-sites.slice
	@mkdir -p $(@D)
	cp -f $< $@
$(DIST)/systemd/market-.service.d/hardening.conf: systemd/market-.service.d/hardening.conf
	@mkdir -p $(@D)
	cp -f $< $@
$(DIST)/nginx/conf.d/market.conf: nginx/market-http.conf.template $(DIST)/paths
	$(call render,$<,$@,$(NGINX_RENDER))
$(DIST)/nginx/snippets/market.conf: nginx/market-server.conf.template $(DIST)/paths
	$(call render,$<,$@,$(NGINX_RENDER))
$(DIST)/nginx/snippets/market-fastcgi.conf: nginx/market-fastcgi.conf
	@mkdir -p $(@D)
	cp -f $< $@
$(DIST)/nginx/market-site.conf: nginx/market-site.conf.template $(DIST)/paths
	$(call render,$<,$@,$(NGINX_RENDER))
# A site's nginx file: the locations of market-server.conf.template (their comments left
# out) inside market-instance.conf.template's server, passed to the site's pool and
# streaming the site's files; the {{NAME}} placeholders are market-admin site create's.
SITE_NGINX_RENDER = sed -e '/^[[:space:]]*\#/!{' \
    -e 's|^\([[:space:]]*\)include "@CONF_DIR@/market-fastcgi.conf";|\1fastcgi_pass market_site_{{SITE}}$$market_pool_kind;\n\1include "@CONF_DIR@/market-sites-fastcgi.conf";|' \
    -e 's|@FILES_ROOT@|{{FILES_ROOT}}|g' \
    -e 's|@ACCESS_LOG@|@SITE_ACCESS_LOG@|g' -e '}'
$(DIST)/site/locations.conf: nginx/market-server.conf.template $(DIST)/paths
	@mkdir -p $(@D)
	grep -v '^[[:space:]]*#' $< | cat -s | sed -e 's|^\(.\)|    \1|' | $(SITE_NGINX_RENDER) >$@
$(DIST)/site/nginx-site.conf: nginx/market-instance.conf.template $(DIST)/site/locations.conf $(DIST)/paths
	sed -e '/@SERVER_LOCATIONS@/{r $(DIST)/site/locations.conf' -e 'd;}' $< >$@.in
	$(call render,$@.in,$@,sed -e 's|@DATADIR@|$(DATADIR)|g' -e 's|@NGINXDIR@|$(NGINXDIR)|g' \
	    -e 's|@RUNSTATEDIR@|$(RUNSTATEDIR)|g' -e 's|@LISTEN@|$(SITE_LISTEN)|g' \
	    -e 's|@SITE_ACCESS_LOG@|$(LOCALSTATEDIR)/log/nginx/market-{{SITE}}.access.log market_redacted|g' \
	    -e 's|@SITE_ERROR_LOG@|$(LOCALSTATEDIR)/log/nginx/market-{{SITE}}.error.log|g' \
	    -e 's|@CONN_PER_ADDR@|$(NGINX_CONN_PER_ADDR)|g' -e 's|@REQ_BURST@|$(NGINX_REQ_BURST)|g' \
	    -e 's|@CONF_DIR@|$(NGINXDIR)/snippets|g' -e 's|@FILES_PATH@|$(FILES_PATH)|g')
	@rm -f $@.in
# The FastCGI parameters of every site: market-fastcgi.conf without its fastcgi_pass (a
# site's locations name its own pool), with a header of its own. A configuration file of
# its own, so that the default site's market-fastcgi.conf stays as it was.
$(DIST)/nginx/snippets/market-sites-fastcgi.conf: nginx/market-fastcgi.conf
	@mkdir -p $(@D)
	{ printf '%s\n' '# The FastCGI parameters of the sites of market-admin site create (their nginx' \
	    '# files include it after their own fastcgi_pass): market-fastcgi.conf without its' \
	    '# fastcgi_pass, which names the default site'"'"'s pool. Tune every site here.'; \
	  sed -e '1,/^$$/d' -e '/^# market_api for GET and HEAD/d' \
	      -e '/^fastcgi_pass market_api$$market_pool_kind;$$/d' $<; } >$@.new
	@if grep -q '^fastcgi_pass' $@.new; then echo "$@: a fastcgi_pass left" >&2; exit 1; fi
	@mv -f $@.new $@
$(DIST)/site/site.env: $(DIST)/market.env
	@mkdir -p $(@D)
	cp -f $< $@

# Man pages from one source: help2man runs each program's --help and --version (with the
# extra sections of man/*.h2m), and tools/man-env turns the settings file into
# market.env(5). SOURCE_DATE_EPOCH (set by dpkg-buildpackage) fixes their date.
$(DIST)/man/%.8: $(BUILD)/% man/%.h2m
	@mkdir -p $(@D)
	help2man --no-info --section=8 --include=man/$*.h2m --output=$@ $<
$(DIST)/man/%.1: $(BUILD)/% man/%.h2m
	@mkdir -p $(@D)
	help2man --no-info --section=1 --include=man/$*.h2m --output=$@ $<
$(DIST)/man/market.env.5: $(DIST)/market.env tools/man-env debian/changelog
	@mkdir -p $(@D)
	tools/man-env $< $(VERSION) "$$(date -u -d @$${SOURCE_DATE_EPOCH:-$$(date +%s)} +%Y-%m-%d)" >$@.new
	@mv -f $@.new $@

man: $(MANS)
dist: all $(DIST_FILES)

# DESTDIR stages the files for a package; without it they land in place. The settings
# file is not overwritten when it exists (it is the administrator's).
install: dist
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(DATADIR)/market/sql \
	        $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
	        $(DESTDIR)$(SYSCONFDIR)/market $(DESTDIR)$(SYSTEMDUNITDIR)/market-.service.d \
	        $(DESTDIR)$(NGINXDIR)/conf.d $(DESTDIR)$(NGINXDIR)/snippets $(DESTDIR)$(DOCDIR)/examples
	install -m 0755 $(BUILD)/market-admin $(DESTDIR)$(BINDIR)/market-admin
	install -m 0755 $(BUILD)/market-api $(BUILD)/market-webhookd $(DESTDIR)$(SBINDIR)/
	install -m 0644 sql/migrations/*.sql $(DESTDIR)$(DATADIR)/market/sql/
	install -m 0644 $(DIST)/man/market-admin.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(DIST)/man/market.env.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 $(DIST)/man/market-api.8 $(DIST)/man/market-webhookd.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 $(UNITS) $(DESTDIR)$(SYSTEMDUNITDIR)/
	install -m 0644 $(DIST)/systemd/market-.service.d/hardening.conf \
	        $(DESTDIR)$(SYSTEMDUNITDIR)/market-.service.d/
	install -m 0644 $(DIST)/nginx/conf.d/market.conf $(DESTDIR)$(NGINXDIR)/conf.d/
	install -m 0644 $(DIST)/nginx/snippets/market.conf $(DIST)/nginx/snippets/market-fastcgi.conf \
	        $(DIST)/nginx/snippets/market-sites-fastcgi.conf $(DESTDIR)$(NGINXDIR)/snippets/
	install -m 0644 $(DIST)/nginx/market-site.conf $(DESTDIR)$(DOCDIR)/examples/
	install -m 0644 $(SITE_FILES) $(DESTDIR)$(DATADIR)/market/
	test -e $(DESTDIR)$(SYSCONFDIR)/market/market.env || \
	    install -m 0644 $(DIST)/market.env $(DESTDIR)$(SYSCONFDIR)/market/market.env

# Removes what install put in place but the settings file, which may hold the
# administrator's changes (remove it by hand), and the directories left empty.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/market-admin $(DESTDIR)$(SBINDIR)/market-api \
	      $(DESTDIR)$(SBINDIR)/market-webhookd
	rm -f $(addprefix $(DESTDIR)$(DATADIR)/market/sql/,$(notdir $(wildcard sql/migrations/*.sql)))
	rm -f $(addprefix $(DESTDIR)$(DATADIR)/market/,$(notdir $(SITE_FILES)))
	rm -f $(DESTDIR)$(MANDIR)/man1/market-admin.1 $(DESTDIR)$(MANDIR)/man5/market.env.5 \
	      $(DESTDIR)$(MANDIR)/man8/market-api.8 $(DESTDIR)$(MANDIR)/man8/market-webhookd.8
	rm -f $(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(notdir $(UNITS))) \
	      $(DESTDIR)$(SYSTEMDUNITDIR)/market-.service.d/hardening.conf
	rm -f $(DESTDIR)$(NGINXDIR)/conf.d/market.conf $(DESTDIR)$(NGINXDIR)/snippets/market.conf \
	      $(DESTDIR)$(NGINXDIR)/snippets/market-fastcgi.conf \
	      $(DESTDIR)$(NGINXDIR)/snippets/market-sites-fastcgi.conf \
	      $(DESTDIR)$(DOCDIR)/examples/market-site.conf
	-rmdir $(DESTDIR)$(DATADIR)/market/sql $(DESTDIR)$(DATADIR)/market \
	       $(DESTDIR)$(SYSTEMDUNITDIR)/market-.service.d $(DESTDIR)$(DOCDIR)/examples \
	       $(DESTDIR)$(DOCDIR) 2>/dev/null
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/market/market.env ]; then \
	    echo "kept $(DESTDIR)$(SYSCONFDIR)/market/market.env (your settings)"; fi

# make install into a scratch DESTDIR, checked file by file, then make uninstall.
install-test: all
	tests/install/run.sh

# The Debian package, built by dpkg-buildpackage from a copy of the tree's files (those
# git knows, committed or not, without what .gitignore leaves out) in $(BUILD)/deb, so
# that its clean step never touches this tree's build. The .deb lands in the top folder.
# The HTML reference is built here first, with the Redocly CLI from npm (not a Debian
# package), and handed to debian/rules as debian/reference/index.html in that copy.
DEB := market_$(VERSION)_$(shell dpkg --print-architecture 2>/dev/null).deb
deb: $(BUILD)/reference/index.html
	rm -rf $(BUILD)/deb
	mkdir -p $(BUILD)/deb/market-$(VERSION)
	git ls-files -z --cached --others --exclude-standard | \
	    xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
	    tar --null -T - -cf - | tar -xf - -C $(BUILD)/deb/market-$(VERSION)
	install -D -m 0644 $(REFERENCE) $(BUILD)/deb/market-$(VERSION)/debian/reference/index.html
	cd $(BUILD)/deb/market-$(VERSION) && dpkg-buildpackage -us -uc -b
	cp -f $(BUILD)/deb/$(DEB) .
	@echo "built $(DEB)"

# The HTML API reference: one self-contained page (no CDN, no web fonts: it loads nothing
# from anywhere) built from docs/openapi.json by the same pinned Redocly CLI, its
# build-docs command (tools/openapi-lint/reference says what it adds). make run serves it
# at /docs/ (nginx/market-site.conf.template); the package ships it as
# /usr/share/doc/market/reference/index.html.
REFERENCE := $(BUILD)/reference/index.html
reference: $(REFERENCE)
$(REFERENCE): docs/openapi.json tools/openapi-lint/reference tools/openapi-lint/reference.mjs \
              tools/openapi-lint/reference.hbs tools/openapi-lint/redocly.yaml \
              tools/openapi-lint/package-lock.json
	tools/openapi-lint/reference $@

# The reference in a real headless browser (Debian's chromium) behind a stack's nginx
# (tests/reference/run): no console error and no failed or outside request, every route
# and webhook event of docs/openapi.json on the page, the badge "Extension: NAME" on the
# operations of an extension (x-market-extension) and on no other.
reference-test: all $(REFERENCE)
	STACK_REFERENCE_DIR=$(abspath $(dir $(REFERENCE))) tests/reference/run

# docs/openapi.json through Redocly CLI's recommended rules, every one an error (the CLI is
# pinned by tools/openapi-lint/package-lock.json, installed with npm ci).
openapi-lint:
	tools/openapi-lint/run

# Builds the package, lints it, installs it on this machine (as root) and tries it: see
# tests/package/run.sh. Removes and purges it again, whatever happens.
package-check:
	tests/package/run.sh

# The package's units run by systemd itself (as root: debootstrap and systemd-nspawn): a
# Debian 12 root booted with systemd as its PID 1 in a container of its own, the package
# installed there with apt, then socket activation, Restart=always, the drainer's and the
# migrations' order, two template sites started, stopped and removed, the journal free of
# the sandbox's refusals, and apt-get purge leaving nothing running; prints its timings
# (tests/systemd/run, a few minutes). Uses ./market_VERSION_ARCH.deb when it is newer than
# the tree, else make deb. The root is cached in var/systemd-check/ for the day, never in
# CI. Not part of check (.ci/run runs it after package-check).
systemd-check:
	tests/systemd/run
