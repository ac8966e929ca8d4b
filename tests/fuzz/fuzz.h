/* Helpers shared by the libFuzzer harnesses: property checks that abort() with a message,
 * and reference implementations written independently of lib/ to compare against. */
#ifndef MARKET_FUZZ_H
#define MARKET_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A violated property is a finding: report it and abort so libFuzzer saves the input. */
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A NUL-terminated heap copy of data[0..n) (the caller frees it). */
static inline char *fuzz_strndup(const uint8_t *data, size_t n)
{
    char *s = malloc(n + 1);
    if (s == NULL)
        abort();
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

/* Well-formed UTF-8 without NUL, straight from the table of well-formed byte sequences
 * (Unicode 15, table 3-7), rather than by decoding code points as lib/text.c does. */
static inline bool ref_utf8_valid(const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */
        size_t len;
        if (c >= 0x01 && c <= 0x7F)
            len = 1;
        else if (c >= 0xC2 && c <= 0xDF)
            len = 2;
        else if (c == 0xE0)
            len = 3, lo = 0xA0;
        else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
            len = 3;
        else if (c == 0xED)
            len = 3, hi = 0x9F;
        else if (c == 0xF0)
            len = 4, lo = 0x90;
        else if (c >= 0xF1 && c <= 0xF3)
            len = 4;
        else if (c == 0xF4)
            len = 4, hi = 0x8F;
        else
            return false;
        if (n - i < len)
            return false;
        if (len > 1 && (s[i + 1] < lo || s[i + 1] > hi))
            return false;
        for (size_t k = 2; k < len; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF)
                return false;
        i += len;
    }
    return true;
}

static inline int ref_hex(char c)
{
    static const char digits[] = "0123456789abcdef0123456789ABCDEF";
    const char *p = c != '\0' ? strchr(digits, c) : NULL;
    return p == NULL ? -1 : (int)(p - digits) % 16;
}

/* Percent-decoding as RFC 3986 describes it; out holds n + 1 bytes. The result still has
 * to pass ref_utf8_valid to be acceptable. */
static inline bool ref_percent_decode(const char *s, size_t n, bool plus, char *out, size_t *outlen)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            int hi = i + 2 < n ? ref_hex(s[i + 1]) : -1;
            int lo = i + 2 < n ? ref_hex(s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return false;
            out[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[o++] = plus && s[i] == '+' ? ' ' : s[i];
        }
    }
    out[o] = '\0';
    *outlen = o;
    return true;
}

/* Appends every byte of s[0..n) as %XX to out (which holds 3 * n + 1 bytes). */
static inline size_t fuzz_percent_encode_all(const char *s, size_t n, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[3 * i] = '%';
        out[3 * i + 1] = hex[c >> 4];
        out[3 * i + 2] = hex[c & 15];
    }
    out[3 * n] = '\0';
    return 3 * n;
}

#endif
