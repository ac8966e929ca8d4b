/* db_hosts: the hosts of a libpq connection string, one by one.
 *
 * libpq tries the hosts of a multi-host string (host=a,b target_session_attrs=read-write)
 * in turn, giving each its whole connect_timeout. When the first host has vanished from
 * the network (a primary cut off: packets dropped, nothing refused), every new connection
 * first waits that timeout out, even once the second host has been promoted. lib/db
 * instead opens every host at once and keeps the first that takes writes; to do that it
 * needs each host's own address, which db_hosts_parse reads with libpq's own parser and
 * libpq's own rules for matching host, hostaddr and port lists. */
#ifndef MARKET_DB_HOSTS_H
#define MARKET_DB_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

#define DB_HOSTS_MAX 8

typedef struct {
    char host[256];    /* "" when the string lists none (libpq's default then) */
    char hostaddr[64]; /* "" when the string lists none */
    char port[32];     /* "" when the string lists none */
} db_host;

typedef struct {
    int n; /* hosts listed; 1 when the string names one or none */
    db_host host[DB_HOSTS_MAX];
    int connect_timeout_s; /* -1: not in the string; 0: no limit; else seconds (>= 2) */
    bool writable_wanted;  /* target_session_attrs is read-write or primary */
} db_hosts;

/* Reads conninfo (key=value pairs or a postgresql:// URI). False when libpq would refuse
 * it (a syntax error, lists that do not match, a connect_timeout that is not a number),
 * when it lists more than DB_HOSTS_MAX hosts, or when a list leaves an entry empty (an
 * empty entry cannot be passed to one host on its own): the caller then lets libpq
 * connect as usual. Environment variables (PGHOST and the like) are not read. */
bool db_hosts_parse(const char *conninfo, db_hosts *out);

/* The value conninfo gives keyword (host, dbname...), read with libpq's own parser, into
 * out (always terminated, cut at len - 1 bytes); "" when the string does not give it. False
 * when libpq would refuse the string. For showing where a connection goes: never ask it
 * for the password. */
bool db_conninfo_value(const char *conninfo, const char *keyword, char *out, size_t len);

#endif
