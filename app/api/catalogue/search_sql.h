/* search_sql: the statements of GET /v1/products, one per shape of the request (which
 * filters are given, which sort, whether a cursor follows), built once and prepared on
 * each connection (db.h's db_stmt). products_list.c names the statement and passes its
 * parameters in the order given here. */
#ifndef MARKET_API_SEARCH_SQL_H
#define MARKET_API_SEARCH_SQL_H

#include "db.h"

/* The sorts, in the order of products_sorts (handlers.h): sort's values. */
enum list_sort { SORT_NEWEST, SORT_PRICE_ASC, SORT_PRICE_DESC, SORT_RELEVANCE, SORT_COUNT };

/* Which inputs a request gives: a shape is a set of these and a sort. */
enum list_filter {
    FILTER_CATEGORY = 1 << 0,
    FILTER_SELLER = 1 << 1,
    FILTER_Q = 1 << 2,
    FILTER_MIN = 1 << 3,
    FILTER_MAX = 1 << 4,
    FILTER_CURSOR = 1 << 5,
};

/* Relevance, whatever the filters (contract section 6): a match's rank is the number of
 * distinct words of q its title holds; higher rank first, then id descending.
 * Parameters: $1 mode, $2 limit + 1, $3 q, $4 category, $5 seller, $6 min_price,
 * $7 max_price (each NULL when not given), $8 and $9 the cursor's rank and id (NULL on a
 * first page). Answers the item's columns (PRODUCT_ITEM_COLUMNS) and the rank. */
#define RELEVANCE_PARAMS 9
extern db_stmt search_sql_relevance;

/* The statement of one shape of the other sorts (newest, price_asc, price_desc), with or
 * without q. Parameter order: $1 mode, $2 limit + 1, then each filter present in the order
 * q, category, seller, min, max, then the cursor's key and id. Every statement answers the
 * item's columns (PRODUCT_ITEM_COLUMNS) and the sort key. filters: a set of list_filter. */
db_stmt *search_sql_statement(int filters, enum list_sort sort);

#endif
