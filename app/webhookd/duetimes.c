/* duetimes: the min-heap of retry times, apart from the drainer so that its ordering is
 * unit tested on its own; the drainer only adds, looks at the earliest and pops. */
#include "duetimes.h"
#include "mem.h"

#include <stdlib.h>

void duetimes_init(duetimes *d)
{
    d->at = NULL;
    d->len = d->cap = 0;
}

void duetimes_free(duetimes *d)
{
    free(d->at);
    duetimes_init(d);
}

static void swap(long long *a, long long *b)
{
    long long t = *a;
    *a = *b;
    *b = t;
}

void duetimes_add(duetimes *d, long long at)
{
    if (d->len == DUETIMES_MAX)
        return;
    if (d->len == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        d->at = xrealloc(d->at, cap * sizeof *d->at);
        d->cap = cap;
    }
    size_t i = d->len++;
    d->at[i] = at;
    while (i > 0 && d->at[(i - 1) / 2] > d->at[i]) {
        swap(&d->at[(i - 1) / 2], &d->at[i]);
        i = (i - 1) / 2;
    }
}

long long duetimes_next(const duetimes *d)
{
    return d->len > 0 ? d->at[0] : -1;
}

static void pop(duetimes *d)
{
    d->at[0] = d->at[--d->len];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < d->len && d->at[l] < d->at[m])
            m = l;
        if (r < d->len && d->at[r] < d->at[m])
            m = r;
        if (m == i)
            return;
        swap(&d->at[i], &d->at[m]);
        i = m;
    }
}

bool duetimes_pop_due(duetimes *d, long long now)
{
    bool any = false;
    while (d->len > 0 && d->at[0] <= now) {
        pop(d);
        any = true;
    }
    return any;
}
