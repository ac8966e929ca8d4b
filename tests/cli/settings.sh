#!/usr/bin/env bash
# tests/cli/settings.sh: the rule of lib/settings.h, that one table declares every MARKET_*
# setting and nothing else reads one. It fails when, in the C files of lib/ and app/:
#   - getenv or secure_getenv names a MARKET_* variable, or takes anything but a string
#     literal, outside lib/settings.c (whose settings_getenv is the one reader);
#   - a string literal holds a MARKET_* name the table does not declare (but MARKET_OPS,
#     nginx's FastCGI parameter, not a setting);
# and when the README's table of settings is not the one the table writes (make
# readme-settings writes it again). Run by tests/cli/run.sh; the last line is
# "N passed, M failed", the exit status 0 only when M is 0.
#
#   BIN_DIR   where settings-doc is (default: build/, built by make cli-test)
set -u

ROOT=$(cd -- "$(dirname -- "$0")/../.." && pwd)
BIN=${BIN_DIR:-$ROOT/build}
# shellcheck source=tools/testlib.sh
. "$ROOT/tools/testlib.sh"

NOT_SETTINGS='MARKET_OPS'
cd "$ROOT" || exit 1
sources=$(find lib app -name '*.[ch]' ! -path lib/settings.c | sort)

names=$("$BIN/settings-doc" names) || { bad "$BIN/settings-doc names failed"; tally; exit 1; }
[ "$(wc -l <<<"$names")" -ge 20 ] || bad "the table declares only $(wc -l <<<"$names") settings"

# Every call of getenv outside lib/settings.c, with its file and line.
# shellcheck disable=SC2086
calls=$(grep -nE '\b(secure_)?getenv[[:space:]]*\(' $sources)
stray=$(grep -E 'getenv[[:space:]]*\([[:space:]]*"MARKET_' <<<"$calls")
if [ -z "$stray" ]; then ok "no MARKET_* read outside lib/settings.c"; else bad "MARKET_* read outside lib/settings.c (use config_load or config_load_one)" "$stray"; fi
indirect=$(grep -vE 'getenv[[:space:]]*\([[:space:]]*"' <<<"$calls" | grep .)
if [ -z "$indirect" ]; then ok "getenv takes literals only outside lib/settings.c"; else bad "getenv of a name that is not a literal, outside lib/settings.c" "$indirect"; fi

# The MARKET_* names inside string literals (escaped quotes included), with where they are.
# shellcheck disable=SC2086
found=$(grep -noE '"([^"\\]|\\.)*"' $sources | grep -E 'MARKET_[A-Z_]*[A-Z]' |
    while IFS= read -r hit; do
        grep -oE 'MARKET_[A-Z_]*[A-Z]' <<<"${hit#*:*:}" | while IFS= read -r name; do
            printf '%s %s\n' "$name" "${hit%%:*}:$(cut -d: -f2 <<<"$hit")"
        done
    done)
[ -n "$found" ] || bad "no MARKET_* name found in the string literals of lib/ and app/"
undeclared=$(while read -r name where; do
    grep -qx "$name" <<<"$names$(printf '\n%s' $NOT_SETTINGS)" || printf '%s (%s)\n' "$name" "$where"
done <<<"$found")
if [ -z "$undeclared" ]; then ok "every MARKET_* name in the code is declared"; else bad "MARKET_* names the table of lib/settings.c does not declare" "$undeclared"; fi

# The README's table, between its markers, against the one the table writes.
readme=$(sed -n '/^<!-- settings: /,/^<!-- end of settings -->/p' README.md | sed '1d;$d')
if [ -z "$readme" ]; then
    bad "README.md has no table of settings between <!-- settings: ... --> and <!-- end of settings -->"
elif diff <(printf '%s\n' "$readme") <("$BIN/settings-doc" markdown) >/dev/null; then
    ok "the README's table of settings is lib/settings.c's"
else
    bad "the README's table of settings is not lib/settings.c's: run make readme-settings" \
        "$(diff <(printf '%s\n' "$readme") <("$BIN/settings-doc" markdown) | head -n 10)"
fi

tally
