#include "catalogue.h"

#include <stdlib.h>
#include <string.h>

void catalogue_write_item(json_writer *j, const PGresult *res, int row, int first)
{
    jw_object_begin(j);
    jw_kv_string(j, "id", PQgetvalue(res, row, first));
    jw_kv_string(j, "title", PQgetvalue(res, row, first + 1));
    jw_kv_money(j, "price", strtoll(PQgetvalue(res, row, first + 2), NULL, 10),
                atoi(PQgetvalue(res, row, first + 3)));
    jw_kv_string(j, "seller", PQgetvalue(res, row, first + 4));
    jw_object_end(j);
}
