/* json_body_parse on arbitrary bytes. Properties: an accepted body is an object whose
 * every top-level key is a known field and in which no string (key or value, at any
 * depth) hides a NUL; a rejected body leaves no object behind and names a known code, and
 * every refusal but body_invalid_json names its field (contract section 4) in whole UTF-8
 * characters (the name goes into a JSON string). */
#include <json-c/json.h>

#include "fuzz.h"
#include "json_body.h"

static const char *const fields[] = {"url", "events", "description", "expires_in", NULL};

static void check_no_nul(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_string:
        FUZZ_CHECK(strlen(json_object_get_string(v)) == (size_t)json_object_get_string_len(v));
        break;
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(v); i++)
            check_no_nul(json_object_array_get_idx(v, i));
        break;
    case json_type_object: {
        json_object_object_foreach(v, key, child)
        {
            (void)key;
            check_no_nul(child);
        }
        break;
    }
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_object *obj = (json_object *)1;
    json_body_error err;
    bool ok = json_body_parse((const char *)data, size, fields, &obj, &err);
    if (!ok) {
        FUZZ_CHECK(obj == NULL);
        FUZZ_CHECK(strcmp(err.code, "body_invalid_json") == 0 ||
                   strcmp(err.code, "parameter_invalid") == 0 ||
                   strcmp(err.code, "parameter_unknown") == 0 ||
                   strcmp(err.code, "parameter_duplicated") == 0);
        FUZZ_CHECK(err.named == (strcmp(err.code, "body_invalid_json") != 0));
        size_t n = strlen(err.param);
        FUZZ_CHECK(n < sizeof err.param && ref_utf8_valid(err.param, n));
        FUZZ_CHECK(err.named || n == 0);
        return 0;
    }
    FUZZ_CHECK(json_object_is_type(obj, json_type_object));
    json_object_object_foreach(obj, key, value)
    {
        (void)value;
        bool known = false;
        for (int i = 0; fields[i] != NULL; i++)
            known = known || strcmp(fields[i], key) == 0;
        FUZZ_CHECK(known);
    }
    check_no_nul(obj);
    json_object_put(obj);
    return 0;
}
