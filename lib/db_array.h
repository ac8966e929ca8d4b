/* db_array: PostgreSQL array literals, the one way a list of values reaches a statement.
 *
 * A list travels as one text parameter cast in the SQL ($1::text[], unnest($1::text[])),
 * so the statement stays prepared whatever the list's length. Every element is written in
 * double quotes with " and \ escaped: commas, braces, spaces, the empty string and the
 * word NULL then read back exactly as they were, and a NULL item is an SQL NULL element.
 * Quoting even ids that need none keeps one encoder whose output is always right. */
#ifndef MARKET_DB_ARRAY_H
#define MARKET_DB_ARRAY_H

#include "buf.h"

/* Appends item (NULL: an SQL NULL element) to the literal being built in b. b holds that
 * literal and nothing else: the first element, appended to an empty b, opens it. */
void db_array_append(buf *b, const char *item);

/* Closes the literal in b ("{}" when nothing was appended); b->data is the parameter. */
void db_array_end(buf *b);

#endif
