/* cursor: opaque, tamper-evident keyset pagination cursors.
 *
 * A cursor carries the sort key of the last row of a page (a few text fields) and a MAC
 * over those fields and a context: the route, its filters, the sort, the mode and, where
 * it matters, the account. The context itself is not in the cursor; the server rebuilds
 * it from the request, so a cursor replayed with other filters, another mode or another
 * account fails its MAC exactly like a modified one.
 *
 * Form: base64url(fields joined by 0x1F) "." base64url(first 16 bytes of the HMAC). */
#ifndef MARKET_CURSOR_H
#define MARKET_CURSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "buf.h"

#define CURSOR_MAX_FIELDS 4
#define CURSOR_MAX_LEN 512

/* Adds name=value to a context unambiguously (values are length-prefixed, NULL differs
 * from ""). */
void cursor_context_add(buf *context, const char *name, const char *value);

/* Appends the cursor for fields to out. Fields must not contain the byte 0x1F. */
void cursor_encode(buf *out, const uint8_t key[32], const char *context, const char *const *fields,
                   int nfields);

/* Verifies cursor against context and splits it into exactly nfields fields (copies in
 * the arena). False on any malformed, forged or foreign cursor. */
bool cursor_decode(arena *a, const uint8_t key[32], const char *context, const char *cursor,
                   char **fields, int nfields);

#endif
