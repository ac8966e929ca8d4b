/* worker: what a market-api worker sets up once, before its first request: the
 * settings, the keys derived from the server secret, the route table, the database
 * handle with its session settings, the catalogue's page cache and the shared counters. */
#ifndef MARKET_WORKER_H
#define MARKET_WORKER_H

#include <stdbool.h>

#include "request.h"

/* Loads the settings and sets up everything a request needs; false (said on standard
 * error) when the worker cannot start. */
bool worker_init(worker *w, const char *version);

#endif
