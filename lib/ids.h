/* ids: the one home of the syntax of identifiers and stored paths, shared by the API
 * (which refuses a malformed id with a 400/404 before any database work) and
 * market-admin (which reports it with its JSON path before anything is written). The
 * rules mirror the CHECK constraints of sql/migrations/001_core.sql. */
#ifndef MARKET_IDS_H
#define MARKET_IDS_H

#include <stdbool.h>
#include <stddef.h>

#define IDS_RANDOM_CHARS 24     /* the random part of a generated id */
#define IDS_PATH_MAX_BYTES 1024 /* a product file's path under MARKET_FILES_ROOT */

/* prefix followed by 1..60 characters of [A-Za-z0-9_]: prod_, acct_, ord_, dl_, evt_… */
bool ids_prefixed_valid(const char *s, const char *prefix);

/* A category slug: [a-z0-9] then up to 39 of [a-z0-9-]. */
bool ids_slug_valid(const char *s);

/* A seller handle: [a-z0-9] then up to 39 of [a-z0-9_-]. */
bool ids_handle_valid(const char *s);

/* A fresh identifier: prefix and IDS_RANDOM_CHARS random characters of [A-Za-z0-9]. */
void ids_random(char *out, size_t outsz, const char *prefix);

/* A file's stored path: relative, at most IDS_PATH_MAX_BYTES, no control characters or
 * backslashes, and no empty, "." or ".." segment, so that it can never leave the files
 * root. */
bool ids_path_valid(const char *path);

#endif
