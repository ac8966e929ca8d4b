/* Progress of a long command (seed, import) on standard error.
 *
 * On a terminal, one line redrawn in place at most twice a second; otherwise (a log, a
 * pipe) a line every MARKET_PROGRESS_SECONDS seconds (default 5, 0 for none), so that a
 * batch job's log shows it is alive without drowning in lines. Each line: the share of
 * the work done, the rows written, their rate and the time left at that rate, e.g.
 *   market-admin seed: catalogue 45% (1350000 rows, 61200 rows/s, 0:22 left)
 * The work is counted in steps of the caller's choosing (seed: one product through one
 * pass); rows are what the user recognises. */
#ifndef MARKET_ADMIN_PROGRESS_H
#define MARKET_ADMIN_PROGRESS_H

#include <stdbool.h>

typedef struct {
    const char *what; /* "seed: catalogue" */
    long total;       /* steps in all, > 0 */
    bool terminal;    /* standard error is a terminal: redraw one line */
    double interval;  /* seconds between lines; 0: show nothing */
    double start;     /* monotonic seconds */
    double next;      /* when the next line is due */
    bool drawn;       /* a terminal line is on screen, not yet ended */
} progress;

void progress_begin(progress *p, const char *what, long total);

/* Shows a line if one is due. Cheap enough to call for every row. */
void progress_show(progress *p, long steps, long rows);

/* On a terminal, the line with the final figures (100%) and a line break; nothing
 * otherwise. */
void progress_end(progress *p, long rows);

/* Ends the terminal line where it stands, before an error message. */
void progress_abandon(progress *p);

/* One line naming a phase whose progress cannot be counted ("seed: building indexes"),
 * unless MARKET_PROGRESS_SECONDS is 0 on a non-terminal. */
void progress_note(const char *what);

#endif
