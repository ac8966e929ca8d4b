#include "json_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"

void jw_init(json_writer *w, buf *out)
{
    w->out = out;
    w->depth = 0;
    w->first[0] = true;
    w->after_key = false;
}

/* Writes the separator a new value needs at the current depth. */
static void jw_separate(json_writer *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (!w->first[w->depth])
        buf_putc(w->out, ',');
    w->first[w->depth] = false;
}

static void jw_open(json_writer *w, char c)
{
    jw_separate(w);
    buf_putc(w->out, c);
    if (w->depth + 1 >= JW_MAX_DEPTH)
        abort(); /* responses are shallow: deeper means a programming error */
    w->depth++;
    w->first[w->depth] = true;
}

static void jw_close(json_writer *w, char c)
{
    buf_putc(w->out, c);
    w->depth--;
}

void jw_object_begin(json_writer *w)
{
    jw_open(w, '{');
}

void jw_object_end(json_writer *w)
{
    jw_close(w, '}');
}

void jw_array_begin(json_writer *w)
{
    jw_open(w, '[');
}

void jw_array_end(json_writer *w)
{
    jw_close(w, ']');
}

void jw_key(json_writer *w, const char *key)
{
    jw_separate(w);
    json_escape(w->out, key, strlen(key));
    buf_putc(w->out, ':');
    w->after_key = true;
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

void jw_string_n(json_writer *w, const char *s, size_t n)
{
    jw_separate(w);
    json_escape(w->out, s, n);
}

void jw_string(json_writer *w, const char *s)
{
    if (s == NULL) {
        jw_null(w);
        return;
    }
    jw_string_n(w, s, strlen(s));
}

void jw_int(json_writer *w, long long v)
{
    jw_separate(w);
    buf_printf(w->out, "%lld", v);
}

void jw_bool(json_writer *w, bool v)
{
    jw_separate(w);
    buf_puts(w->out, v ? "true" : "false");
}

void jw_null(json_writer *w)
{
    jw_separate(w);
    buf_puts(w->out, "null");
}

void jw_raw(json_writer *w, const char *json)
{
    jw_separate(w);
    buf_puts(w->out, json);
}

void jw_money(json_writer *w, int64_t minor, int exponent)
{
    char text[MONEY_TEXT_MAX];
    money_format(text, sizeof text, minor, exponent);
    jw_raw(w, text);
}

void jw_kv_string(json_writer *w, const char *key, const char *s)
{
    jw_key(w, key);
    jw_string(w, s);
}

void jw_kv_int(json_writer *w, const char *key, long long v)
{
    jw_key(w, key);
    jw_int(w, v);
}

void jw_kv_bool(json_writer *w, const char *key, bool v)
{
    jw_key(w, key);
    jw_bool(w, v);
}

void jw_kv_null(json_writer *w, const char *key)
{
    jw_key(w, key);
    jw_null(w);
}

void jw_kv_raw(json_writer *w, const char *key, const char *json)
{
    jw_key(w, key);
    jw_raw(w, json);
}

void jw_kv_money(json_writer *w, const char *key, int64_t minor, int exponent)
{
    jw_key(w, key);
    jw_money(w, minor, exponent);
}
