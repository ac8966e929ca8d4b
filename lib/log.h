/* log: one line per event on stderr (spawn-fcgi, systemd's journal or a supervisor keep
 * it). Each line is "TIME PROGRAM[PID] LEVEL: MESSAGE" and never holds a line break, so
 * journald and logrotate take the stream as it is. Never pass a key, a token or a secret
 * to these functions. */
#ifndef MARKET_LOG_H
#define MARKET_LOG_H

#include <stddef.h>

void log_set_program(const char *name);
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One event, one line: every control character of s (line breaks, tabs, escapes: a
 * database's multi-line message, a client's header) becomes a space, runs of spaces one,
 * and trailing spaces go. */
void log_fold(char *s);

#endif
