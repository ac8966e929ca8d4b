/* What `market-admin site` does to the system: users, files, commands and systemd. Every
 * failure is one line naming what failed (fail), never a crash. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admin.h"
#include "buf.h"
#include "site.h"

const char *const site_services[SITE_SERVICES_N] = {"market-migrate", "market-api",
                                                    "market-webhookd"};

/* The PATH the commands run with: root's, whatever the caller's was. */
static char *const clean_env[] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C.UTF-8", NULL};

void site_path_env(const char *name, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s/%s.env", SITES_DIR, name);
}

void site_path_secret(const char *name, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s/%s.secret", SITES_DIR, name);
}

void site_path_nginx(const char *name, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s/market-%s.conf", SITE_NGINX_AVAILABLE, name);
}

void site_path_slice(const char *name, char *out, size_t outsz)
{
    char slice[64];
    site_slice_name(name, slice, sizeof slice);
    snprintf(out, outsz, "%s/%s", SITE_UNIT_DIR, slice);
}

void site_user(const char *name, char *out, size_t outsz)
{
    snprintf(out, outsz, "market-%s", name);
}

bool site_installed(const char *name)
{
    char path[PATH_MAX];
    site_path_slice(name, path, sizeof path);
    if (access(path, F_OK) == 0)
        return true;
    site_path_nginx(name, path, sizeof path);
    return access(path, F_OK) == 0;
}

void site_need_root(const char *command)
{
    if (geteuid() != 0)
        fail("%s: must run as root (it manages system users, %s and the units)", command,
             SITES_DIR);
}

bool site_systemd_running(void)
{
    return access(SITE_RUNSTATEDIR "/systemd/system", F_OK) == 0;
}

static int wait_status(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int site_run(const char *const *argv, bool quiet)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int out = quiet ? open("/dev/null", O_WRONLY) : STDERR_FILENO;
        if (out >= 0)
            dup2(out, STDOUT_FILENO);
        /* execvpe takes a non-const argv for historical reasons; it does not write it. */
        execvpe(argv[0], (char *const *)argv, clean_env);
        _exit(127);
    }
    return wait_status(pid);
}

int site_systemctl(const char *verb, const char *const *units)
{
    const char *argv[16] = {"systemctl", verb};
    size_t n = 2;
    for (size_t i = 0; units[i] != NULL && n < 15; i++)
        argv[n++] = units[i];
    argv[n] = NULL;
    int status = site_run(argv, false);
    if (status != 0)
        fprintf(stderr, "market-admin: systemctl %s %s...: exit status %d\n", verb, units[0],
                status);
    return status;
}

char *site_read(const char *path)
{
    buf b;
    buf_init(&b, 8192);
    if (!buf_append_file(&b, path)) {
        int saved = errno;
        buf_free(&b);
        errno = saved;
        return NULL;
    }
    return b.data;
}

void site_write(const char *path, const char *text, mode_t mode, uid_t uid, gid_t gid)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    /* Created with no access for anyone, then given its owner and mode: a secret is never
     * readable by others, not even for a moment. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        fail("%s: %s", tmp, strerror(errno));
    size_t len = strlen(text);
    bool ok = write(fd, text, len) == (ssize_t)len && fchown(fd, uid, gid) == 0 &&
              fchmod(fd, mode) == 0 && fsync(fd) == 0;
    int err = errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok || rename(tmp, path) != 0) {
        err = ok ? errno : err;
        unlink(tmp);
        fail("%s: %s", path, strerror(err));
    }
}

bool site_unlink(const char *path)
{
    if (unlink(path) == 0)
        return true;
    if (errno != ENOENT)
        fail("%s: %s", path, strerror(errno));
    return false;
}

void site_mkdirs(const char *path, mode_t mode)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1;; p++) {
        bool last = *p == '\0';
        if (*p != '/' && !last)
            continue;
        *p = '\0';
        if (mkdir(dir, mode) != 0 && errno != EEXIST)
            fail("%s: %s", dir, strerror(errno));
        if (last)
            return;
        *p = '/';
    }
}

gid_t site_group(const char *group)
{
    const struct group *g = getgrnam(group);
    if (g == NULL)
        fail("the group %s does not exist", group);
    return g->gr_gid;
}

/* adduser (Debian's), else useradd: a system user without a home or a shell, with a group
 * of its own name. */
static void create_user(const char *user, const char *name)
{
    char gecos[96];
    snprintf(gecos, sizeof gecos, "market site %s", name);
    const char *adduser[] = {"adduser",
                             "--system",
                             "--quiet",
                             "--group",
                             "--home",
                             "/nonexistent",
                             "--no-create-home",
                             "--shell",
                             "/usr/sbin/nologin",
                             "--gecos",
                             gecos,
                             user,
                             NULL};
    int status = site_run(adduser, false);
    if (status == 127 || status == -1) {
        const char *useradd[] = {"useradd",      "--system",
                                 "--user-group", "--home-dir",
                                 "/nonexistent", "--no-create-home",
                                 "--shell",      "/usr/sbin/nologin",
                                 "--comment",    gecos,
                                 user,           NULL};
        status = site_run(useradd, false);
    }
    if (status != 0)
        fail("site create: could not create the user %s (adduser/useradd exit status %d)", user,
             status);
    printf("created the system user %s\n", user);
}

void site_ensure_user(const char *name, uid_t *uid, gid_t *gid)
{
    char user[64];
    site_user(name, user, sizeof user);
    const struct passwd *pw = getpwnam(user);
    if (pw == NULL) {
        create_user(user, name);
        pw = getpwnam(user);
        if (pw == NULL)
            fail("site create: the user %s was created but cannot be found", user);
    } else {
        printf("the user %s exists: used as it is\n", user);
    }
    const struct group *g = getgrgid(pw->pw_gid);
    /* Another user's group would let its members read the site's secret. */
    if (g == NULL || strcmp(g->gr_name, user) != 0)
        fail("site create: the user %s exists but its group is not %s; remove it or choose "
             "another name",
             user, user);
    *uid = pw->pw_uid;
    *gid = pw->pw_gid;
}

/* In the child: becomes the site's user, as systemd's User= and Group= would. */
static noreturn void exec_migrate(const struct passwd *pw, const char *env_path)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0)
        _exit(126);
    self[n] = '\0';
    if (chdir("/") != 0 || initgroups(pw->pw_name, pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 ||
        setuid(pw->pw_uid) != 0) {
        fprintf(stderr, "market-admin: cannot become %s: %s\n", pw->pw_name, strerror(errno));
        _exit(126);
    }
    /* The settings as the units read them (EnvironmentFile=); the file is written for
     * both sh and systemd (site_setting_problem). */
    const char *argv[] = {"/bin/sh", "-c",     "set -a; . \"$1\"; set +a; exec \"$2\" migrate",
                          "sh",      env_path, self,
                          NULL};
    execve(argv[0], (char *const *)argv, clean_env);
    _exit(127);
}

bool site_migrate(const char *name)
{
    char user[64];
    char env_path[PATH_MAX];
    site_user(name, user, sizeof user);
    site_path_env(name, env_path, sizeof env_path);
    const struct passwd *pw = getpwnam(user);
    if (pw == NULL) {
        fprintf(stderr, "market-admin: site %s: the user %s does not exist\n", name, user);
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0)
        exec_migrate(pw, env_path);
    return wait_status(pid) == 0;
}
