/* import: reading the parsed document, for the check (import_check.c) and the writes
 * (import_write.c) alike, so that neither depends on the command (import.c). */
#include "admin.h"
#include "import.h"

json_object *import_member(json_object *obj, const char *key)
{
    json_object *v;
    if (!json_object_is_type(obj, json_type_object) || !json_object_object_get_ex(obj, key, &v) ||
        json_object_is_type(v, json_type_null))
        return NULL;
    return v;
}

const char *import_str(json_object *obj, const char *key)
{
    json_object *v = import_member(obj, key);
    return v != NULL && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

int import_exponent(const import_doc *doc, const char *currency)
{
    json_object *v;
    if (!json_object_object_get_ex(doc->currencies, currency, &v))
        fail("import: unknown currency %s", currency);
    return json_object_get_int(v);
}
