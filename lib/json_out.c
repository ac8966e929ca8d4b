#include "json_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"

void jw_init(json_writer *jw, buf *out)
{
    jw->out = out;
    jw->depth = 0;
    jw->first[0] = true;
    jw->after_key = false;
}

/* Writes the separator a new value needs at the current depth. */
static void jw_separate(json_writer *jw)
{
    if (jw->after_key) {
        jw->after_key = false;
        return;
    }
    if (!jw->first[jw->depth])
        buf_putc(jw->out, ',');
    jw->first[jw->depth] = false;
}

static void jw_open(json_writer *jw, char c)
{
    jw_separate(jw);
    buf_putc(jw->out, c);
    if (jw->depth + 1 >= JW_MAX_DEPTH)
        abort(); /* responses are shallow: deeper means a programming error */
    jw->depth++;
    jw->first[jw->depth] = true;
}

static void jw_close(json_writer *jw, char c)
{
    buf_putc(jw->out, c);
    jw->depth--;
}

void jw_object_begin(json_writer *jw)
{
    jw_open(jw, '{');
}

void jw_object_end(json_writer *jw)
{
    jw_close(jw, '}');
}

void jw_array_begin(json_writer *jw)
{
    jw_open(jw, '[');
}

void jw_array_end(json_writer *jw)
{
    jw_close(jw, ']');
}

void jw_key(json_writer *jw, const char *key)
{
    jw_separate(jw);
    json_escape(jw->out, key, strlen(key));
    buf_putc(jw->out, ':');
    jw->after_key = true;
}

void json_escape(buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    buf_putc(b, '"');
    size_t run = 0; /* start of the pending run of bytes that need no escape */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        buf_append(b, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"':
            buf_puts(b, "\\\"");
            break;
        case '\\':
            buf_puts(b, "\\\\");
            break;
        case '\n':
            buf_puts(b, "\\n");
            break;
        case '\r':
            buf_puts(b, "\\r");
            break;
        case '\t':
            buf_puts(b, "\\t");
            break;
        default: {
            char esc[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            buf_puts(b, esc);
        }
        }
    }
    buf_append(b, s + run, n - run);
    buf_putc(b, '"');
}

void jw_string_n(json_writer *jw, const char *s, size_t n)
{
    jw_separate(jw);
    json_escape(jw->out, s, n);
}

void jw_string(json_writer *jw, const char *s)
{
    if (s == NULL) {
        jw_null(jw);
        return;
    }
    jw_string_n(jw, s, strlen(s));
}

void jw_int(json_writer *jw, long long v)
{
    jw_separate(jw);
    buf_printf(jw->out, "%lld", v);
}

void jw_bool(json_writer *jw, bool v)
{
    jw_separate(jw);
    buf_puts(jw->out, v ? "true" : "false");
}

void jw_null(json_writer *jw)
{
    jw_separate(jw);
    buf_puts(jw->out, "null");
}

void jw_raw(json_writer *jw, const char *json)
{
    jw_separate(jw);
    buf_puts(jw->out, json);
}

void jw_money(json_writer *jw, int64_t minor, int exponent)
{
    char text[MONEY_TEXT_MAX];
    money_format(text, sizeof text, minor, exponent);
    jw_raw(jw, text);
}

void jw_kv_string(json_writer *jw, const char *key, const char *s)
{
    jw_key(jw, key);
    jw_string(jw, s);
}

void jw_kv_int(json_writer *jw, const char *key, long long v)
{
    jw_key(jw, key);
    jw_int(jw, v);
}

void jw_kv_bool(json_writer *jw, const char *key, bool v)
{
    jw_key(jw, key);
    jw_bool(jw, v);
}

void jw_kv_null(json_writer *jw, const char *key)
{
    jw_key(jw, key);
    jw_null(jw);
}

void jw_kv_raw(json_writer *jw, const char *key, const char *json)
{
    jw_key(jw, key);
    jw_raw(jw, json);
}

void jw_kv_money(json_writer *jw, const char *key, int64_t minor, int exponent)
{
    jw_key(jw, key);
    jw_money(jw, minor, exponent);
}
