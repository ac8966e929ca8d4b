/* prune_pass: a retention pass's bookkeeping without the database, apart from retention.c
 * so that which step runs next, when a pass is over and the line it logs are unit tested
 * without PostgreSQL. */
#include "prune_pass.h"

#include <stdio.h>
#include <string.h>

const char *const prune_table_names[PRUNE_TABLES] = {
    [PRUNE_EVENTS] = "events",
    [PRUNE_DELIVERIES] = "webhook_deliveries",
    [PRUNE_ATTEMPTS] = "webhook_attempts",
    [PRUNE_DOWNLOAD_TOKENS] = "download_tokens",
    [PRUNE_API_KEYS] = "api_keys",
    [PRUNE_IDEMPOTENCY_KEYS] = "idempotency_keys",
};

void prune_pass_start(prune_pass *p)
{
    memset(p, 0, sizeof *p);
    p->step = PRUNE_STEP_EVENTS;
}

bool prune_pass_next(prune_pass *p, int found, long long deleted)
{
    if (p->step >= PRUNE_STEPS)
        return false;
    p->batches++;
    if (found >= PRUNE_BATCH && deleted > 0)
        return true;
    p->step++;
    return false;
}

bool prune_pass_done(const prune_pass *p)
{
    return p->step >= PRUNE_STEPS;
}

long long prune_interval_ms(long retention_seconds)
{
    long long ms = (long long)retention_seconds * 1000 / 60;
    if (ms < 1000)
        return 1000;
    return ms > 60000 ? 60000 : ms;
}

/* Appends to out at *used; false when it does not fit. */
static bool append(char *out, size_t size, size_t *used, const char *text)
{
    size_t n = strlen(text);
    if (*used + n >= size)
        return false;
    memcpy(out + *used, text, n + 1);
    *used += n;
    return true;
}

bool prune_pass_arrays(const prune_pass *p, char *names, size_t names_size, char *counts,
                       size_t counts_size)
{
    size_t nu = 0, cu = 0;
    bool ok = append(names, names_size, &nu, "{") && append(counts, counts_size, &cu, "{");
    for (int t = 0; ok && t < PRUNE_TABLES; t++) {
        char n[24];
        snprintf(n, sizeof n, "%lld", p->pruned[t]);
        const char *sep = t > 0 ? "," : "";
        ok = append(names, names_size, &nu, sep) &&
             append(names, names_size, &nu, prune_table_names[t]) &&
             append(counts, counts_size, &cu, sep) && append(counts, counts_size, &cu, n);
    }
    return ok && append(names, names_size, &nu, "}") && append(counts, counts_size, &cu, "}");
}

void prune_format_duration(long seconds, char *out, size_t size)
{
    static const struct {
        long unit;
        char name;
    } units[] = {{86400, 'd'}, {3600, 'h'}, {60, 'm'}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (seconds > 0 && seconds % units[i].unit == 0) {
            snprintf(out, size, "%ld%c", seconds / units[i].unit, units[i].name);
            return;
        }
    }
    snprintf(out, size, "%lds", seconds);
}

void prune_pass_summary(const prune_pass *p, long retention_seconds, long long elapsed_ms,
                        char *out, size_t size)
{
    size_t used = 0;
    char part[96];
    out[0] = '\0';
    append(out, size, &used, "pruned");
    for (int t = 0; t < PRUNE_TABLES; t++) {
        snprintf(part, sizeof part, " %s=%lld", prune_table_names[t], p->pruned[t]);
        append(out, size, &used, part);
    }
    char period[24];
    prune_format_duration(retention_seconds, period, sizeof period);
    snprintf(part, sizeof part, " batches=%d duration_ms=%lld retention=%s", p->batches, elapsed_ms,
             period);
    append(out, size, &used, part);
}
