/* links: download link tokens (docs/contract.md section 6, POST /v1/downloads/:id/link).
 *
 * A token is base64url(link_id || MAC), 43 characters, where link_id is 16 random bytes
 * and MAC the first 16 bytes of HMAC-SHA256(link key, "dl1" || link_id). Consequences:
 *   - the files location rejects a forged or mistyped token by its MAC alone, before any
 *     database work;
 *   - the database keeps link_id (no credential without the server secret) and
 *     SHA-256(token) (the lookup key), never the token, yet the server can rebuild the
 *     token of a recorded link, so GET /v1/orders shows an existing link again instead
 *     of minting one per listing.
 * A link's URL is MARKET_DOWNLOAD_BASE_URL "/" token. */
#ifndef MARKET_LINKS_H
#define MARKET_LINKS_H

#include <stdbool.h>
#include <stddef.h>

#include "request.h"

#define LINK_ID_LEN 16
#define LINK_MAC_LEN 16
#define LINK_TOKEN_LEN 43 /* base64url of 32 bytes, unpadded */
#define LINK_HEX_ID_LEN (2 * LINK_ID_LEN)
#define LINK_HEX_HASH_LEN (2 * SHA256_LEN)

/* Links live 60 s to 24 h; a listing shows a link only while it has 5 minutes left. */
#define LINK_TTL_MIN 60
#define LINK_TTL_MAX 86400
#define LINK_MIN_LEFT_SQL "interval '5 minutes'"

/* An RFC 3339 UTC text of a timestamptz expression, for SELECT lists. */
#define SQL_UTC_TEXT(expr)                                                                         \
    "to_char((" expr ") AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/* A fresh link, ready to be recorded: SQL parameters as hex (decode($n, 'hex')). */
typedef struct {
    char token[LINK_TOKEN_LEN + 1];
    char id_hex[LINK_HEX_ID_LEN + 1];
    char hash_hex[LINK_HEX_HASH_LEN + 1];
} link_fresh;

void link_generate(const worker *w, link_fresh *out);

/* Rebuilds the token of a recorded link from encode(link_id, 'hex'). False when the text
 * is not 32 hex digits (a row the database should not hold). */
bool link_token_from_hex(const worker *w, const char *id_hex, char token[LINK_TOKEN_LEN + 1]);

/* Checks a token's form and MAC without touching the database; on success writes the
 * hex SHA-256 of the token, the key of its download_tokens row. */
bool link_token_check(const worker *w, const char *text, size_t len,
                      char hash_hex[LINK_HEX_HASH_LEN + 1]);

/* MARKET_DOWNLOAD_BASE_URL "/" token, in the request's arena. */
const char *link_url(request *r, const char *token);

#endif
