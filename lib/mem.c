/* mem: the checked allocations, so that no caller has an out-of-memory branch to get
 * wrong: each returns memory or logs and aborts (mem.h says why). */
#include "mem.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

noreturn void mem_exhausted(void)
{
    log_error("out of memory");
    abort();
}

void *xmalloc(size_t size)
{
    void *p = malloc(size != 0 ? size : 1);
    if (p == NULL)
        mem_exhausted();
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count != 0 ? count : 1, size != 0 ? size : 1);
    if (p == NULL)
        mem_exhausted();
    return p;
}

void *xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size != 0 ? size : 1);
    if (q == NULL)
        mem_exhausted();
    return q;
}

char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (p == NULL)
        mem_exhausted();
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = strndup(s, n);
    if (p == NULL)
        mem_exhausted();
    return p;
}
