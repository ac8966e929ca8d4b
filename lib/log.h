/* log: one line per event on stderr (nginx/spawn-fcgi or the supervisor keep it).
 * Never pass a key, a token or a secret to these functions. */
#ifndef MARKET_LOG_H
#define MARKET_LOG_H

void log_set_program(const char *name);
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
