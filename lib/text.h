/* text: byte-level validation and decoding of untrusted input. */
#ifndef MARKET_TEXT_H
#define MARKET_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* True when s[0..n) is well-formed UTF-8 (no overlong forms, no surrogates, nothing
 * above U+10FFFF) and has no NUL byte. */
bool utf8_valid(const char *s, size_t n);

/* True when well-formed UTF-8 s[0..n) holds a control character: C0 (U+0000-U+001F, tab
 * and line breaks included), DEL (U+007F) or C1 (U+0080-U+009F). Text fields refuse them:
 * they would end up in logs, headers and receivers' screens as they are. */
bool text_has_control(const char *s, size_t n);

/* Number of code points in well-formed UTF-8. */
size_t utf8_length(const char *s, size_t n);

/* Decodes %XX escapes, and '+' as a space when plus_is_space (query strings), into out,
 * which must hold n + 1 bytes. Fails on a truncated or non-hex escape, on a decoded NUL
 * and on a result that is not valid UTF-8. */
bool percent_decode(const char *s, size_t n, bool plus_is_space, char *out, size_t *outlen);

/* The value of one hex digit (either case), or -1. */
int hex_digit(char c);

/* RFC 3986's unreserved characters: A-Z a-z 0-9 - . _ ~ */
bool percent_unreserved(unsigned char c);

/* Appends s[0..n) to b, each byte for which keep is false as %XX (upper-case hex). */
void percent_encode(buf *b, const char *s, size_t n, bool (*keep)(unsigned char));

/* True when s is an RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS with a real date and time
 * (second 60 only when leap_second), an optional fraction of 1..max_fraction digits, then
 * Z or +HH:MM / -HH:MM (T and Z in either case). */
bool rfc3339_valid(const char *s, int max_fraction, bool leap_second);

/* True when s is 1..max characters, each in the set [A-Za-z0-9] plus `extra`. */
bool token_valid(const char *s, size_t max, const char *extra);

#endif
