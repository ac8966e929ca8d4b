/* paging: the parts of cursor pagination every list route shares (docs/contract.md section 5). */
#ifndef MARKET_PAGING_H
#define MARKET_PAGING_H

#include "buf.h"
#include "request.h"

/* The page size, `limit`, is a declared query parameter (params.h). */

/* Decodes `cursor` against the context the request builds; NULL text means first page
 * (fields untouched, true). Answers 400 cursor_invalid on failure. */
bool paging_cursor(request *r, const char *context, const char *text, char **fields, int n);

/* Writes "next_cursor": the cursor for fields, or null when fields is NULL. */
void paging_write_next(request *r, const char *context, const char *const *fields, int n);

#endif
