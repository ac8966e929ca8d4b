/* json_out: the JSON writer every response goes through, so that escaping and commas are
 * right in one place and no handler builds a tree to answer. */
#include "json_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"

void jw_init(json_writer *j, buf *out)
{
    j->out = out;
    j->depth = 0;
    j->first[0] = true;
    j->after_key = false;
}

/* Writes the separator a new value needs at the current depth. */
static void jw_separate(json_writer *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (!j->first[j->depth])
        buf_putc(j->out, ',');
    j->first[j->depth] = false;
}

static void jw_open(json_writer *j, char c)
{
    jw_separate(j);
    buf_putc(j->out, c);
    if (j->depth + 1 >= JW_MAX_DEPTH)
        abort(); /* responses are shallow: deeper means a programming error */
    j->depth++;
    j->first[j->depth] = true;
}

static void jw_close(json_writer *j, char c)
{
    buf_putc(j->out, c);
    j->depth--;
}

void jw_object_begin(json_writer *j)
{
    jw_open(j, '{');
}

void jw_object_end(json_writer *j)
{
    jw_close(j, '}');
}

void jw_array_begin(json_writer *j)
{
    jw_open(j, '[');
}

void jw_array_end(json_writer *j)
{
    jw_close(j, ']');
}

void jw_key(json_writer *j, const char *key)
{
    jw_separate(j);
    json_escape(j->out, key, strlen(key));
    buf_putc(j->out, ':');
    j->after_key = true;
}

/* The bytes a JSON string must escape: the control characters, '"' and '\\'. */
static bool needs_escape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

/* The letter of a two-byte escape (\n), or 0 when c is written as \u00XX. */
static char short_escape(unsigned char c)
{
    switch (c) {
    case '"':
    case '\\':
        return (char)c;
    case '\n':
        return 'n';
    case '\r':
        return 'r';
    case '\t':
        return 't';
    default:
        return 0;
    }
}

static void escape_one(buf *b, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    char letter = short_escape(c);
    if (letter != 0) {
        char esc[2] = {'\\', letter};
        buf_append(b, esc, sizeof esc);
        return;
    }
    char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
    buf_append(b, esc, sizeof esc);
}

void json_escape(buf *b, const char *s, size_t n)
{
    buf_putc(b, '"');
    size_t run = 0; /* start of the pending run of bytes that need no escape */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!needs_escape(c))
            continue;
        buf_append(b, s + run, i - run);
        run = i + 1;
        escape_one(b, c);
    }
    buf_append(b, s + run, n - run);
    buf_putc(b, '"');
}

void jw_string_n(json_writer *j, const char *s, size_t n)
{
    jw_separate(j);
    json_escape(j->out, s, n);
}

void jw_string(json_writer *j, const char *s)
{
    if (s == NULL) {
        jw_null(j);
        return;
    }
    jw_string_n(j, s, strlen(s));
}

void jw_int(json_writer *j, long long v)
{
    char text[24];
    size_t len = format_int(text, v);
    jw_separate(j);
    buf_append(j->out, text, len);
}

void jw_bool(json_writer *j, bool v)
{
    jw_separate(j);
    buf_puts(j->out, v ? "true" : "false");
}

void jw_null(json_writer *j)
{
    jw_separate(j);
    buf_puts(j->out, "null");
}

void jw_raw(json_writer *j, const char *json)
{
    jw_separate(j);
    buf_puts(j->out, json);
}

void jw_money(json_writer *j, int64_t minor, int exponent)
{
    char text[MONEY_TEXT_MAX];
    size_t len = money_format(text, sizeof text, minor, exponent);
    jw_separate(j);
    buf_append(j->out, text, len);
}

void jw_members(json_writer *j, const char *members, size_t n)
{
    if (n == 0)
        return;
    jw_separate(j);
    buf_append(j->out, members, n);
}

void jw_kv_string(json_writer *j, const char *key, const char *s)
{
    jw_key(j, key);
    jw_string(j, s);
}

void jw_kv_int(json_writer *j, const char *key, long long v)
{
    jw_key(j, key);
    jw_int(j, v);
}

void jw_kv_bool(json_writer *j, const char *key, bool v)
{
    jw_key(j, key);
    jw_bool(j, v);
}

void jw_kv_null(json_writer *j, const char *key)
{
    jw_key(j, key);
    jw_null(j);
}

void jw_kv_raw(json_writer *j, const char *key, const char *json)
{
    jw_key(j, key);
    jw_raw(j, json);
}

void jw_kv_money(json_writer *j, const char *key, int64_t minor, int exponent)
{
    jw_key(j, key);
    jw_money(j, minor, exponent);
}
