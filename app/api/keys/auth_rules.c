/* auth_rules: the key check's verdicts as pure functions (auth_rules.h), so that
 * tests/unit/test_auth.c can hold each rule of docs/contract.md sections 2 and 3. */
#include "auth_rules.h"

#include <string.h>
#include <strings.h>

#include "text.h"

#define KEY_PREFIX_LEN 8 /* "sk_live_", "sk_test_" */
#define KEY_MIN_RANDOM 32
#define KEY_MAX_RANDOM 200

#define INVALID "invalid_api_key"
#define NOT_VALID "the API key is not valid"

/* Indexed by auth_verdict. A key that names the wrong mode is answered as any unknown
 * key: a mismatch would be a corrupt row, and the answer must not tell that the secret
 * exists in the other mode. */
static const auth_refusal refusals[] = {
    [AUTH_MISSING_KEY] = {401, "authentication_error", "missing_api_key",
                          "no API key: send Authorization: Bearer <key>", false},
    [AUTH_NOT_BEARER] = {401, "authentication_error", INVALID,
                         "the Authorization header must use the Bearer scheme", true},
    [AUTH_MALFORMED_KEY] = {401, "authentication_error", INVALID, NOT_VALID, true},
    [AUTH_UNKNOWN_KEY] = {401, "authentication_error", INVALID, NOT_VALID, true},
    [AUTH_REVOKED] = {401, "authentication_error", INVALID, "the API key was revoked", true},
    [AUTH_EXPIRED] = {401, "authentication_error", "api_key_expired",
                      "the API key expired after its rotation; use the new key", true},
    [AUTH_MODE_MISMATCH] = {401, "authentication_error", INVALID, NOT_VALID, true},
    [AUTH_TOO_MANY_IN_FLIGHT] = {429, "rate_limit_error", "too_many_in_flight", NULL, true},
    [AUTH_RATE_LIMITED] = {429, "rate_limit_error", "rate_limited", NULL, true},
};

const auth_refusal *auth_refusal_of(auth_verdict verdict)
{
    if (verdict == AUTH_ACCEPTED || (size_t)verdict >= sizeof refusals / sizeof refusals[0])
        return NULL;
    return &refusals[verdict];
}

/* A prefix and enough random letters, no more than a key can have. */
static bool key_well_formed(const char *key)
{
    if (strncmp(key, "sk_live_", KEY_PREFIX_LEN) != 0 &&
        strncmp(key, "sk_test_", KEY_PREFIX_LEN) != 0)
        return false;
    const char *random = key + KEY_PREFIX_LEN;
    size_t n = strlen(random);
    return n >= KEY_MIN_RANDOM && n <= KEY_MAX_RANDOM && token_valid(random, KEY_MAX_RANDOM, NULL);
}

auth_verdict auth_header_verdict(const char *header, const char **key)
{
    *key = NULL;
    if (header == NULL || *header == '\0')
        return AUTH_MISSING_KEY;
    if (strncasecmp(header, "Bearer ", 7) != 0) /* the scheme's name is case-insensitive */
        return AUTH_NOT_BEARER;
    const char *k = header + 7;
    while (*k == ' ')
        k++;
    if (!key_well_formed(k))
        return AUTH_MALFORMED_KEY;
    *key = k;
    return AUTH_ACCEPTED;
}

const char *auth_prefix_mode(const char *key)
{
    return strncmp(key, "sk_live_", KEY_PREFIX_LEN) == 0 ? "live" : "test";
}

auth_verdict auth_row_verdict(const auth_key_row *row, const char *prefix_mode)
{
    if (!row->found)
        return AUTH_UNKNOWN_KEY;
    if (!row->usable)
        return row->revoked ? AUTH_REVOKED : AUTH_EXPIRED;
    if (strcmp(prefix_mode, row->mode) != 0)
        return AUTH_MODE_MISMATCH;
    return AUTH_ACCEPTED;
}

auth_verdict auth_rate_verdict(bool over_in_flight, bool admitted)
{
    if (over_in_flight) /* docs/contract.md section 3, "In flight": not counted */
        return AUTH_TOO_MANY_IN_FLIGHT;
    return admitted ? AUTH_ACCEPTED : AUTH_RATE_LIMITED;
}
