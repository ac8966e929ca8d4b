/* cursor: the cursor format in one place, so that every list route's next_cursor is
 * sealed and checked the same way; a route gives only its context (app/api/http/paging.c) and
 * its key fields. A cursor is client input: fuzzed (tests/fuzz/fuzz_cursor.c). */
#include "cursor.h"

#include <string.h>

#include "crypto.h"

#define CURSOR_MAC_LEN 16
#define CURSOR_SEP '\x1f'

void cursor_context_add(buf *context, const char *name, const char *value)
{
    if (value == NULL)
        buf_printf(context, "%s=-;", name);
    else
        buf_printf(context, "%s=%zu:%s;", name, strlen(value), value);
}

static void cursor_mac(const uint8_t key[32], const char *context, const void *payload, size_t len,
                       uint8_t mac[SHA256_LEN])
{
    /* MAC input: context, a NUL (never inside a context), then the payload. */
    buf in;
    buf_init(&in, strlen(context) + len + 2);
    buf_puts(&in, context);
    buf_putc(&in, '\0');
    buf_append(&in, payload, len);
    crypto_hmac_sha256(key, 32, in.data, in.len, mac);
    buf_free(&in);
}

void cursor_encode(buf *out, const uint8_t key[32], const char *context, const char *const *fields,
                   int nfields)
{
    buf payload;
    buf_init(&payload, 128);
    for (int i = 0; i < nfields; i++) {
        if (i > 0)
            buf_putc(&payload, CURSOR_SEP);
        buf_puts(&payload, fields[i]);
    }
    uint8_t mac[SHA256_LEN];
    cursor_mac(key, context, payload.data, payload.len, mac);
    base64url_encode(out, payload.data, payload.len);
    buf_putc(out, '.');
    base64url_encode(out, mac, CURSOR_MAC_LEN);
    buf_free(&payload);
}

bool cursor_decode(arena *a, const uint8_t key[32], const char *context, const char *cursor,
                   char **fields, int nfields)
{
    size_t total = strlen(cursor);
    if (total == 0 || total > CURSOR_MAX_LEN || nfields < 1 || nfields > CURSOR_MAX_FIELDS)
        return false;
    const char *dot = strchr(cursor, '.');
    if (dot == NULL)
        return false;

    uint8_t mac[CURSOR_MAC_LEN + 3];
    size_t mac_len = sizeof mac;
    if (!base64url_decode(dot + 1, strlen(dot + 1), mac, &mac_len) || mac_len != CURSOR_MAC_LEN)
        return false;

    size_t payload_cap = CURSOR_MAX_LEN;
    uint8_t *payload = arena_alloc(a, payload_cap + 1);
    size_t payload_len = payload_cap;
    if (!base64url_decode(cursor, (size_t)(dot - cursor), payload, &payload_len))
        return false;

    uint8_t expected[SHA256_LEN];
    cursor_mac(key, context, payload, payload_len, expected);
    if (!crypto_equal(expected, mac, CURSOR_MAC_LEN))
        return false;

    /* Authentic: split it. A count mismatch means a cursor of another version. */
    payload[payload_len] = '\0';
    char *p = (char *)payload;
    for (int i = 0; i < nfields; i++) {
        char *sep = memchr(p, CURSOR_SEP, payload_len - (size_t)(p - (char *)payload));
        if ((sep == NULL) != (i == nfields - 1))
            return false;
        if (sep != NULL)
            *sep = '\0';
        fields[i] = p;
        if (sep != NULL)
            p = sep + 1;
    }
    return true;
}
