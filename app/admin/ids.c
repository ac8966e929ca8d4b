/* Identifiers: random ones for rows the tool creates, and the syntax of caller-chosen
 * ones, which mirrors the CHECK constraints of 001_core.sql so that a bad id is reported
 * with its path before anything is written. */
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "crypto.h"
#include "text.h"

#define RANDOM_ID_CHARS 24

void random_id(char *out, size_t outsz, const char *prefix)
{
    char tail[RANDOM_ID_CHARS + 1];
    crypto_random_alnum(tail, RANDOM_ID_CHARS);
    snprintf(out, outsz, "%s%s", prefix, tail);
}

bool prefixed_id_valid(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(s, prefix, n) == 0 && token_valid(s + n, 60, "_");
}

static bool slug_char(char c, const char *extra)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr(extra, c) != NULL);
}

bool slug_valid(const char *s, const char *extra)
{
    if (!slug_char(s[0], ""))
        return false;
    size_t n = 1;
    for (; s[n] != '\0'; n++)
        if (n == 40 || !slug_char(s[n], extra))
            return false;
    return true;
}
