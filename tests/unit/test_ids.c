/* ids: the syntax of identifiers and stored paths (lib/ids.c), shared by the API and
 * market-admin; and the percent-encoder of lib/text.c. */
#include <string.h>

#include "ids.h"
#include "text.h"
#include "unit.h"

START_TEST(prefixed_ids)
{
    ck_assert(ids_prefixed_valid("prod_a", "prod_"));
    ck_assert(ids_prefixed_valid("prod_Font_2", "prod_"));
    char sixty[5 + 61] = "prod_";
    memset(sixty + 5, 'x', 60);
    ck_assert(ids_prefixed_valid(sixty, "prod_"));
    sixty[5 + 59] = '-';
    ck_assert(!ids_prefixed_valid(sixty, "prod_"));
    char sixty_one[5 + 62] = "prod_";
    memset(sixty_one + 5, 'x', 61);
    ck_assert(!ids_prefixed_valid(sixty_one, "prod_"));
    const char *bad[] = {"prod_", "prod", "dl_x", "prod_a b", "prod_é", "PROD_a", "prod_a/b", NULL};
    for (int i = 0; bad[i] != NULL; i++)
        ck_assert_msg(!ids_prefixed_valid(bad[i], "prod_"), "accepted \"%s\"", bad[i]);
}
END_TEST

START_TEST(slugs_and_handles)
{
    ck_assert(ids_slug_valid("fonts"));
    ck_assert(ids_slug_valid("3d-models"));
    ck_assert(!ids_slug_valid("-fonts"));
    ck_assert(!ids_slug_valid("font_s")); /* underscores are a handle's, not a slug's */
    ck_assert(!ids_slug_valid("Fonts"));
    ck_assert(!ids_slug_valid(""));
    ck_assert(ids_handle_valid("type_co-op"));
    ck_assert(!ids_handle_valid("_type"));
    char forty[41], forty_one[42];
    memset(forty, 'a', 40);
    forty[40] = '\0';
    memset(forty_one, 'a', 41);
    forty_one[41] = '\0';
    ck_assert(ids_slug_valid(forty));
    ck_assert(!ids_slug_valid(forty_one));
    ck_assert(ids_handle_valid(forty));
    ck_assert(!ids_handle_valid(forty_one));
}
END_TEST

START_TEST(random_ids_have_the_prefix_and_24_characters)
{
    char a[64], b[64];
    ids_random(a, sizeof a, "dl_");
    ids_random(b, sizeof b, "dl_");
    ck_assert_uint_eq(strlen(a), 3 + IDS_RANDOM_CHARS);
    ck_assert(ids_prefixed_valid(a, "dl_"));
    ck_assert_str_ne(a, b);
}
END_TEST

START_TEST(paths_stay_under_the_root)
{
    ck_assert(ids_path_valid("fonts/grotesk.zip"));
    ck_assert(ids_path_valid("a/b/c d (1).zip"));
    ck_assert(ids_path_valid("..hidden/x")); /* a name that starts with dots is a name */
    const char *bad[] = {"",     "/etc/passwd", "a//b", "a/",   "./a",   "a/./b",
                         "../a", "a/..",        "a\\b", "a\nb", "a\x7f", NULL};
    for (int i = 0; bad[i] != NULL; i++)
        ck_assert_msg(!ids_path_valid(bad[i]), "accepted \"%s\"", bad[i]);
    char longest[IDS_PATH_MAX_BYTES + 2];
    memset(longest, 'p', sizeof longest - 1);
    longest[IDS_PATH_MAX_BYTES] = '\0';
    ck_assert(ids_path_valid(longest));
    longest[IDS_PATH_MAX_BYTES] = 'p';
    longest[IDS_PATH_MAX_BYTES + 1] = '\0';
    ck_assert(!ids_path_valid(longest));
}
END_TEST

START_TEST(percent_encodes_all_but_kept_bytes)
{
    buf b;
    buf_init(&b, 0);
    const char in[] = "a b/ü~%";
    percent_encode(&b, in, strlen(in), percent_unreserved);
    ck_assert_str_eq(b.data, "a%20b%2F%C3%BC~%25");
    buf_clear(&b);
    percent_encode(&b, "x\0y", 3, percent_unreserved); /* a NUL is a byte like another */
    ck_assert_str_eq(b.data, "x%00y");
    buf_free(&b);
}
END_TEST

Suite *ids_suite(void)
{
    Suite *s = suite_create("ids");
    TCase *t = tcase_create("rules");
    tcase_add_test(t, prefixed_ids);
    tcase_add_test(t, slugs_and_handles);
    tcase_add_test(t, random_ids_have_the_prefix_and_24_characters);
    tcase_add_test(t, paths_stay_under_the_root);
    tcase_add_test(t, percent_encodes_all_but_kept_bytes);
    suite_add_tcase(s, t);
    return s;
}
