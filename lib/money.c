/* money: amounts as integers of minor units, in one file, so that no price ever passes
 * through a double: market-api writes them, market-admin and the request checks parse
 * them. Prices in a body are client input: fuzzed (tests/fuzz/fuzz_money.c). */
#include "money.h"

#include <stdlib.h>
#include <string.h>

/* Writes v in decimal at out, at least min_digits digits (zeros in front), no NUL; the
 * count written (at most 20). */
static size_t write_digits(char *out, uint64_t v, int min_digits)
{
    char reversed[20];
    size_t n = 0;
    do {
        reversed[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0 || (int)n < min_digits);
    for (size_t i = 0; i < n; i++)
        out[i] = reversed[n - 1 - i];
    return n;
}

size_t format_int(char out[24], long long v)
{
    /* The magnitude as unsigned, so that LLONG_MIN is representable. */
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    size_t n = 0;
    if (v < 0)
        out[n++] = '-';
    n += write_digits(out + n, mag, 1);
    out[n] = '\0';
    return n;
}

/* By hand rather than with snprintf: a page of 100 items writes 100 prices, and printf's
 * machinery was a large share of a worker's time rendering one. Like snprintf, the text
 * is cut to what fits in out. */
size_t money_format(char *out, size_t outsz, int64_t minor, int exponent)
{
    if (exponent < 0 || exponent > 9)
        abort(); /* a programming error: currencies' exponents are 0..9 (money.h) */
    char text[MONEY_TEXT_MAX];
    uint64_t mag = minor < 0 ? (uint64_t)0 - (uint64_t)minor : (uint64_t)minor;
    uint64_t scale = 1;
    for (int i = 0; i < exponent; i++)
        scale *= 10;
    uint64_t whole = mag / scale;
    uint64_t frac = mag % scale;
    size_t n = 0;
    if (minor < 0)
        text[n++] = '-';
    n += write_digits(text + n, whole, 1);
    if (frac != 0) {
        int digits = exponent;
        while (frac % 10 == 0) { /* drop trailing zeros: 1200.50 -> 1200.5 */
            frac /= 10;
            digits--;
        }
        text[n++] = '.';
        n += write_digits(text + n, frac, digits);
    }
    if (outsz == 0)
        return 0;
    if (n >= outsz)
        n = outsz - 1;
    memcpy(out, text, n);
    out[n] = '\0';
    return n;
}

bool money_parse(const char *text, int exponent, int64_t *minor)
{
    const char *p = text;
    uint64_t value = 0;
    int int_digits = 0, frac_digits = 0;
    bool seen_dot = false;

    if (*p == '\0')
        return false;
    for (; *p != '\0'; p++) {
        if (*p == '.') {
            if (seen_dot || int_digits == 0)
                return false;
            seen_dot = true;
            continue;
        }
        if (*p < '0' || *p > '9')
            return false;
        if (seen_dot && ++frac_digits > exponent)
            return false;
        if (!seen_dot)
            int_digits++;
        if (value > (uint64_t)INT64_MAX / 10)
            return false;
        value = value * 10 + (uint64_t)(*p - '0');
    }
    if (seen_dot && frac_digits == 0)
        return false;
    for (; frac_digits < exponent; frac_digits++) {
        if (value > (uint64_t)INT64_MAX / 10)
            return false;
        value *= 10;
    }
    if (value > (uint64_t)INT64_MAX)
        return false;
    *minor = (int64_t)value;
    return true;
}

bool decimal_valid(const char *text)
{
    size_t int_digits = strspn(text, "0123456789");
    if (int_digits < 1 || int_digits > 12)
        return false;
    const char *p = text + int_digits;
    if (*p == '\0')
        return true;
    if (*p != '.')
        return false;
    size_t frac_digits = strspn(p + 1, "0123456789");
    return frac_digits >= 1 && frac_digits <= 12 && p[1 + frac_digits] == '\0';
}

int decimal_compare(const char *a, const char *b)
{
    /* Skip leading zeros, then a longer integer part is larger; equal lengths compare
     * digit by digit, then the fractions (missing digits count as zeros). */
    while (a[0] == '0' && a[1] >= '0' && a[1] <= '9')
        a++;
    while (b[0] == '0' && b[1] >= '0' && b[1] <= '9')
        b++;
    size_t ai = strspn(a, "0123456789"), bi = strspn(b, "0123456789");
    if (ai != bi)
        return ai < bi ? -1 : 1;
    int c = strncmp(a, b, ai);
    if (c != 0)
        return c < 0 ? -1 : 1;
    const char *af = a[ai] == '.' ? a + ai + 1 : "";
    const char *bf = b[bi] == '.' ? b + bi + 1 : "";
    while (*af != '\0' || *bf != '\0') {
        char x = *af != '\0' ? *af++ : '0';
        char y = *bf != '\0' ? *bf++ : '0';
        if (x != y)
            return x < y ? -1 : 1;
    }
    return 0;
}
