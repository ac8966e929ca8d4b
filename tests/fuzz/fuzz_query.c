/* query_parse on arbitrary query strings, compared with a reference parser written from
 * the contract (section 4), plus a round trip of every accepted result. */
#include "arena.h"
#include "fuzz.h"
#include "query.h"

static const char *const names[] = {"limit", "cursor", "q", "sort", "category", NULL};
#define NNAMES 5

typedef struct {
    query_fault fault; /* 0: accepted */
    const char *param;
    bool name_malformed; /* the fault is a malformed name; param is that name as sent */
    char *values[NNAMES];
} ref_result;

/* Decodes s[0..n) into a fresh string; NULL when malformed. */
static char *ref_decode(arena *a, const char *s, size_t n)
{
    char *out = arena_alloc(a, n + 1);
    size_t len;
    if (!ref_percent_decode(s, n, true, out, &len) || !ref_utf8_valid(out, len))
        return NULL;
    return out;
}

/* A malformed name as sent (contract section 4: param names it): each byte outside
 * printable ASCII written %XX, at most QUERY_RAW_NAME_MAX bytes, no escape cut. */
static char *ref_raw_name(arena *a, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = arena_alloc(a, 3 * n + 1);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool printable = c >= 0x21 && c <= 0x7E;
        if (len + (printable ? 1 : 3) > QUERY_RAW_NAME_MAX)
            break;
        if (printable) {
            out[len++] = (char)c;
        } else {
            out[len++] = '%';
            out[len++] = hex[c / 16];
            out[len++] = hex[c % 16];
        }
    }
    out[len] = '\0';
    return out;
}

static int name_index(const char *name)
{
    for (int i = 0; i < NNAMES; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* One name=value segment; false (and r->fault set) at the first fault. */
static bool ref_segment(arena *a, const char *seg, size_t n, ref_result *r)
{
    const char *eq = memchr(seg, '=', n);
    size_t name_len = eq != NULL ? (size_t)(eq - seg) : n;
    char *name = ref_decode(a, seg, name_len);
    r->param = NULL;
    if (name == NULL) {
        r->fault = QUERY_MALFORMED;
        r->param = ref_raw_name(a, seg, name_len);
        r->name_malformed = true;
        return false;
    }
    int i = name_index(name);
    if (i < 0) {
        r->fault = QUERY_UNKNOWN;
        r->param = name;
        return false;
    }
    r->param = names[i];
    if (r->values[i] != NULL) {
        r->fault = QUERY_DUPLICATED;
        return false;
    }
    size_t value_len = eq != NULL ? n - name_len - 1 : 0;
    char *value = ref_decode(a, eq != NULL ? eq + 1 : seg + n, value_len);
    if (value == NULL || strlen(value) > QUERY_MAX_VALUE) {
        /* Over the limit, or malformed: either may be reported when both hold. */
        r->fault = value == NULL ? QUERY_MALFORMED : QUERY_TOO_LONG;
        return false;
    }
    r->values[i] = value;
    return true;
}

static void ref_parse(arena *a, const char *qs, ref_result *r)
{
    memset(r, 0, sizeof *r);
    for (const char *p = qs; *p != '\0';) {
        size_t n = strcspn(p, "&");
        if (n > 0 && !ref_segment(a, p, n, r))
            return;
        p += n;
        if (*p == '&')
            p++;
    }
}

static void check_error(const query_error *err, const ref_result *ref)
{
    FUZZ_CHECK(ref->fault != 0);
    /* A long value that is also malformed may be either: the parser stops reading a
     * value once it is certainly too long. */
    bool value_fault =
        (ref->fault == QUERY_MALFORMED && !ref->name_malformed) || ref->fault == QUERY_TOO_LONG;
    if (value_fault)
        FUZZ_CHECK(err->fault == QUERY_MALFORMED || err->fault == QUERY_TOO_LONG);
    else
        FUZZ_CHECK(err->fault == ref->fault);
    FUZZ_CHECK(err->fault != QUERY_MALFORMED || err->name_malformed == ref->name_malformed);
    /* Every fault names a parameter (a malformed name as sent). */
    FUZZ_CHECK(err->name != NULL && strcmp(err->name, ref->param) == 0);
}

/* Serialises accepted values with every byte escaped, parses that again: same values. */
static void check_round_trip(arena *a, const query_params *q)
{
    size_t cap = 1;
    for (int i = 0; i < NNAMES; i++)
        if (query_get(q, names[i]) != NULL)
            cap += strlen(names[i]) + 2 + 3 * strlen(query_get(q, names[i]));
    char *qs = arena_alloc(a, cap), *p = qs;
    *p = '\0';
    for (int i = NNAMES - 1; i >= 0; i--) {
        const char *v = query_get(q, names[i]);
        if (v == NULL)
            continue;
        p += sprintf(p, "%s%s=", p == qs ? "" : "&", names[i]);
        p += fuzz_percent_encode_all(v, strlen(v), p);
    }
    query_params again;
    query_error err;
    FUZZ_CHECK(query_parse(a, qs, names, &again, &err));
    for (int i = 0; i < NNAMES; i++) {
        const char *x = query_get(q, names[i]), *y = query_get(&again, names[i]);
        FUZZ_CHECK((x == NULL) == (y == NULL));
        FUZZ_CHECK(x == NULL || strcmp(x, y) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *qs = fuzz_strndup(data, size);
    arena a;
    arena_init(&a, 4096);
    query_params q;
    query_error err;
    ref_result ref;
    bool ok = query_parse(&a, qs, names, &q, &err);
    ref_parse(&a, qs, &ref);
    if (!ok) {
        check_error(&err, &ref);
    } else {
        FUZZ_CHECK(ref.fault == 0);
        for (int i = 0; i < NNAMES; i++) {
            const char *v = query_get(&q, names[i]);
            FUZZ_CHECK((v == NULL) == (ref.values[i] == NULL));
            if (v == NULL)
                continue;
            FUZZ_CHECK(strcmp(v, ref.values[i]) == 0);
            FUZZ_CHECK(strlen(v) <= QUERY_MAX_VALUE && ref_utf8_valid(v, strlen(v)));
        }
        FUZZ_CHECK(query_get(&q, "unknown") == NULL);
        check_round_trip(&a, &q);
    }
    arena_free(&a);
    free(qs);
    return 0;
}
