#include "catalogue.h"

#include <stdlib.h>
#include <string.h>

void catalogue_write_item(json_writer *j, const PGresult *res, int row, int first)
{
    jw_object_begin(j);
    jw_kv_string(j, "id", db_text(res, row, first));
    jw_kv_string(j, "title", db_text(res, row, first + 1));
    jw_kv_money(j, "price", db_int(res, row, first + 2), (int)db_int(res, row, first + 3));
    jw_kv_string(j, "seller", db_text(res, row, first + 4));
    jw_object_end(j);
}
