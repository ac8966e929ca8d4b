/* bench/search_peers/runner.h: what the four search programs of `bench/run --only
 * search-peers` share (market over HTTP, market's page statement over libpq, SQLite FTS5
 * and Xapian in process):
 *
 *   - the plan (peers_expect writes it from market's PostgreSQL): every shape of
 *     bench/shapes.txt with PostgreSQL's own websearch_to_tsquery('english', q) as text,
 *     the query's words (the stemmed lexemes of q that are not excluded: contract section
 *     6, relevance), its number of matches, and for every sort the first 40 ids of the
 *     brute-force answer (PostgreSQL, ORDER BY on the table);
 *   - a parser of tsquery text (what websearch_to_tsquery answers) into a tree that each
 *     engine turns into its own query syntax;
 *   - the measurement: for every shape and sort, the verification (pages 1 and 2 at limit
 *     20, following the engine's own cursor, against the brute force), then REQUESTS timed
 *     pages, half first pages (limit 20, 22, ..., 58) and half the page that follows each
 *     of them through its cursor (limit 21, 23, ..., 59), as bench/shapes.mjs varies limit.
 *
 * The programs print tab-separated lines that bench/run puts in one table:
 *   VERIFY  shape sort ok|MISMATCH|NOT-WHOLE detail
 *   RESULT  shape sort p50_ms p99_ms items_first items_cursor requests
 */
#ifndef SEARCH_PEERS_RUNNER_H
#define SEARCH_PEERS_RUNNER_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { SORT_NEWEST, SORT_PRICE_ASC, SORT_PRICE_DESC, SORT_RELEVANCE, SORTS };
extern const char *const sort_names[SORTS];

#define PAGE_MAX 128   /* limit + 1 at most (limits are 20..59 here, the API's are 1..100) */
#define ID_MAX 80      /* product ids are 'prod_' and at most 60 characters */
#define CURSOR_MAX 512
#define EXPECT_MAX 40  /* the brute force's ids per shape and sort: pages 1 and 2 of 20 */

/* A node of a parsed tsquery. PHRASE holds its lexemes in lex[0..n) (adjacent, in order:
 * "a b" is 'a' <-> 'b'); AND, OR have children kid[0..n); NOT has kid[0]. */
typedef enum { Q_LEX, Q_PHRASE, Q_AND, Q_OR, Q_NOT } qtype_t;
typedef struct qnode {
    qtype_t type;
    int n;
    char **lex;          /* Q_LEX: lex[0]; Q_PHRASE: n lexemes */
    struct qnode **kid;  /* Q_AND, Q_OR: n children; Q_NOT: one */
} qnode_t;

typedef struct {
    char *name, *q, *tsquery;
    qnode_t *tree;       /* NULL: the query is empty (only stop words) and matches nothing */
    char **words;        /* distinct, not excluded */
    int nwords;
    long matches;
    int nexpect[SORTS];
    char expect[SORTS][EXPECT_MAX][ID_MAX];
} shape_t;

typedef struct {
    shape_t *shapes;
    int n;
} plan_t;

typedef struct {
    int n;                    /* items */
    char ids[PAGE_MAX][ID_MAX];
    int has_next;             /* more rows remain after the page */
    char next[CURSOR_MAX];    /* the engine's own cursor: what it needs to go on */
} page_t;

/* One page: limit items after cursor (NULL: the first page). 0, or -1 on error (the
 * engine has printed it). */
typedef int (*page_fn)(void *ctx, const shape_t *shape, int sort, int limit, const char *cursor,
                       page_t *out);

typedef struct {
    int requests;       /* timed requests per shape and sort (half first pages) */
    double budget_s;    /* stop timing a shape and sort after this long (at least 6 requests) */
    const char *only;   /* run only the shapes whose name holds this (NULL: all) */
} run_opts_t;

double now_ms(void);
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *xmalloc(size_t n);
char *xstrdup(const char *s);

/* Shapes of bench/shapes.txt: names and q, in order. */
int shapes_read(const char *path, char ***names, char ***qs);

/* tsquery text -> tree (NULL for an empty query); dies on what websearch_to_tsquery never
 * writes or an engine here cannot express (a phrase with a gap, <N> with N > 1). */
qnode_t *tsq_parse(const char *text);
/* The distinct lexemes of the tree that are under no NOT. */
void tsq_words(const qnode_t *t, char ***words, int *n);

int plan_read(const char *path, plan_t *plan);
int plan_write(FILE *f, const plan_t *plan);

/* Verify then time every shape and sort; prints VERIFY and RESULT lines on stdout, a
 * readable line per shape and sort on stderr. Returns the number of mismatches. */
int run_all(const char *label, const plan_t *plan, page_fn fn, void *ctx, const run_opts_t *o);
/* Parse the runner's common options (--requests N --budget S --only TEXT) from argv[i..]. */
void run_opts_parse(run_opts_t *o, int argc, char **argv, int first);

#ifdef __cplusplus
}
#endif
#endif
