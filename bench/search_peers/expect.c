/* bench/search_peers/expect.c: the plan of the search peers' comparison (runner.h).
 *
 *   MARKET_DB=conninfo peers_expect bench/shapes.txt PLAN
 *
 * For every shape of the shapes file: PostgreSQL's websearch_to_tsquery('english', q) as
 * text (what the engines translate), its words, its number of matches, and for every sort
 * the first 40 ids of the brute-force answer: a plain SELECT ... ORDER BY on the table,
 * the contract's orders written out (sections 5 and 6), no cleverness. Read only. */
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static const char *const ORDER_BY[SORTS] = {
    "created_at DESC, id DESC",
    "price ASC, id ASC",
    "price DESC, id DESC",
    /* rank: how many of the query's words (distinct) the title's own vector holds */
    "(SELECT count(*) FROM unnest(tsvector_to_array(title_search)) w WHERE w = ANY($2::text[])) DESC, id DESC",
};

static PGresult *query(PGconn *c, const char *sql, int n, const char *const *params) {
    PGresult *r = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) die("%s: %s", sql, PQerrorMessage(c));
    return r;
}

/* A text[] literal of the words: {"a","b"} with " and \ escaped. */
static char *array_literal(char **w, int n) {
    size_t len = 3;
    for (int i = 0; i < n; i++) len += 2 * strlen(w[i]) + 3;
    char *s = xmalloc(len), *p = s;
    *p++ = '{';
    for (int i = 0; i < n; i++) {
        if (i) *p++ = ',';
        *p++ = '"';
        for (const char *q = w[i]; *q; q++) {
            if (*q == '"' || *q == '\\') *p++ = '\\';
            *p++ = *q;
        }
        *p++ = '"';
    }
    *p++ = '}';
    *p = '\0';
    return s;
}

int main(int argc, char **argv) {
    if (argc != 3) die("usage: peers_expect SHAPES PLAN");
    const char *conninfo = getenv("MARKET_DB");
    if (!conninfo || !*conninfo) die("MARKET_DB is not set");
    char **names, **qs;
    int n = shapes_read(argv[1], &names, &qs);
    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) != CONNECTION_OK) die("connect: %s", PQerrorMessage(c));
    PQclear(PQexec(c, "SET default_transaction_read_only = on; SET max_parallel_workers_per_gather = 0"));

    plan_t plan = {xmalloc(sizeof(shape_t) * (size_t)n), n};
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        shape_t *s = &plan.shapes[i];
        memset(s, 0, sizeof *s);
        s->name = names[i];
        s->q = qs[i];
        const char *p1[1] = {s->q};
        PGresult *r = query(c, "SELECT websearch_to_tsquery('english', $1)::text", 1, p1);
        s->tsquery = xstrdup(PQgetvalue(r, 0, 0));
        PQclear(r);
        s->tree = tsq_parse(s->tsquery);
        tsq_words(s->tree, &s->words, &s->nwords);
        r = query(c,
                  "SELECT count(*) FROM products WHERE status = 'published' AND mode = 'test'"
                  " AND search @@ websearch_to_tsquery('english', $1)",
                  1, p1);
        s->matches = atol(PQgetvalue(r, 0, 0));
        PQclear(r);
        char *words = array_literal(s->words, s->nwords);
        const char *p2[2] = {s->q, words};
        for (int k = 0; k < SORTS; k++) {
            char sql[1024];
            snprintf(sql, sizeof sql,
                     "SELECT id FROM products WHERE status = 'published' AND mode = 'test'"
                     " AND search @@ websearch_to_tsquery('english', $1) ORDER BY %s LIMIT %d",
                     ORDER_BY[k], EXPECT_MAX);
            r = query(c, sql, k == SORT_RELEVANCE ? 2 : 1, p2);
            s->nexpect[k] = PQntuples(r);
            for (int j = 0; j < s->nexpect[k]; j++) {
                const char *id = PQgetvalue(r, j, 0);
                if (strlen(id) >= ID_MAX) die("id %s too long", id);
                strcpy(s->expect[k][j], id);
            }
            PQclear(r);
        }
        free(words);
        fprintf(stderr, "expect: %-40s %-45s %8ld matches (%.0f ms)\n", s->name, s->tsquery, s->matches,
                now_ms() - t0);
    }
    PQfinish(c);
    FILE *f = fopen(argv[2], "w");
    if (!f || plan_write(f, &plan) != 0 || fclose(f) != 0) die("cannot write %s", argv[2]);
    return 0;
}
