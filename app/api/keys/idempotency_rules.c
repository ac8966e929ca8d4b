/* idempotency_rules: the replay rules of Idempotency-Key as pure functions
 * (idempotency_rules.h), so that tests/unit/test_idempotency.c can hold each one. */
#include "idempotency_rules.h"

#include <string.h>

#include "buf.h"

idem_header idem_header_verdict(const char *key, bool repeated)
{
    if (key == NULL)
        return IDEM_NO_KEY;
    if (repeated) /* which one would the client mean? */
        return IDEM_KEY_REPEATED;
    size_t n = strlen(key);
    if (n < 1 || n > IDEM_KEY_MAX)
        return IDEM_KEY_INVALID;
    for (size_t i = 0; i < n; i++) {
        if (key[i] < 0x20 || key[i] > 0x7e)
            return IDEM_KEY_INVALID;
    }
    return IDEM_KEY_VALID;
}

idem_verdict idem_record_verdict(const idem_record *record)
{
    if (record->claimed)
        return IDEM_RUN;
    if (!record->same_request)
        return IDEM_CONFLICT;
    /* Not reachable while claims wait on the unique index: a record is read only once its
     * holder's transaction ended. Never replay an answer that was not stored. */
    if (record->status == 0)
        return IDEM_IN_PROGRESS;
    return IDEM_REPLAY;
}

bool idem_stores(int status)
{
    return status < 500;
}

static void add_field(buf *in, const char *data, size_t len)
{
    buf_printf(in, "%zu:", len);
    buf_append(in, data, len);
}

void idem_fingerprint(arena *a, const char *method, const char *route, const char *param,
                      size_t param_len, json_object *body, char hex[IDEM_FINGERPRINT_LEN + 1])
{
    buf in;
    buf_init_arena(&in, a, 1024);
    add_field(&in, method, strlen(method));
    add_field(&in, route, strlen(route));
    add_field(&in, param != NULL ? param : "", param != NULL ? param_len : 0);
    const char *text =
        body != NULL ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN) : "";
    add_field(&in, text, strlen(text));
    uint8_t digest[SHA256_LEN];
    crypto_sha256(in.data, in.len, digest);
    hex_write(hex, digest, sizeof digest);
}
