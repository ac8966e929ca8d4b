/* hash: FNV-1a 64 against the published test vectors (draft-eastlake-fnv, the FNV test
 * suite), so that the constants cannot drift. */
#include <stdint.h>
#include <string.h>

#include "hash.h"
#include "unit.h"

static uint64_t of(const char *s)
{
    return hash_fnv1a(s, strlen(s));
}

START_TEST(known_vectors)
{
    ck_assert_uint_eq(of(""), 0xcbf29ce484222325ULL); /* the offset basis */
    ck_assert_uint_eq(of("a"), 0xaf63dc4c8601ec8cULL);
    ck_assert_uint_eq(of("foobar"), 0x85944171f73967e8ULL);
    ck_assert_uint_eq(of("chongo was here!\n"), 0x46810940eff5f915ULL);
}
END_TEST

/* Bytes above 0x7f count as themselves, not as negative chars, and a NUL is one more
 * byte: keys are lengths, not C strings. */
START_TEST(every_byte_counts)
{
    ck_assert_uint_eq(hash_fnv1a("\xff\x00\x00\x01", 4), 0x6961196491cc682dULL);
    ck_assert_uint_eq(hash_fnv1a("\0", 1), 0xaf63bd4c8601b7dfULL);
    ck_assert_uint_eq(hash_fnv1a("a\0b", 3), 0xe5d29919042666b2ULL);
    ck_assert_uint_ne(hash_fnv1a("a\0b", 3), hash_fnv1a("a\0c", 3));
}
END_TEST

Suite *hash_suite(void)
{
    Suite *s = suite_create("hash");
    TCase *tc = tcase_create("fnv1a");
    tcase_add_test(tc, known_vectors);
    tcase_add_test(tc, every_byte_counts);
    suite_add_tcase(s, tc);
    return s;
}
