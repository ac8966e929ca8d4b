/* metrics: counters that the processes of one pool share through one file.
 *
 * The workers of a FastCGI pool are separate processes (multiwatch starts each), and a
 * scrape reaches only one of them, so each process counts into a slot of its own in a
 * file they all map (MAP_SHARED) and the one that is asked sums every slot.
 *
 * A process claims a slot by its pid with a compare-and-swap: a free slot, or one whose
 * process is gone. A reclaimed slot keeps its counts, so the sums never go down when a
 * worker dies and another takes its place (Prometheus counters must only grow while the
 * file lives). Counting is a relaxed atomic add into the process's own slot: no lock and
 * no allocation on the request path; the file lock is only taken when a process opens
 * the table.
 *
 * The meaning of each counter is the caller's (ops.c): this file knows only how many there are and
 * a layout number that changes when their meaning does. A file made for another layout (an older
 * version of the program) is replaced by a fresh one at open, never reused. */
#ifndef MARKET_METRICS_H
#define MARKET_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Slots in one file: more processes than this on one pool count into a private slot
 * that no scrape sees (metrics_claim says so). */
#define METRICS_SLOTS 512

typedef struct metrics metrics;

/* Opens (creating or replacing when needed) the file at path for ncounters counters of
 * the given layout, with region_size bytes more for the caller's own shared table
 * (zeroed in a new file; part of the layout: another size makes a new file), and maps it.
 * NULL with one line in err on failure. */
metrics *metrics_open(const char *path, uint32_t layout, uint32_t ncounters, size_t region_size,
                      char *err, size_t errlen);
/* The caller's region: region_size bytes that every process of the file shares. */
void *metrics_region(metrics *m);
void metrics_close(metrics *m);

/* Claims a slot for pid: one of a process that is gone first (its counts go on from
 * where they were), else a free one. False when every slot belongs to a live process:
 * the process then counts into a private slot. */
bool metrics_claim(metrics *m, pid_t pid);

/* Adds n to counter i of this process's slot (i < ncounters). */
void metrics_add(metrics *m, uint32_t i, uint64_t n);

/* Sums every slot into out[0..ncounters); returns how many slots belong to a live
 * process. */
unsigned metrics_sum(const metrics *m, uint64_t *out);

/* What each process is serving now, such as an API key's fingerprint (0: nothing), so
 * that a pool can bound how many of its processes serve one thing at once: a process
 * announces with metrics_serve what it takes on, then counts with metrics_serving the
 * other live processes that serve the same. Of two that announce the same at once, each
 * sees the other (both may then refuse; never both accept past a bound). A process
 * without a slot of the file (metrics_claim failed) is seen by none. */
void metrics_serve(metrics *m, uint64_t what);
unsigned metrics_serving(const metrics *m, uint64_t what);

/* The pool's activity, so that an idle pool can stop (market-api's MARKET_IDLE_EXIT): each
 * process says when it is busy (metrics_busy, from the start to the end of a request)
 * and when it last did something that counts as activity (metrics_active, now_ms on the
 * caller's monotonic clock, lib/clock.h, which is the same for every process of the
 * host). Each writes its own slot, so that the request path shares no cache line.
 * metrics_idle_ms answers how long no process of the pool has been active (a worker
 * that has exited since counts: the pool was active then): -1 while a live one is busy
 * (a dead one's busy mark is stale). A slot's claim clears its busy mark. */
void metrics_busy(metrics *m, bool busy);
void metrics_active(metrics *m, long long now_ms);
long long metrics_idle_ms(const metrics *m, long long now_ms);

/* True when this process holds the lowest slot of the live processes: one process of
 * the pool at a time, for what one does for all (such as stopping an idle pool). False
 * for a process without a slot of the file. */
bool metrics_leads(const metrics *m);

#endif
