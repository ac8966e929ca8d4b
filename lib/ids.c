/* ids: the syntax of ids, slugs, handles and stored paths, and the making of fresh ids,
 * in one file, so that the API, market-admin and the schema's CHECK constraints cannot
 * drift apart unnoticed. */
#include "ids.h"

#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "text.h"

bool ids_prefixed_valid(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(s, prefix, n) == 0 && token_valid(s + n, 60, "_");
}

/* [a-z0-9] then up to 39 of [a-z0-9] and extra. */
static bool name_valid(const char *s, const char *extra)
{
    size_t n = strlen(s);
    if (n < 1 || n > 40)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || strchr(extra, c) == NULL))
            return false;
    }
    return true;
}

bool ids_slug_valid(const char *s)
{
    return name_valid(s, "-");
}

bool ids_handle_valid(const char *s)
{
    return name_valid(s, "-_");
}

void ids_random(char *out, size_t outsz, const char *prefix)
{
    char tail[IDS_RANDOM_CHARS + 1];
    crypto_random_alnum(tail, IDS_RANDOM_CHARS);
    snprintf(out, outsz, "%s%s", prefix, tail);
}

bool ids_path_valid(const char *p)
{
    if (p[0] == '\0' || p[0] == '/' || strlen(p) > IDS_PATH_MAX_BYTES)
        return false;
    for (const char *s = p; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '\\')
            return false;
    const char *seg = p;
    for (;;) {
        size_t n = strcspn(seg, "/");
        if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return false;
        if (seg[n] == '\0')
            return true;
        seg += n + 1;
    }
}
