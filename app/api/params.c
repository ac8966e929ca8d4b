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

bool param_timestamp_valid(const char *value)
{
    return rfc3339_valid(value, 6, false);
}
