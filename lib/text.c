/* text: the byte-level checks every kind of untrusted input shares (UTF-8, control
 * characters, percent-encoding, tokens, RFC 3339 times), written once so that bodies,
 * queries, headers and market-admin's imports refuse the same bytes. Fuzzed. */
#include "text.h"

#include <ctype.h>
#include <string.h>

bool utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c == 0)
            return false;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        unsigned cp;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07;
        } else {
            return false; /* continuation byte, overlong lead (C0, C1) or F5..FF */
        }
        if (n - i < len)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

bool text_has_control(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7F)
            return true;
        /* C1 is U+0080-U+009F: 0xC2 then 0x80-0x9F in UTF-8 */
        if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] <= 0x9F)
            return true;
    }
    return false;
}

size_t utf8_length(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            count++;
    return count;
}

int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool percent_decode(const char *s, size_t n, bool plus_is_space, char *out, size_t *outlen)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (n - i < 3)
                return false;
            int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
            if (hi < 0 || lo < 0)
                return false;
            out[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out[o++] = ' ';
        } else {
            out[o++] = c;
        }
    }
    out[o] = '\0';
    *outlen = o;
    return utf8_valid(out, o);
}

bool token_valid(const char *s, size_t max, const char *extra)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && (extra == NULL || strchr(extra, c) == NULL))
            return false;
    }
    return true;
}

bool percent_unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

void percent_encode(buf *b, const char *s, size_t n, bool (*keep)(unsigned char))
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (keep(c)) {
            buf_putc(b, (char)c);
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            buf_append(b, e, 3);
        }
    }
}

/* --- RFC 3339 date-times ---------------------------------------------------------------- */

/* n decimal digits at s, as a number; -1 when one is not a digit. */
static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static int days_in_month(int year, int month)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

/* The zone at s: Z, or +HH:MM / -HH:MM; true when it ends the text. */
static bool zone_valid(const char *s)
{
    if ((s[0] == 'Z' || s[0] == 'z') && s[1] == '\0')
        return true;
    if ((s[0] != '+' && s[0] != '-') || strlen(s) != 6 || s[3] != ':')
        return false;
    int hours = digits(s + 1, 2), minutes = digits(s + 4, 2);
    return hours >= 0 && hours <= 23 && minutes >= 0 && minutes <= 59;
}

bool rfc3339_valid(const char *value, int max_fraction, bool leap_second)
{
    /* YYYY-MM-DDTHH:MM:SS, 19 bytes, then the fraction and the zone. */
    if (strlen(value) < 20 || value[4] != '-' || value[7] != '-' ||
        (value[10] != 'T' && value[10] != 't') || value[13] != ':' || value[16] != ':')
        return false;
    int year = digits(value, 4), month = digits(value + 5, 2), day = digits(value + 8, 2);
    int hour = digits(value + 11, 2), minute = digits(value + 14, 2);
    int second = digits(value + 17, 2);
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) ||
        hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 ||
        second > (leap_second ? 60 : 59))
        return false;
    const char *rest = value + 19;
    if (*rest == '.') {
        size_t n = strspn(rest + 1, "0123456789");
        if (n < 1 || n > (size_t)max_fraction)
            return false;
        rest += 1 + n;
    }
    return zone_valid(rest);
}
