/* bench/search_peers/pg.h: the catalogue as the engines' loaders read it from market's
 * PostgreSQL (one COPY, read only), with the lexemes PostgreSQL itself made, so that every
 * engine indexes the very same terms at the very same positions. */
#ifndef SEARCH_PEERS_PG_H
#define SEARCH_PEERS_PG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PG_MAX_POS 16383 /* a tsvector's positions stop there */

/* One published test-mode product. Rows come in the order of the newest sort (created_at
 * DESC, id DESC): seq 1 is the newest, so an engine's row id or docid can follow it. */
typedef struct {
    long seq;
    const char *id;
    int64_t price_key;       /* price * 10^6, exact (checked): the key of the price sorts */
    char **title;            /* the distinct lexemes of title_search */
    int ntitle;
    const char **at;         /* at[p], p in 1..maxpos: the lexeme of search at position p, or NULL */
    int maxpos;
    int collisions;          /* positions that held two lexemes (only the first is in at[]) */
    char **lex;              /* every (lexeme, position) pair of search */
    int *pos;
    int npos;
} pg_row_t;

typedef void (*pg_row_fn)(void *ctx, const pg_row_t *row);

/* Reads every row of MARKET_DB (env) through f; returns the number of rows. Dies on error. */
long pg_catalogue(pg_row_fn f, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
