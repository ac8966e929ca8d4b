/* market-admin site create and site remove (site.h): a site of its own on this host, and
 * its removal. Creating writes everything a site needs and runs its migrations; starting
 * it is left to the administrator (the commands are printed), as the package leaves the
 * default site's units to be started once its database exists. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin.h"
#include "buf.h"
#include "config.h"
#include "crypto.h"
#include "site.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct {
    const char *name, *db, *server_name, *files, *listen, *base_url;
    const char *workers, *cpu_quota, *memory_max;
    const char *extensions; /* MARKET_API_EXTENSIONS, or NULL: none (the specification's API) */
    const char *idle_exit;  /* MARKET_IDLE_EXIT: SITE_IDLE_EXIT unless --idle-exit */
} site_spec;

/* A site's pool stops after this many seconds without a request (MARKET_IDLE_EXIT) and
 * its socket starts it again at the next one: idle sites cost no process and no database
 * connection of their pool. Ten minutes: a shop in use keeps its pool, and the cold start
 * (the workers and their database sessions started) comes once per quiet spell. */
#define SITE_IDLE_EXIT "600"

/* A NAME argument: a usage error naming the rule it breaks. */
static void check_name(const char *command, const char *name)
{
    const char *why = site_name_problem(name);
    if (why != NULL)
        usage_fail("%s: invalid site name \"%s\": %s", command, name, why);
}

static void check_value(const char *command, const char *why)
{
    if (why != NULL)
        usage_fail("%s: %s", command, why);
}

/* The programs refuse to start on an extension they do not know: refuse it here, before
 * anything is written, rather than leave a site whose units fail at their first start. */
static void check_extensions(const char *cmd, const char *list)
{
    unsigned bits;
    char unknown[64];
    if (!config_parse_extensions(list, &bits, unknown, sizeof unknown))
        usage_fail("%s: --extensions: unknown extension \"%s\" (known: " CONFIG_EXTENSIONS_KNOWN
                   ")",
                   cmd, unknown);
    check_value(cmd, site_setting_problem(list));
}

static void check_spec(const site_spec *s)
{
    const char *cmd = "site create";
    check_name(cmd, s->name);
    check_value(cmd, site_setting_problem(s->db));
    check_value(cmd, site_server_name_problem(s->server_name));
    check_value(cmd, site_listen_problem(s->listen));
    check_value(cmd, site_setting_problem(s->base_url));
    if (s->files[0] != '/' || site_setting_problem(s->files) != NULL || strstr(s->files, "/.."))
        usage_fail("%s: --files takes an absolute path without \"..\"", cmd);
    if (s->cpu_quota != NULL)
        check_value(cmd, site_cpu_quota_problem(s->cpu_quota));
    if (s->memory_max != NULL)
        check_value(cmd, site_memory_max_problem(s->memory_max));
    if (s->workers != NULL)
        parse_count(cmd, "--workers", s->workers, 1, 256);
    if (s->extensions != NULL)
        check_extensions(cmd, s->extensions);
    parse_count(cmd, "--idle-exit", s->idle_exit, 0, 86400);
}

static char *read_template(const char *file)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", SITE_TEMPLATES, file);
    char *text = site_read(path);
    if (text == NULL)
        fail("site create: %s: %s (is the market package installed?)", path, strerror(errno));
    return text;
}

/* The server secret of the site, 48 random bytes in base64 as the package's own, once: an
 * existing one (a site removed without --purge, created again) is kept, since it keys the
 * cursors and download links and encrypts the webhook secrets already in its database. */
static void write_secret(const char *name, gid_t gid)
{
    char path[PATH_MAX];
    site_path_secret(name, path, sizeof path);
    if (access(path, F_OK) == 0) {
        printf("kept the existing secret %s\n", path);
        return;
    }
    unsigned char raw[48];
    crypto_random(raw, sizeof raw);
    buf b;
    buf_init(&b, 128);
    base64_encode(&b, raw, sizeof raw);
    site_write(path, b.data, 0640, 0, gid);
    buf_free(&b);
    printf("wrote %s (0640 root:market-%s)\n", path, name);
}

/* The product files: the site's user writes them, nginx (its group, inherited through
 * the set-group-ID bit by what the user creates) reads them, no other site does. An
 * existing folder given with --files is left as its owner made it. */
static void make_files_dir(const site_spec *s, uid_t uid)
{
    struct stat st;
    if (stat(s->files, &st) == 0) {
        printf("the files folder %s exists: left as it is\n", s->files);
        return;
    }
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", s->files);
    char *slash = strrchr(parent, '/');
    if (slash != NULL && slash != parent) {
        *slash = '\0';
        site_mkdirs(parent, 0755);
    }
    gid_t nginx = site_group(SITE_NGINX_GROUP);
    if (mkdir(s->files, 0750) != 0 || chown(s->files, uid, nginx) != 0 ||
        chmod(s->files, 02750) != 0)
        fail("site create: %s: %s", s->files, strerror(errno));
    printf("made the files folder %s (2750 market-%s:%s)\n", s->files, s->name, SITE_NGINX_GROUP);
}

#define SITE_SETTINGS_MAX 10

/* The settings a site's file sets (names[i] to values[i]); their count. secret and
 * metrics are the site's paths. The optional ones only when given: the template's
 * commented line (the default) stays otherwise, so that, say, a site created without
 * --extensions (or with a list naming none) has exactly the specification's API. */
static size_t env_settings(const site_spec *s, const char *secret, const char *metrics,
                           const char *names[SITE_SETTINGS_MAX],
                           const char *values[SITE_SETTINGS_MAX])
{
    /* A list that names no extension (only commas and blanks) writes no line. */
    const char *ext = s->extensions;
    unsigned bits;
    char unknown[64];
    if (ext != NULL && config_parse_extensions(ext, &bits, unknown, sizeof unknown) && bits == 0)
        ext = NULL;
    const char *fixed[][2] = {{"MARKET_DB", s->db},
                              {"MARKET_SECRET_FILE", secret},
                              {"MARKET_FILES_ROOT", s->files},
                              {"MARKET_METRICS_FILE", metrics},
                              {"MARKET_DOWNLOAD_BASE_URL", s->base_url},
                              {"MARKET_WORKERS", s->workers},
                              {"MARKET_API_EXTENSIONS", ext},
                              {"MARKET_IDLE_EXIT", s->idle_exit}};
    size_t n = 0;
    for (size_t i = 0; i < COUNT(fixed); i++) {
        if (fixed[i][1] == NULL)
            continue;
        names[n] = fixed[i][0];
        values[n++] = fixed[i][1];
    }
    return n;
}

static void write_env(const site_spec *s, const char *tmpl, gid_t gid)
{
    char secret[PATH_MAX];
    char metrics[PATH_MAX];
    site_path_secret(s->name, secret, sizeof secret);
    snprintf(metrics, sizeof metrics, "%s/market-api-%s/metrics", SITE_RUNSTATEDIR, s->name);
    const char *names[SITE_SETTINGS_MAX];
    const char *values[SITE_SETTINGS_MAX];
    size_t n = env_settings(s, secret, metrics, names, values);
    char *env = site_env_set(tmpl, names, values, n);
    buf b;
    buf_init(&b, strlen(env) + 1024);
    buf_printf(&b,
               "# The settings of the market site %s, written by market-admin site create.\n"
               "# Its units (market-api@%s, market-webhookd@%s, market-migrate@%s) read this\n"
               "# file; it is the packaged market.env with the site's own values. After a\n"
               "# change: systemctl restart market-api@%s market-webhookd@%s\n#\n",
               s->name, s->name, s->name, s->name, s->name, s->name);
    buf_puts(&b, env);
    char path[PATH_MAX];
    site_path_env(s->name, path, sizeof path);
    site_write(path, b.data, 0640, 0, gid);
    printf("wrote %s (0640 root:market-%s)\n", path, s->name);
    buf_free(&b);
    free(env);
}

/* The site's slice with its limits, and the drop-ins that put its services into it. */
static void write_units(const site_spec *s)
{
    char slice[64];
    site_slice_name(s->name, slice, sizeof slice);
    long workers = s->workers != NULL ? parse_count("site create", "--workers", s->workers, 1, 256)
                                      : sysconf(_SC_NPROCESSORS_ONLN);
    buf b;
    buf_init(&b, 2048);
    buf_printf(&b,
               "# The slice of the market site %s, written by market-admin site create (see\n"
               "# docs/operations.md, \"Many sites on one host\"): its pool, drainer and\n"
               "# migrations run in it. Without CPUQuota= the site still gets no more than\n"
               "# its fair share when the CPUs are busy (CPUWeight=100, as every other slice).\n"
               "# Its database connections: MARKET_WORKERS (%ld) + 2 for market-webhookd + 1\n"
               "# for market-admin = %ld at most; 1 while the site is idle (the drainer's).\n"
               "# After a change: systemctl daemon-reload\n"
               "[Unit]\nDescription=market site %s\nBefore=slices.target\n\n[Slice]\n",
               s->name, workers, workers + 3, s->name);
    buf_printf(&b, "%sCPUQuota=%s\n", s->cpu_quota != NULL ? "" : "#",
               s->cpu_quota != NULL ? s->cpu_quota : "100%");
    buf_printf(&b, "%sMemoryMax=%s\n", s->memory_max != NULL ? "" : "#",
               s->memory_max != NULL ? s->memory_max : "1G");
    char path[PATH_MAX];
    site_mkdirs(SITE_UNIT_DIR, 0755);
    site_path_slice(s->name, path, sizeof path);
    site_write(path, b.data, 0644, 0, 0);
    printf("wrote %s\n", path);
    buf_clear(&b);
    buf_printf(&b,
               "# Written by market-admin site create: the units of site %s run in its slice.\n"
               "[Service]\nSlice=%s\n",
               s->name, slice);
    for (size_t i = 0; i < SITE_SERVICES_N; i++) {
        snprintf(path, sizeof path, "%s/%s@%s.service.d", SITE_UNIT_DIR, site_services[i], s->name);
        site_mkdirs(path, 0755);
        strncat(path, "/site.conf", sizeof path - strlen(path) - 1);
        site_write(path, b.data, 0644, 0, 0);
    }
    buf_free(&b);
}

static void write_nginx(const site_spec *s, const char *tmpl)
{
    const char *keys[] = {"SITE", "SERVER_NAME", "LISTEN", "FILES_ROOT"};
    const char *values[] = {s->name, s->server_name, s->listen, s->files};
    const char *left = NULL;
    char *conf = site_fill(tmpl, keys, values, COUNT(keys), &left);
    if (conf == NULL)
        fail("site create: %s/nginx-site.conf: unknown placeholder %.20s", SITE_TEMPLATES, left);
    char path[PATH_MAX];
    site_mkdirs(SITE_NGINX_AVAILABLE, 0755);
    site_path_nginx(s->name, path, sizeof path);
    site_write(path, conf, 0644, 0, 0);
    printf("wrote %s (server_name %s)\n", path, s->server_name);
    free(conf);
}

/* The site's nginx logs, made before nginx does (whose master would make them 0644): the
 * site's requests are no other site's to read. 0640 root:adm, as Debian's own nginx logs;
 * logrotate rotates them with every .log file of /var/log/nginx (Debian's nginx rule). */
static void make_nginx_logs(const char *name)
{
    const char *dir = SITE_LOCALSTATEDIR "/log/nginx";
    if (access(dir, F_OK) != 0)
        return; /* no nginx here yet: it makes them itself */
    const struct group *adm = getgrnam("adm");
    gid_t gid = adm != NULL ? adm->gr_gid : 0;
    static const char *const kinds[] = {"access", "error"};
    for (size_t i = 0; i < COUNT(kinds); i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/market-%s.%s.log", dir, name, kinds[i]);
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
        if (fd < 0 || fchown(fd, 0, gid) != 0 || fchmod(fd, 0640) != 0)
            fail("site create: %s: %s", path, strerror(errno));
        close(fd);
    }
}

static void print_next_steps(const char *name)
{
    const char *n = name;
    printf(
        "\nsite %s is ready. To start it:\n"
        "  systemctl enable --now market-api@%s.socket market-api@%s.service "
        "market-webhookd@%s.service\n"
        "  ln -s %s/market-%s.conf %s/\n"
        "  nginx -t && systemctl reload nginx\n"
        "Its data and keys, as its user with its settings:\n"
        "  runuser -u market-%s -- sh -c 'set -a; . %s/%s.env; set +a; exec market-admin \"$@\"' "
        "market-admin key create ...\n",
        n, n, n, n, SITE_NGINX_AVAILABLE, n, SITE_NGINX_ENABLED, n, SITES_DIR, n);
}

static void create(const site_spec *s)
{
    site_need_root("site create");
    if (site_installed(s->name))
        fail("site create: site %s exists (market-admin site list); remove it first: "
             "market-admin site remove %s",
             s->name, s->name);
    /* The templates first: nothing is written when the package's files are missing. */
    char *env_tmpl = read_template("site.env");
    char *nginx_tmpl = read_template("nginx-site.conf");
    uid_t uid;
    gid_t gid;
    site_ensure_user(s->name, &uid, &gid);
    site_mkdirs(SITES_DIR, 0755);
    write_secret(s->name, gid);
    make_files_dir(s, uid);
    write_env(s, env_tmpl, gid);
    write_units(s);
    write_nginx(s, nginx_tmpl);
    make_nginx_logs(s->name);
    free(env_tmpl);
    free(nginx_tmpl);
    if (site_systemd_running()) {
        const char *none[] = {NULL};
        site_systemctl("daemon-reload", none);
    } else {
        printf("systemd is not running: no daemon-reload (the units are read when it starts)\n");
    }
    printf("running the migrations of site %s as market-%s\n", s->name, s->name);
    if (!site_migrate(s->name))
        fail("site create: the migrations of site %s failed (above); the site is written: "
             "once its database answers, run market-admin site upgrade %s",
             s->name, s->name);
    print_next_steps(s->name);
}

int site_create(int argc, char **argv)
{
    option opts[] = {{"--db", false, NULL},         {"--server-name", false, NULL},
                     {"--files", false, NULL},      {"--listen", false, NULL},
                     {"--base-url", false, NULL},   {"--workers", false, NULL},
                     {"--cpu-quota", false, NULL},  {"--memory-max", false, NULL},
                     {"--extensions", false, NULL}, {"--idle-exit", false, NULL}};
    const char *pos[1];
    if (parse_options("site create", argc, argv, opts, COUNT(opts), pos, 1) != 1)
        usage_fail("site create: NAME is required");
    site_spec s = {.name = pos[0]};
    check_name("site create", s.name);
    s.db = option_required("site create", &opts[0]);
    s.server_name = option_required("site create", &opts[1]);
    char files[PATH_MAX];
    snprintf(files, sizeof files, "%s/%s", SITE_FILES_BASE, s.name);
    s.files = opts[2].value != NULL ? opts[2].value : files;
    s.listen = opts[3].value != NULL ? opts[3].value : SITE_LISTEN;
    /* The first host name, for the default base URL of the download links. */
    char base_url[512];
    snprintf(base_url, sizeof base_url, "http://%.*s/files", (int)strcspn(s.server_name, " "),
             s.server_name);
    s.base_url = opts[4].value != NULL ? opts[4].value : base_url;
    s.workers = opts[5].value;
    s.cpu_quota = opts[6].value;
    s.memory_max = opts[7].value;
    s.extensions = opts[8].value;
    s.idle_exit = opts[9].value != NULL ? opts[9].value : SITE_IDLE_EXIT;
    check_spec(&s);
    create(&s);
    return 0;
}

/* --- remove -------------------------------------------------------------------------------- */

static void stop_units(const char *name)
{
    if (!site_systemd_running()) {
        printf("systemd is not running: no unit to stop or disable (stop the site's "
               "processes yourself if any run)\n");
        return;
    }
    char units[SITE_SERVICES_N + 1][64];
    const char *list[SITE_SERVICES_N + 2];
    snprintf(units[0], sizeof units[0], "market-api@%s.socket", name);
    list[0] = units[0];
    for (size_t i = 0; i < SITE_SERVICES_N; i++) {
        snprintf(units[i + 1], sizeof units[i + 1], "%s@%s.service", site_services[i], name);
        list[i + 1] = units[i + 1];
    }
    list[SITE_SERVICES_N + 1] = NULL;
    if (site_systemctl("disable", list) == 0 && site_systemctl("stop", list) == 0)
        printf("stopped and disabled the units of site %s\n", name);
}

/* The drop-ins, the slice and the nginx files site create wrote. */
static void remove_units_state(const char *name)
{
    char path[PATH_MAX];
    for (size_t i = 0; i < SITE_SERVICES_N; i++) {
        snprintf(path, sizeof path, "%s/%s@%s.service.d/site.conf", SITE_UNIT_DIR, site_services[i],
                 name);
        site_unlink(path);
        *strrchr(path, '/') = '\0';
        rmdir(path); /* only when nothing of the administrator's is left in it */
    }
    site_path_slice(name, path, sizeof path);
    site_unlink(path);
    snprintf(path, sizeof path, "%s/market-%s.conf", SITE_NGINX_ENABLED, name);
    if (site_unlink(path))
        printf("removed %s\n", path);
    site_path_nginx(name, path, sizeof path);
    site_unlink(path);
    printf("removed the slice, drop-ins and nginx file of site %s\n", name);
    if (site_systemd_running()) {
        const char *none[] = {NULL};
        site_systemctl("daemon-reload", none);
    }
}

static void purge(const char *name)
{
    char path[PATH_MAX];
    site_path_env(name, path, sizeof path);
    site_unlink(path);
    site_path_secret(name, path, sizeof path);
    site_unlink(path);
    printf("purged the settings and the secret of site %s\n", name);
}

int site_remove(int argc, char **argv)
{
    option opts[] = {{"--purge", true, NULL}};
    const char *pos[1];
    if (parse_options("site remove", argc, argv, opts, COUNT(opts), pos, 1) != 1)
        usage_fail("site remove: NAME is required");
    const char *name = pos[0];
    check_name("site remove", name);
    site_need_root("site remove");
    char env[PATH_MAX];
    site_path_env(name, env, sizeof env);
    if (!site_installed(name) && access(env, F_OK) != 0)
        fail("site remove: no site %s (market-admin site list)", name);
    stop_units(name);
    remove_units_state(name);
    if (opts[0].value != NULL)
        purge(name);
    else
        printf("kept %s and its secret (site remove --purge removes them)\n", env);
    printf("kept the user market-%s, the site's files and its database\n"
           "reload nginx: nginx -t && systemctl reload nginx\n",
           name);
    return 0;
}

/* --- dispatch ------------------------------------------------------------------------------ */

int cmd_site(int argc, char **argv)
{
    if (argc < 1)
        usage_fail("site: create, list, remove or upgrade (see market-admin site --help)");
    const char *sub = argv[0];
    if (strcmp(sub, "create") == 0)
        return site_create(argc - 1, argv + 1);
    if (strcmp(sub, "list") == 0)
        return site_list(argc - 1, argv + 1);
    if (strcmp(sub, "remove") == 0)
        return site_remove(argc - 1, argv + 1);
    if (strcmp(sub, "upgrade") == 0)
        return site_upgrade(argc - 1, argv + 1);
    usage_fail("site: unknown command %s (see market-admin site --help)", sub);
}
