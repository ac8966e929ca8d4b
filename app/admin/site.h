/* market-admin site: many sites on one host, each with its own user, settings, secret,
 * socket, database, slice and nginx server (docs/operations.md, "Many sites on one
 * host"). site.c creates and removes a site, site_list.c lists them and upgrades them,
 * site_sys.c holds what they do to the system (users, files, commands, systemd), and
 * site_text.c the pure parts. */
#ifndef MARKET_ADMIN_SITE_H
#define MARKET_ADMIN_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "site_text.h"

/* The paths of the Debian layout, set by the Makefile from its directory variables (the
 * same that render the units, so that the two agree). */
#ifndef SITE_SYSCONFDIR
#define SITE_SYSCONFDIR "/etc"
#endif
#ifndef SITE_DATADIR
#define SITE_DATADIR "/usr/share"
#endif
#ifndef SITE_LOCALSTATEDIR
#define SITE_LOCALSTATEDIR "/var"
#endif
#ifndef SITE_RUNSTATEDIR
#define SITE_RUNSTATEDIR "/run"
#endif
#ifndef SITE_NGINX_GROUP
#define SITE_NGINX_GROUP "www-data"
#endif
#ifndef SITE_LISTEN
#define SITE_LISTEN "80"
#endif

#define SITES_DIR SITE_SYSCONFDIR "/market/sites"
#define SITE_UNIT_DIR SITE_SYSCONFDIR "/systemd/system"
#define SITE_NGINX_AVAILABLE SITE_SYSCONFDIR "/nginx/sites-available"
#define SITE_NGINX_ENABLED SITE_SYSCONFDIR "/nginx/sites-enabled"
#define SITE_FILES_BASE SITE_LOCALSTATEDIR "/lib/market/sites"
#define SITE_TEMPLATES SITE_DATADIR "/market"

/* The three services of a site, in the order they start; the socket comes with the pool. */
#define SITE_SERVICES_N 3
extern const char *const site_services[SITE_SERVICES_N]; /* "market-api", ... */

/* The paths of a site's files (snprintf into out). */
void site_path_env(const char *name, char *out, size_t outsz);
void site_path_secret(const char *name, char *out, size_t outsz);
void site_path_nginx(const char *name, char *out, size_t outsz);
void site_path_slice(const char *name, char *out, size_t outsz);
void site_user(const char *name, char *out, size_t outsz); /* market-NAME */

/* A site is installed while its slice or its nginx file exists (site remove deletes
 * them; its settings and secret may stay). */
bool site_installed(const char *name);

/* --- the system (site_sys.c) ------------------------------------------------------------ */

/* Fails unless running as root, naming the command. */
void site_need_root(const char *command);

/* True when systemd runs this machine (its runtime directory exists): only then does
 * market-admin call systemctl. Containers and CI run without it. */
bool site_systemd_running(void);

/* Runs argv (a NULL-terminated list; the program is looked up in PATH) with standard
 * output sent to standard error when quiet is false, else to /dev/null; returns its exit
 * status, or -1 when it could not run or died of a signal. */
int site_run(const char *const *argv, bool quiet);

/* Runs `systemctl VERB UNIT...` for the site's units (units: NULL-terminated); a
 * systemctl that fails is reported on stderr and its status returned. */
int site_systemctl(const char *verb, const char *const *units);

/* The whole of a file, malloc'd, or NULL (errno set). */
char *site_read(const char *path);

/* Writes text to path atomically (path.new, then rename) with mode, owner uid and group
 * gid; fails with one line on any error. */
void site_write(const char *path, const char *text, mode_t mode, uid_t uid, gid_t gid);

/* Removes path; a missing one is fine. True when it removed something. */
bool site_unlink(const char *path);

/* mkdir -p with mode for the directories it creates (owned by root). */
void site_mkdirs(const char *path, mode_t mode);

/* The system user and group market-NAME, created when missing (adduser, else useradd);
 * their ids. An existing user is used as it is when its primary group has its name. */
void site_ensure_user(const char *name, uid_t *uid, gid_t *gid);

/* The gid of a group, failing with one line when it does not exist. */
gid_t site_group(const char *group);

/* Runs `market-admin migrate` for a site, as its user with its settings file, as
 * market-migrate@NAME.service would; its output goes to standard error. True on
 * success. */
bool site_migrate(const char *name);

/* --- commands ----------------------------------------------------------------------------- */

int site_create(int argc, char **argv);  /* site.c */
int site_remove(int argc, char **argv);  /* site.c */
int site_list(int argc, char **argv);    /* site_list.c */
int site_upgrade(int argc, char **argv); /* site_list.c */

#endif
