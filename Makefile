# market: the catalogue, orders and downloads API.
#
#   make run     the whole stack with a demo sandbox on 127.0.0.1:8080 (Ctrl-C stops it)
#   make check   every test: unit tests (plain and under ASan/UBSan), fuzz smoke runs,
#                end-to-end tests through real nginx, spawn-fcgi and PostgreSQL, and the
#                test suites of the four client libraries (clients/)
#
# Both install missing Debian packages first (tools/install-deps).

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

LIB_SRC      := $(wildcard lib/*.c)
API_SRC      := $(wildcard app/api/*.c)
WEBHOOKD_SRC := $(wildcard app/webhookd/*.c)
ADMIN_SRC    := $(wildcard app/admin/*.c)
UNIT_SRC     := $(wildcard tests/unit/*.c)

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

PROGRAMS = $(BUILD)/market-api $(BUILD)/market-webhookd $(BUILD)/market-admin

.PHONY: all run check deps unit unit-asan cli-test admin-test e2e clients-check fuzz bench format tidy \
        clean
all: $(PROGRAMS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# Only the three main.c see the version, so a new one rebuilds only them.
MAINS := $(call obj,app/api/main.c app/webhookd/main.c app/admin/main.c)
$(MAINS): CPPFLAGS += -DMARKET_VERSION='"$(VERSION)"'
$(MAINS): debian/changelog

$(BUILD)/libmarket.a: $(call obj,$(LIB_SRC))
	ar rcs $@ $^

$(BUILD)/market-api: $(call obj,$(API_SRC)) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ -lfcgi $(PKG_LIBS)

$(BUILD)/market-webhookd: $(call obj,$(WEBHOOKD_SRC)) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcurl $(PKG_LIBS)

$(BUILD)/market-admin: $(call obj,$(ADMIN_SRC)) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/unit-tests: $(call obj,$(UNIT_SRC)) $(BUILD)/libmarket.a
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs check) $(PKG_LIBS)

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

# --help, --version and wrong arguments of the three programs; no database needed.
cli-test: all
	tests/cli/run.sh

# market-admin against a scratch PostgreSQL cluster of its own.
admin-test: $(BUILD)/market-admin
	tests/admin/run.sh

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
	$(MAKE) cli-test
	$(MAKE) unit-asan
	$(MAKE) fuzz
	$(MAKE) admin-test
	$(MAKE) e2e
	$(MAKE) clients-check

bench: all
	bench/run

format:
	clang-format -i lib/*.[ch] app/*/*.[ch] tests/unit/*.[ch] tests/fuzz/*.c

tidy:
	clang-tidy $(LIB_SRC) $(API_SRC) $(WEBHOOKD_SRC) $(ADMIN_SRC) -- $(CPPFLAGS) -std=c11

clean:
	rm -rf $(BUILD)
