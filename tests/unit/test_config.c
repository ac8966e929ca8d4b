/* config: retry-delay lists and the environment checks of config_load, which walks the
 * table of lib/settings.c: defaults, ranges, malformed values, required settings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "settings.h"
#include "unit.h"

static long delays[CONFIG_MAX_RETRIES];
static int count;

static bool parse(const char *text)
{
    count = -1;
    return config_parse_durations(text, delays, CONFIG_MAX_RETRIES, &count);
}

START_TEST(default_schedule)
{
    static const long want[] = {5, 300, 1800, 7200, 18000, 36000, 36000};
    ck_assert(parse("5s,5m,30m,2h,5h,10h,10h"));
    ck_assert_int_eq(count, 7);
    for (int i = 0; i < 7; i++)
        ck_assert_int_eq(delays[i], want[i]);
}
END_TEST

START_TEST(units_and_bounds)
{
    ck_assert(parse("1s,2s,4s"));
    ck_assert_int_eq(count, 3);
    ck_assert_int_eq(delays[2], 4);
    ck_assert(parse("1d"));
    ck_assert_int_eq(delays[0], 86400);
    ck_assert(parse("366d"));
    ck_assert_int_eq(delays[0], 366L * 86400);
    ck_assert(parse("8784h"));
    ck_assert(parse("31622400s"));
    ck_assert(!parse("367d"));
    ck_assert(!parse("8785h"));
    ck_assert(!parse("31622401s"));
    ck_assert(parse("007s"));
    ck_assert_int_eq(delays[0], 7);
}
END_TEST

START_TEST(rejects_malformed)
{
    static const char *const bad[] = {
        "",
        ",",
        "5s,",
        ",5s",
        "5",
        "s",
        "0s",
        "-5s",
        "+5s",
        " 5s",
        "\t5s",
        "\n5s",
        "5s ",
        "5 s",
        "5x",
        "5S",
        "5s5m",
        "5s,,5m",
        "5s;5m",
        "1.5s",
        "0x5s",
        "5ss",
        "99999999999999999999s",
        "5s,\t5m",
        "5s, 5m",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(!parse(bad[i]), "accepted \"%s\"", bad[i]);
        ck_assert_int_eq(count, -1);
    }
}
END_TEST

START_TEST(respects_max)
{
    long two[2];
    int n = -1;
    ck_assert(config_parse_durations("1s,2s", two, 2, &n));
    ck_assert_int_eq(n, 2);
    n = -1;
    ck_assert(!config_parse_durations("1s,2s,3s", two, 2, &n));
    ck_assert_int_eq(n, -1);
}
END_TEST

/* Every setting of the table, unset: the tests start from the defaults. */
static void unset_settings(void)
{
    for (size_t i = 0; i < settings_count; i++)
        unsetenv(settings[i].name);
}

static char secret_path[64];
static market_config cfg;
static char err[256];

static void write_secret(const char *content)
{
    FILE *f = fopen(secret_path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(content, f);
    fclose(f);
}

static void env_setup(void)
{
    unset_settings();
    snprintf(secret_path, sizeof secret_path, "/tmp/market-unit-secret-XXXXXX");
    int fd = mkstemp(secret_path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    write_secret("0123456789abcdef0123456789abcdef\n");
    setenv("MARKET_SECRET_FILE", secret_path, 1);
    setenv("MARKET_DOWNLOAD_BASE_URL", "https://files.example/d//", 1);
    setenv("MARKET_FILES_ROOT", "/srv/files", 1);
    memset(&cfg, 0, sizeof cfg);
    err[0] = '\0';
}

static void env_teardown(void)
{
    free((char *)cfg.download_base_url);
    cfg.download_base_url = NULL;
    unlink(secret_path);
    unset_settings();
}

static bool load(void)
{
    free((char *)cfg.download_base_url);
    err[0] = '\0';
    /* config_load clears cfg first; on failure it may still have copied the base URL. */
    return config_load(&cfg, CONFIG_NEED_SECRET | CONFIG_NEED_DOWNLOADS, err, sizeof err);
}

/* Expects config_load to fail with a one-line message naming var. */
static void load_fails(const char *var)
{
    ck_assert(!load());
    ck_assert_msg(strstr(err, var) != NULL, "message \"%s\" does not name %s", err, var);
    ck_assert_ptr_null(strchr(err, '\n'));
}

START_TEST(load_defaults)
{
    ck_assert_msg(load(), "%s", err);
    ck_assert_str_eq(cfg.db, "");
    ck_assert_uint_eq(cfg.secret_len, 32);
    ck_assert_mem_eq(cfg.secret, "0123456789abcdef0123456789abcdef", 32);
    ck_assert_int_eq(cfg.rate_limit, 600);
    ck_assert_int_eq(cfg.key_grace, 86400);
    ck_assert_int_eq(cfg.webhook_secret_grace, 86400);
    ck_assert_int_eq(cfg.download_ttl, 3600);
    ck_assert_int_eq(cfg.webhook_timeout, 10);
    ck_assert_int_eq(cfg.webhook_retry_count, 7);
    ck_assert_int_eq(cfg.webhook_retries[6], 36000);
    ck_assert_str_eq(cfg.download_base_url, "https://files.example/d");
    ck_assert_str_eq(cfg.files_root, "/srv/files");
    ck_assert_ptr_null(cfg.webhook_ca_file);
    ck_assert(!cfg.webhook_allow_private);
    ck_assert_str_eq(cfg.metrics_file, "/run/market-api/metrics");
    ck_assert_ptr_null(cfg.db_read);
    ck_assert_int_eq(cfg.db_read_max_lag, 10);
    ck_assert_int_eq(cfg.retention, 30L * 86400);
}
END_TEST

START_TEST(load_overrides)
{
    setenv("MARKET_RATE_LIMIT", "5", 1);
    setenv("MARKET_WEBHOOK_RETRIES", "1s,2s", 1);
    setenv("MARKET_WEBHOOK_ALLOW_PRIVATE", "1", 1);
    setenv("MARKET_WEBHOOK_CA_FILE", "/etc/ca.pem", 1);
    setenv("MARKET_DB_READ", "host=replica dbname=market", 1);
    setenv("MARKET_DB_READ_MAX_LAG", "3", 1);
    ck_assert_msg(load(), "%s", err);
    ck_assert_str_eq(cfg.db_read, "host=replica dbname=market");
    ck_assert_int_eq(cfg.db_read_max_lag, 3);
    ck_assert_int_eq(cfg.rate_limit, 5);
    ck_assert_int_eq(cfg.webhook_retry_count, 2);
    ck_assert(cfg.webhook_allow_private);
    ck_assert_str_eq(cfg.webhook_ca_file, "/etc/ca.pem");
    setenv("MARKET_METRICS_FILE", "/srv/pool-a/metrics", 1);
    ck_assert_msg(load(), "%s", err);
    ck_assert_str_eq(cfg.metrics_file, "/srv/pool-a/metrics");
}
END_TEST

/* MARKET_RETENTION: one duration, each unit, up to 366 days (the soak and the end-to-end
 * tests keep seconds). */
START_TEST(load_retention)
{
    static const struct {
        const char *text;
        long seconds;
    } good[] = {
        {"30d", 30L * 86400}, {"12h", 12L * 3600}, {"2m", 120}, {"1s", 1}, {"366d", 366L * 86400}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("MARKET_RETENTION", good[i].text, 1);
        ck_assert_msg(load(), "%s: %s", good[i].text, err);
        ck_assert_int_eq(cfg.retention, good[i].seconds);
    }
    static const char *const bad[] = {"30", "0d", "-1d", "367d", "30d,1d",
                                      "1w", "d",  " 1d", "1.5d", "30 d"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("MARKET_RETENTION", bad[i], 1);
        load_fails("MARKET_RETENTION");
    }
    setenv("MARKET_RETENTION", "", 1);
    ck_assert_msg(load(), "%s", err);
    ck_assert_int_eq(cfg.retention, 30L * 86400);
}
END_TEST

/* MARKET_WEBHOOK_SECRET_GRACE: 0 (a rotation ends the old secret at once) to 7 days. */
START_TEST(load_webhook_secret_grace)
{
    setenv("MARKET_WEBHOOK_SECRET_GRACE", "0", 1);
    ck_assert_msg(load(), "%s", err);
    ck_assert_int_eq(cfg.webhook_secret_grace, 0);
    setenv("MARKET_WEBHOOK_SECRET_GRACE", "604800", 1);
    ck_assert_msg(load(), "%s", err);
    ck_assert_int_eq(cfg.webhook_secret_grace, 604800);
    static const char *const bad[] = {"604801", "-1", "1d", "x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("MARKET_WEBHOOK_SECRET_GRACE", bad[i], 1);
        load_fails("MARKET_WEBHOOK_SECRET_GRACE");
    }
}
END_TEST

START_TEST(load_rejects_bad_settings)
{
    setenv("MARKET_RATE_LIMIT", "0", 1);
    load_fails("MARKET_RATE_LIMIT");
    setenv("MARKET_RATE_LIMIT", "12abc", 1);
    load_fails("MARKET_RATE_LIMIT");
    unsetenv("MARKET_RATE_LIMIT");
    setenv("MARKET_DOWNLOAD_TTL", "59", 1);
    load_fails("MARKET_DOWNLOAD_TTL");
    unsetenv("MARKET_DOWNLOAD_TTL");
    setenv("MARKET_WEBHOOK_RETRIES", "5s,", 1);
    load_fails("MARKET_WEBHOOK_RETRIES");
    unsetenv("MARKET_WEBHOOK_RETRIES");
    setenv("MARKET_DB_READ_MAX_LAG", "0", 1);
    load_fails("MARKET_DB_READ_MAX_LAG");
    unsetenv("MARKET_DB_READ_MAX_LAG");
    setenv("MARKET_WEBHOOK_ALLOW_PRIVATE", "yes", 1);
    load_fails("MARKET_WEBHOOK_ALLOW_PRIVATE");
    unsetenv("MARKET_WEBHOOK_ALLOW_PRIVATE");
    setenv("MARKET_FILES_ROOT", "relative/path", 1);
    load_fails("MARKET_FILES_ROOT");
    setenv("MARKET_FILES_ROOT", "/srv/files", 1);
    setenv("MARKET_DOWNLOAD_BASE_URL", "ftp://files.example", 1);
    load_fails("MARKET_DOWNLOAD_BASE_URL");
    setenv("MARKET_DOWNLOAD_BASE_URL", "https://files.example/d", 1);
    setenv("MARKET_METRICS_FILE", "run/metrics", 1);
    load_fails("MARKET_METRICS_FILE");
}
END_TEST

START_TEST(load_checks_secret)
{
    write_secret("too short\n");
    load_fails("MARKET_SECRET_FILE");
    /* 31 bytes plus a newline: the newline is not part of the secret. */
    write_secret("0123456789abcdef0123456789abcde\n");
    load_fails("MARKET_SECRET_FILE");
    unlink(secret_path);
    load_fails("MARKET_SECRET_FILE");
    unsetenv("MARKET_SECRET_FILE");
    load_fails("MARKET_SECRET_FILE");
}
END_TEST

START_TEST(extensions_parse)
{
    unsigned bits = 99;
    char unknown[16];
    ck_assert(config_parse_extensions("", &bits, unknown, sizeof unknown));
    ck_assert_uint_eq(bits, 0);
    ck_assert(config_parse_extensions("webhook-management", &bits, unknown, sizeof unknown));
    ck_assert_uint_eq(bits, CONFIG_EXT_WEBHOOK_MANAGEMENT);
    ck_assert(config_parse_extensions(" webhook-management ,", &bits, unknown, sizeof unknown));
    ck_assert_uint_eq(bits, CONFIG_EXT_WEBHOOK_MANAGEMENT);
    ck_assert(config_parse_extensions(",webhook-management,,webhook-management", &bits, unknown,
                                      sizeof unknown));
    ck_assert_uint_eq(bits, CONFIG_EXT_WEBHOOK_MANAGEMENT);
    /* Case, a near miss, an unknown name after a known one: refused, and named. */
    ck_assert(!config_parse_extensions("Webhook-Management", &bits, unknown, sizeof unknown));
    ck_assert_str_eq(unknown, "Webhook-Managem"); /* cut to fit: 15 bytes and the NUL */
    ck_assert(
        !config_parse_extensions("webhook-management,events ", &bits, unknown, sizeof unknown));
    ck_assert_str_eq(unknown, "events");
    ck_assert(!config_parse_extensions("webhook-managements", &bits, unknown, sizeof unknown));
    ck_assert(!config_parse_extensions("webhook management", &bits, unknown, sizeof unknown));
}
END_TEST

START_TEST(load_extensions)
{
    ck_assert_msg(load(), "%s", err);
    ck_assert_uint_eq(cfg.api_extensions, 0); /* the specification's interface by default */
    setenv("MARKET_API_EXTENSIONS", "webhook-management", 1);
    ck_assert_msg(load(), "%s", err);
    ck_assert_uint_eq(cfg.api_extensions, CONFIG_EXT_WEBHOOK_MANAGEMENT);
    setenv("MARKET_API_EXTENSIONS", "webhook-management,graphql", 1);
    load_fails("MARKET_API_EXTENSIONS");
    ck_assert_ptr_nonnull(strstr(err, "\"graphql\""));
}
END_TEST

/* The settings config_load gained from the programs that read them alone before, and the
 * computed defaults. */
START_TEST(load_defaults_of_the_rest)
{
    ck_assert_msg(load(), "%s", err);
    ck_assert(cfg.request_log);
    ck_assert_int_eq(cfg.webhookd_concurrency, 64);
    ck_assert_ptr_null(cfg.migrations_dir);
    ck_assert(cfg.progress_seconds == 5.0);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    ck_assert_int_eq(cfg.workers, cores >= 1 && cores <= 256 ? cores : 1);
    ck_assert_int_eq(cfg.key_inflight, cfg.workers / 2 > 0 ? cfg.workers / 2 : 1);
    /* The default of MARKET_KEY_INFLIGHT follows MARKET_WORKERS, set or not. */
    setenv("MARKET_WORKERS", "9", 1);
    ck_assert_msg(load(), "%s", err);
    ck_assert_int_eq(cfg.key_inflight, 4);
    setenv("MARKET_WORKERS", "1", 1);
    ck_assert_msg(load(), "%s", err);
    ck_assert_int_eq(cfg.key_inflight, 1);
    setenv("MARKET_KEY_INFLIGHT", "7", 1);
    ck_assert_msg(load(), "%s", err);
    ck_assert_int_eq(cfg.key_inflight, 7);
}
END_TEST

static long long_field(const setting *s)
{
    long v;
    memcpy(&v, (const char *)&cfg + s->field, sizeof v);
    return v;
}

/* Every integer setting of the table: both ends of its range taken and stored, one past
 * either end refused with the message naming it, as is a value with a tail or none. */
START_TEST(load_integer_ranges)
{
    int checked = 0;
    for (size_t i = 0; i < settings_count; i++) {
        const setting *s = &settings[i];
        if (s->type != SETTING_INTEGER)
            continue;
        char text[32];
        const long ends[] = {s->min, s->max};
        for (size_t e = 0; e < 2; e++) {
            snprintf(text, sizeof text, "%ld", ends[e]);
            setenv(s->name, text, 1);
            ck_assert_msg(load(), "%s=%s: %s", s->name, text, err);
            ck_assert_int_eq(long_field(s), ends[e]);
        }
        const long outside[] = {s->min - 1, s->max + 1};
        for (size_t e = 0; e < 2; e++) {
            snprintf(text, sizeof text, "%ld", outside[e]);
            setenv(s->name, text, 1);
            load_fails(s->name);
            ck_assert_msg(strstr(err, "must be an integer from") != NULL, "%s", err);
        }
        static const char *const malformed[] = {"12abc", "x", " 5", "5 ", "0x10", "1e3"};
        for (size_t m = 0; m < sizeof malformed / sizeof malformed[0]; m++) {
            setenv(s->name, malformed[m], 1);
            load_fails(s->name);
        }
        unsetenv(s->name);
        checked++;
    }
    ck_assert_int_ge(checked, 12);
}
END_TEST

/* 0 or 1 and nothing else, for each switch of the table. */
START_TEST(load_switches)
{
    setenv("MARKET_REQUEST_LOG", "0", 1);
    ck_assert_msg(load(), "%s", err);
    ck_assert(!cfg.request_log);
    static const char *const bad[] = {"yes", "2", " 1", "1 ", "01", "true", "-1"};
    for (size_t i = 0; i < settings_count; i++) {
        if (settings[i].type != SETTING_SWITCH)
            continue;
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            setenv(settings[i].name, bad[b], 1);
            load_fails(settings[i].name);
            ck_assert_msg(strstr(err, "must be 0 or 1") != NULL, "%s", err);
        }
        unsetenv(settings[i].name);
    }
}
END_TEST

/* MARKET_PROGRESS_SECONDS: a decimal number of seconds (the admin tests use 0.01). */
START_TEST(load_seconds)
{
    static const struct {
        const char *text;
        double seconds;
    } good[] = {{"0", 0}, {"0.01", 0.01}, {".5", 0.5}, {"3600", 3600}, {"12", 12}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("MARKET_PROGRESS_SECONDS", good[i].text, 1);
        ck_assert_msg(load(), "%s: %s", good[i].text, err);
        ck_assert(cfg.progress_seconds == good[i].seconds);
    }
    static const char *const bad[] = {"-1", "3600.5", "inf", "nan", "5s", " 5", "x", "1e9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("MARKET_PROGRESS_SECONDS", bad[i], 1);
        load_fails("MARKET_PROGRESS_SECONDS");
    }
}
END_TEST

/* A setting required under a need stops config_load only when that need is asked for;
 * an empty value counts as unset. */
START_TEST(load_required_by_need)
{
    static const struct {
        const char *name;
        int need;
    } required[] = {{"MARKET_SECRET_FILE", CONFIG_NEED_SECRET},
                    {"MARKET_DOWNLOAD_BASE_URL", CONFIG_NEED_DOWNLOADS},
                    {"MARKET_FILES_ROOT", CONFIG_NEED_DOWNLOADS}};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        const char *was = getenv(required[i].name);
        char saved[128];
        snprintf(saved, sizeof saved, "%s", was);
        for (int empty = 0; empty < 2; empty++) {
            if (empty)
                setenv(required[i].name, "", 1);
            else
                unsetenv(required[i].name);
            load_fails(required[i].name);
            ck_assert_msg(strstr(err, "is required") != NULL, "%s", err);
            free((char *)cfg.download_base_url);
            int others = (CONFIG_NEED_SECRET | CONFIG_NEED_DOWNLOADS) & ~required[i].need;
            ck_assert_msg(config_load(&cfg, others, err, sizeof err), "%s without its need: %s",
                          required[i].name, err);
        }
        setenv(required[i].name, saved, 1);
    }
    ck_assert_int_eq(settings_find("MARKET_SECRET_FILE")->required, CONFIG_NEED_SECRET);
}
END_TEST

/* config_load_one reads its one setting into its field and touches no other. */
START_TEST(load_one_setting)
{
    static market_config one;
    memset(&one, 0x5a, sizeof one);
    setenv("MARKET_MIGRATIONS_DIR", "/srv/sql", 1);
    ck_assert_msg(config_load_one(&one, "MARKET_MIGRATIONS_DIR", err, sizeof err), "%s", err);
    ck_assert_str_eq(one.migrations_dir, "/srv/sql");
    ck_assert_int_eq(one.rate_limit, 0x5a5a5a5a5a5a5a5aL);
    ck_assert(config_load_one(&one, "MARKET_PROGRESS_SECONDS", err, sizeof err));
    ck_assert(one.progress_seconds == 5.0);
    setenv("MARKET_PROGRESS_SECONDS", "soon", 1);
    ck_assert(!config_load_one(&one, "MARKET_PROGRESS_SECONDS", err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "MARKET_PROGRESS_SECONDS"));
    ck_assert(!config_load_one(&one, "MARKET_NO_SUCH_THING", err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "MARKET_NO_SUCH_THING"));
    /* Not required alone: an unset file root is NULL, for seed --files to refuse. */
    unsetenv("MARKET_FILES_ROOT");
    ck_assert(config_load_one(&one, "MARKET_FILES_ROOT", err, sizeof err));
    ck_assert_ptr_null(one.files_root);
}
END_TEST

Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *durations = tcase_create("durations");
    tcase_add_test(durations, default_schedule);
    tcase_add_test(durations, units_and_bounds);
    tcase_add_test(durations, rejects_malformed);
    tcase_add_test(durations, respects_max);
    tcase_add_test(durations, extensions_parse);
    suite_add_tcase(s, durations);
    TCase *env = tcase_create("environment");
    tcase_add_checked_fixture(env, env_setup, env_teardown);
    tcase_add_test(env, load_defaults);
    tcase_add_test(env, load_overrides);
    tcase_add_test(env, load_rejects_bad_settings);
    tcase_add_test(env, load_retention);
    tcase_add_test(env, load_webhook_secret_grace);
    tcase_add_test(env, load_checks_secret);
    tcase_add_test(env, load_extensions);
    tcase_add_test(env, load_defaults_of_the_rest);
    tcase_add_test(env, load_integer_ranges);
    tcase_add_test(env, load_switches);
    tcase_add_test(env, load_seconds);
    tcase_add_test(env, load_required_by_need);
    tcase_add_test(env, load_one_setting);
    suite_add_tcase(s, env);
    return s;
}
