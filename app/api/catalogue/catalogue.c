/* catalogue: the one writer of a product list item, so that GET /v1/products and
 * GET /v1/sellers/:id show an item alike. It copies the members the database made when
 * the product was written (list_item) instead of building them on every request. */
#include "catalogue.h"

#include <stdlib.h>
#include <string.h>

void catalogue_write_item(json_writer *j, const db_result *res, int row, int first)
{
    jw_object_begin(j);
    jw_key(j, "id");
    jw_string_n(j, db_text(res, row, first), db_length(res, row, first));
    jw_members(j, db_text(res, row, first + 1), db_length(res, row, first + 1));
    jw_object_end(j);
}
