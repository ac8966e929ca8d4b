#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static const char *program = "market";

void log_set_program(const char *name)
{
    program = name;
}

static void log_line(const char *level, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* One event, one line: line breaks inside a message (libpq's messages have them) become
 * spaces, runs of spaces one, and trailing spaces go. */
static void fold_line(char *line)
{
    size_t n = 0;
    for (const char *p = line; *p != '\0'; p++) {
        char c = (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : *p;
        if (c == ' ' && n > 0 && line[n - 1] == ' ')
            continue;
        line[n++] = c;
    }
    while (n > 0 && line[n - 1] == ' ')
        n--;
    line[n] = '\0';
}

static void log_line(const char *level, const char *fmt, va_list ap)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    fold_line(line);
    /* One fprintf per line so that lines of concurrent workers do not interleave. */
    fprintf(stderr, "%s %s[%ld] %s: %s\n", stamp, program, (long)getpid(), level, line);
}

void log_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("info", fmt, ap);
    va_end(ap);
}

void log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("error", fmt, ap);
    va_end(ap);
}
