/* paging: the parts of cursor pagination every list route shares (docs/contract.md section 5). */
#ifndef MARKET_PAGING_H
#define MARKET_PAGING_H

#include "buf.h"
#include "request.h"

/* The page size, `limit`, is a declared query parameter (routes.c): r->in.limit. */

/* Decodes `cursor` against the context the request builds; NULL text means first page
 * (fields untouched, true). Answers 400 cursor_invalid on failure. */
bool paging_cursor(request *r, const char *context, const char *text, char **fields, int n);

/* Writes "next_cursor": the cursor for fields, or null when fields is NULL. */
void paging_write_next(request *r, const char *context, const char *const *fields, int n);

/* A cursor context for a list of the caller's own rows: bound to the route, the key's mode
 * and its account; a route adds its filters with cursor_context_add. In the arena. */
buf *paging_account_context(request *r);

/* Answers 200 with the list envelope of a keyset page: res holds up to limit + 1 rows, the
 * one more telling that a next page exists; write_item writes row i into r->json; the next
 * cursor holds the key_column and id_column of the page's last row. */
void paging_respond(request *r, const char *context, const db_result *res, int limit,
                    int key_column, int id_column,
                    void (*write_item)(json_writer *j, const db_result *res, int row));

#endif
