/* bench/search_peers/fts5.c: market's searches answered by SQLite FTS5, in process.
 *
 *   MARKET_DB=conninfo peers_fts5 load DB     the catalogue from market's PostgreSQL into DB
 *   peers_fts5 run DB PLAN [--requests N] [--budget S] [--only TEXT]
 *
 * The index. One FTS5 table, s(body), contentless, detail=full (phrases need positions),
 * whose rowid follows the newest order (rowid 1 is the newest product): the newest sort is
 * the index's own order, read with ORDER BY rowid and a rowid > cursor keyset. body holds
 * PostgreSQL's own lexemes of `search` (title and description, unnest(search)) in position
 * order, split by a tokenizer of our own ("lex": a token is what lies between spaces, taken
 * as is), so that FTS5 matches exactly the terms PostgreSQL matches; a stop word's gap (a
 * position without a lexeme) is one filler token, so that words PostgreSQL does not see as
 * adjacent are not adjacent here either (a phrase of websearch_to_tsquery is `a <-> b`,
 * adjacency; <N> is not supported). Every body starts with one token held by every product,
 * the query of a lone exclusion (FTS5's NOT is binary: "-includes" is `ALL NOT includ`).
 * Beside it an ordinary table d(n = rowid, id, pkey = price * 10^6, tlex = the title's
 * lexemes) gives the other sorts their keys.
 *
 * The queries. Each shape's query is translated from PostgreSQL's websearch_to_tsquery
 * output (runner.h: the plan), not written by hand. One prepared statement per sort:
 *   newest      FTS5 in rowid order, rowid > cursor, LIMIT: the cost follows the page;
 *   price_*     every match joined to d by rowid, (pkey, id) beyond the cursor, ORDER BY
 *               pkey, id with LIMIT (SQLite's top-N sorter): FTS5 has no second order;
 *   relevance   the same with the rank, trank(tlex, words) = how many of the query's words
 *               the title holds (a function of ours), ORDER BY rank DESC, id DESC.
 * Each fetches limit + 1 rows: the page is whole and says whether more remain. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pg.h"
#include "runner.h"

#define TOK_ALL "\x01"    /* held by every product, at its position 0 */
#define TOK_GAP "\x02"    /* a run of positions without a lexeme (stop words) */
#define TOK_COLOC '\x03'  /* prefix: a lexeme at the same position as the previous one */

/* ------------------------------------------------------------------ the tokenizer */

static char lex_instance;

static int lex_create(void *ctx, const char **argv, int argc, Fts5Tokenizer **out) {
    (void)ctx, (void)argv, (void)argc;
    *out = (Fts5Tokenizer *)&lex_instance;
    return SQLITE_OK;
}

static void lex_delete(Fts5Tokenizer *t) { (void)t; }

static int lex_tokenize(Fts5Tokenizer *t, void *ctx, int flags, const char *text, int n,
                        int (*token)(void *, int, const char *, int, int, int)) {
    (void)t, (void)flags;
    int i = 0;
    while (i < n) {
        while (i < n && text[i] == ' ') i++;
        int start = i;
        while (i < n && text[i] != ' ') i++;
        if (i == start) continue;
        int rc = text[start] == TOK_COLOC ? token(ctx, FTS5_TOKEN_COLOCATED, text + start + 1, i - start - 1, start, i)
                                          : token(ctx, 0, text + start, i - start, start, i);
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

static void register_tokenizer(sqlite3 *db) {
    fts5_api *api = NULL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK) die("fts5: %s", sqlite3_errmsg(db));
    sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
    sqlite3_step(st);
    sqlite3_finalize(st);
    if (!api) die("this SQLite has no FTS5");
    static fts5_tokenizer tok = {lex_create, lex_delete, lex_tokenize};
    if (api->xCreateTokenizer(api, "lex", NULL, &tok, NULL) != SQLITE_OK) die("fts5: cannot add the tokenizer");
}

static void exec(sqlite3 *db, const char *sql) {
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) die("sqlite: %s: %s", sql, err);
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        die("sqlite: %s: %s", sql, sqlite3_errmsg(db));
    return st;
}

/* ------------------------------------------------------------------ load */

typedef struct {
    char *s;
    size_t len, cap;
} buf_t;

static void put(buf_t *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->s) die("out of memory");
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}
static void puts_(buf_t *b, const char *s) { put(b, s, strlen(s)); }

typedef struct {
    sqlite3 *db;
    sqlite3_stmt *ins_s, *ins_d;
    buf_t body, tlex;
    long collisions;
    double t0;
} loader_t;

static void load_row(void *ctx, const pg_row_t *r) {
    loader_t *l = ctx;
    l->body.len = 0;
    puts_(&l->body, TOK_ALL);
    int in_gap = 0;
    for (int p = 1; p <= r->maxpos; p++) {
        if (!r->at[p]) {
            if (!in_gap) puts_(&l->body, " " TOK_GAP);
            in_gap = 1;
            continue;
        }
        in_gap = 0;
        puts_(&l->body, " ");
        puts_(&l->body, r->at[p]);
        if (r->collisions) /* the other lexemes of that position, colocated */
            for (int i = 0; i < r->npos; i++)
                if (r->pos[i] == p && r->lex[i] != r->at[p]) {
                    put(&l->body, " \x03", 2);
                    puts_(&l->body, r->lex[i]);
                }
    }
    l->collisions += r->collisions;
    l->tlex.len = 0;
    puts_(&l->tlex, " ");
    for (int i = 0; i < r->ntitle; i++) {
        puts_(&l->tlex, r->title[i]);
        puts_(&l->tlex, " ");
    }
    sqlite3_bind_int64(l->ins_s, 1, r->seq);
    sqlite3_bind_text(l->ins_s, 2, l->body.s, (int)l->body.len, SQLITE_STATIC);
    if (sqlite3_step(l->ins_s) != SQLITE_DONE) die("insert: %s", sqlite3_errmsg(l->db));
    sqlite3_reset(l->ins_s);
    sqlite3_bind_int64(l->ins_d, 1, r->seq);
    sqlite3_bind_text(l->ins_d, 2, r->id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(l->ins_d, 3, r->price_key);
    sqlite3_bind_text(l->ins_d, 4, l->tlex.s, (int)l->tlex.len, SQLITE_STATIC);
    if (sqlite3_step(l->ins_d) != SQLITE_DONE) die("insert: %s", sqlite3_errmsg(l->db));
    sqlite3_reset(l->ins_d);
    if (r->seq % 100000 == 0)
        fprintf(stderr, "fts5: %ld rows, %.0f s\n", r->seq, (now_ms() - l->t0) / 1e3);
}

static int load(const char *path) {
    loader_t l;
    memset(&l, 0, sizeof l);
    l.t0 = now_ms();
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    remove(tmp);
    if (sqlite3_open(tmp, &l.db) != SQLITE_OK) die("sqlite: cannot create %s", tmp);
    register_tokenizer(l.db);
    exec(l.db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -1048576;"
               "CREATE TABLE d (n INTEGER PRIMARY KEY, id TEXT NOT NULL, pkey INTEGER NOT NULL, tlex TEXT NOT NULL);"
               "CREATE VIRTUAL TABLE s USING fts5(body, tokenize = 'lex', content = '', columnsize = 0, detail = full);"
               /* a 256 MB in-memory index before each flush: few segments to merge */
               "INSERT INTO s(s, rank) VALUES ('hashsize', 268435456);"
               "BEGIN");
    l.ins_s = prepare(l.db, "INSERT INTO s (rowid, body) VALUES (?1, ?2)");
    l.ins_d = prepare(l.db, "INSERT INTO d (n, id, pkey, tlex) VALUES (?1, ?2, ?3, ?4)");
    long rows = pg_catalogue(load_row, &l);
    exec(l.db, "COMMIT");
    double t_rows = now_ms();
    /* One segment: what a read-mostly index is given once loaded. */
    exec(l.db, "INSERT INTO s(s) VALUES ('optimize')");
    sqlite3_finalize(l.ins_s);
    sqlite3_finalize(l.ins_d);
    exec(l.db, "VACUUM");
    sqlite3_close(l.db);
    if (rename(tmp, path) != 0) die("cannot rename %s", tmp);
    struct stat st;
    stat(path, &st);
    printf("LOAD\tfts5\t%ld\t%.1f\t%.1f\t%lld\n", rows, (now_ms() - l.t0) / 1e3, (now_ms() - t_rows) / 1e3,
           (long long)st.st_size);
    fprintf(stderr,
            "fts5: loaded %ld products in %.1f s (of which optimize and vacuum %.1f s), %.0f MB; %ld positions"
            " holding two lexemes\n",
            rows, (now_ms() - l.t0) / 1e3, (now_ms() - t_rows) / 1e3, (double)st.st_size / 1e6, l.collisions);
    return 0;
}

/* ------------------------------------------------------------------ queries */

/* The MATCH expression of a tsquery tree (runner.h). */
static void quote(buf_t *b, const char *lex) {
    for (const char *p = lex; *p; p++) {
        put(b, p, 1);
        if (*p == '"') put(b, "\"", 1); /* a quote inside a string is doubled */
    }
}

static void match_expr(buf_t *b, const qnode_t *t) {
    switch (t->type) {
    case Q_LEX:
    case Q_PHRASE: /* "a b": a phrase of adjacent tokens */
        puts_(b, "\"");
        for (int i = 0; i < t->n; i++) {
            if (i) puts_(b, " ");
            quote(b, t->lex[i]);
        }
        puts_(b, "\"");
        break;
    case Q_OR:
        puts_(b, "(");
        for (int i = 0; i < t->n; i++) {
            if (i) puts_(b, " OR ");
            match_expr(b, t->kid[i]);
        }
        puts_(b, ")");
        break;
    case Q_AND: { /* (P1 AND P2 ...) NOT (N1 OR N2 ...); no P: every product */
        int pos = 0, neg = 0;
        puts_(b, "((");
        for (int i = 0; i < t->n; i++) {
            if (t->kid[i]->type == Q_NOT) continue;
            if (pos++) puts_(b, " AND ");
            match_expr(b, t->kid[i]);
        }
        if (!pos) puts_(b, "\"" TOK_ALL "\"");
        puts_(b, ")");
        for (int i = 0; i < t->n; i++) {
            if (t->kid[i]->type != Q_NOT) continue;
            puts_(b, neg++ ? " OR " : " NOT (");
            match_expr(b, t->kid[i]->kid[0]);
        }
        puts_(b, neg ? "))" : ")");
        break;
    }
    case Q_NOT:
        puts_(b, "(\"" TOK_ALL "\" NOT ");
        match_expr(b, t->kid[0]);
        puts_(b, ")");
        break;
    }
}

/* trank(tlex, words): how many of words (" a b ") the title's lexemes (" x y z ") hold.
 * The words, a bound parameter, are split once per statement (auxdata). */
typedef struct {
    int n;
    char **pat; /* " w " */
    int *len;
} words_t;

static void words_free(void *p) {
    words_t *w = p;
    for (int i = 0; i < w->n; i++) free(w->pat[i]);
    free(w->pat);
    free(w->len);
    free(w);
}

static void trank(sqlite3_context *cx, int argc, sqlite3_value **argv) {
    (void)argc;
    words_t *w = sqlite3_get_auxdata(cx, 1);
    if (!w) {
        const char *s = (const char *)sqlite3_value_text(argv[1]);
        w = xmalloc(sizeof *w);
        memset(w, 0, sizeof *w);
        w->pat = xmalloc(sizeof(char *) * (strlen(s) + 1));
        w->len = xmalloc(sizeof(int) * (strlen(s) + 1));
        for (const char *p = s; *p;) {
            while (*p == ' ') p++;
            const char *e = p;
            while (*e && *e != ' ') e++;
            if (e == p) break;
            int n = (int)(e - p);
            w->pat[w->n] = xmalloc((size_t)n + 3);
            w->pat[w->n][0] = ' ';
            memcpy(w->pat[w->n] + 1, p, (size_t)n);
            memcpy(w->pat[w->n] + 1 + n, " ", 2);
            w->len[w->n++] = n + 2;
            p = e;
        }
        sqlite3_set_auxdata(cx, 1, w, words_free);
        w = sqlite3_get_auxdata(cx, 1);
        if (!w) {
            sqlite3_result_error_nomem(cx);
            return;
        }
    }
    const char *t = (const char *)sqlite3_value_text(argv[0]);
    size_t tn = (size_t)sqlite3_value_bytes(argv[0]);
    int r = 0;
    for (int i = 0; i < w->n; i++) r += memmem(t, tn, w->pat[i], (size_t)w->len[i]) != NULL;
    sqlite3_result_int(cx, r);
}

typedef struct {
    sqlite3 *db;
    const plan_t *plan;
    sqlite3_stmt *st[SORTS];
    char **match;  /* per shape: the MATCH expression, NULL when the query is empty */
    char **words;  /* per shape: " a b " */
} engine_t;

static const char *const SQL[SORTS] = {
    "SELECT s.rowid, d.id FROM s CROSS JOIN d ON d.n = s.rowid"
    " WHERE s MATCH ?1 AND s.rowid > ?2 ORDER BY s.rowid LIMIT ?3",
    "SELECT d.pkey, d.id FROM s CROSS JOIN d ON d.n = s.rowid"
    " WHERE s MATCH ?1 AND (d.pkey, d.id) > (?2, ?3) ORDER BY d.pkey, d.id LIMIT ?4",
    "SELECT d.pkey, d.id FROM s CROSS JOIN d ON d.n = s.rowid"
    " WHERE s MATCH ?1 AND (d.pkey, d.id) < (?2, ?3) ORDER BY d.pkey DESC, d.id DESC LIMIT ?4",
    "SELECT trank(d.tlex, ?4) AS r, d.id FROM s CROSS JOIN d ON d.n = s.rowid"
    " WHERE s MATCH ?1 AND (trank(d.tlex, ?4), d.id) < (?2, ?3) ORDER BY r DESC, d.id DESC LIMIT ?5",
};

static int page(void *ctx, const shape_t *shape, int sort, int limit, const char *cursor, page_t *out) {
    engine_t *e = ctx;
    int si = (int)(shape - e->plan->shapes);
    if (!e->match[si]) return 0; /* an empty query matches nothing */
    sqlite3_stmt *st = e->st[sort];
    sqlite3_reset(st);
    sqlite3_bind_text(st, 1, e->match[si], -1, SQLITE_STATIC);
    long long key = 0;
    char id[ID_MAX] = "";
    if (cursor && sscanf(cursor, "%lld %79s", &key, id) < 1) die("bad cursor %s", cursor);
    switch (sort) {
    case SORT_NEWEST:
        sqlite3_bind_int64(st, 2, cursor ? key : 0);
        sqlite3_bind_int(st, 3, limit + 1);
        break;
    case SORT_PRICE_ASC:
    case SORT_PRICE_DESC:
        sqlite3_bind_int64(st, 2, cursor ? key : sort == SORT_PRICE_ASC ? -1 : INT64_MAX);
        sqlite3_bind_text(st, 3, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 4, limit + 1);
        break;
    case SORT_RELEVANCE:
        sqlite3_bind_int64(st, 2, cursor ? key : 1 << 30);
        sqlite3_bind_text(st, 3, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 4, e->words[si], -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 5, limit + 1);
        break;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (out->n == limit) {
            out->has_next = 1;
            break;
        }
        const char *rid = (const char *)sqlite3_column_text(st, 1);
        if (strlen(rid) >= ID_MAX) die("id too long");
        strcpy(out->ids[out->n++], rid);
        snprintf(out->next, sizeof out->next, "%lld %s", (long long)sqlite3_column_int64(st, 0), rid);
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        fprintf(stderr, "fts5: %s\n", sqlite3_errmsg(e->db));
        return -1;
    }
    sqlite3_reset(st);
    return 0;
}

static int run(const char *path, const char *plan_path, const run_opts_t *o) {
    plan_t plan;
    plan_read(plan_path, &plan);
    engine_t e;
    memset(&e, 0, sizeof e);
    if (sqlite3_open_v2(path, &e.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) die("sqlite: cannot open %s", path);
    register_tokenizer(e.db);
    if (sqlite3_create_function(e.db, "trank", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, trank, NULL, NULL) !=
        SQLITE_OK)
        die("sqlite: cannot add trank");
    exec(e.db, "PRAGMA mmap_size = 8589934592; PRAGMA cache_size = -262144");
    for (int k = 0; k < SORTS; k++) e.st[k] = prepare(e.db, SQL[k]);
    e.plan = &plan;
    e.match = xmalloc(sizeof(char *) * (size_t)plan.n);
    e.words = xmalloc(sizeof(char *) * (size_t)plan.n);
    for (int i = 0; i < plan.n; i++) {
        const shape_t *s = &plan.shapes[i];
        buf_t b = {0};
        if (s->tree) {
            match_expr(&b, s->tree);
            e.match[i] = b.s;
        } else {
            e.match[i] = NULL;
        }
        buf_t w = {0};
        puts_(&w, " ");
        for (int j = 0; j < s->nwords; j++) {
            puts_(&w, s->words[j]);
            puts_(&w, " ");
        }
        e.words[i] = w.s;
        fprintf(stderr, "fts5: %-40s MATCH %s\n", s->name, e.match[i] ? e.match[i] : "(nothing)");
    }
    return run_all("fts5", &plan, page, &e, o) ? 3 : 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "load") == 0) return load(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "run") == 0) {
        run_opts_t o;
        run_opts_parse(&o, argc, argv, 4);
        return run(argv[2], argv[3], &o);
    }
    die("usage: peers_fts5 load DB | run DB PLAN [--requests N] [--budget S] [--only TEXT]");
}
