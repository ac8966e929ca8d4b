/* prom: the Prometheus text format, apart from what /metrics reports (app/api/ops/ops.c), so
 * that its escaping and number formatting are right once and unit tested. */
#include "prom.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define PROM_MAX_LABELS 8

/* Appends s escaped: backslash and line feed always, the double quote in label values. */
static void put_escaped(buf *b, const char *s, bool quote)
{
    for (; *s != '\0'; s++) {
        if (*s == '\\')
            buf_puts(b, "\\\\");
        else if (*s == '\n')
            buf_puts(b, "\\n");
        else if (*s == '"' && quote)
            buf_puts(b, "\\\"");
        else
            buf_putc(b, *s);
    }
}

void prom_family(buf *b, const char *name, const char *type, const char *help)
{
    buf_printf(b, "# HELP %s ", name);
    put_escaped(b, help, false);
    buf_printf(b, "\n# TYPE %s %s\n", name, type);
}

static void put_labels(buf *b, const char *const *labels, const char *le)
{
    int n = 0;
    buf_putc(b, '{');
    for (int i = 0; labels != NULL && labels[i] != NULL && i < 2 * PROM_MAX_LABELS; i += 2) {
        buf_printf(b, "%s%s=\"", n++ > 0 ? "," : "", labels[i]);
        put_escaped(b, labels[i + 1], true);
        buf_putc(b, '"');
    }
    if (le != NULL)
        buf_printf(b, "%sle=\"%s\"", n++ > 0 ? "," : "", le);
    if (n == 0)
        b->data[--b->len] = '\0'; /* no labels: no braces */
    else
        buf_putc(b, '}');
}

void prom_u64(buf *b, const char *name, const char *const *labels, uint64_t value)
{
    buf_puts(b, name);
    put_labels(b, labels, NULL);
    buf_printf(b, " %llu\n", (unsigned long long)value);
}

/* What Prometheus parses (Go's ParseFloat): decimals, +Inf, -Inf and NaN. */
static void put_float(buf *b, double v)
{
    if (isnan(v))
        buf_puts(b, "NaN");
    else if (isinf(v))
        buf_puts(b, v > 0 ? "+Inf" : "-Inf");
    else
        buf_printf(b, "%.15g", v);
}

void prom_f64(buf *b, const char *name, const char *const *labels, double value)
{
    buf_puts(b, name);
    put_labels(b, labels, NULL);
    buf_putc(b, ' ');
    put_float(b, value);
    buf_putc(b, '\n');
}

void prom_histogram(buf *b, const char *name, const char *const *labels, const double *bounds,
                    int n, const uint64_t *counts, double sum)
{
    uint64_t cumulative = 0;
    char le[32];
    for (int i = 0; i <= n; i++) {
        cumulative += counts[i];
        if (i < n)
            snprintf(le, sizeof le, "%g", bounds[i]);
        else
            snprintf(le, sizeof le, "+Inf");
        buf_printf(b, "%s_bucket", name);
        put_labels(b, labels, le);
        buf_printf(b, " %llu\n", (unsigned long long)cumulative);
    }
    buf_printf(b, "%s_sum", name);
    put_labels(b, labels, NULL);
    buf_putc(b, ' ');
    put_float(b, sum);
    buf_printf(b, "\n%s_count", name);
    put_labels(b, labels, NULL);
    buf_printf(b, " %llu\n", (unsigned long long)cumulative);
}
