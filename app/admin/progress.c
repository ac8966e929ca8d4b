/* Progress lines on standard error: see progress.h. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "progress.h"

#define TERMINAL_INTERVAL 0.5
#define LOG_INTERVAL 5.0

/* MARKET_PROGRESS_SECONDS for logs: a number of seconds from 0 (no lines) to 3600. */
static double log_interval(void)
{
    const char *text = getenv("MARKET_PROGRESS_SECONDS");
    if (text == NULL || *text == '\0')
        return LOG_INTERVAL;
    char *end;
    double seconds = strtod(text, &end);
    if (*end != '\0' || !(seconds >= 0 && seconds <= 3600))
        return LOG_INTERVAL;
    return seconds;
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
