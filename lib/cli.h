/* cli: the command line of the two daemons (market-api, market-webhookd), which take no
 * arguments but --help and --version: one function so that both answer alike, and
 * help2man can build their man pages from what they print (Makefile, target man). */
#ifndef MARKET_CLI_H
#define MARKET_CLI_H

#include <stdio.h>

#include "settings.h" /* SETTING_API, SETTING_WEBHOOKD */

/* What --help says of a daemon: its description (paragraphs ending with a line feed), the
 * settings it reads (SETTING_API or SETTING_WEBHOOKD: the list comes from lib/settings.c)
 * and a closing paragraph on them; the usage line and the options are the same for both. */
typedef struct {
    const char *program;
    const char *version;
    const char *description;
    unsigned settings;
    const char *environment;
} cli_daemon;

/* Reads argv: --help or -h prints the help on out, --version prints "program version" on
 * out; both return 0 (exit status). Any other argument prints one line on err and
 * returns 2. No argument returns -1: the program goes on. */
int cli_daemon_args(int argc, char **argv, const cli_daemon *d, FILE *out, FILE *err);

#endif
