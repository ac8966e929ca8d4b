#include "cli.h"

#include <string.h>

int cli_daemon_args(int argc, char **argv, const char *program, const char *version,
                    const char *usage, FILE *out, FILE *err)
{
    if (argc < 2)
        return -1;
    const char *arg = argv[1];
    int status = 0;
    if (argc == 2 && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) {
        fputs(usage, out);
    } else if (argc == 2 && strcmp(arg, "--version") == 0) {
        fprintf(out, "%s %s\n", program, version);
    } else {
        fprintf(err, "%s: unexpected argument %s (see %s --help)\n", program,
                argc == 2 ? arg : argv[2], program);
        status = 2;
    }
    /* A full disk or a closed pipe must not pass for a printed help. */
    if (fflush(out) != 0 || ferror(out))
        return 1;
    return status;
}
