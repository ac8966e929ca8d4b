/* input_read_query and input_read_body (app/api/http/input.h) on arbitrary query strings and JSON
 * bodies (the first byte chooses), over a table of every type. Properties: an accepted
 * input holds only values its declaration allows, each typed value agreeing with its
 * text; a refusal names a known code and, always, its input (contract section 4): a
 * declared one, or in a query an unknown parameter's name or a malformed name as sent,
 * with a message. */
#include <json-c/json.h>

#include "fuzz.h"
#include "input.h"
#include "json_body.h"
#include "money.h"
#include "query.h"
#include "text.h"
#include "url.h"

typedef struct {
    long limit, seconds;
    const char *cursor, *q, *category, *seller, *description;
    input_decimal min;
    input_time from;
    int sort, flag;
    unsigned kinds;
    const url_parts *url;
} values;

static const char *const sorts[] = {"newest", "price_asc", "relevance", NULL};
static const char *const kinds[] = {"sale.completed", "sale.refunded", "payout.sent", NULL};

static const input_spec query[] = {
    {.name = "category", .type = INPUT_SLUG, .offset = offsetof(values, category), .expects = "c"},
    {.name = "q",
     .type = INPUT_STRING,
     .offset = offsetof(values, q),
     .min = 1,
     .max = 20,
     .expects = "q"},
    {.name = "seller", .type = INPUT_HANDLE, .offset = offsetof(values, seller), .expects = "s"},
    {.name = "min", .type = INPUT_DECIMAL, .offset = offsetof(values, min), .expects = "m"},
    {.name = "sort",
     .type = INPUT_ENUM,
     .offset = offsetof(values, sort),
     .values = sorts,
     .def = -1,
     .expects = "o"},
    {.name = "from", .type = INPUT_TIMESTAMP, .offset = offsetof(values, from), .expects = "f"},
    {.name = "flag", .type = INPUT_BOOL, .offset = offsetof(values, flag), .expects = "b"},
    {.name = "limit",
     .type = INPUT_INT,
     .offset = offsetof(values, limit),
     .min = 1,
     .max = 100,
     .def = 20,
     .expects = "l"},
    {.name = "cursor", .type = INPUT_TEXT, .offset = offsetof(values, cursor)},
    {.name = NULL},
};

static const input_spec body[] = {
    {.name = "url", .type = INPUT_URL, .offset = offsetof(values, url)},
    {.name = "kinds",
     .type = INPUT_ENUM_SET,
     .offset = offsetof(values, kinds),
     .values = kinds,
     .def = 0,
     .expects = "k",
     .detail = "is not a kind"},
    {.name = "description",
     .type = INPUT_STRING,
     .offset = offsetof(values, description),
     .min = 0,
     .max = 50,
     .expects = "d",
     .detail = "control"},
    {.name = "flag", .type = INPUT_BOOL, .offset = offsetof(values, flag), .expects = "b"},
    {.name = "seconds",
     .type = INPUT_INT,
     .offset = offsetof(values, seconds),
     .min = 0,
     .max = 604800,
     .def = 86400,
     .expects = "n"},
    {.name = "limit",
     .type = INPUT_INT,
     .offset = offsetof(values, limit),
     .min = 1,
     .max = 100,
     .def = 20,
     .expects = "l"},
    {.name = NULL},
};

static bool declared(const input_spec *specs, const char *name)
{
    for (; specs->name != NULL; specs++)
        if (strcmp(specs->name, name) == 0)
            return true;
    return false;
}

/* A malformed query name as app/api/http/query gives it: printable ASCII (each other byte written
 * %XX), at most QUERY_RAW_NAME_MAX bytes. */
static bool raw_name_form(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < n; i++)
        if (name[i] < 0x21 || name[i] > 0x7E)
            return false;
    return n <= QUERY_RAW_NAME_MAX;
}

static void check_refusal(const input_error *err, const input_spec *specs, bool query)
{
    static const char *const codes[] = {"parameter_invalid",    "parameter_unknown",
                                        "parameter_duplicated", "parameter_missing",
                                        "url_not_https",        NULL};
    bool known = false;
    for (int i = 0; codes[i] != NULL; i++)
        known = known || strcmp(err->code, codes[i]) == 0;
    FUZZ_CHECK(known);
    FUZZ_CHECK(strlen(err->message) > 0 && strlen(err->message) < sizeof err->message);
    FUZZ_CHECK(err->param != NULL);
    if (!declared(specs, err->param)) {
        FUZZ_CHECK(query);
        FUZZ_CHECK(strcmp(err->code, "parameter_unknown") == 0 ||
                   (strcmp(err->code, "parameter_invalid") == 0 && raw_name_form(err->param)));
    }
}

static bool plain_text(const char *s)
{
    return s == NULL || ref_utf8_valid(s, strlen(s));
}

static void check_string(const char *s, size_t max_chars)
{
    if (s == NULL)
        return;
    size_t len = strlen(s);
    FUZZ_CHECK(ref_utf8_valid(s, len) && utf8_length(s, len) <= max_chars);
    FUZZ_CHECK(!text_has_control(s, len));
}

static void check_query(const values *v)
{
    FUZZ_CHECK(v->limit >= 1 && v->limit <= 100);
    FUZZ_CHECK(v->sort >= -1 && v->sort <= 2);
    FUZZ_CHECK(v->sort < 0 || sorts[v->sort] != NULL);
    FUZZ_CHECK(v->flag >= -1 && v->flag <= 1);
    FUZZ_CHECK(plain_text(v->cursor));
    check_string(v->q, 20);
    FUZZ_CHECK(v->q == NULL || v->q[0] != '\0');
    if (v->min.text != NULL) {
        FUZZ_CHECK(decimal_valid(v->min.text));
        FUZZ_CHECK(v->min.units >= 0 && v->min.fraction >= 0 &&
                   v->min.fraction < INPUT_DECIMAL_SCALE);
        input_decimal again = v->min;
        FUZZ_CHECK(input_decimal_cmp(&again, &v->min) == 0);
    }
    if (v->from.text != NULL) {
        FUZZ_CHECK(rfc3339_valid(v->from.text, 6, false));
        /* 0001-01-01 minus a day of zone to 9999-12-31 plus one */
        FUZZ_CHECK(v->from.seconds >= -62135596800LL - 86400 &&
                   v->from.seconds <= 253402300799LL + 86400);
        FUZZ_CHECK(v->from.micros >= 0 && v->from.micros < 1000000);
    }
}

static void check_body(const values *v)
{
    FUZZ_CHECK(v->limit >= 1 && v->limit <= 100);
    FUZZ_CHECK(v->seconds >= 0 && v->seconds <= 604800);
    FUZZ_CHECK(v->flag >= -1 && v->flag <= 1);
    FUZZ_CHECK((v->kinds & ~7u) == 0);
    check_string(v->description, 50);
    if (v->url != NULL) {
        url_parts again;
        FUZZ_CHECK(url_parse(v->url->text, v->url->len, &again) == URL_OK);
        FUZZ_CHECK(strcmp(again.text, v->url->text) == 0);
    }
}

static void run_body(arena *a, const char *text, size_t n)
{
    static const char *const fields[] = {"url",     "kinds", "description", "flag",
                                         "seconds", "limit", NULL};
    json_object *obj;
    json_body_error jerr;
    if (!json_body_parse(text, n, fields, &obj, &jerr))
        return;
    values v;
    input_error err;
    if (input_read_body(a, obj, body, &v, &err))
        check_body(&v);
    else
        check_refusal(&err, body, false);
    json_object_put(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char *text = fuzz_strndup(data + 1, size - 1);
    arena a;
    arena_init(&a, 4096);
    if (data[0] & 1) {
        run_body(&a, text, size - 1);
    } else {
        values v;
        input_error err;
        if (input_read_query(&a, text, query, &v, &err))
            check_query(&v);
        else
            check_refusal(&err, query, true);
    }
    arena_free(&a);
    free(text);
    return 0;
}
