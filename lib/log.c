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

void log_fold(char *s)
{
    size_t n = 0;
    for (const char *p = s; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f)
            c = ' ';
        if (c == ' ' && n > 0 && s[n - 1] == ' ')
            continue;
        s[n++] = (char)c;
    }
    while (n > 0 && s[n - 1] == ' ')
        n--;
    s[n] = '\0';
}

static void log_line(const char *level, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void log_line(const char *level, const char *fmt, va_list ap)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    log_fold(line);
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
