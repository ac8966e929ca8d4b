/* webhook_sign: Standard Webhooks vectors, verification of every way a delivery can be
 * wrong, and secrets that do not decode. */
#include <string.h>

#include "buf.h"
#include "webhook_sign.h"
#include "unit.h"

/* The example of the Standard Webhooks specification, also checked against the npm
 * package standardwebhooks 1.1.1. */
#define SPEC_SECRET "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define SPEC_ID "msg_p5jXN8AQM9LWM0D4loKWxJek"
#define SPEC_TS 1614265330LL
#define SPEC_TS_TEXT "1614265330"
#define SPEC_BODY "{\"test\": 2432232314}"
#define SPEC_SIG "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

static buf out;

static void setup(void)
{
    buf_init(&out, 128);
}

static void teardown(void)
{
    buf_free(&out);
}

static const char *sign(const char *secret, const char *id, long long ts, const char *body)
{
    uint8_t key[WEBHOOK_KEY_MAX];
    size_t keylen;
    ck_assert(webhook_secret_key(secret, key, &keylen));
    buf_clear(&out);
    webhook_sign(key, keylen, id, ts, body, strlen(body), &out);
    return out.data;
}

static webhook_verify_result verify(const char *header)
{
    return webhook_verify(SPEC_SECRET, SPEC_ID, SPEC_TS_TEXT, SPEC_BODY, strlen(SPEC_BODY), header,
                          SPEC_TS, 300);
}

START_TEST(spec_vector)
{
    ck_assert_str_eq(sign(SPEC_SECRET, SPEC_ID, SPEC_TS, SPEC_BODY), SPEC_SIG);
    /* UTF-8 in the body is signed byte for byte (value from the npm package). */
    ck_assert_str_eq(sign(SPEC_SECRET, "evt_1", 1700000000LL, "{\"a\":\"\xc3\xa9\"}"),
                     "v1,BANDngjfY+TOQWDd95gvcRypUttkgU65J8EmsLhQ4pw=");
}
END_TEST

START_TEST(secret_prefix_is_optional)
{
    ck_assert_str_eq(sign("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", SPEC_ID, SPEC_TS, SPEC_BODY),
                     SPEC_SIG);
}
END_TEST

START_TEST(secret_decoding)
{
    uint8_t key[WEBHOOK_KEY_MAX];
    size_t keylen = 0;
    /* 32 bytes, the size the API issues. */
    ck_assert(
        webhook_secret_key("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", key, &keylen));
    ck_assert_uint_eq(keylen, 32);
    ck_assert_uint_eq(key[0], 0);
    ck_assert_uint_eq(key[31], 31);
    ck_assert(!webhook_secret_key("whsec_", key, &keylen));
    ck_assert(!webhook_secret_key("whsec_not base64!", key, &keylen));
    ck_assert(!webhook_secret_key("whsec_AAECAwQFBgcICQoLDA0ODw", key, &keylen)); /* unpadded */
    ck_assert(!webhook_secret_key("whsec_AAECAwQFBgcICQoLDA0O", key, &keylen));   /* 15 bytes */
    /* 65 bytes: longer than any key the service would hold. */
    char big[7 + 92] = "whsec_";
    memset(big + 6, 'A', 88);
    memcpy(big + 94, "AA==", 5);
    ck_assert(!webhook_secret_key(big, key, &keylen));
}
END_TEST

START_TEST(verify_accepts_valid)
{
    ck_assert_int_eq(verify(SPEC_SIG), WEBHOOK_VERIFY_OK);
    /* Several signatures (secret rotation): any matching v1 entry will do. */
    ck_assert_int_eq(verify("v1,Zm9vYmFy " SPEC_SIG), WEBHOOK_VERIFY_OK);
    ck_assert_int_eq(verify(SPEC_SIG " v1a,whatever"), WEBHOOK_VERIFY_OK);
    ck_assert_int_eq(verify("  " SPEC_SIG "  "), WEBHOOK_VERIFY_OK);
}
END_TEST

START_TEST(verify_rejects_altered_delivery)
{
    const char *body = SPEC_BODY;
    ck_assert_int_eq(webhook_verify(SPEC_SECRET, SPEC_ID, SPEC_TS_TEXT, "{\"test\": 2432232315}",
                                    strlen(body), SPEC_SIG, SPEC_TS, 300),
                     WEBHOOK_VERIFY_MISMATCH);
    ck_assert_int_eq(webhook_verify(SPEC_SECRET, "msg_other", SPEC_TS_TEXT, body, strlen(body),
                                    SPEC_SIG, SPEC_TS, 300),
                     WEBHOOK_VERIFY_MISMATCH);
    ck_assert_int_eq(webhook_verify(SPEC_SECRET, SPEC_ID, "1614265331", body, strlen(body),
                                    SPEC_SIG, SPEC_TS, 300),
                     WEBHOOK_VERIFY_MISMATCH);
    ck_assert_int_eq(webhook_verify("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", SPEC_ID,
                                    SPEC_TS_TEXT, body, strlen(body), SPEC_SIG, SPEC_TS, 300),
                     WEBHOOK_VERIFY_MISMATCH);
    /* The body length counts: a truncated body does not verify. */
    ck_assert_int_eq(webhook_verify(SPEC_SECRET, SPEC_ID, SPEC_TS_TEXT, body, strlen(body) - 1,
                                    SPEC_SIG, SPEC_TS, 300),
                     WEBHOOK_VERIFY_MISMATCH);
}
END_TEST

START_TEST(verify_rejects_malformed_headers)
{
    ck_assert_int_eq(verify(""), WEBHOOK_VERIFY_MISMATCH);
    ck_assert_int_eq(verify("v1,"), WEBHOOK_VERIFY_MISMATCH);
    ck_assert_int_eq(verify("v1,!!!!"), WEBHOOK_VERIFY_MISMATCH);
    ck_assert_int_eq(verify("g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="),
                     WEBHOOK_VERIFY_MISMATCH);
    ck_assert_int_eq(verify("v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="),
                     WEBHOOK_VERIFY_MISMATCH);
    /* A prefix of the right signature is not the signature. */
    ck_assert_int_eq(verify("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE"),
                     WEBHOOK_VERIFY_MISMATCH);
    ck_assert_int_eq(verify("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=AAAA"),
                     WEBHOOK_VERIFY_MISMATCH);
}
END_TEST

START_TEST(verify_checks_timestamp)
{
    const char *body = SPEC_BODY;
    size_t n = strlen(body);
    ck_assert_int_eq(
        webhook_verify(SPEC_SECRET, SPEC_ID, SPEC_TS_TEXT, body, n, SPEC_SIG, SPEC_TS + 300, 300),
        WEBHOOK_VERIFY_OK);
    ck_assert_int_eq(
        webhook_verify(SPEC_SECRET, SPEC_ID, SPEC_TS_TEXT, body, n, SPEC_SIG, SPEC_TS + 301, 300),
        WEBHOOK_VERIFY_STALE);
    ck_assert_int_eq(
        webhook_verify(SPEC_SECRET, SPEC_ID, SPEC_TS_TEXT, body, n, SPEC_SIG, SPEC_TS - 301, 300),
        WEBHOOK_VERIFY_STALE);
    const char *bad[] = {"",
                         "-1614265330",
                         "+1614265330",
                         "1614265330.5",
                         " 1614265330",
                         "16142653300000000000000",
                         "0x60367"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_int_eq(
            webhook_verify(SPEC_SECRET, SPEC_ID, bad[i], body, n, SPEC_SIG, SPEC_TS, 300),
            WEBHOOK_VERIFY_BAD_TIMESTAMP);
    ck_assert_int_eq(
        webhook_verify("whsec_???", SPEC_ID, SPEC_TS_TEXT, body, n, SPEC_SIG, SPEC_TS, 300),
        WEBHOOK_VERIFY_BAD_SECRET);
}
END_TEST

START_TEST(sign_then_verify_round_trip)
{
    const char *secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const char *body = "{\"id\":\"evt_x\",\"type\":\"payout.sent\"}";
    const char *sig = sign(secret, "evt_x", 1800000000LL, body);
    ck_assert_uint_eq(strlen(sig), 3 + 44);
    ck_assert_int_eq(
        webhook_verify(secret, "evt_x", "1800000000", body, strlen(body), sig, 1800000000LL, 300),
        WEBHOOK_VERIFY_OK);
}
END_TEST

Suite *webhook_sign_suite(void)
{
    Suite *s = suite_create("webhook_sign");
    TCase *tc = tcase_create("sign");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, spec_vector);
    tcase_add_test(tc, secret_prefix_is_optional);
    tcase_add_test(tc, secret_decoding);
    tcase_add_test(tc, sign_then_verify_round_trip);
    suite_add_tcase(s, tc);
    TCase *v = tcase_create("verify");
    tcase_add_checked_fixture(v, setup, teardown);
    tcase_add_test(v, verify_accepts_valid);
    tcase_add_test(v, verify_rejects_altered_delivery);
    tcase_add_test(v, verify_rejects_malformed_headers);
    tcase_add_test(v, verify_checks_timestamp);
    suite_add_tcase(s, v);
    return s;
}
