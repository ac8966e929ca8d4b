/* db_hosts: a multi-host connection string split into its hosts, apart from lib/db.c so
 * that it follows libpq's own parser and list rules and is tested without a server;
 * lib/db opens every host at once with it, and market-admin site list reads a site's
 * host and database name with it. */
#include "db_hosts.h"

#include <ctype.h>
#include <errno.h>
#include <libpq-fe.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Entries of a comma-separated list, as libpq counts them: "a,b" and "a," are two. */
static int count_entries(const char *list)
{
    int n = 1;
    for (const char *p = list; *p != '\0'; p++)
        n += *p == ',';
    return n;
}

/* Copies entry i of list into out; false when it is empty or does not fit. */
static bool copy_entry(const char *list, int i, char *out, size_t outsz)
{
    const char *start = list;
    for (; i > 0; i--)
        start = strchr(start, ',') + 1;
    const char *end = strchr(start, ',');
    size_t len = end != NULL ? (size_t)(end - start) : strlen(start);
    if (len == 0 || len >= outsz)
        return false;
    memcpy(out, start, len);
    out[len] = '\0';
    return true;
}

/* A list is given when it is there and not empty; libpq ignores an empty value. */
static const char *given(const char *value)
{
    return value != NULL && value[0] != '\0' ? value : NULL;
}

/* connect_timeout as libpq reads it: an integer, spaces allowed around it; at most zero
 * means no limit, and 1 is raised to libpq's minimum of 2. */
static bool parse_timeout(const char *text, int *out)
{
    if (text == NULL) {
        *out = -1;
        return true;
    }
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (end == text || *end != '\0' || errno != 0 || v > INT_MAX || v < INT_MIN)
        return false;
    *out = v <= 0 ? 0 : v < 2 ? 2 : (int)v;
    return true;
}

static bool hosts_from(const char *host, const char *hostaddr, const char *port, db_hosts *out)
{
    out->n = hostaddr != NULL ? count_entries(hostaddr) : host != NULL ? count_entries(host) : 1;
    if (out->n > DB_HOSTS_MAX)
        return false;
    if (host != NULL && count_entries(host) != out->n)
        return false; /* libpq: "could not match N host names to M hostaddr values" */
    int nports = port != NULL ? count_entries(port) : 0;
    if (nports > 1 && nports != out->n)
        return false; /* libpq: "could not match N port numbers to M hosts" */
    for (int i = 0; i < out->n; i++) {
        db_host *h = &out->host[i];
        if (host != NULL && !copy_entry(host, i, h->host, sizeof h->host))
            return false;
        if (hostaddr != NULL && !copy_entry(hostaddr, i, h->hostaddr, sizeof h->hostaddr))
            return false;
        if (port != NULL && !copy_entry(port, nports == 1 ? 0 : i, h->port, sizeof h->port))
            return false;
    }
    return true;
}

bool db_hosts_parse(const char *conninfo, db_hosts *out)
{
    memset(out, 0, sizeof *out);
    PQconninfoOption *options = PQconninfoParse(conninfo, NULL);
    if (options == NULL)
        return false;
    const char *host = NULL, *hostaddr = NULL, *port = NULL, *timeout = NULL, *target = NULL;
    for (const PQconninfoOption *o = options; o->keyword != NULL; o++) {
        if (strcmp(o->keyword, "host") == 0)
            host = given(o->val);
        else if (strcmp(o->keyword, "hostaddr") == 0)
            hostaddr = given(o->val);
        else if (strcmp(o->keyword, "port") == 0)
            port = given(o->val);
        else if (strcmp(o->keyword, "connect_timeout") == 0)
            timeout = given(o->val);
        else if (strcmp(o->keyword, "target_session_attrs") == 0)
            target = given(o->val);
    }
    bool ok =
        hosts_from(host, hostaddr, port, out) && parse_timeout(timeout, &out->connect_timeout_s);
    out->writable_wanted =
        target != NULL && (strcmp(target, "read-write") == 0 || strcmp(target, "primary") == 0);
    PQconninfoFree(options);
    return ok;
}

bool db_conninfo_value(const char *conninfo, const char *keyword, char *out, size_t len)
{
    if (len > 0)
        out[0] = '\0';
    PQconninfoOption *options = PQconninfoParse(conninfo, NULL);
    if (options == NULL)
        return false;
    for (const PQconninfoOption *o = options; o->keyword != NULL; o++) {
        if (strcmp(o->keyword, keyword) == 0 && o->val != NULL && len > 0)
            snprintf(out, len, "%s", o->val);
    }
    PQconninfoFree(options);
    return true;
}
