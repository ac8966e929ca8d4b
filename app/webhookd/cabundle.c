/* cabundle: the CA file libcurl is given, apart from the drainer so that it is unit tested
 * without a network: the bundles concatenated, and the file that holds them (a memfd, or
 * a temporary file where there is none). */
#include "cabundle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PEM_CERT_MARK "-----BEGIN CERTIFICATE-----"

/* Appends the whole file to b; false (errno set) if it cannot be read. */
static bool append_file(buf *b, const char *path)
{
    bool ok = buf_append_file(b, path);
    /* Keep the next file's first line apart from this file's last one. */
    if (ok && b->len > 0 && b->data[b->len - 1] != '\n')
        buf_putc(b, '\n');
    return ok;
}

bool cabundle_build(const char *system_bundle, const char *extra_file, buf *pem, char *err,
                    size_t errlen)
{
    buf_clear(pem);
    if (system_bundle != NULL && !append_file(pem, system_bundle) && errno != ENOENT) {
        snprintf(err, errlen, "system CA bundle %s: %s", system_bundle, strerror(errno));
        return false;
    }
    size_t system_len = pem->len;
    if (!append_file(pem, extra_file)) {
        snprintf(err, errlen, "MARKET_WEBHOOK_CA_FILE %s: %s", extra_file, strerror(errno));
        return false;
    }
    if (strstr(pem->data + system_len, PEM_CERT_MARK) == NULL) {
        snprintf(err, errlen, "MARKET_WEBHOOK_CA_FILE %s holds no PEM certificate", extra_file);
        return false;
    }
    return true;
}

static bool write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        len -= (size_t)n;
    }
    return true;
}

/* An anonymous memory file, readable through /proc/self/fd while the process lives. */
static bool open_memfd(cabundle *b, const buf *pem)
{
    b->fd = memfd_create("market-webhook-ca", MFD_CLOEXEC);
    if (b->fd < 0)
        return false;
    snprintf(b->path, sizeof b->path, "/proc/self/fd/%d", b->fd);
    if (write_all(b->fd, pem->data, pem->len) && access(b->path, R_OK) == 0)
        return true;
    close(b->fd);
    return false;
}

static bool open_tempfile(cabundle *b, const buf *pem)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || *dir == '\0' || strlen(dir) > CABUNDLE_PATH_MAX - 32)
        dir = "/tmp";
    snprintf(b->path, sizeof b->path, "%s/market-webhook-ca-XXXXXX", dir);
    b->fd = mkstemp(b->path);
    if (b->fd < 0)
        return false;
    b->unlink_at_close = true;
    if (write_all(b->fd, pem->data, pem->len))
        return true;
    cabundle_close(b);
    return false;
}

bool cabundle_open(cabundle *b, const buf *pem, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    b->fd = -1;
    if (open_memfd(b, pem) || open_tempfile(b, pem))
        return true;
    snprintf(err, errlen, "cannot write the combined CA bundle: %s", strerror(errno));
    return false;
}

void cabundle_close(cabundle *b)
{
    if (b->fd >= 0)
        close(b->fd);
    if (b->unlink_at_close)
        unlink(b->path);
    b->fd = -1;
    b->unlink_at_close = false;
}
