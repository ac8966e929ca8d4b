/* cli: the --help and --version of the two daemons in one place, so that market-api and
 * market-webhookd answer alike and help2man reads both pages the same way (Makefile,
 * target man). */
#include "cli.h"

#include <string.h>

/* The layout help2man reads: a usage line, the description, then titled sections. */
static void print_help(const cli_daemon *d, FILE *out)
{
    fprintf(out,
            "Usage: %s [--help | --version]\n\n%s\n"
            "Options:\n"
            "  -h, --help     print this help and exit\n"
            "      --version  print the version and exit\n\n"
            "Environment:\n",
            d->program, d->description);
    settings_write_help(out, d->settings);
    fprintf(out, "%s", d->environment);
}

int cli_daemon_args(int argc, char **argv, const cli_daemon *d, FILE *out, FILE *err)
{
    if (argc < 2)
        return -1;
    const char *arg = argv[1];
    int status = 0;
    if (argc == 2 && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) {
        print_help(d, out);
    } else if (argc == 2 && strcmp(arg, "--version") == 0) {
        fprintf(out, "%s %s\n", d->program, d->version);
    } else {
        fprintf(err, "%s: unexpected argument %s (see %s --help)\n", d->program,
                argc == 2 ? arg : argv[2], d->program);
        status = 2;
    }
    /* A full disk or a closed pipe must not pass for a printed help. */
    if (fflush(out) != 0 || ferror(out))
        return 1;
    return status;
}
