/* bench/search_peers/runner.c: the plan, the tsquery parser and the measurement shared by
 * the three search programs (runner.h). */
#include "runner.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const sort_names[SORTS] = {"newest", "price_asc", "price_desc", "relevance"};

double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("search-peers: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* Weak: peers_statement links market's own lib/mem.c, whose xmalloc and xstrdup (the same
 * promise: memory or the end of the program) then stand in for these. */
__attribute__((weak)) void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

__attribute__((weak)) char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

static void chomp(char *s) {
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = '\0';
}

/* Splits s at tabs in place, at most max fields; returns how many. */
static int split_tabs(char *s, char **f, int max) {
    int n = 0;
    while (n < max) {
        f[n++] = s;
        char *t = strchr(s, '\t');
        if (!t) break;
        *t = '\0';
        s = t + 1;
    }
    return n;
}

int shapes_read(const char *path, char ***names, char ***qs) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot read %s", path);
    char line[4096];
    int n = 0, cap = 16;
    *names = xmalloc(sizeof(char *) * (size_t)cap);
    *qs = xmalloc(sizeof(char *) * (size_t)cap);
    while (fgets(line, sizeof line, f)) {
        chomp(line);
        if (line[0] == '\0' || line[0] == '#') continue;
        char *fl[2];
        if (split_tabs(line, fl, 2) != 2) die("%s: a line without a tab: %s", path, line);
        if (n == cap) {
            cap *= 2;
            *names = realloc(*names, sizeof(char *) * (size_t)cap);
            *qs = realloc(*qs, sizeof(char *) * (size_t)cap);
            if (!*names || !*qs) die("out of memory");
        }
        (*names)[n] = xstrdup(fl[0]);
        (*qs)[n] = xstrdup(fl[1]);
        n++;
    }
    fclose(f);
    return n;
}

/* ------------------------------------------------------------------ tsquery text */

/* The text form of a tsquery, as PostgreSQL writes it: 'lexeme' (a quote doubled, a
 * backslash escaping), ! & | <-> <N> and parentheses; precedence ! then <-> then & then |. */
typedef struct {
    const char *s;
    const char *text;
} lexer_t;

static void skip_ws(lexer_t *l) {
    while (isspace((unsigned char)*l->s)) l->s++;
}

static qnode_t *node_new(qtype_t type) {
    qnode_t *n = xmalloc(sizeof *n);
    memset(n, 0, sizeof *n);
    n->type = type;
    return n;
}

static void node_add(qnode_t *p, qnode_t *kid) {
    p->kid = realloc(p->kid, sizeof(qnode_t *) * (size_t)(p->n + 1));
    if (!p->kid) die("out of memory");
    p->kid[p->n++] = kid;
}

static qnode_t *parse_or(lexer_t *l);

static qnode_t *parse_unary(lexer_t *l) {
    skip_ws(l);
    if (*l->s == '!') {
        l->s++;
        qnode_t *n = node_new(Q_NOT);
        node_add(n, parse_unary(l));
        return n;
    }
    if (*l->s == '(') {
        l->s++;
        qnode_t *n = parse_or(l);
        skip_ws(l);
        if (*l->s != ')') die("tsquery %s: ')' expected at %s", l->text, l->s);
        l->s++;
        return n;
    }
    if (*l->s != '\'') die("tsquery %s: a lexeme expected at %s", l->text, l->s);
    l->s++;
    size_t cap = strlen(l->s) + 1, len = 0;
    char *lex = xmalloc(cap);
    for (;;) {
        if (*l->s == '\0') die("tsquery %s: unterminated lexeme", l->text);
        if (*l->s == '\'' && l->s[1] == '\'') {
            lex[len++] = '\'';
            l->s += 2;
        } else if (*l->s == '\'') {
            l->s++;
            break;
        } else if (*l->s == '\\' && l->s[1] != '\0') {
            lex[len++] = l->s[1];
            l->s += 2;
        } else {
            lex[len++] = *l->s++;
        }
    }
    lex[len] = '\0';
    if (*l->s == ':') die("tsquery %s: weights and prefixes are not supported", l->text);
    qnode_t *n = node_new(Q_LEX);
    n->n = 1;
    n->lex = xmalloc(sizeof(char *));
    n->lex[0] = lex;
    return n;
}

/* a <-> b <-> c: a phrase of adjacent lexemes (what websearch_to_tsquery makes of "a b c"
 * without stop words inside). */
static qnode_t *parse_phrase(lexer_t *l) {
    qnode_t *first = parse_unary(l);
    qnode_t *phrase = NULL;
    for (;;) {
        skip_ws(l);
        if (*l->s != '<') break;
        int dist = 1;
        if (strncmp(l->s, "<->", 3) == 0) {
            l->s += 3;
        } else {
            char *end;
            dist = (int)strtol(l->s + 1, &end, 10);
            if (*end != '>') die("tsquery %s: bad operator at %s", l->text, l->s);
            l->s = end + 1;
        }
        if (dist != 1)
            die("tsquery %s: <%d> (a phrase with stop words inside) is not supported", l->text, dist);
        qnode_t *next = parse_unary(l);
        if (first->type != Q_LEX || next->type != Q_LEX)
            die("tsquery %s: a phrase of anything but lexemes is not supported", l->text);
        if (!phrase) {
            phrase = node_new(Q_PHRASE);
            phrase->lex = xmalloc(sizeof(char *));
            phrase->lex[phrase->n++] = first->lex[0];
        }
        phrase->lex = realloc(phrase->lex, sizeof(char *) * (size_t)(phrase->n + 1));
        if (!phrase->lex) die("out of memory");
        phrase->lex[phrase->n++] = next->lex[0];
    }
    return phrase ? phrase : first;
}

static qnode_t *parse_and(lexer_t *l) {
    qnode_t *first = parse_phrase(l), *and_ = NULL;
    for (;;) {
        skip_ws(l);
        if (*l->s != '&') break;
        l->s++;
        if (!and_) {
            and_ = node_new(Q_AND);
            node_add(and_, first);
        }
        node_add(and_, parse_phrase(l));
    }
    return and_ ? and_ : first;
}

static qnode_t *parse_or(lexer_t *l) {
    qnode_t *first = parse_and(l), *or_ = NULL;
    for (;;) {
        skip_ws(l);
        if (*l->s != '|') break;
        l->s++;
        if (!or_) {
            or_ = node_new(Q_OR);
            node_add(or_, first);
        }
        node_add(or_, parse_and(l));
    }
    return or_ ? or_ : first;
}

qnode_t *tsq_parse(const char *text) {
    lexer_t l = {text, text};
    skip_ws(&l);
    if (*l.s == '\0') return NULL;
    qnode_t *t = parse_or(&l);
    skip_ws(&l);
    if (*l.s != '\0') die("tsquery %s: unexpected %s", text, l.s);
    return t;
}

static void words_add(char ***w, int *n, const char *lex) {
    for (int i = 0; i < *n; i++)
        if (strcmp((*w)[i], lex) == 0) return;
    *w = realloc(*w, sizeof(char *) * (size_t)(*n + 1));
    if (!*w) die("out of memory");
    (*w)[(*n)++] = xstrdup(lex);
}

static void words_walk(const qnode_t *t, char ***w, int *n) {
    switch (t->type) {
    case Q_LEX:
    case Q_PHRASE:
        for (int i = 0; i < t->n; i++) words_add(w, n, t->lex[i]);
        break;
    case Q_AND:
    case Q_OR:
        for (int i = 0; i < t->n; i++) words_walk(t->kid[i], w, n);
        break;
    case Q_NOT: /* excluded words are no words of the rank */
        break;
    }
}

void tsq_words(const qnode_t *t, char ***words, int *n) {
    *words = NULL;
    *n = 0;
    if (t) words_walk(t, words, n);
}

/* ------------------------------------------------------------------ the plan */

int plan_write(FILE *f, const plan_t *plan) {
    for (int i = 0; i < plan->n; i++) {
        const shape_t *s = &plan->shapes[i];
        fprintf(f, "SHAPE\t%s\t%s\t%s\t%ld\t", s->name, s->q, s->tsquery, s->matches);
        for (int w = 0; w < s->nwords; w++) fprintf(f, "%s%s", w ? " " : "", s->words[w]);
        fputc('\n', f);
        for (int k = 0; k < SORTS; k++) {
            fprintf(f, "EXPECT\t%s\t", sort_names[k]);
            for (int j = 0; j < s->nexpect[k]; j++) fprintf(f, "%s%s", j ? " " : "", s->expect[k][j]);
            fputc('\n', f);
        }
    }
    return ferror(f) ? -1 : 0;
}

int plan_read(const char *path, plan_t *plan) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot read the plan %s (peers_expect writes it)", path);
    size_t cap = 1 << 16;
    char *line = xmalloc(cap);
    plan->n = 0;
    plan->shapes = NULL;
    shape_t *cur = NULL;
    while (fgets(line, (int)cap, f)) {
        if (strlen(line) == cap - 1) die("%s: a line too long", path);
        chomp(line);
        char *fl[6];
        int nf = split_tabs(line, fl, 6);
        if (strcmp(fl[0], "SHAPE") == 0 && nf == 6) {
            plan->shapes = realloc(plan->shapes, sizeof(shape_t) * (size_t)(plan->n + 1));
            if (!plan->shapes) die("out of memory");
            cur = &plan->shapes[plan->n++];
            memset(cur, 0, sizeof *cur);
            cur->name = xstrdup(fl[1]);
            cur->q = xstrdup(fl[2]);
            cur->tsquery = xstrdup(fl[3]);
            cur->matches = atol(fl[4]);
            cur->tree = tsq_parse(cur->tsquery);
            tsq_words(cur->tree, &cur->words, &cur->nwords);
            /* The plan's words are PostgreSQL's side of the same rule: they must agree. */
            int nw = 0;
            for (char *w = strtok(fl[5], " "); w; w = strtok(NULL, " ")) {
                if (nw >= cur->nwords || strcmp(cur->words[nw], w) != 0)
                    die("%s: the words of %s differ from the parser's", path, cur->name);
                nw++;
            }
            if (nw != cur->nwords) die("%s: the words of %s differ from the parser's", path, cur->name);
        } else if (strcmp(fl[0], "EXPECT") == 0 && nf == 3 && cur) {
            int k = 0;
            while (k < SORTS && strcmp(sort_names[k], fl[1]) != 0) k++;
            if (k == SORTS) die("%s: unknown sort %s", path, fl[1]);
            int n = 0;
            for (char *id = strtok(fl[2], " "); id && n < EXPECT_MAX; id = strtok(NULL, " ")) {
                if (strlen(id) >= ID_MAX) die("%s: an id too long", path);
                strcpy(cur->expect[k][n++], id);
            }
            cur->nexpect[k] = n;
        } else {
            die("%s: unexpected line %s", path, fl[0]);
        }
    }
    free(line);
    fclose(f);
    return 0;
}

/* ------------------------------------------------------------------ the measurement */

void run_opts_parse(run_opts_t *o, int argc, char **argv, int first) {
    o->requests = 40;
    o->budget_s = 120;
    o->only = NULL;
    for (int i = first; i < argc; i++) {
        if (strcmp(argv[i], "--requests") == 0 && i + 1 < argc) {
            o->requests = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) {
            o->budget_s = atof(argv[++i]);
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            o->only = argv[++i];
        } else {
            die("unknown argument %s", argv[i]);
        }
    }
    if (o->requests < 2 || o->requests > 80) die("--requests is 2..80");
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *sorted, int n, int p) {
    int i = (int)((double)p / 100.0 * n);
    return sorted[i < n ? i : n - 1];
}

/* A page is whole: it holds limit items whenever that many remain after its cursor
 * (remaining: the matches after the cursor), and says whether more remain. */
static int page_whole(const page_t *p, int limit, long remaining) {
    long want = remaining < limit ? remaining : limit;
    return p->n == want && p->has_next == (remaining > p->n);
}

static page_t page_a, page_b;

static int fetch(page_fn fn, void *ctx, const shape_t *s, int sort, int limit, const char *cursor,
                 page_t *out) {
    out->n = 0;
    out->has_next = 0;
    out->next[0] = '\0';
    if (fn(ctx, s, sort, limit, cursor, out) != 0) die("%s, %s: the engine failed", s->name, sort_names[sort]);
    if (out->n > limit) die("%s, %s: %d items for limit %d", s->name, sort_names[sort], out->n, limit);
    return 0;
}

static int verify(const char *label, const shape_t *s, int sort, page_fn fn, void *ctx) {
    char got[EXPECT_MAX][ID_MAX];
    int n = 0, whole = 1;
    fetch(fn, ctx, s, sort, 20, NULL, &page_a);
    whole &= page_whole(&page_a, 20, s->matches);
    for (int i = 0; i < page_a.n && n < EXPECT_MAX; i++) strcpy(got[n++], page_a.ids[i]);
    if (page_a.has_next) {
        fetch(fn, ctx, s, sort, 20, page_a.next, &page_b);
        whole &= page_whole(&page_b, 20, s->matches - page_a.n);
        for (int i = 0; i < page_b.n && n < EXPECT_MAX; i++) strcpy(got[n++], page_b.ids[i]);
    }
    int want = s->nexpect[sort], bad = -1;
    for (int i = 0; i < (n > want ? n : want); i++) {
        if (i >= n || i >= want || strcmp(got[i], s->expect[sort][i]) != 0) {
            bad = i;
            break;
        }
    }
    if (bad >= 0) {
        printf("VERIFY\t%s\t%s\tMISMATCH\titem %d of pages 1-2 (limit 20): %s, PostgreSQL has %s\n", s->name,
               sort_names[sort], bad + 1, bad < n ? got[bad] : "(none)",
               bad < want ? s->expect[sort][bad] : "(none)");
        fprintf(stderr, "\n*** %s: MISMATCH for %s, %s: item %d is %s, PostgreSQL's brute force has %s ***\n\n", label,
                s->name, sort_names[sort], bad + 1, bad < n ? got[bad] : "(none)",
                bad < want ? s->expect[sort][bad] : "(none)");
        return 1;
    }
    if (!whole) {
        printf("VERIFY\t%s\t%s\tNOT-WHOLE\tpages 1-2 at limit 20 hold %d and %d items of %ld matches\n", s->name,
               sort_names[sort], page_a.n, page_a.has_next ? page_b.n : 0, s->matches);
        fprintf(stderr, "\n*** %s: pages NOT WHOLE for %s, %s ***\n\n", label, s->name, sort_names[sort]);
        return 1;
    }
    printf("VERIFY\t%s\t%s\tok\t%d ids\n", s->name, sort_names[sort], n);
    return 0;
}

int run_all(const char *label, const plan_t *plan, page_fn fn, void *ctx, const run_opts_t *o) {
    int problems = 0;
    double *times = xmalloc(sizeof(double) * (size_t)o->requests);
    for (int si = 0; si < plan->n; si++) {
        const shape_t *s = &plan->shapes[si];
        if (o->only && !strstr(s->name, o->only)) continue;
        for (int sort = 0; sort < SORTS; sort++) {
            problems += verify(label, s, sort, fn, ctx);
            int n = 0, first_items = -1, cursor_items = -1, not_whole = 0;
            double t_start = now_ms();
            for (int j = 0; n < o->requests; j++) {
                int limit = 20 + 2 * (j % 20);
                double t0 = now_ms();
                fetch(fn, ctx, s, sort, limit, NULL, &page_a);
                times[n++] = now_ms() - t0;
                not_whole += !page_whole(&page_a, limit, s->matches);
                if (first_items < 0) first_items = page_a.n;
                if (n == o->requests) break;
                /* The page after it, through its cursor; when there is none (fewer matches
                 * than the limit), one more first page. */
                t0 = now_ms();
                if (page_a.has_next) {
                    fetch(fn, ctx, s, sort, limit + 1, page_a.next, &page_b);
                    times[n++] = now_ms() - t0;
                    not_whole += !page_whole(&page_b, limit + 1, s->matches - page_a.n);
                    if (cursor_items < 0) cursor_items = page_b.n;
                } else {
                    fetch(fn, ctx, s, sort, limit + 1, NULL, &page_b);
                    times[n++] = now_ms() - t0;
                    not_whole += !page_whole(&page_b, limit + 1, s->matches);
                }
                if (n >= 6 && now_ms() - t_start > o->budget_s * 1e3) break;
            }
            if (not_whole) {
                printf("VERIFY\t%s\t%s\tNOT-WHOLE\t%d of %d timed pages not whole\n", s->name, sort_names[sort],
                       not_whole, n);
                fprintf(stderr, "\n*** %s: %d timed pages NOT WHOLE for %s, %s ***\n\n", label, not_whole, s->name,
                        sort_names[sort]);
                problems++;
            }
            qsort(times, (size_t)n, sizeof(double), cmp_double);
            char ci[16];
            if (cursor_items >= 0) snprintf(ci, sizeof ci, "%d", cursor_items);
            else snprintf(ci, sizeof ci, "-");
            printf("RESULT\t%s\t%s\t%.3f\t%.3f\t%d\t%s\t%d\n", s->name, sort_names[sort], pct(times, n, 50),
                   pct(times, n, 99), first_items, ci, n);
            fprintf(stderr, "%s: %-40s %-10s p50 %8.2f ms  p99 %8.2f ms  items %d/%s  (%d requests)\n", label, s->name,
                    sort_names[sort], pct(times, n, 50), pct(times, n, 99), first_items, ci, n);
            fflush(stdout);
        }
    }
    free(times);
    return problems;
}
