/* money_parse, money_format, decimal_valid and decimal_compare against exact 128-bit
 * reference arithmetic, plus format/parse round trips.
 * Input: one control byte (exponent = byte % 10), then text; "|" separates the two
 * operands of decimal_compare. */
#include "fuzz.h"
#include "money.h"

typedef __int128 i128;

/* digits[.digits] with at most max_int integer and max_frac fractional digits. */
static bool ref_grammar(const char *s, size_t max_int, size_t max_frac, size_t *int_digits,
                        size_t *frac_digits)
{
    size_t i = strspn(s, "0123456789"), f = 0;
    if (i == 0 || i > max_int)
        return false;
    if (s[i] == '.') {
        f = strspn(s + i + 1, "0123456789");
        if (f == 0 || f > max_frac || s[i + 1 + f] != '\0')
            return false;
    } else if (s[i] != '\0') {
        return false;
    }
    *int_digits = i;
    *frac_digits = f;
    return true;
}

/* The value of a grammatical decimal scaled by 10^scale, saturating above 10^37. */
static i128 ref_scaled(const char *s, int scale)
{
    const i128 cap = (i128)1000000000000000000 * 10000000000000000000ULL;
    i128 v = 0;
    int frac = -1;
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '.') {
            frac = 0;
            continue;
        }
        if (frac >= 0)
            frac++;
        v = v > cap ? cap + 1 : v * 10 + (*p - '0');
    }
    for (int k = frac < 0 ? 0 : frac; k < scale; k++)
        v = v > cap ? cap + 1 : v * 10;
    return v;
}

static void check_parse(const char *text, int e)
{
    size_t id, fd;
    bool grammatical = ref_grammar(text, SIZE_MAX, (size_t)e, &id, &fd);
    i128 want = grammatical ? ref_scaled(text, e) : -1;
    bool ref_ok = grammatical && want <= INT64_MAX;
    int64_t minor = -7;
    bool ok = money_parse(text, e, &minor);
    FUZZ_CHECK(ok == ref_ok);
    if (ok)
        FUZZ_CHECK((i128)minor == want);
}

/* money_format gives the shortest form, which parses back to the same value. */
static void check_format(int64_t minor, int e)
{
    char text[MONEY_TEXT_MAX];
    money_format(text, sizeof text, minor, e);
    size_t len = strlen(text);
    FUZZ_CHECK(len > 0 && len < MONEY_TEXT_MAX - 1);
    const char *digits = text[0] == '-' ? text + 1 : text;
    FUZZ_CHECK((minor < 0) == (text[0] == '-'));
    const char *dot = strchr(digits, '.');
    if (dot != NULL)
        FUZZ_CHECK(text[len - 1] != '0' && (size_t)(len - 1 - (size_t)(dot - text)) <= (size_t)e);
    FUZZ_CHECK(digits[0] != '0' || digits[1] == '\0' || digits[1] == '.');
    int64_t back = -7;
    bool ok = money_parse(digits, e, &back);
    if (minor == INT64_MIN) {
        FUZZ_CHECK(!ok);
    } else {
        FUZZ_CHECK(ok);
        FUZZ_CHECK(back == (minor < 0 ? -minor : minor));
    }
}

static int sign(i128 v)
{
    return (v > 0) - (v < 0);
}

static void check_decimal(const char *a, const char *b)
{
    size_t id, fd;
    bool valid_a = decimal_valid(a), valid_b = decimal_valid(b);
    FUZZ_CHECK(valid_a == ref_grammar(a, 12, 12, &id, &fd));
    FUZZ_CHECK(valid_b == ref_grammar(b, 12, 12, &id, &fd));
    if (!valid_a || !valid_b)
        return;
    int want = sign(ref_scaled(a, 12) - ref_scaled(b, 12));
    int got = decimal_compare(a, b);
    FUZZ_CHECK((got > 0) - (got < 0) == want);
    int reverse = decimal_compare(b, a);
    FUZZ_CHECK((reverse > 0) - (reverse < 0) == -want);
    FUZZ_CHECK(decimal_compare(a, a) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int e = data[0] % 10;
    char *text = fuzz_strndup(data + 1, size - 1);
    check_parse(text, e);

    int64_t minor = 0;
    memcpy(&minor, data + 1, size - 1 < sizeof minor ? size - 1 : sizeof minor);
    check_format(minor, e);

    char *bar = strchr(text, '|');
    if (bar != NULL) {
        *bar = '\0';
        check_decimal(text, bar + 1);
    } else {
        check_decimal(text, text);
    }
    free(text);
    return 0;
}
