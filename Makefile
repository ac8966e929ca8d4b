# market: the catalogue, orders and downloads API.
#
#   make run     the whole stack with a demo sandbox on 127.0.0.1:8080 (Ctrl-C stops it)
#   make check   every test: unit tests (plain and under ASan/UBSan), fuzz smoke runs,
#                end-to-end tests through real nginx, spawn-fcgi and PostgreSQL, and the
#                test suites of the four client libraries (clients/)
#   make scale-check  (root) the scale-out proof: pools on two hosts, a primary and its
#                replica, on network namespaces (tests/scale/run)
#
# Both install missing Debian packages first (tools/install-deps).

CC       ?= cc
BUILD    ?= build
CPPFLAGS += -Ilib -D_DEFAULT_SOURCE -D_GNU_SOURCE -D_FORTIFY_SOURCE=2
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wvla \
            -fstack-protector-strong -fPIE
LDFLAGS  += -pie -Wl,-z,relro,-z,now
PKGS      = libpq json-c libgcrypt
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CPPFLAGS += $(PKG_CFLAGS)

LIB_SRC      := $(wildcard lib/*.c)
API_SRC      := $(wildcard app/api/*.c)
WEBHOOKD_SRC := $(wildcard app/webhookd/*.c)
ADMIN_SRC    := $(wildcard app/admin/*.c)
UNIT_SRC     := $(wildcard tests/unit/*.c)
# The pure parts of the programs, unit tested beside lib/: linked into the unit binary
# without the programs' main.c. The tests include them as "webhookd/retry.h" and so on.
UNIT_APP_SRC := app/webhookd/retry.c app/webhookd/duetimes.c app/webhookd/target.c \
                app/webhookd/cabundle.c app/api/mime.c app/api/links.c

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

PROGRAMS = $(BUILD)/market-api $(BUILD)/market-webhookd $(BUILD)/market-admin

.PHONY: all run check deps unit unit-asan admin-test triggers-test e2e clients-check fuzz bench \
        format lint lint-format tidy cppcheck clean scale-check
all: $(PROGRAMS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libmarket.a: $(call obj,$(LIB_SRC))
	ar rcs $@ $^

$(BUILD)/market-api: $(call obj,$(API_SRC)) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ -lfcgi $(PKG_LIBS)

$(BUILD)/market-webhookd: $(call obj,$(WEBHOOKD_SRC)) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcurl $(PKG_LIBS)

$(BUILD)/market-admin: $(call obj,$(ADMIN_SRC)) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(call obj,$(UNIT_SRC)): CPPFLAGS += -Iapp

$(BUILD)/unit-tests: $(call obj,$(UNIT_SRC) $(UNIT_APP_SRC)) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs check) -lcurl $(PKG_LIBS)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

deps:
	tools/install-deps

run: deps
	$(MAKE) all
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

# market-admin against a scratch PostgreSQL cluster of its own.
admin-test: $(BUILD)/market-admin
	tests/admin/run.sh

# The event triggers of the webhook outbox (tests/webhooks/triggers_test.sql) against a
# scratch PostgreSQL cluster of their own, migrated by market-admin.
triggers-test: $(BUILD)/market-admin
	tests/webhooks/run.sh

fuzz:
	tests/fuzz/run

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
clients-check: all
	MAKEFLAGS= clients/js/test.sh
	MAKEFLAGS= clients/python/test.sh
	MAKEFLAGS= clients/php/test.sh
	MAKEFLAGS= clients/go/test.sh

check: deps
	$(MAKE) all $(BUILD)/unit-tests
	$(MAKE) unit
	$(MAKE) unit-asan
	$(MAKE) fuzz
	$(MAKE) admin-test
	$(MAKE) triggers-test
	$(MAKE) e2e
	$(MAKE) clients-check

bench: all
	bench/run

# The scale-out proof (as root: network namespaces): two app hosts, a PostgreSQL primary
# and its streaming replica, a front nginx and a webhook receiver, each in a namespace of
# its own on a private bridge; prints its figures. Not part of check (.ci/run runs it
# after check).
scale-check: all
	tests/scale/run

# make lint: the static checks CI runs before the tests; each part fails on any finding.
#   lint-format  clang-format --dry-run with .clang-format (`make format` applies it)
#   tidy         clang-tidy with .clang-tidy (which says why each check it turns off is
#                off), one process per core
#   cppcheck     cppcheck, told that `noreturn` functions never return (it does not read
#                <stdnoreturn.h>); a false positive is suppressed where it is, with the
#                reason. unusedStructMember is off: a struct that lays out a file or a
#                message is written and compared whole (write, memcmp), which it reads as
#                members never used
LINT_C   := $(wildcard lib/*.[ch] app/*/*.[ch] tests/unit/*.[ch] tests/fuzz/*.[ch])
LINT_SRC := $(filter %.c,$(LINT_C))
lint: lint-format tidy cppcheck

format:
	clang-format -i $(LINT_C)

lint-format:
	clang-format --dry-run -Werror $(LINT_C)

# clang-tidy counts what it suppresses in system headers ("N warnings generated"): that
# line is dropped, clang-tidy's exit status kept.
tidy:
	printf '%s\n' $(LINT_SRC) | xargs -P "$$(nproc)" -n 8 bash -c 'set -o pipefail; \
	    clang-tidy --quiet "$$@" -- $(CPPFLAGS) -Iapp $(shell pkg-config --cflags check) \
	        -std=c11 2>&1 | { grep -v "warnings\? generated\.$$" || true; }' clang-tidy

cppcheck:
	cppcheck -q --std=c11 -j "$$(nproc)" --enable=style,performance,portability --inline-suppr \
	        --error-exitcode=1 --suppress=missingIncludeSystem --suppress=unusedStructMember \
	        -Ilib -Iapp -D_GNU_SOURCE '-Dnoreturn=__attribute__((noreturn))' $(LINT_SRC)

clean:
	rm -rf $(BUILD)
