/* catalogue: what the product routes share: the list item (ids and slugs: lib/ids.h). */
#ifndef MARKET_CATALOGUE_H
#define MARKET_CATALOGUE_H

#include "db.h"
#include "json_out.h"

/* The columns every product list query selects first, in this order: the id, then the
 * item's other members as JSON text. They come from list_item, which the list indexes
 * carry (017_list_items.sql: made once when the product is written, so a page is read
 * from its index alone and copied, not converted and escaped item by item), and from the
 * row itself when list_item is NULL: members too long for an index entry. */
#define PRODUCT_ITEM_COLUMNS                                                                       \
    "p.id, coalesce(p.list_item, (SELECT market_item_members(l.title, l.min_price_minor,"          \
    " l.exponent, l.seller_id) FROM products l WHERE l.id = p.id))"
#define PRODUCT_ITEM_NCOLS 2

/* Writes {"id","title","price","seller"} from columns first and first+1 of row. */
void catalogue_write_item(json_writer *j, const db_result *res, int row, int first);

#endif
