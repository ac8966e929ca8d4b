/* metrics: the shared counters' file, apart from what is counted (app/api/ops/ops.c), so that
 * the delicate part (slots claimed by pid, a file of another layout replaced under
 * processes that still map it) is written and tested once. */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem.h"

#define METRICS_MAGIC 0x6d61726b65746d33ULL /* "marketm3": slots with `busy` and `active_ms` */
#define HEADER_SIZE 64
#define CACHE_LINE 64
#define OPEN_ATTEMPTS 8

typedef struct {
    uint64_t magic;
    uint32_t layout;
    uint32_t ncounters;
    uint32_t nslots;
    uint32_t slot_size;
    uint32_t region_size; /* bytes after the slots, for the caller's own table */
    uint32_t zero;        /* no padding: headers are compared byte for byte */
} file_header;

/* One process's counters. Slots are cache-line aligned so that two workers counting at
 * once never write the same line. */
typedef struct {
    _Atomic int32_t pid;       /* 0: free */
    _Atomic int32_t busy;      /* 1 while the process serves (metrics_busy) */
    _Atomic uint64_t serving;  /* what the process serves now (metrics_serve), 0: nothing */
    _Atomic int64_t active_ms; /* when it was last active (metrics_active), 0: never */
    _Atomic uint64_t counters[];
} slot;

struct metrics {
    unsigned char *map; /* the shared file, or NULL when it could not be had */
    size_t map_size;
    size_t region_offset; /* of the caller's region (metrics_region) */
    size_t slot_size;
    uint32_t ncounters;
    slot *mine; /* a slot of map, or private */
    slot *private_slot;
};

static size_t slot_size_of(uint32_t ncounters)
{
    size_t n = sizeof(slot) + (size_t)ncounters * sizeof(uint64_t);
    return (n + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
}

static slot *slot_at(const metrics *m, unsigned i)
{
    return (slot *)(m->map + HEADER_SIZE + (size_t)i * m->slot_size);
}

/* How many slots have ever been claimed, counted from the first: slots are claimed
 * lowest first, so metrics_serving, which runs on every request, reads those only. It
 * lives in the header after file_header (which must compare equal byte for byte). */
#define SLOTS_USED_OFFSET 32
_Static_assert(sizeof(file_header) <= SLOTS_USED_OFFSET, "the header's fields come first");

static _Atomic uint32_t *slots_used(const metrics *m)
{
    return (_Atomic uint32_t *)(m->map + SLOTS_USED_OFFSET);
}

static file_header header_for(uint32_t layout, uint32_t ncounters, uint32_t region_size)
{
    file_header h = {
        METRICS_MAGIC, layout, ncounters, METRICS_SLOTS, (uint32_t)slot_size_of(ncounters),
        region_size,   0};
    return h;
}

/* Writes a zeroed file of the layout's size with its header into fd. */
static bool format_file(int fd, const file_header *h, size_t size)
{
    return ftruncate(fd, (off_t)size) == 0 && pwrite(fd, h, sizeof *h, 0) == (ssize_t)sizeof *h;
}

static bool header_matches(int fd, const file_header *want, size_t size, off_t file_size)
{
    file_header h;
    return file_size == (off_t)size && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
           memcmp(&h, want, sizeof h) == 0;
}

/* Puts a fresh file of this layout at path by rename, so that processes still mapping
 * the old one (an older version, stopping) keep their own inode and never see it shrink. */
static bool replace_file(const char *path, const file_header *h, size_t size, char *err,
                         size_t errlen)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.new.%ld", path, (long)getpid());
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && format_file(fd, h, size) && rename(tmp, path) == 0;
    if (!ok) {
        snprintf(err, errlen, "MARKET_METRICS_FILE %s: cannot replace it: %s", path,
                 strerror(errno));
        unlink(tmp);
    }
    if (fd >= 0)
        close(fd);
    return ok;
}

/* Opens path locked, and checks that the locked inode is still the one at path (another
 * process may have replaced the file while this one waited for the lock). 1: locked and
 * current; 0: replaced meanwhile, try again; -1: error. */
static int open_locked(const char *path, int *fd_out, struct stat *st, char *err, size_t errlen)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "MARKET_METRICS_FILE %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat at_path;
    if (flock(fd, LOCK_EX) != 0 || fstat(fd, st) != 0) {
        snprintf(err, errlen, "MARKET_METRICS_FILE %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (stat(path, &at_path) != 0 || at_path.st_ino != st->st_ino || at_path.st_dev != st->st_dev) {
        close(fd);
        return 0;
    }
    *fd_out = fd;
    return 1;
}

/* The locked, current file, formatted for this layout; -1 with err set on failure. */
static int open_formatted(const char *path, const file_header *h, size_t size, char *err,
                          size_t errlen)
{
    for (int attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
        int fd;
        struct stat st;
        int got = open_locked(path, &fd, &st, err, errlen);
        if (got < 0)
            return -1;
        if (got == 0)
            continue;
        if (header_matches(fd, h, size, st.st_size))
            return fd;
        if (st.st_size == 0) { /* new: nobody maps it yet */
            if (format_file(fd, h, size))
                return fd;
            snprintf(err, errlen, "MARKET_METRICS_FILE %s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        bool replaced = replace_file(path, h, size, err, errlen);
        close(fd); /* waiting processes find the new inode and start over */
        if (!replaced)
            return -1;
    }
    snprintf(err, errlen, "MARKET_METRICS_FILE %s: replaced again and again while opening it",
             path);
    return -1;
}

metrics *metrics_open(const char *path, uint32_t layout, uint32_t ncounters, size_t region_size,
                      char *err, size_t errlen)
{
    file_header h = header_for(layout, ncounters, (uint32_t)region_size);
    size_t region_offset = HEADER_SIZE + (size_t)METRICS_SLOTS * h.slot_size;
    size_t size = region_offset + (region_size + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
    int fd = open_formatted(path, &h, size, err, errlen);
    if (fd < 0)
        return NULL;
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int saved = errno;
    /* Unlock explicitly: the mapping holds the open file, so close alone would not. */
    flock(fd, LOCK_UN);
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "MARKET_METRICS_FILE %s: mmap: %s", path, strerror(saved));
        return NULL;
    }
    metrics *m = xcalloc(1, sizeof *m);
    m->map = map;
    m->map_size = size;
    m->region_offset = region_offset;
    m->slot_size = h.slot_size;
    m->ncounters = ncounters;
    /* Until a slot is claimed, counts go to a private one. */
    m->private_slot = aligned_alloc(CACHE_LINE, m->slot_size);
    if (m->private_slot == NULL)
        mem_exhausted();
    memset(m->private_slot, 0, m->slot_size);
    m->mine = m->private_slot;
    return m;
}

void *metrics_region(metrics *m)
{
    return m->map + m->region_offset;
}

void metrics_close(metrics *m)
{
    if (m == NULL)
        return;
    munmap(m->map, m->map_size);
    free(m->private_slot);
    free(m);
}

static bool process_gone(pid_t pid)
{
    return kill(pid, 0) != 0 && errno == ESRCH;
}

/* Takes slot s from its holder `from` (0: free) with a compare-and-swap. */
static bool take(metrics *m, slot *s, int32_t from, pid_t pid)
{
    if (!atomic_compare_exchange_strong(&s->pid, &from, (int32_t)pid))
        return false;
    atomic_store(&s->serving, 0); /* a gone process serves nothing */
    atomic_store(&s->busy, 0);
    m->mine = s;
    uint32_t used = atomic_load(slots_used(m));
    uint32_t index = (uint32_t)(((unsigned char *)s - m->map - HEADER_SIZE) / m->slot_size) + 1;
    while (used < index && !atomic_compare_exchange_weak(slots_used(m), &used, index))
        ;
    return true;
}

bool metrics_claim(metrics *m, pid_t pid)
{
    /* A slot already held under this pid is this process's own (or a dead one's whose
     * pid it was given); then the slot of a process that is gone; then a free one. */
    for (unsigned i = 0; i < METRICS_SLOTS; i++) {
        slot *s = slot_at(m, i);
        if (atomic_load(&s->pid) == (int32_t)pid) {
            atomic_store(&s->busy, 0);
            m->mine = s;
            return true;
        }
    }
    for (unsigned i = 0; i < METRICS_SLOTS; i++) {
        slot *s = slot_at(m, i);
        int32_t holder = atomic_load(&s->pid);
        if (holder != 0 && process_gone(holder) && take(m, s, holder, pid))
            return true;
    }
    for (unsigned i = 0; i < METRICS_SLOTS; i++)
        if (take(m, slot_at(m, i), 0, pid))
            return true;
    return false;
}

void metrics_add(metrics *m, uint32_t i, uint64_t n)
{
    atomic_fetch_add_explicit(&m->mine->counters[i], n, memory_order_relaxed);
}

unsigned metrics_sum(const metrics *m, uint64_t *out)
{
    memset(out, 0, (size_t)m->ncounters * sizeof *out);
    unsigned live = 0;
    for (unsigned i = 0; i < METRICS_SLOTS; i++) {
        slot *s = slot_at(m, i);
        int32_t holder = atomic_load_explicit(&s->pid, memory_order_relaxed);
        if (holder == 0)
            continue;
        if (!process_gone(holder))
            live++;
        for (uint32_t c = 0; c < m->ncounters; c++)
            out[c] += atomic_load_explicit(&s->counters[c], memory_order_relaxed);
    }
    return live;
}

void metrics_serve(metrics *m, uint64_t what)
{
    /* Sequentially consistent, as metrics_serving's loads: of two processes that claim
     * the same thing at once, at least one sees the other. */
    atomic_store(&m->mine->serving, what);
}

unsigned metrics_serving(const metrics *m, uint64_t what)
{
    unsigned n = 0;
    uint32_t used = atomic_load(slots_used(m));
    for (unsigned i = 0; i < used && i < METRICS_SLOTS; i++) {
        slot *s = slot_at(m, i);
        if (s == m->mine || atomic_load(&s->serving) != what)
            continue;
        int32_t holder = atomic_load(&s->pid);
        if (holder != 0 && !process_gone(holder)) /* a dead worker's word is stale */
            n++;
    }
    return n;
}

void metrics_busy(metrics *m, bool busy)
{
    atomic_store_explicit(&m->mine->busy, busy ? 1 : 0, memory_order_relaxed);
}

void metrics_active(metrics *m, long long now_ms)
{
    atomic_store_explicit(&m->mine->active_ms, now_ms, memory_order_relaxed);
}

/* Runs rarely (a waiting worker, every few seconds): a kill(2) per slot costs nothing. */
long long metrics_idle_ms(const metrics *m, long long now_ms)
{
    /* The caller's own slot first: it may be private (metrics_claim failed). */
    if (atomic_load_explicit(&m->mine->busy, memory_order_relaxed) != 0)
        return -1;
    long long last = atomic_load_explicit(&m->mine->active_ms, memory_order_relaxed);
    uint32_t used = atomic_load(slots_used(m));
    for (unsigned i = 0; i < used && i < METRICS_SLOTS; i++) {
        const slot *s = slot_at(m, i);
        int32_t holder = atomic_load_explicit(&s->pid, memory_order_relaxed);
        if (s == m->mine || holder == 0)
            continue;
        /* A dead worker's busy mark is stale; its last activity is not: the pool was
         * active then, whichever worker served. */
        if (atomic_load_explicit(&s->busy, memory_order_relaxed) != 0 && !process_gone(holder))
            return -1;
        long long at = atomic_load_explicit(&s->active_ms, memory_order_relaxed);
        if (at > last)
            last = at;
    }
    return now_ms > last ? now_ms - last : 0;
}

bool metrics_leads(const metrics *m)
{
    if (m->mine == m->private_slot)
        return false;
    for (unsigned i = 0; slot_at(m, i) != m->mine; i++) {
        int32_t holder = atomic_load_explicit(&slot_at(m, i)->pid, memory_order_relaxed);
        if (holder != 0 && !process_gone(holder))
            return false;
    }
    return true;
}
