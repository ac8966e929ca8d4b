/* bench/search_peers/pg.c: the catalogue through one COPY of market's products (pg.h). */
#include "pg.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

/* price * 10^6 is an exact integer for every price (currencies have at most 3 decimals);
 * checked before the copy. The lexemes of search as "lexeme US positions" joined by RS:
 * unnest(search) gives PostgreSQL's own lexemes and positions. */
static const char COPY_SQL[] =
    "COPY (SELECT id, (price * 1000000)::bigint,"
    "  array_to_string(tsvector_to_array(title_search), ' '),"
    "  (SELECT string_agg(u.lexeme || chr(31) || array_to_string(u.positions, ','), chr(30)) FROM unnest(search) u)"
    " FROM products WHERE status = 'published' AND mode = 'test'"
    " ORDER BY created_at DESC, id DESC) TO STDOUT";

/* COPY's text format: \\ \t \n \r \b \f \v escaped, \N for NULL (read as ""). */
static char *unescape(char *s) {
    if (strcmp(s, "\\N") == 0) {
        s[0] = '\0';
        return s;
    }
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r != '\\' || r[1] == '\0') {
            *w++ = *r;
            continue;
        }
        r++;
        switch (*r) {
        case 't': *w++ = '\t'; break;
        case 'n': *w++ = '\n'; break;
        case 'r': *w++ = '\r'; break;
        case 'b': *w++ = '\b'; break;
        case 'f': *w++ = '\f'; break;
        case 'v': *w++ = '\v'; break;
        default: *w++ = *r; break;
        }
    }
    *w = '\0';
    return s;
}

static void check_lexeme(const char *lex, const char *id) {
    for (const unsigned char *p = (const unsigned char *)lex; *p; p++)
        if (*p <= ' ') die("product %s: a lexeme with a space or a control character", id);
    if (*lex == '\0') die("product %s: an empty lexeme", id);
}

long pg_catalogue(pg_row_fn f, void *ctx) {
    const char *conninfo = getenv("MARKET_DB");
    if (!conninfo || !*conninfo) die("MARKET_DB is not set");
    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) != CONNECTION_OK) die("connect: %s", PQerrorMessage(c));
    PGresult *r = PQexec(c, "SET default_transaction_read_only = on; SET max_parallel_workers_per_gather = 0");
    PQclear(r);
    r = PQexec(c, "SELECT count(*) FROM products WHERE status = 'published' AND mode = 'test'"
                  " AND (price * 1000000 <> trunc(price * 1000000) OR price >= 9e12)");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) die("price check: %s", PQerrorMessage(c));
    if (atol(PQgetvalue(r, 0, 0)) != 0) die("prices with more than 6 decimals: the price key would not be exact");
    PQclear(r);
    r = PQexec(c, COPY_SQL);
    if (PQresultStatus(r) != PGRES_COPY_OUT) die("copy: %s", PQerrorMessage(c));
    PQclear(r);

    const char **at = xmalloc(sizeof(char *) * (PG_MAX_POS + 1));
    memset(at, 0, sizeof(char *) * (PG_MAX_POS + 1));
    int cap = 256;
    char **lex = xmalloc(sizeof(char *) * (size_t)cap);
    int *pos = xmalloc(sizeof(int) * (size_t)cap);
    int tcap = 64;
    char **title = xmalloc(sizeof(char *) * (size_t)tcap);
    long seq = 0;
    char *buf;
    int len;
    while ((len = PQgetCopyData(c, &buf, 0)) > 0) {
        if (buf[len - 1] == '\n') buf[len - 1] = '\0';
        char *fl[4];
        int nf = 0;
        for (char *p = buf; nf < 4;) {
            fl[nf++] = p;
            char *t = strchr(p, '\t');
            if (!t) break;
            *t = '\0';
            p = t + 1;
        }
        if (nf != 4) die("copy: a row of %d fields", nf);
        pg_row_t row;
        memset(&row, 0, sizeof row);
        row.seq = ++seq;
        row.id = unescape(fl[0]);
        row.price_key = strtoll(fl[1], NULL, 10);
        unescape(fl[2]);
        for (char *w = strtok(fl[2], " "); w; w = strtok(NULL, " ")) {
            if (row.ntitle == tcap) {
                tcap *= 2;
                title = realloc(title, sizeof(char *) * (size_t)tcap);
                if (!title) die("out of memory");
            }
            title[row.ntitle++] = w;
        }
        row.title = title;
        unescape(fl[3]);
        for (char *item = fl[3]; item && *item;) {
            char *rs = strchr(item, '\x1e');
            if (rs) *rs = '\0';
            char *us = strchr(item, '\x1f');
            if (!us) die("product %s: a lexeme without positions", row.id);
            *us = '\0';
            check_lexeme(item, row.id);
            for (char *p = us + 1; *p;) {
                int ps = (int)strtol(p, &p, 10);
                if (ps < 1 || ps > PG_MAX_POS) die("product %s: position %d", row.id, ps);
                if (row.npos == cap) {
                    cap *= 2;
                    lex = realloc(lex, sizeof(char *) * (size_t)cap);
                    pos = realloc(pos, sizeof(int) * (size_t)cap);
                    if (!lex || !pos) die("out of memory");
                }
                lex[row.npos] = item;
                pos[row.npos++] = ps;
                if (at[ps]) row.collisions++;
                else at[ps] = item;
                if (ps > row.maxpos) row.maxpos = ps;
                if (*p == ',') p++;
            }
            item = rs ? rs + 1 : NULL;
        }
        row.at = at;
        row.lex = lex;
        row.pos = pos;
        f(ctx, &row);
        for (int i = 0; i < row.npos; i++) at[pos[i]] = NULL;
        PQfreemem(buf);
    }
    if (len == -2) die("copy: %s", PQerrorMessage(c));
    r = PQgetResult(c);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) die("copy: %s", PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
    free(at);
    free(lex);
    free(pos);
    free(title);
    return seq;
}
