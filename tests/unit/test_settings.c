/* settings: the table of settings is sound (every entry complete and consistent), and
 * what is written from it (--help lists, the settings file's blocks, the README's table)
 * holds each setting where it belongs, in the width it must fit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"
#include "unit.h"

/* What writer printed, malloc'd. */
static char *written(void (*write)(FILE *out))
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(out);
    write(out);
    ck_assert_int_eq(fclose(out), 0);
    return text;
}

static unsigned help_readers;
static void write_help(FILE *out)
{
    settings_write_help(out, help_readers);
}

/* How many lines of text are exactly line. */
static int count_lines(const char *text, const char *line)
{
    int n = 0;
    size_t len = strlen(line);
    for (const char *p = text; *p != '\0'; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != '\0'))
        if (strncmp(p, line, len) == 0 && (p[len] == '\n' || p[len] == '\0'))
            n++;
    return n;
}

/* The first line of text that starts with prefix, or NULL. */
static const char *line_starting(const char *text, const char *prefix)
{
    for (const char *at = strstr(text, prefix); at != NULL; at = strstr(at + 1, prefix))
        if (at == text || at[-1] == '\n')
            return at;
    return NULL;
}

/* The longest line of text. */
static size_t widest_line(const char *text)
{
    size_t widest = 0;
    for (const char *p = text; *p != '\0';) {
        size_t len = strcspn(p, "\n");
        widest = len > widest ? len : widest;
        p += len + (p[len] != '\0');
    }
    return widest;
}

START_TEST(table_is_sound)
{
    ck_assert_uint_ge(settings_count, 20);
    for (size_t i = 0; i < settings_count; i++) {
        const setting *s = &settings[i];
        ck_assert_msg(strncmp(s->name, "MARKET_", 7) == 0, "%s", s->name);
        ck_assert_msg(settings_find(s->name) == s, "%s declared twice", s->name);
        ck_assert_msg(s->readers != 0, "%s: nothing reads it", s->name);
        size_t help = strlen(s->help);
        ck_assert_msg(help > 0 && help <= 60 && s->help[help - 1] != '.', "%s: help \"%s\"",
                      s->name, s->help);
        size_t desc = strlen(s->description);
        ck_assert_msg(desc > 0 && s->description[desc - 1] == '\n', "%s: description", s->name);
        /* "## " and the line fit the settings file's width, 90 columns. */
        ck_assert_msg(widest_line(s->description) <= 90 - 3, "%s: a description line too wide",
                      s->name);
        bool has_range = s->type == SETTING_INTEGER || s->type == SETTING_SECONDS;
        ck_assert_msg(!has_range || s->min <= s->max, "%s: range", s->name);
        /* A number always has a value: its default, or one computed. */
        bool number = has_range || s->type == SETTING_SWITCH || s->type == SETTING_DURATION ||
                      s->type == SETTING_DURATIONS;
        ck_assert_msg(!number || s->fallback != NULL || s->computed_default != NULL,
                      "%s: a number without a default", s->name);
        ck_assert_msg(s->required == 0 || s->fallback == NULL, "%s: required with a default",
                      s->name);
        ck_assert_msg(s->type != SETTING_DURATIONS || s->count_field != 0, "%s: no count field",
                      s->name);
    }
    ck_assert_ptr_null(settings_find("MARKET_OPS")); /* nginx's FastCGI parameter */
}
END_TEST

/* Each program's --help lists its settings, each once, and no other, in 80 columns. */
START_TEST(help_lists_what_each_reads)
{
    static const unsigned programs[] = {SETTING_API, SETTING_WEBHOOKD, SETTING_ADMIN};
    for (size_t p = 0; p < sizeof programs / sizeof programs[0]; p++) {
        help_readers = programs[p];
        char *text = written(write_help);
        ck_assert_uint_le(widest_line(text), 80);
        for (size_t i = 0; i < settings_count; i++) {
            char head[64];
            snprintf(head, sizeof head, "  %s\n", settings[i].name);
            const char *at = line_starting(text, head);
            bool reads = (settings[i].readers & programs[p]) != 0;
            ck_assert_msg((at != NULL) == reads, "%s in the help of %u", settings[i].name,
                          programs[p]);
            if (at != NULL)
                ck_assert_ptr_null(line_starting(at + 1, head));
        }
        free(text);
    }
}
END_TEST

/* The settings file: a block per setting, in the table's order, its line set or
 * commented as the table says, a value with a space in double quotes. */
START_TEST(env_blocks)
{
    char *text = written(settings_write_env);
    ck_assert_uint_le(widest_line(text), 90);
    for (size_t i = 0; i < settings_count; i++) {
        char line[96];
        snprintf(line, sizeof line, "## %s", settings[i].name);
        ck_assert_int_eq(count_lines(text, line), 1);
    }
    ck_assert_int_eq(count_lines(text, "MARKET_DB=\"host=/run/postgresql dbname=market "
                                       "user=market\""),
                     1);
    ck_assert_int_eq(count_lines(text, "MARKET_SECRET_FILE=@SYSCONFDIR@/market/secret"), 1);
    ck_assert_int_eq(count_lines(text, "#MARKET_RATE_LIMIT=600"), 1);
    ck_assert_int_eq(count_lines(text, "#MARKET_DB_READ="), 1);
    /* Each block ends with its own setting's line, before the next block. */
    const char *p = text;
    for (size_t i = 0; i < settings_count; i++) {
        char want[96];
        snprintf(want, sizeof want, "## %s\n", settings[i].name);
        ck_assert_msg(strncmp(p, want, strlen(want)) == 0, "block %zu is not %s", i,
                      settings[i].name);
        while (strncmp(p, "## ", 3) == 0)
            p += strcspn(p, "\n") + 1;
        if (*p == '#')
            p++;
        ck_assert_msg(strncmp(p, settings[i].name, strlen(settings[i].name)) == 0 &&
                          p[strlen(settings[i].name)] == '=',
                      "the line after the block of %s", settings[i].name);
        p += strcspn(p, "\n") + 1;
        if (*p == '\n')
            p++;
    }
    ck_assert_str_eq(p, "");
    free(text);
}
END_TEST

START_TEST(markdown_rows)
{
    char *text = written(settings_write_markdown);
    ck_assert(strncmp(text, "| variable | meaning | default | read by |\n|---|", 47) == 0);
    for (size_t i = 0; i < settings_count; i++) {
        char cell[64];
        snprintf(cell, sizeof cell, "\n| `%s` | ", settings[i].name);
        ck_assert_msg(strstr(text, cell) != NULL, "no row for %s", settings[i].name);
    }
    ck_assert_ptr_nonnull(strstr(text, "| `MARKET_RATE_LIMIT` | requests per API key per "
                                       "minute, on every host (1..1000000000) | `600` |"));
    free(text);
}
END_TEST

START_TEST(getenv_empty_is_unset)
{
    const setting *s = settings_find("MARKET_WEBHOOK_CA_FILE");
    ck_assert_ptr_nonnull(s);
    setenv(s->name, "", 1);
    ck_assert_ptr_null(settings_getenv(s));
    setenv(s->name, "/etc/ca.pem", 1);
    ck_assert_str_eq(settings_getenv(s), "/etc/ca.pem");
    unsetenv(s->name);
    ck_assert_ptr_null(settings_getenv(s));
    ck_assert_ptr_null(settings_find("MARKET_NO_SUCH_THING"));
}
END_TEST

Suite *settings_suite(void)
{
    Suite *s = suite_create("settings");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, table_is_sound);
    tcase_add_test(tc, help_lists_what_each_reads);
    tcase_add_test(tc, env_blocks);
    tcase_add_test(tc, markdown_rows);
    tcase_add_test(tc, getenv_empty_is_unset);
    suite_add_tcase(s, tc);
    return s;
}
