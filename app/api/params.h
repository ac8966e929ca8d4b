/* params: the validators the route table (routes.c) gives its query parameters.
 *
 * Pure: each says whether a decoded value (valid UTF-8, no NUL: lib/query) is one the
 * route can use, so that handlers read valid input only. */
#ifndef MARKET_PARAMS_H
#define MARKET_PARAMS_H

#include <stdbool.h>

#define PAGE_DEFAULT 20
#define PAGE_MAX 100
#define SEARCH_MAX_CHARS 200

/* limit: an integer 1..PAGE_MAX written plainly: no sign, no leading zero, no spaces. */
bool param_limit_valid(const char *value);

/* The page size of a valid limit, or PAGE_DEFAULT for NULL (not given). */
int param_limit(const char *value);

/* q: 1 to SEARCH_MAX_CHARS characters. */
bool param_search_valid(const char *value);

/* category: a category slug (lib/ids.h). */
bool param_slug_valid(const char *value);

/* seller: a seller handle (lib/ids.h). */
bool param_handle_valid(const char *value);

/* min_price, max_price: a decimal of at least 0 such as 19.99 (lib/money.h). */
bool param_price_valid(const char *value);

/* created_gte, created_lt: an RFC 3339 date-time, YYYY-MM-DDTHH:MM:SS with an optional
 * fraction of 1 to 6 digits and a zone, Z or +HH:MM / -HH:MM (T and Z in either case):
 * a real calendar date (leap years counted) of the years 0001..9999, hours 00..23,
 * seconds 00..59, so that PostgreSQL reads every value this accepts. */
bool param_timestamp_valid(const char *value);

#endif
