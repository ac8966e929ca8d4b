/* catalogue: what the product routes share: the list item and input checks. */
#ifndef MARKET_CATALOGUE_H
#define MARKET_CATALOGUE_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "json_out.h"

/* The columns every product list query selects first, in this order. */
#define PRODUCT_ITEM_COLUMNS "p.id, p.title, p.min_price_minor, p.exponent, p.seller_id"
#define PRODUCT_ITEM_NCOLS 5

/* Writes {"id","title","price","seller"} from columns first..first+4 of row. */
void catalogue_write_item(json_writer *j, const PGresult *res, int row, int first);

/* Slugs and handles: [a-z0-9][a-z0-9-]{0,39} (category), [a-z0-9][a-z0-9_-]{0,39} (seller). */
bool catalogue_slug_valid(const char *s);
bool catalogue_handle_valid(const char *s);

/* Product ids as the schema allows them: prod_ and 1..60 of [A-Za-z0-9_]. */
bool catalogue_id_valid(const char *s, const char *prefix);

#endif
