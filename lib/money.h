/* money: integer minor units <-> decimal text in major units. Never floating point. */
#ifndef MARKET_MONEY_H
#define MARKET_MONEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MONEY_TEXT_MAX 32

/* Writes minor / 10^exponent with no trailing fractional zeros: (1999,2) -> "19.99",
 * (500,2) -> "5", (120050,2) -> "1200.5", (-5,2) -> "-0.05". exponent is 0..9 (else it aborts: a
 * programming error). Cut to outsz like snprintf; returns the length written. */
size_t money_format(char *out, size_t outsz, int64_t minor, int exponent);

/* Writes v in decimal with its sign and a NUL ("-12"); the length without the NUL. */
size_t format_int(char out[24], long long v);

/* Parses a non-negative decimal ("12", "12.3", "12.34") into minor units of the given
 * exponent. Fails on signs, exponents, more fractional digits than exponent, overflow or
 * anything but digits and one dot. */
bool money_parse(const char *text, int exponent, int64_t *minor);

/* True when text is a non-negative decimal usable as a price filter: 1..12 integer
 * digits, optionally a dot and 1..12 fractional digits. */
bool decimal_valid(const char *text);

/* Compares two texts that pass decimal_valid by value: <0, 0 or >0. */
int decimal_compare(const char *a, const char *b);

#endif
