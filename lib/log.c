/* log: the programs' one writer of log lines, so that every line has the same head and
 * stays one line (log_fold), and so that a busy worker's lines go out together in one
 * write (log_batch) that the other workers sharing the pipe never cut into. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *program = "market";

static const char *request_id; /* NULL outside a request */

void log_set_program(const char *name)
{
    program = name;
}

void log_set_request(const char *id)
{
    request_id = id;
}

void log_fold(char *s)
{
    size_t n = 0;
    for (const char *p = s; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f)
            c = ' ';
        if (c == ' ' && n > 0 && s[n - 1] == ' ')
            continue;
        s[n++] = (char)c;
    }
    while (n > 0 && s[n - 1] == ' ')
        n--;
    s[n] = '\0';
}

/* Lines collected by a busy process (log_batch), written out together. At most PIPE_BUF
 * bytes, so that one write of them stays whole on a pipe that several workers share. */
#define BATCH_BYTES 4096
#define BATCH_MAX_AGE_SECONDS 1

static char batch[BATCH_BYTES];
static size_t batch_len;
static time_t batch_since; /* when the oldest line in batch was logged */
static bool batching;

/* Writes all of data to stderr; a line that cannot be written is dropped, never retried
 * in a loop that could block the worker for long. */
static void write_out(const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

void log_flush(void)
{
    write_out(batch, batch_len);
    batch_len = 0;
}

bool log_pending(void)
{
    return batch_len > 0;
}

bool log_stale(void)
{
    return batch_len > 0 && time(NULL) - batch_since >= BATCH_MAX_AGE_SECONDS;
}

void log_batch(bool on)
{
    if (!on)
        log_flush();
    batching = on;
}

/* "TIME PROGRAM[PID] LEVEL: " with the time formatted once a second. */
static size_t line_head(char *out, size_t outsz, const char *level, time_t now)
{
    static time_t stamp_time = -1;
    static char stamp[32];
    if (now != stamp_time) {
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
        stamp_time = now;
    }
    int n = snprintf(out, outsz, "%s %s[%ld] %s: ", stamp, program, (long)getpid(), level);
    return n > 0 ? (size_t)n : 0;
}

static void log_line(const char *level, bool urgent, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void log_line(const char *level, bool urgent, const char *fmt, va_list ap)
{
    time_t now = time(NULL);
    char line[1200];
    size_t head = line_head(line, sizeof line, level, now);
    if (request_id != NULL) {
        int n = snprintf(line + head, sizeof line - head, "request %.64s: ", request_id);
        head += n > 0 ? (size_t)n : 0;
    }
    char *message = line + head;
    vsnprintf(message, sizeof line - head - 1, fmt, ap);
    log_fold(message);
    size_t len = head + strlen(message);
    line[len++] = '\n';

    if (!batching || urgent) {
        /* In order: what was collected before this line goes first. */
        log_flush();
        write_out(line, len);
        return;
    }
    if (batch_len + len > sizeof batch)
        log_flush();
    if (batch_len == 0)
        batch_since = now;
    /* batch holds bytes written with their length, not a string: no NUL is wanted.
     * NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
    memcpy(batch + batch_len, line, len);
    batch_len += len;
    if (now - batch_since >= BATCH_MAX_AGE_SECONDS)
        log_flush();
}

void log_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("info", false, fmt, ap);
    va_end(ap);
}

void log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("error", true, fmt, ap);
    va_end(ap);
}
