/* webhookd/cabundle: the system CA bundle and MARKET_WEBHOOK_CA_FILE as one file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "webhookd/cabundle.h"

#define CERT "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"

static char dir[64];
static char system_pem[96], extra_pem[96], missing[96];
static buf pem;
static char err[256];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/market-unit-ca.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(system_pem, sizeof system_pem, "%s/system.pem", dir);
    snprintf(extra_pem, sizeof extra_pem, "%s/extra.pem", dir);
    snprintf(missing, sizeof missing, "%s/missing.pem", dir);
    buf_init(&pem, 64);
    err[0] = '\0';
}

static void teardown(void)
{
    unlink(system_pem);
    unlink(extra_pem);
    rmdir(dir);
    buf_free(&pem);
}

START_TEST(system_bundle_then_extra_file)
{
    write_file(system_pem, "# system\n" CERT); /* no final newline */
    write_file(extra_pem, CERT "\n");
    ck_assert_msg(cabundle_build(system_pem, extra_pem, &pem, err, sizeof err), "%s", err);
    /* A line break of its own keeps the two files' lines apart. */
    ck_assert_str_eq(pem.data, "# system\n" CERT "\n" CERT "\n");
}
END_TEST

START_TEST(no_system_bundle_is_fine)
{
    write_file(extra_pem, CERT);
    ck_assert(cabundle_build(missing, extra_pem, &pem, err, sizeof err));
    ck_assert_str_eq(pem.data, CERT "\n");
    ck_assert(cabundle_build(NULL, extra_pem, &pem, err, sizeof err));
    ck_assert_str_eq(pem.data, CERT "\n"); /* built anew, not appended */
}
END_TEST

START_TEST(unreadable_system_bundle_fails)
{
    /* Another error than "absent" is reported, not skipped: a directory reads as EISDIR. */
    write_file(extra_pem, CERT);
    ck_assert(!cabundle_build(dir, extra_pem, &pem, err, sizeof err));
    ck_assert_msg(strncmp(err, "system CA bundle ", 17) == 0, "%s", err);
    ck_assert_msg(strstr(err, strerror(EISDIR)) != NULL, "%s", err);
}
END_TEST

START_TEST(extra_file_must_exist)
{
    write_file(system_pem, CERT);
    ck_assert(!cabundle_build(system_pem, missing, &pem, err, sizeof err));
    char want[256];
    snprintf(want, sizeof want, "MARKET_WEBHOOK_CA_FILE %s: %s", missing, strerror(ENOENT));
    ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(extra_file_must_hold_a_certificate)
{
    /* The system bundle's certificates do not count for the extra file. */
    write_file(system_pem, CERT);
    write_file(extra_pem, "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n");
    ck_assert(!cabundle_build(system_pem, extra_pem, &pem, err, sizeof err));
    char want[256];
    snprintf(want, sizeof want, "MARKET_WEBHOOK_CA_FILE %s holds no PEM certificate", extra_pem);
    ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(open_names_a_readable_copy)
{
    buf_puts(&pem, CERT "\n");
    cabundle b;
    ck_assert_msg(cabundle_open(&b, &pem, err, sizeof err), "%s", err);
    FILE *f = fopen(b.path, "r");
    ck_assert_ptr_nonnull(f);
    char back[128] = "";
    size_t n = fread(back, 1, sizeof back - 1, f);
    fclose(f);
    ck_assert_uint_eq(n, pem.len);
    ck_assert_str_eq(back, pem.data);
    char path[CABUNDLE_PATH_MAX];
    memcpy(path, b.path, sizeof path);
    cabundle_close(&b);
    ck_assert_int_eq(b.fd, -1);
    ck_assert_int_ne(access(path, F_OK), 0); /* nothing left behind */
}
END_TEST

Suite *cabundle_suite(void)
{
    Suite *s = suite_create("cabundle");
    TCase *t = tcase_create("bundle");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, system_bundle_then_extra_file);
    tcase_add_test(t, no_system_bundle_is_fine);
    tcase_add_test(t, unreadable_system_bundle_fails);
    tcase_add_test(t, extra_file_must_exist);
    tcase_add_test(t, extra_file_must_hold_a_certificate);
    tcase_add_test(t, open_names_a_readable_copy);
    suite_add_tcase(s, t);
    return s;
}
