/* api/mime: the Content-Type of a downloaded file, from its name. */
#include <string.h>

#include "api/orders/mime.h"
#include "unit.h"

START_TEST(known_extensions)
{
    ck_assert_str_eq(mime_type("Inter.otf"), "font/otf");
    ck_assert_str_eq(mime_type("Inter.woff2"), "font/woff2");
    ck_assert_str_eq(mime_type("Inter.woff"), "font/woff");
    ck_assert_str_eq(mime_type("pack.zip"), "application/zip");
    ck_assert_str_eq(mime_type("manual.pdf"), "application/pdf");
    ck_assert_str_eq(mime_type("cover.jpg"), "image/jpeg");
    ck_assert_str_eq(mime_type("cover.jpeg"), "image/jpeg");
    ck_assert_str_eq(mime_type("loop.wav"), "audio/wav");
    ck_assert_str_eq(mime_type("clip.mp4"), "video/mp4");
    ck_assert_str_eq(mime_type("a.7z"), "application/x-7z-compressed");
}
END_TEST

START_TEST(case_does_not_matter)
{
    ck_assert_str_eq(mime_type("FONT.OTF"), "font/otf");
    ck_assert_str_eq(mime_type("Photo.JpG"), "image/jpeg");
}
END_TEST

START_TEST(the_last_extension_counts)
{
    ck_assert_str_eq(mime_type("fonts.tar.gz"), "application/gzip");
    ck_assert_str_eq(mime_type("v1.2/readme.txt"), "text/plain");
    /* A dot in a folder's name is no extension of the file. */
    ck_assert_str_eq(mime_type("v1.zip/readme"), "application/octet-stream");
}
END_TEST

START_TEST(anything_else_is_octet_stream)
{
    static const char *const names[] = {
        "README", "archive.", "page.html", "page.htm", "app.js",   "page.xhtml", "feed.xml",
        "run.sh", "a.zipx",   "",          "icon.svg", "icon.SVG", /* an SVG opened in the browser
                                                                      runs its scripts */
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ck_assert_msg(strcmp(mime_type(names[i]), "application/octet-stream") == 0, "%s: %s",
                      names[i], mime_type(names[i]));
}
END_TEST

Suite *mime_suite(void)
{
    Suite *s = suite_create("mime");
    TCase *t = tcase_create("type");
    tcase_add_test(t, known_extensions);
    tcase_add_test(t, case_does_not_matter);
    tcase_add_test(t, the_last_extension_counts);
    tcase_add_test(t, anything_else_is_octet_stream);
    suite_add_tcase(s, t);
    return s;
}
