/* progress: the progress lines of market-admin's long commands (seed, import) on standard
 * error (progress.h), one place for their pace and their terminal and log forms. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "progress.h"

#define TERMINAL_INTERVAL 0.5
#define LOG_INTERVAL 5.0

/* MARKET_PROGRESS_SECONDS for logs: a number of seconds from 0 (no lines) to 3600. A
 * malformed value has stopped the command already (config_load checks every setting when
 * it connects); should one get here, the default serves. */
static double log_interval(void)
{
    static market_config cfg; /* only its progress_seconds */
    char err[160];
    if (!config_load_one(&cfg, "MARKET_PROGRESS_SECONDS", err, sizeof err))
        return LOG_INTERVAL;
    return cfg.progress_seconds;
}

void progress_begin(progress *p, const char *what, long total)
{
    p->what = what;
    p->total = total > 0 ? total : 1;
    p->terminal = isatty(STDERR_FILENO) == 1;
    p->interval = p->terminal ? TERMINAL_INTERVAL : log_interval();
    p->start = clock_seconds();
    p->next = p->start + p->interval;
    p->drawn = false;
}

/* "0:22", "1:04:09" */
static void format_duration(double seconds, char *out, size_t outsz)
{
    long s = (long)(seconds + 0.5);
    if (s >= 3600)
        snprintf(out, outsz, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(out, outsz, "%ld:%02ld", s / 60, s % 60);
}

static void draw(progress *p, double now, long steps, long rows)
{
    double elapsed = now - p->start;
    double rate = elapsed > 0 ? (double)rows / elapsed : 0;
    long percent = steps >= p->total ? 100 : steps * 100 / p->total;
    char left[32] = "?";
    if (steps > 0 && steps < p->total)
        format_duration(elapsed * (double)(p->total - steps) / (double)steps, left, sizeof left);
    else if (steps >= p->total)
        format_duration(0, left, sizeof left);
    fprintf(stderr, "%smarket-admin %s %ld%% (%ld rows, %.0f rows/s, %s left)%s",
            p->terminal ? "\r\033[K" : "", p->what, percent, rows, rate, left,
            p->terminal ? "" : "\n");
    fflush(stderr);
    p->drawn = p->terminal;
}

void progress_show(progress *p, long steps, long rows)
{
    if (p->interval <= 0)
        return;
    double now = clock_seconds();
    if (now < p->next)
        return;
    draw(p, now, steps, rows);
    p->next = now + p->interval;
}

void progress_end(progress *p, long rows)
{
    if (!p->terminal)
        return;
    draw(p, clock_seconds(), p->total, rows);
    fputc('\n', stderr);
    p->drawn = false;
}

void progress_abandon(progress *p)
{
    if (p->drawn)
        fputc('\n', stderr);
    p->drawn = false;
}

void progress_note(const char *what)
{
    if (isatty(STDERR_FILENO) != 1 && log_interval() <= 0)
        return;
    fprintf(stderr, "market-admin %s\n", what);
}
