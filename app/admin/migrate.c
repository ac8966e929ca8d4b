/* migrate: applies the .sql files of the migrations directory in name order, each once, each in its
 * own transaction, recorded in schema_migrations. A session advisory lock serialises concurrent
 * runs (two deploys at once, a test harness racing a developer): the second waits, then finds
 * everything applied. */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin.h"

/* Any constant works; it only has to be the same for every market-admin. */
#define MIGRATE_LOCK "SELECT pg_advisory_lock(7013620265)"

/* MARKET_MIGRATIONS_DIR, else ../sql/migrations beside the binary (a checkout's build/),
 * else ../share/market/sql beside it (an installed copy: PREFIX/bin and
 * PREFIX/share/market/sql, whatever PREFIX and DESTDIR were), so the tool works from any
 * working directory. With neither present the installed one is named in the error. */
static void migrations_dir(char *out, size_t outsz)
{
    static market_config cfg; /* only its migrations_dir */
    char err[160];
    if (!config_load_one(&cfg, "MARKET_MIGRATIONS_DIR", err, sizeof err))
        fail("migrate: %s", err);
    if (cfg.migrations_dir != NULL) {
        snprintf(out, outsz, "%s", cfg.migrations_dir);
        return;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0)
        fail("migrate: cannot find my own location: %s", strerror(errno));
    exe[n] = '\0';
    const char *bindir = dirname(exe);
    snprintf(out, outsz, "%s/../sql/migrations", bindir);
    if (access(out, F_OK) == 0)
        return;
    snprintf(out, outsz, "%s/../share/market/sql", bindir);
}

static int is_migration(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 4 && strcmp(e->d_name + n - 4, ".sql") == 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name); /* bytes, not the locale's collation */
}

static char *read_file(const char *path)
{
    buf b;
    buf_init(&b, 65536);
    if (!buf_append_file(&b, path))
        fail("migrate: %s: %s", path, strerror(errno));
    if (strlen(b.data) != b.len)
        fail("migrate: %s: contains a NUL byte", path);
    return b.data;
}

static bool already_applied(db *d, const char *name)
{
    const char *params[] = {name};
    db_result *res =
        sql_run(d, "migrate", "SELECT 1 FROM schema_migrations WHERE name = $1", 1, params);
    bool applied = db_rows(res) > 0;
    db_clear(res);
    return applied;
}

static void apply(db *d, const char *dir, const char *name)
{
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *sql = read_file(path);
    char what[PATH_MAX + 16];
    snprintf(what, sizeof what, "migrate: %s", name);

    sql_begin(d, what, DB_READ_COMMITTED);
    /* The file is trusted SQL of this repository, possibly many statements: the simple
     * query protocol runs them all inside the transaction. */
    db_result *res = db_exec_script(d, sql);
    if (!db_ok(res))
        fail("%s: %s", what, res != NULL ? db_message(res) : db_error(d));
    db_clear(res);
    free(sql);
    const char *params[] = {name};
    sql_do(d, what, "INSERT INTO schema_migrations (name, applied_at) VALUES ($1, now())", 1,
           params);
    sql_commit(d, what);
    printf("applied %s\n", name);
    fflush(stdout);
}

int cmd_migrate(int argc, char **argv)
{
    parse_options("migrate", argc, argv, NULL, 0, NULL, 0);
    char dir[PATH_MAX];
    migrations_dir(dir, sizeof dir);
    struct dirent **entries;
    int n = scandir(dir, &entries, is_migration, by_name);
    if (n < 0)
        fail("migrate: %s: %s", dir, strerror(errno));

    market_config cfg;
    db *d = admin_connect(0, &cfg);
    sql_do(d, "migrate: lock", MIGRATE_LOCK, 0, NULL);
    sql_do(d, "migrate",
           "CREATE TABLE IF NOT EXISTS schema_migrations ("
           " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
           0, NULL);
    int applied = 0;
    for (int i = 0; i < n; i++) {
        if (!already_applied(d, entries[i]->d_name)) {
            apply(d, dir, entries[i]->d_name);
            applied++;
        }
        free(entries[i]);
    }
    free(entries);
    /* A migration may rewrite the catalogue (010_covering_pages.sql): its rows are then on
     * pages the visibility map does not mark all-visible yet, and list pages read the table
     * for every row instead of their index alone until a vacuum passes, which a rewrite does
     * not prompt. VACUUM skips what is already all-visible, so this costs little otherwise;
     * ANALYZE gives the new columns and indexes their statistics. */
    if (applied > 0) {
        sql_do(d, "migrate: vacuum", "VACUUM (ANALYZE) products", 0, NULL);
        printf("vacuumed products\n");
    }
    db_close(d); /* ends the session, which releases the advisory lock */
    return 0;
}
