/* percent_decode and utf8_valid against independent reference implementations.
 * Input: one flag byte (bit 0: '+' means space), then the text to decode. */
#include "fuzz.h"
#include "text.h"

/* Code points in well-formed UTF-8: every byte that is not a continuation byte. */
static size_t count_code_points(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += ((unsigned char)s[i] & 0xC0) != 0x80;
    return count;
}

static void check_utf8(const char *s, size_t n)
{
    bool valid = utf8_valid(s, n);
    FUZZ_CHECK(valid == ref_utf8_valid(s, n));
    if (valid)
        FUZZ_CHECK(utf8_length(s, n) == count_code_points(s, n));
}

/* Decoding the fully escaped form of a decoded value gives the value back. */
static void check_reencoding(const char *value, size_t len, bool plus)
{
    char *encoded = malloc(3 * len + 1);
    char *back = malloc(3 * len + 1);
    size_t back_len = 0;
    size_t n = fuzz_percent_encode_all(value, len, encoded);
    FUZZ_CHECK(percent_decode(encoded, n, plus, back, &back_len));
    FUZZ_CHECK(back_len == len && memcmp(back, value, len) == 0);
    free(encoded);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    bool plus = data[0] & 1;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;

    check_utf8(s, n);

    char *out = malloc(n + 1), *ref = malloc(n + 1);
    size_t len = 0, ref_len = 0;
    bool ok = percent_decode(s, n, plus, out, &len);
    bool ref_ok = ref_percent_decode(s, n, plus, ref, &ref_len) && ref_utf8_valid(ref, ref_len);
    FUZZ_CHECK(ok == ref_ok);
    if (ok) {
        FUZZ_CHECK(len == ref_len && len <= n);
        FUZZ_CHECK(memcmp(out, ref, len) == 0 && out[len] == '\0');
        FUZZ_CHECK(memchr(out, '\0', len) == NULL);
        check_reencoding(out, len, plus);
    }
    free(out);
    free(ref);
    return 0;
}
