#include "catalogue.h"

#include <stdlib.h>
#include <string.h>

#include "text.h"

void catalogue_write_item(json_writer *j, const PGresult *res, int row, int first)
{
    jw_object_begin(j);
    jw_kv_string(j, "id", PQgetvalue(res, row, first));
    jw_kv_string(j, "title", PQgetvalue(res, row, first + 1));
    jw_kv_money(j, "price", strtoll(PQgetvalue(res, row, first + 2), NULL, 10),
                (int)strtol(PQgetvalue(res, row, first + 3), NULL, 10));
    jw_kv_string(j, "seller", PQgetvalue(res, row, first + 4));
    jw_object_end(j);
}

static bool name_valid(const char *s, const char *rest_extra)
{
    size_t n = strlen(s);
    if (n < 1 || n > 40)
        return false;
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
        return false;
    for (size_t i = 1; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr(rest_extra, c)))
            return false;
    }
    return true;
}

bool catalogue_slug_valid(const char *s)
{
    return name_valid(s, "-");
}

bool catalogue_handle_valid(const char *s)
{
    return name_valid(s, "-_");
}

bool catalogue_id_valid(const char *s, const char *prefix)
{
    size_t plen = strlen(prefix);
    return strncmp(s, prefix, plen) == 0 && token_valid(s + plen, 60, "_");
}
