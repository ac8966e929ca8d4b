/* prom: the Prometheus text exposition format (version 0.0.4), written into a buf.
 *
 * A family is its "# HELP" and "# TYPE" lines followed by its samples; each sample is
 * "name{label="value",...} value" on one line. Label values and help texts are escaped
 * as the format says (backslash, double quote, line feed), so no value can break a line
 * or a label. Names are the caller's constants and must match [a-zA-Z_:][a-zA-Z0-9_:]*. */
#ifndef MARKET_PROM_H
#define MARKET_PROM_H

#include <stdint.h>

#include "buf.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* type: "counter", "gauge" or "histogram". */
void prom_family(buf *b, const char *name, const char *type, const char *help);

/* labels: name, value pairs ending with NULL (NULL alone for none). */
void prom_u64(buf *b, const char *name, const char *const *labels, uint64_t value);
void prom_f64(buf *b, const char *name, const char *const *labels, double value);

/* The samples of one histogram: bucket counts (not cumulative) for each upper bound of
 * bounds[0..n) and one more for +Inf; sum in the unit of the bounds. labels as above,
 * without "le". */
void prom_histogram(buf *b, const char *name, const char *const *labels, const double *bounds,
                    int n, const uint64_t *counts, double sum);

#endif
