/* cabundle: the certificate authorities deliveries trust.
 *
 * MARKET_WEBHOOK_CA_FILE adds to the system store rather than replacing it, but libcurl's
 * CURLOPT_CAINFO replaces its default bundle. So at start the system bundle and the extra
 * file are concatenated into one PEM file that libcurl is given instead.
 *
 * It must be a file, not CURLOPT_CAINFO_BLOB: libcurl caches the parsed store of a CA
 * file across connections (CURLOPT_CA_CACHE_TIMEOUT) but parses a blob again for every
 * new connection: the whole system bundle's certificates, every time. The
 * file is an anonymous memory file (memfd) named through /proc/self/fd, so nothing is
 * left on disk even after a kill -9; where that is not available, a temporary file that
 * is removed at exit. */
#ifndef MARKET_WEBHOOKD_CABUNDLE_H
#define MARKET_WEBHOOKD_CABUNDLE_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

#define CABUNDLE_PATH_MAX 64

typedef struct {
    char path[CABUNDLE_PATH_MAX]; /* for CURLOPT_CAINFO */
    int fd;
    bool unlink_at_close; /* path is a temporary file */
} cabundle;

/* Fills pem with system_bundle (skipped if it does not exist) followed by extra_file.
 * False, with one line in err, when extra_file is unreadable or holds no certificate. */
bool cabundle_build(const char *system_bundle, const char *extra_file, buf *pem, char *err,
                    size_t errlen);

/* Writes pem to an anonymous file and names it in b->path. */
bool cabundle_open(cabundle *b, const buf *pem, char *err, size_t errlen);
void cabundle_close(cabundle *b);

#endif
