/* Command-line plumbing shared by every command: one-line errors and option parsing. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"

static noreturn void fail_with(int status, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    /* One line whatever the message holds (server messages may carry newlines). */
    for (char *p = line; *p != '\0'; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == ' ')
        line[--n] = '\0';
    fprintf(stderr, "market-admin: %s\n", line);
    exit(status);
}

void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_with(EXIT_FAILURE, fmt, ap);
    /* cppcheck-suppress va_end_missing ; fail_with exits, so nothing returns here */
}

void usage_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_with(EXIT_USAGE, fmt, ap);
    /* cppcheck-suppress va_end_missing ; fail_with exits, so nothing returns here */
}

static option *find_option(option *opts, size_t nopts, const char *name, size_t namelen)
{
    for (size_t i = 0; i < nopts; i++)
        if (strlen(opts[i].name) == namelen && strncmp(opts[i].name, name, namelen) == 0)
            return &opts[i];
    return NULL;
}

int parse_options(const char *command, int argc, char **argv, option *opts, size_t nopts,
                  const char **pos, int maxpos)
{
    int npos = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        /* "-" alone is a positional (standard input), not an option. */
        if (arg[0] != '-' || arg[1] == '\0') {
            if (npos == maxpos)
                usage_fail("%s: unexpected argument %s", command, arg);
            pos[npos++] = arg;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t namelen = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
        option *opt = find_option(opts, nopts, arg, namelen);
        if (opt == NULL)
            usage_fail("%s: unknown option %.*s", command, (int)namelen, arg);
        if (opt->value != NULL)
            usage_fail("%s: %s given twice", command, opt->name);
        if (opt->flag) {
            if (eq != NULL)
                usage_fail("%s: %s takes no value", command, opt->name);
            opt->value = "1";
        } else if (eq != NULL) {
            opt->value = eq + 1;
        } else if (i + 1 < argc) {
            opt->value = argv[++i];
        } else {
            usage_fail("%s: %s needs a value", command, opt->name);
        }
    }
    return npos;
}

const char *option_required(const char *command, const option *opt)
{
    if (opt->value == NULL)
        usage_fail("%s: %s is required", command, opt->name);
    return opt->value;
}

const char *parse_mode(const char *command, const char *text)
{
    if (strcmp(text, "test") == 0)
        return "test";
    if (strcmp(text, "live") == 0)
        return "live";
    usage_fail("%s: --mode must be test or live", command);
}

long parse_count(const char *command, const char *name, const char *text, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '+' || text[0] == ' ' || v < min ||
        v > max)
        usage_fail("%s: %s must be an integer from %ld to %ld", command, name, min, max);
    return v;
}
