/* cursor_decode on arbitrary text, and encode/decode round trips.
 * Input: one control byte (bits 0-1: field count - 1), then either a cursor to decode or
 * the fields to encode, separated by 0x1F. */
#include "arena.h"
#include "buf.h"
#include "cursor.h"
#include "fuzz.h"

static const uint8_t key[32] = {'f', 'u', 'z', 'z', '-', 'c', 'u', 'r', 's', 'o', 'r'};

static void make_context(buf *b, const char *mode)
{
    buf_init(b, 64);
    cursor_context_add(b, "route", "products");
    cursor_context_add(b, "sort", "newest");
    cursor_context_add(b, "mode", mode);
}

/* Any accepted cursor is exactly the encoding of what it decoded to: one value has one
 * cursor, so no modified cursor can be accepted in place of another. */
static void check_decode(arena *a, const char *ctx, const char *other, const char *text, int n)
{
    char *fields[CURSOR_MAX_FIELDS];
    if (!cursor_decode(a, key, ctx, text, fields, n))
        return;
    FUZZ_CHECK(strlen(text) <= CURSOR_MAX_LEN);
    buf again;
    buf_init(&again, 64);
    for (int i = 0; i < n; i++)
        FUZZ_CHECK(strchr(fields[i], '\x1f') == NULL);
    cursor_encode(&again, key, ctx, (const char *const *)fields, n);
    FUZZ_CHECK(strcmp(again.data, text) == 0);
    buf_free(&again);
    FUZZ_CHECK(!cursor_decode(a, key, other, text, fields, n));
}

/* Splits data on 0x1F into at most CURSOR_MAX_FIELDS fields; 0 if it does not fit. */
static int split_fields(arena *a, const uint8_t *data, size_t size, char **fields)
{
    if (memchr(data, '\0', size) != NULL)
        return 0;
    int n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && data[i] != 0x1f)
            continue;
        if (n == CURSOR_MAX_FIELDS)
            return 0;
        fields[n++] = arena_strndup(a, (const char *)data + start, i - start);
        start = i + 1;
    }
    return n;
}

static void check_round_trip(arena *a, const char *ctx, const char *other, char **fields, int n,
                             unsigned tamper)
{
    buf c;
    buf_init(&c, 64);
    cursor_encode(&c, key, ctx, (const char *const *)fields, n);
    FUZZ_CHECK(
        strspn(c.data, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") ==
        c.len);
    char *out[CURSOR_MAX_FIELDS];
    bool ok = cursor_decode(a, key, ctx, c.data, out, n);
    FUZZ_CHECK(ok == (c.len <= CURSOR_MAX_LEN));
    if (ok) {
        for (int i = 0; i < n; i++)
            FUZZ_CHECK(strcmp(out[i], fields[i]) == 0);
        FUZZ_CHECK(!cursor_decode(a, key, other, c.data, out, n));
        if (n > 1)
            FUZZ_CHECK(!cursor_decode(a, key, ctx, c.data, out, n - 1));
        if (n < CURSOR_MAX_FIELDS)
            FUZZ_CHECK(!cursor_decode(a, key, ctx, c.data, out, n + 1));
        /* Changing any one character breaks it. */
        size_t at = tamper % c.len;
        c.data[at] = c.data[at] == 'A' ? 'B' : 'A';
        FUZZ_CHECK(!cursor_decode(a, key, ctx, c.data, out, n));
    }
    buf_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int n = 1 + (data[0] & 3);
    arena a;
    arena_init(&a, 4096);
    buf ctx, other;
    make_context(&ctx, "test");
    make_context(&other, "live");

    char *text = fuzz_strndup(data + 1, size - 1);
    check_decode(&a, ctx.data, other.data, text, n);
    free(text);

    char *fields[CURSOR_MAX_FIELDS];
    int count = split_fields(&a, data + 2, size - 2, fields);
    if (count > 0)
        check_round_trip(&a, ctx.data, other.data, fields, count, data[1]);

    buf_free(&ctx);
    buf_free(&other);
    arena_free(&a);
    return 0;
}
