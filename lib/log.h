/* log: one line per event on stderr (spawn-fcgi, systemd's journal or a supervisor keep
 * it). Each line is "TIME PROGRAM[PID] LEVEL: MESSAGE" and never holds a line break, so
 * journald and logrotate take the stream as it is. Never pass a key, a token or a secret
 * to these functions. */
#ifndef MARKET_LOG_H
#define MARKET_LOG_H

#include <stdbool.h>
#include <stddef.h>

void log_set_program(const char *name);

/* While a request is served: its id, which then begins every line ("request ID: ..."),
 * whichever part of the program logs it (lib/db losing its connection, say). NULL when
 * the request ends. The id is kept by reference: it must live until it is cleared. */
void log_set_request(const char *id);
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Batching, for a process that logs a line per request: while on, log_info lines are
 * collected and written together (at most 4 KiB, or a second old, at a time), which
 * spares a busy worker a write(2) per request. log_error writes at once, after what was
 * collected. The process calls log_flush when it is about to wait (market-api: when no
 * connection is waiting), so a quiet worker never holds lines back; a worker killed
 * under load loses the lines of its last moment (nginx's access log has the requests
 * too). log_batch(false) flushes. */
void log_batch(bool on);
void log_flush(void);
bool log_pending(void);
bool log_stale(void); /* lines have waited a second or more */

/* One event, one line: every control character of s (line breaks, tabs, escapes: a
 * database's multi-line message, a client's header) becomes a space, runs of spaces one,
 * and trailing spaces go. */
void log_fold(char *s);

#endif
