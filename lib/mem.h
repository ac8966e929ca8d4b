/* mem: the one out-of-memory policy. Every allocation that is not from a request's arena
 * goes through these: on failure they write one line ("out of memory") to the log and
 * abort, since none of the programs can do anything useful without memory, and a core
 * dump says more than an error path that was never tested. */
#ifndef MARKET_MEM_H
#define MARKET_MEM_H

#include <stddef.h>
#include <stdnoreturn.h>

noreturn void mem_exhausted(void);

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
