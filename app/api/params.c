#include "params.h"

#include <ctype.h>
#include <string.h>

#include "ids.h"
#include "money.h"
#include "text.h"

bool param_limit_valid(const char *value)
{
    /* "020" or "+5" are mistakes, not 20 and 5. */
    size_t n = strlen(value);
    if (n < 1 || n > 3 || value[0] == '0' || strspn(value, "0123456789") != n)
        return false;
    int limit = param_limit(value);
    return limit >= 1 && limit <= PAGE_MAX;
}

int param_limit(const char *value)
{
    if (value == NULL)
        return PAGE_DEFAULT;
    int limit = 0;
    for (const char *p = value; *p != '\0'; p++)
        limit = limit * 10 + (*p - '0');
    return limit;
}

bool param_search_valid(const char *value)
{
    size_t len = strlen(value);
    size_t chars = utf8_length(value, len);
    return chars >= 1 && chars <= SEARCH_MAX_CHARS && !text_has_control(value, len);
}

bool param_slug_valid(const char *value)
{
    return ids_slug_valid(value);
}

bool param_handle_valid(const char *value)
{
    return ids_handle_valid(value);
}

bool param_price_valid(const char *value)
{
    return decimal_valid(value);
}

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

bool param_timestamp_valid(const char *value)
{
    /* YYYY-MM-DDTHH:MM:SS, 19 bytes, then the fraction and the zone. */
    if (strlen(value) < 20 || value[4] != '-' || value[7] != '-' ||
        (value[10] != 'T' && value[10] != 't') || value[13] != ':' || value[16] != ':')
        return false;
    int year = digits(value, 4), month = digits(value + 5, 2), day = digits(value + 8, 2);
    int hour = digits(value + 11, 2), minute = digits(value + 14, 2);
    int second = digits(value + 17, 2);
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) ||
        hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59)
        return false;
    const char *rest = value + 19;
    if (*rest == '.') {
        size_t n = strspn(rest + 1, "0123456789");
        if (n < 1 || n > 6)
            return false;
        rest += 1 + n;
    }
    return zone_valid(rest);
}
