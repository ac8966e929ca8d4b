/* tools/settings-doc: writes what the documentation takes from the table of settings
 * (lib/settings.c), so that no list of settings is kept by hand:
 *
 *   settings-doc env       the settings file's blocks, after etc/market.env.in's header
 *                          (the Makefile renders the whole into market.env and
 *                          tools/man-env turns that into market.env(5))
 *   settings-doc markdown  the README's table of settings (make readme-settings puts it
 *                          in the README; tests/cli/settings.sh checks it is there)
 *   settings-doc names     the settings' names, one a line (tests/cli/settings.sh)
 */
#include <stdio.h>
#include <string.h>

#include "settings.h"

int main(int argc, char **argv)
{
    const char *what = argc == 2 ? argv[1] : "";
    if (strcmp(what, "env") == 0) {
        settings_write_env(stdout);
    } else if (strcmp(what, "markdown") == 0) {
        settings_write_markdown(stdout);
    } else if (strcmp(what, "names") == 0) {
        for (size_t i = 0; i < settings_count; i++)
            printf("%s\n", settings[i].name);
    } else {
        fprintf(stderr, "usage: settings-doc env | markdown | names\n");
        return 2;
    }
    /* A full disk must not pass for a written file. */
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
