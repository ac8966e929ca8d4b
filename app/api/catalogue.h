/* catalogue: what the product routes share: the list item (ids and slugs: lib/ids.h). */
#ifndef MARKET_CATALOGUE_H
#define MARKET_CATALOGUE_H

#include "db.h"
#include "json_out.h"

/* The columns every product list query selects first, in this order. The title comes
 * from title_head, which the list indexes carry (010_covering_pages.sql: a page is read
 * from its index alone), and from the row itself when title_head is NULL: a title too
 * long for an index entry. */
#define PRODUCT_ITEM_COLUMNS                                                                       \
    "p.id, coalesce(p.title_head, (SELECT l.title FROM products l WHERE l.id = p.id)),"            \
    " p.min_price_minor, p.exponent, p.seller_id"
#define PRODUCT_ITEM_NCOLS 5

/* Writes {"id","title","price","seller"} from columns first..first+4 of row. */
void catalogue_write_item(json_writer *j, const PGresult *res, int row, int first);

#endif
