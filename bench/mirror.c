/* bench/mirror.c: a client mirroring the whole catalogue (make bench, step "mirror").
 *
 *   mirror --base http://HOST:PORT --keys FILE --cats FILE [--conns 8] [--limit 100]
 *
 * Walks every category of --cats (lines "slug count": the published products of each, as
 * the database holds them) with `limit` pages, following next_cursor to the end, on --conns
 * keep-alive connections at once: each connection takes the next category not yet walked,
 * the biggest first, as an integrator copying a catalogue would split the work. Every page
 * must be 200 and hold at most `limit` items; a category must yield exactly its count of
 * distinct ids. Prints one line: products, requests, seconds, products per second, and the
 * latency of a page (p50, p99). Keys are used in turn, one per page.
 *
 * Why C: the client runs on the same two cores as the server it measures. bench/mirror.mjs
 * (Node.js, kept for comparison) spent 1.5 s of CPU in a 2.3 s walk of market, a third of
 * the machine, so the figure measured the client as much as the server. This one reads a
 * page with a few scans of its bytes; its CPU is small beside any server's.
 *
 * It reads what the API's list pages hold and nothing more: the body's "id" strings (the
 * items hold no other "id" key) and "next_cursor" (null, or a base64url string). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The ids a category's walk returned, as hashes in the order they came: appending is
 * sequential, so the walk pays no cache miss per id; they are counted (sorted, distinct)
 * after the clock stops, since checking the answer is not the mirror's work. */
typedef struct {
    uint64_t *hashes;
    size_t len, cap;
} id_list;

typedef struct {
    char slug[128];
    long count;
    id_list ids; /* what its walk returned */
} category;

typedef struct {
    char *data;
    size_t len, cap;
} bytes;

typedef struct { /* one connection and what it measured */
    int fd;
    bytes in;
    double *latency_ms;
    size_t pages, latency_cap;
    long products;
} walker;

static struct sockaddr_in server;
static char host_header[300];
static char **keys;
static size_t key_count;
static category *cats;
static size_t cat_count;
static atomic_size_t next_cat, next_key;
static int limit = 100;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mirror: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void reserve(bytes *b, size_t extra)
{
    if (b->cap - b->len > extra)
        return;
    while (b->cap - b->len <= extra)
        b->cap = b->cap ? b->cap * 2 : 65536;
    b->data = realloc(b->data, b->cap);
    if (b->data == NULL)
        die("out of memory");
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        die("%s: %s", path, strerror(errno));
    bytes b = {0};
    size_t n;
    do {
        reserve(&b, 65536);
        n = fread(b.data + b.len, 1, 65536, f);
        b.len += n;
    } while (n > 0);
    fclose(f);
    b.data[b.len] = '\0';
    return b.data;
}

static void load_keys(const char *path)
{
    char *text = read_file(path), *save = NULL;
    for (char *line = strtok_r(text, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        if (*line == '\0')
            continue;
        keys = realloc(keys, (key_count + 1) * sizeof *keys);
        keys[key_count++] = line;
    }
    if (key_count == 0)
        die("%s: no keys", path);
}

static int by_count_descending(const void *a, const void *b)
{
    long x = ((const category *)a)->count, y = ((const category *)b)->count;
    return (x < y) - (x > y);
}

static void load_categories(const char *path)
{
    char *text = read_file(path), *save = NULL;
    for (char *line = strtok_r(text, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        category c = {0};
        if (sscanf(line, "%127s %ld", c.slug, &c.count) != 2)
            continue;
        cats = realloc(cats, (cat_count + 1) * sizeof *cats);
        cats[cat_count++] = c;
    }
    if (cat_count == 0)
        die("%s: no categories", path);
    qsort(cats, cat_count, sizeof *cats, by_count_descending);
}

static void parse_base(const char *base)
{
    char host[256];
    int port = 80;
    if (sscanf(base, "http://%255[^:/]:%d", host, &port) < 1)
        die("--base must be http://HOST[:PORT]");
    server.sin_family = AF_INET;
    server.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, strcmp(host, "localhost") == 0 ? "127.0.0.1" : host, &server.sin_addr) !=
        1)
        die("--base: %s is not an IPv4 address", host);
    snprintf(host_header, sizeof host_header, "%s:%d", host, port);
}

static void connect_walker(walker *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(w->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (w->fd < 0 || connect(w->fd, (struct sockaddr *)&server, sizeof server) != 0)
        die("connect %s: %s", host_header, strerror(errno));
    w->in.len = 0;
}

static void send_all(walker *w, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(w->fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("send: %s", strerror(errno));
        data += n;
        len -= (size_t)n;
    }
}

/* Reads more of the response into w->in; false at the end of the connection. */
static bool read_more(walker *w)
{
    reserve(&w->in, 65536);
    ssize_t n;
    do
        n = recv(w->fd, w->in.data + w->in.len, w->in.cap - w->in.len - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        die("recv: %s", strerror(errno));
    w->in.len += (size_t)n;
    w->in.data[w->in.len] = '\0';
    return n > 0;
}

/* The value of header `name` (lower case) in head, or NULL. */
static const char *header_value(const char *head, size_t head_len, const char *name)
{
    size_t name_len = strlen(name);
    for (const char *line = memchr(head, '\n', head_len); line != NULL && line < head + head_len;
         line = memchr(line + 1, '\n', (size_t)(head + head_len - line - 1))) {
        const char *p = line + 1;
        if (strncasecmp(p, name, name_len) == 0 && p[name_len] == ':') {
            p += name_len + 1;
            while (*p == ' ')
                p++;
            return p;
        }
    }
    return NULL;
}

/* One response on w's connection: its status, its body in *body (NUL-terminated, inside
 * w->in, chunked bodies decoded in place); *close when the server ends the connection. */
static int read_response(walker *w, char **body, size_t *body_len, bool *close_after)
{
    char *end;
    while ((end = strstr(w->in.data != NULL ? w->in.data : "", "\r\n\r\n")) == NULL)
        if (!read_more(w))
            die("connection closed before a response's headers");
    size_t head_len = (size_t)(end - w->in.data) + 4;
    int status = atoi(w->in.data + 9);
    const char *length = header_value(w->in.data, head_len, "content-length");
    const char *encoding = header_value(w->in.data, head_len, "transfer-encoding");
    const char *connection = header_value(w->in.data, head_len, "connection");
    *close_after = connection != NULL && strncasecmp(connection, "close", 5) == 0;
    if (length != NULL) {
        size_t need = head_len + strtoul(length, NULL, 10);
        while (w->in.len < need)
            if (!read_more(w))
                die("connection closed inside a body");
        *body = w->in.data + head_len;
        *body_len = need - head_len;
        return status;
    }
    if (encoding == NULL || strncasecmp(encoding, "chunked", 7) != 0)
        die("a response with neither Content-Length nor chunked encoding");
    size_t out = head_len, at = head_len; /* decode chunks in place, toward the front */
    for (;;) {
        char *crlf;
        while ((crlf = strstr(w->in.data + at, "\r\n")) == NULL)
            if (!read_more(w))
                die("connection closed inside a chunk");
        size_t size = strtoul(w->in.data + at, NULL, 16);
        size_t data_at = (size_t)(crlf - w->in.data) + 2;
        while (w->in.len < data_at + size + 2)
            if (!read_more(w))
                die("connection closed inside a chunk");
        memmove(w->in.data + out, w->in.data + data_at, size);
        out += size;
        at = data_at + size + 2;
        if (size == 0)
            break;
    }
    w->in.data[out] = '\0';
    *body = w->in.data + head_len;
    *body_len = out - head_len;
    return status;
}

/* Drops the response just read from w->in (responses are read one at a time). */
static void consume_response(walker *w, size_t used)
{
    memmove(w->in.data, w->in.data + used, w->in.len - used);
    w->in.len -= used;
    w->in.data[w->in.len] = '\0';
}

static uint64_t hash_id(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h | 1; /* 0 marks an empty slot */
}

static void id_list_add(id_list *l, uint64_t h)
{
    if (l->len == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4096;
        l->hashes = realloc(l->hashes, l->cap * sizeof *l->hashes);
        if (l->hashes == NULL)
            die("out of memory");
    }
    l->hashes[l->len++] = h;
}

static int by_hash(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static size_t id_list_distinct(id_list *l)
{
    qsort(l->hashes, l->len, sizeof *l->hashes, by_hash);
    size_t distinct = 0;
    for (size_t i = 0; i < l->len; i++)
        distinct += i == 0 || l->hashes[i] != l->hashes[i - 1];
    return distinct;
}

static void record_latency(walker *w, double ms)
{
    if (w->pages == w->latency_cap) {
        w->latency_cap = w->latency_cap ? w->latency_cap * 2 : 4096;
        w->latency_ms = realloc(w->latency_ms, w->latency_cap * sizeof *w->latency_ms);
        if (w->latency_ms == NULL)
            die("out of memory");
    }
    w->latency_ms[w->pages++] = ms;
}

/* The page's ids onto seen; its count of items. */
static long read_items(const char *body, id_list *seen)
{
    long items = 0;
    for (const char *p = strstr(body, "\"id\":\""); p != NULL; p = strstr(p, "\"id\":\"")) {
        p += 6;
        const char *q = strchr(p, '"');
        if (q == NULL)
            break;
        id_list_add(seen, hash_id(p, (size_t)(q - p)));
        items++;
        p = q;
    }
    return items;
}

/* next_cursor, percent-encoded into out; false when it is null. */
static bool read_cursor(const char *body, const char *path, char *out, size_t outsz)
{
    const char *p = strstr(body, "\"next_cursor\":");
    if (p == NULL)
        die("%s: no next_cursor in the page", path);
    p += 14;
    while (*p == ' ')
        p++;
    if (strncmp(p, "null", 4) == 0)
        return false;
    if (*p != '"')
        die("%s: next_cursor is neither null nor a string", path);
    size_t o = 0;
    for (p++; *p != '"' && *p != '\0'; p++) {
        if (o + 4 >= outsz)
            die("%s: next_cursor too long", path);
        unsigned char c = (unsigned char)*p;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, outsz - o, "%%%02X", c);
    }
    out[o] = '\0';
    return true;
}

static void walk_category(walker *w, category *cat)
{
    char cursor[1024] = "", path[2048], request[4096];
    bool more = true;
    while (more) {
        snprintf(path, sizeof path, "/v1/products?category=%s&limit=%d%s%s", cat->slug, limit,
                 cursor[0] ? "&cursor=" : "", cursor);
        const char *key = keys[atomic_fetch_add(&next_key, 1) % key_count];
        int n = snprintf(request, sizeof request,
                         "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", path,
                         host_header, key);
        double t0 = now_ms();
        send_all(w, request, (size_t)n);
        char *body;
        size_t body_len;
        bool close_after;
        int status = read_response(w, &body, &body_len, &close_after);
        record_latency(w, now_ms() - t0);
        if (status != 200)
            die("%s: status %d: %.200s", path, status, body);
        long items = read_items(body, &cat->ids);
        if (items > limit)
            die("%s: %ld items, more than limit=%d", path, items, limit);
        w->products += items;
        more = read_cursor(body, path, cursor, sizeof cursor);
        consume_response(w, (size_t)(body - w->in.data) + body_len);
        if (close_after)
            connect_walker(w);
    }
}

static void *walk(void *arg)
{
    walker *w = arg;
    connect_walker(w);
    for (size_t i = atomic_fetch_add(&next_cat, 1); i < cat_count;
         i = atomic_fetch_add(&next_cat, 1))
        walk_category(w, &cats[i]);
    close(w->fd);
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *base = NULL, *keys_path = NULL, *cats_path = NULL;
    int conns = 8;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--base") == 0)
            base = argv[i + 1];
        else if (strcmp(argv[i], "--keys") == 0)
            keys_path = argv[i + 1];
        else if (strcmp(argv[i], "--cats") == 0)
            cats_path = argv[i + 1];
        else if (strcmp(argv[i], "--conns") == 0)
            conns = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--limit") == 0)
            limit = atoi(argv[i + 1]);
        else
            die("unknown argument %s", argv[i]);
    }
    if (base == NULL || keys_path == NULL || cats_path == NULL || conns < 1 || limit < 1)
        die("--base, --keys and --cats are required (--conns and --limit at least 1)");
    parse_base(base);
    load_keys(keys_path);
    load_categories(cats_path);

    walker *walkers = calloc((size_t)conns, sizeof *walkers);
    pthread_t *threads = calloc((size_t)conns, sizeof *threads);
    double t0 = now_ms();
    for (int i = 0; i < conns; i++) {
        walkers[i].fd = -1;
        if (pthread_create(&threads[i], NULL, walk, &walkers[i]) != 0)
            die("pthread_create failed");
    }
    long products = 0;
    size_t pages = 0;
    for (int i = 0; i < conns; i++) {
        pthread_join(threads[i], NULL);
        products += walkers[i].products;
        pages += walkers[i].pages;
    }
    double seconds = (now_ms() - t0) / 1e3;
    for (size_t i = 0; i < cat_count; i++) {
        size_t distinct = id_list_distinct(&cats[i].ids);
        if ((long)distinct != cats[i].count)
            die("category %s: %zu distinct products, the database has %ld", cats[i].slug, distinct,
                cats[i].count);
    }

    double *all = malloc((pages + 1) * sizeof *all);
    size_t k = 0;
    for (int i = 0; i < conns; i++)
        for (size_t j = 0; j < walkers[i].pages; j++)
            all[k++] = walkers[i].latency_ms[j];
    qsort(all, pages, sizeof *all, by_value);
#define QUANTILE(q)                                                                                \
    all[(size_t)((q) * (double)pages) < pages ? (size_t)((q) * (double)pages) : pages - 1]
    printf("mirror: %ld products in %zu requests on %d connections, %.1f s: %.0f products/s, "
           "page p50 %.1f ms p99 %.1f ms\n",
           products, pages, conns, seconds, (double)products / seconds, QUANTILE(0.5),
           QUANTILE(0.99));
    return 0;
}
