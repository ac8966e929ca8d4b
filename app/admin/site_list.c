/* market-admin site list and site upgrade (site.h): every site of this host with its
 * state, and the package upgrade's pass over them (debian/postinst runs it): each site's
 * migrations, then its pool and drainer restarted, one site after another, so that a
 * site whose migrations fail is stopped alone and the others carry on. */
#include <dirent.h>
#include <errno.h>
#include <json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admin.h"
#include "db_hosts.h"
#include "mem.h"
#include "site.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The names of the sites with a settings file, sorted; NULL-terminated, malloc'd. */
static char **site_names(void)
{
    struct dirent **entries;
    int n = scandir(SITES_DIR, &entries, NULL, alphasort);
    char **names = xcalloc((size_t)(n > 0 ? n : 0) + 1, sizeof *names);
    if (n < 0) {
        if (errno != ENOENT)
            fail("site: %s: %s", SITES_DIR, strerror(errno));
        return names;
    }
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        char *dot = strrchr(entries[i]->d_name, '.');
        if (dot != NULL && strcmp(dot, ".env") == 0) {
            *dot = '\0';
            /* A file an administrator put there by hand is no site of ours. */
            if (site_name_problem(entries[i]->d_name) == NULL)
                names[k++] = xstrdup(entries[i]->d_name);
        }
        free(entries[i]);
    }
    free(entries);
    return names;
}

static void free_names(char **names)
{
    for (size_t i = 0; names[i] != NULL; i++)
        free(names[i]);
    free(names);
}

/* The first line of a command's standard output, into out ("" when none). */
static void capture(const char *const *argv, char *out, size_t outsz)
{
    out[0] = '\0';
    int fds[2];
    if (pipe(fds) != 0)
        return;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    if (f != NULL) {
        if (fgets(out, (int)outsz, f) == NULL)
            out[0] = '\0';
        out[strcspn(out, "\n")] = '\0';
        fclose(f);
    } else {
        close(fds[0]);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

/* A unit's ActiveState (active, inactive, failed, activating...) from systemctl. */
static void unit_state(const char *unit, char *out, size_t outsz)
{
    const char *argv[] = {"systemctl", "show", "--property=ActiveState", "--value", unit, NULL};
    capture(argv, out, outsz);
    if (out[0] == '\0')
        snprintf(out, outsz, "unknown");
}

/* The value after "key" on its first uncommented line of path, up to ";" or the end. */
static void file_value(const char *path, const char *key, char *out, size_t outsz)
{
    snprintf(out, outsz, "-");
    char *text = site_read(path);
    if (text == NULL)
        return;
    size_t k = strlen(key);
    for (const char *line = text; *line != '\0';) {
        const char *p = line + strspn(line, " \t");
        size_t len = strcspn(p, "\n");
        if (strncmp(p, key, k) == 0) {
            const char *v = p + k + strspn(p + k, " \t=");
            snprintf(out, outsz, "%.*s", (int)strcspn(v, ";\n"), v);
            break;
        }
        line = p + len + (p[len] == '\n');
    }
    free(text);
}

/* host/dbname of a connection string (never its password). */
static void database_of(const char *conninfo, char *out, size_t outsz)
{
    char host[256], dbname[256];
    if (!db_conninfo_value(conninfo, "host", host, sizeof host) ||
        !db_conninfo_value(conninfo, "dbname", dbname, sizeof dbname)) {
        snprintf(out, outsz, "-");
        return;
    }
    snprintf(out, outsz, "%s/%s", host, dbname);
}

typedef struct {
    char pool[64], drainer[64], server_name[256], database[512], workers[16];
    char cpu_quota[32], memory_max[32], nginx[16], extensions[128];
} site_row;

/* The states of a site's pool and drainer units, from systemd when it runs. */
static void describe_states(const char *pool, const char *drainer, site_row *r)
{
    if (site_systemd_running()) {
        unit_state(pool, r->pool, sizeof r->pool);
        unit_state(drainer, r->drainer, sizeof r->drainer);
    } else {
        snprintf(r->pool, sizeof r->pool, "unknown (systemd not running)");
        snprintf(r->drainer, sizeof r->drainer, "unknown");
    }
}

/* The database, workers and extensions of a settings file. */
static void describe_settings(const char *path, site_row *r)
{
    char value[1024];
    char *env = site_read(path);
    /* A site's settings are readable by root and its user only: say so rather than show
     * a site without a database. */
    const char *unknown = env == NULL && errno == EACCES ? "? (root only)" : "-";
    if (env != NULL && site_env_get(env, "MARKET_DB", value, sizeof value))
        database_of(value, r->database, sizeof r->database);
    else
        snprintf(r->database, sizeof r->database, "%s", unknown);
    if (env == NULL || !site_env_get(env, "MARKET_WORKERS", r->workers, sizeof r->workers))
        snprintf(r->workers, sizeof r->workers, "%s", env == NULL ? unknown : "-");
    /* None set, or an empty list: the specification's API, shown as no value. */
    if (env == NULL ||
        !site_env_get(env, "MARKET_API_EXTENSIONS", r->extensions, sizeof r->extensions) ||
        r->extensions[0] == '\0')
        snprintf(r->extensions, sizeof r->extensions, "%s", env == NULL ? unknown : "-");
    free(env);
}

static void site_describe(const char *name, site_row *r)
{
    char path[PATH_MAX];
    if (!site_installed(name)) {
        snprintf(r->pool, sizeof r->pool, "removed (settings kept)");
        snprintf(r->drainer, sizeof r->drainer, "-");
    } else {
        char pool[96];
        char drainer[96];
        snprintf(pool, sizeof pool, "market-api@%s.service", name);
        snprintf(drainer, sizeof drainer, "market-webhookd@%s.service", name);
        describe_states(pool, drainer, r);
    }
    site_path_nginx(name, path, sizeof path);
    file_value(path, "server_name ", r->server_name, sizeof r->server_name);
    snprintf(path, sizeof path, "%s/market-%s.conf", SITE_NGINX_ENABLED, name);
    snprintf(r->nginx, sizeof r->nginx, "%s", access(path, F_OK) == 0 ? "enabled" : "disabled");
    site_path_env(name, path, sizeof path);
    describe_settings(path, r);
    site_path_slice(name, path, sizeof path);
    file_value(path, "CPUQuota=", r->cpu_quota, sizeof r->cpu_quota);
    file_value(path, "MemoryMax=", r->memory_max, sizeof r->memory_max);
}

/* The default site: the single-instance units with /etc/market/market.env. Its nginx part
 * is the snippet an administrator includes in a server of theirs, and it runs in
 * system.slice without limits of ours. */
static void default_describe(site_row *r)
{
    describe_states("market-api.service", "market-webhookd.service", r);
    describe_settings(SITE_SYSCONFDIR "/market/market.env", r);
    snprintf(r->server_name, sizeof r->server_name, "-");
    snprintf(r->cpu_quota, sizeof r->cpu_quota, "-");
    snprintf(r->memory_max, sizeof r->memory_max, "-");
    snprintf(r->nginx, sizeof r->nginx, "snippet");
}

/* extensions last: a script reading the columns by position before it came still reads
 * the same ones. */
static const char *const columns[] = {"name",     "pool",      "drainer",   "server_name",
                                      "database", "workers",   "cpu_quota", "memory_max",
                                      "nginx",    "extensions"};

static void row_values(const char *name, site_row *r, const char *v[COUNT(columns)])
{
    const char *all[] = {name,       r->pool,      r->drainer,    r->server_name, r->database,
                         r->workers, r->cpu_quota, r->memory_max, r->nginx,       r->extensions};
    memcpy(v, all, sizeof all);
}

/* One row: a line of text now, or an object of arr (printed whole at the end). */
static void print_row(const char *name, site_row *r, bool as_json, json_object *arr)
{
    const char *v[COUNT(columns)];
    row_values(name, r, v);
    json_object *o = json_object_new_object();
    for (size_t c = 0; c < COUNT(columns); c++) {
        if (!as_json)
            printf("%s%c", v[c], c + 1 < COUNT(columns) ? '\t' : '\n');
        json_object_object_add(o, columns[c],
                               strcmp(v[c], "-") == 0 ? NULL : json_object_new_string(v[c]));
    }
    json_object_array_add(arr, o);
}

int site_list(int argc, char **argv)
{
    option opts[] = {{"--json", true, NULL}};
    parse_options("site list", argc, argv, opts, COUNT(opts), NULL, 0);
    bool as_json = opts[0].value != NULL;
    char **names = site_names();
    json_object *arr = json_object_new_array();
    if (!as_json)
        for (size_t c = 0; c < COUNT(columns); c++)
            printf("%s%c", columns[c], c + 1 < COUNT(columns) ? '\t' : '\n');
    site_row r;
    if (access(SITE_SYSCONFDIR "/market/market.env", F_OK) == 0) {
        default_describe(&r);
        print_row("default", &r, as_json, arr);
    }
    for (size_t i = 0; names[i] != NULL; i++) {
        site_describe(names[i], &r);
        print_row(names[i], &r, as_json, arr);
    }
    if (as_json)
        printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN));
    json_object_put(arr);
    free_names(names);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

/* --- upgrade --------------------------------------------------------------------------------- */

static void site_units(const char *name, bool with_socket, char units[3][96], const char *list[4])
{
    size_t n = 0;
    if (with_socket)
        snprintf(units[n++], 96, "market-api@%s.socket", name);
    snprintf(units[n++], 96, "market-api@%s.service", name);
    snprintf(units[n++], 96, "market-webhookd@%s.service", name);
    for (size_t i = 0; i < n; i++)
        list[i] = units[i];
    list[n] = NULL;
}

/* One site: its migrations, then its services restarted if they ran; a failure stops the
 * site so that it does not serve from a schema its programs do not expect. */
static bool upgrade_one(const char *name)
{
    bool systemd = site_systemd_running();
    char units[3][96];
    const char *list[4];
    printf("site %s: migrations\n", name);
    fflush(stdout);
    if (!site_migrate(name)) {
        if (systemd) {
            site_units(name, true, units, list);
            site_systemctl("stop", list);
        }
        printf("site %s: the migrations failed: %s\n", name,
               systemd ? "its pool and drainer are stopped"
                       : "systemd is not running, nothing to stop");
        fflush(stdout);
        return false;
    }
    if (systemd) {
        site_units(name, false, units, list);
        /* In turn, each after the last: one site's pool at a time is restarting. */
        for (size_t i = 0; list[i] != NULL; i++) {
            const char *one[] = {list[i], NULL};
            site_systemctl("try-restart", one);
        }
        printf("site %s: migrated, its running services restarted\n", name);
    } else {
        printf("site %s: migrated (systemd is not running: nothing to restart)\n", name);
    }
    fflush(stdout);
    return true;
}

int site_upgrade(int argc, char **argv)
{
    const char *pos[64];
    int npos = parse_options("site upgrade", argc, argv, NULL, 0, pos, 64);
    for (int i = 0; i < npos; i++) {
        const char *why = site_name_problem(pos[i]);
        if (why != NULL)
            usage_fail("site upgrade: invalid site name \"%s\": %s", pos[i], why);
    }
    site_need_root("site upgrade");
    for (int k = 0; k < npos; k++) {
        char env[PATH_MAX];
        site_path_env(pos[k], env, sizeof env);
        if (access(env, F_OK) != 0)
            fail("site upgrade: no site %s (market-admin site list)", pos[k]);
    }
    char **names = site_names();
    buf failed;
    buf_init(&failed, 256);
    int done = 0;
    for (size_t i = 0; names[i] != NULL; i++) {
        bool wanted = npos == 0 && site_installed(names[i]);
        for (int k = 0; k < npos; k++)
            wanted = wanted || strcmp(pos[k], names[i]) == 0;
        if (!wanted)
            continue;
        done++;
        if (!upgrade_one(names[i]))
            buf_printf(&failed, " %s", names[i]);
    }
    free_names(names);
    if (failed.len > 0)
        fail("site upgrade: the migrations of these sites failed (see above):%s", failed.data);
    printf("site upgrade: %d site%s upgraded\n", done, done == 1 ? "" : "s");
    return 0;
}
