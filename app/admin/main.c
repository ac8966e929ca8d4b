/* market-admin: command dispatch and help.
 *
 * The help of every command lives in one table: `market-admin --help` prints all of it,
 * `market-admin COMMAND --help` (or `help COMMAND`) the entries of that command, and
 * help2man builds market-admin(1) from the former (Makefile, target man). */
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "crypto.h"
#include "settings.h"

typedef struct {
    const char *command;  /* the word after market-admin; "key" has four entries */
    const char *synopsis; /* what follows "market-admin " */
    const char *text;     /* lines indented by six spaces */
} help_entry;

static const help_entry help[] = {
    {"migrate", "migrate",
     "      Apply the migrations (*.sql) in name order, each once and in its own transaction\n"
     "      (recorded in schema_migrations; safe to run concurrently). The directory is\n"
     "      MARKET_MIGRATIONS_DIR, else ../sql/migrations beside this binary (a checkout),\n"
     "      else ../share/market/sql beside it (an installed copy: /usr/share/market/sql).\n"},
    {"import", "import FILE|-",
     "      Load a JSON document of accounts, sellers, products (with their tiers and files),\n"
     "      orders and reviews in one transaction, upserting by id. An invalid document\n"
     "      changes nothing; the error names the first bad path. Shows its progress (see\n"
     "      Progress below).\n"},
    {"seed",
     "seed --mode test|live --products N [--sellers N] [--orders N] [--random-seed N]\n"
     "       [--jobs N] [--files] [--replace] [--no-vacuum]",
     "      Write a synthetic, deterministic catalogue (same seed, same data, whatever\n"
     "      --jobs). Sellers default to max(1, N/100), orders to 0 (buyers: max(1,\n"
     "      orders/10)). --files also writes each product's file under MARKET_FILES_ROOT.\n"
     "      Four phases, holding a lock that makes a second seed of the mode wait:\n"
     "      (1) accounts and sellers, upserted and committed; (2) products, tiers and files\n"
     "      in --jobs slices (default: the number of cores), each on its own connection and\n"
     "      in its own transaction, committed together once all are written (a superuser\n"
     "      skips the foreign-key checks of these generated rows, consistent by\n"
     "      construction); from 100000 products on, the products' secondary indexes are\n"
     "      dropped before phase 2 and built again after it (lists and searches are slow\n"
     "      meanwhile; a seed that dies in between leaves their definitions, and the next\n"
     "      seed builds them first); (3) orders, in\n"
     "      one transaction; (4) VACUUM (ANALYZE) (--no-vacuum: ANALYZE only). Seeding a\n"
     "      mode that already has seeded rows is refused unless --replace: its seeded orders\n"
     "      are then deleted in phase 1, its seeded products by the slices that replace\n"
     "      them. A failed seed leaves no catalogue rows of this run (a replaced catalogue\n"
     "      stays); accounts and sellers may remain, and with --replace the previous seeded\n"
     "      orders are gone; a failure in phase 3 leaves the new catalogue without orders\n"
     "      (seed --replace starts over). Shows its progress (see Progress below).\n"},
    {"key", "key create --account ID --mode test|live --access read-only|read-write",
     "      Print a new API key (the only time it is shown).\n"},
    {"key", "key rotate KEY|-",
     "      Print a new key with the same account, mode and access; the old one expires\n"
     "      after MARKET_KEY_GRACE seconds (default 86400). An expired, revoked or already\n"
     "      rotated key cannot be rotated. \"-\" reads the key from standard input.\n"},
    {"key", "key revoke KEY|-",
     "      Revoke a key at once (revoking a revoked key keeps its first revocation time).\n"},
    {"key", "key list --account ID [--json]",
     "      A line per key: prefix, mode, access, created_at, expires_at, revoked_at.\n"},
    {"refund", "refund ORDER_ID",
     "      Mark a paid order refunded and revoke all its download links.\n"},
    {"payout", "payout --seller HANDLE --amount 12.34 --currency USD --mode test|live",
     "      Record a sent payout and print its id.\n"},
    {"deliveries",
     "deliveries [--status pending|delivered|failed|endpoint_deleted] [--failed]\n"
     "       [--account ID] [--since DATE-TIME] [--limit N] [--json]",
     "      A line per retained webhook delivery, newest first: event, type, subscription,\n"
     "      status, attempts, last_status (HTTP), last_error, next_attempt_at (while\n"
     "      pending), account, mode, created_at (queued). --failed is --status failed;\n"
     "      --since an RFC 3339 date-time (2026-11-26T10:00:00Z): deliveries queued at or\n"
     "      after it. --limit N (1..1000000): the newest N only, and a note on standard\n"
     "      error when there are more.\n"},
    {"redeliver", "redeliver EVENT_ID",
     "      Queue that event's deliveries again now, with attempts reset to 0 so the full\n"
     "      retry schedule applies (the attempt history is kept). Deliveries ended because\n"
     "      their subscription was deleted stay ended.\n"},
    {"webhooks", "webhooks list [--account ID] [--mode test|live] [--json]",
     "      A line per subscription not deleted: id, account, mode, status, url, events\n"
     "      (comma-separated), created_at.\n"},
    {"webhooks", "webhooks disable|enable SUBSCRIPTION_ID",
     "      Stop or resume deliveries to it, as POST /v1/webhooks/:id with disabled does:\n"
     "      nothing is queued or sent while it is disabled.\n"},
    {"webhooks", "webhooks delete SUBSCRIPTION_ID",
     "      Delete it, as DELETE /v1/webhooks/:id does: its pending deliveries end as\n"
     "      endpoint_deleted, unsent.\n"},
    {"site",
     "site create NAME --db CONNINFO --server-name HOST [--files DIR] [--listen ADDR]\n"
     "       [--base-url URL] [--workers N] [--cpu-quota PCT] [--memory-max SIZE]\n"
     "       [--extensions LIST] [--idle-exit SECONDS]",
     "      As root: a site of its own on this host, beside the default one (the\n"
     "      single-instance units), isolated from the other sites. It creates the system\n"
     "      user market-NAME (group market-NAME) and writes, each readable by that user only\n"
     "      (0640 root:market-NAME), the site's settings /etc/market/sites/NAME.env (the\n"
     "      packaged market.env with MARKET_DB=CONNINFO, its secret, MARKET_FILES_ROOT=DIR,\n"
     "      default /var/lib/market/sites/NAME, made 2750 market-NAME:www-data, its metrics\n"
     "      file /run/market-api-NAME/metrics, MARKET_DOWNLOAD_BASE_URL=URL, default\n"
     "      http://HOST/files, MARKET_WORKERS=N, MARKET_API_EXTENSIONS=LIST,\n"
     "      MARKET_IDLE_EXIT=SECONDS) and its server secret /etc/market/sites/NAME.secret\n"
     "      (kept if it exists); the slice\n"
     "      /etc/systemd/system/market-sites-NAME.slice (a hyphen of NAME written \"_\") with\n"
     "      CPUQuota=PCT (a share of one CPU: 50%, 200%) and MemoryMax=SIZE (512M, 2G) and\n"
     "      the drop-ins that put the site's units into it; and the nginx server\n"
     "      /etc/nginx/sites-available/market-NAME.conf (server_name HOST, listen ADDR,\n"
     "      default 80). Then it runs the site's migrations as market-NAME and prints the\n"
     "      three commands that start the site (units market-api@NAME.socket,\n"
     "      market-api@NAME.service, market-webhookd@NAME.service; the nginx file enabled).\n"
     "      NAME: 1 to 24 lowercase letters, digits and hyphens, starting with a letter,\n"
     "      not \"default\". LIST: the extensions of the public interface the site turns on,\n"
     "      comma-separated (webhook-management: the routes that manage webhook\n"
     "      subscriptions and read events); an unknown name is refused before anything is\n"
     "      written; without it the site serves exactly the specification's six routes.\n"
     "      SECONDS (MARKET_IDLE_EXIT, default 600; 0: never): the site's pool stops after\n"
     "      that long without a request and its socket starts it again at the next one. The\n"
     "      site's database connections: N (default: the cores) + 2 for the drainer + 1 for\n"
     "      market-admin at most, 1 while the site is idle. systemctl is called only when\n"
     "      systemd runs.\n"},
    {"site", "site list [--json]",
     "      A line per site, the default one first (the single-instance units, when\n"
     "      /etc/market/market.env exists): name, pool and drainer (their units' state from\n"
     "      systemctl; \"unknown (systemd not running)\" without it; \"removed (settings\n"
     "      kept)\" after site remove), server_name, database (host/dbname), workers,\n"
     "      cpu_quota, memory_max, nginx (enabled or disabled: its sites-enabled link),\n"
     "      extensions (MARKET_API_EXTENSIONS; \"-\": none).\n"},
    {"site", "site remove NAME [--purge]",
     "      As root: stop and disable the site's units (when systemd runs), remove its\n"
     "      slice, drop-ins and nginx file (and the sites-enabled link); with --purge its\n"
     "      settings and secret too. The user, the files and the database stay.\n"},
    {"site", "site upgrade [NAME...]",
     "      As root: for each site (default: every site not removed), one after another,\n"
     "      run its migrations as its user, then restart its pool and drainer if they run\n"
     "      (systemctl try-restart, when systemd runs). A site whose migrations fail is\n"
     "      stopped (its socket, pool and drainer) and named; the others go on. Exit\n"
     "      status 1 when any failed. An upgrade of the package runs it.\n"},
};

static const char help_head[] =
    "Usage: market-admin COMMAND [ARGS]\n"
    "       market-admin COMMAND --help\n"
    "       market-admin --help | --version\n"
    "\n"
    "The administration tool of market: it applies the database's migrations, loads and\n"
    "seeds catalogues, issues, rotates and revokes API keys, stands in for the payment\n"
    "system (refunds, payouts) and the seller dashboard (webhook deliveries), and\n"
    "creates, lists, upgrades and removes the sites of a host (site).\n"
    "\n";

static const char help_tail[] =
    "\n"
    "Lists (key list, deliveries, webhooks list):\n"
    "  A header row naming the columns, then a row per line, tab-separated, \"-\" for none;\n"
    "  several values in one column are comma-separated. --json prints one JSON array of\n"
    "  objects instead, keyed by the same names, with numbers as numbers and none as null.\n"
    "\n"
    "Progress (seed, import):\n"
    "  On a terminal, a line redrawn in place: the share done, rows written, their rate\n"
    "  and the time left. Otherwise a line every MARKET_PROGRESS_SECONDS seconds (default\n"
    "  5; 0: none), and a line naming each phase that cannot be counted (index builds,\n"
    "  vacuum), all on standard error.\n"
    "\n"
    "Environment:\n";
/* After the settings of lib/settings.c that name market-admin. */
static const char help_end[] =
    "Each setting is described in market.env(5). On a packaged install, as root or the\n"
    "user market, load the services' settings first: set -a; . /etc/market/market.env;\n"
    "set +a\n"
    "\n"
    "Exit status: 0 success, 1 error, 2 usage error.\n";

static void print_tail(FILE *out)
{
    fputs(help_tail, out);
    settings_write_help(out, SETTING_ADMIN);
    fputs(help_end, out);
}

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
    {"migrate", cmd_migrate},
    {"import", cmd_import},
    {"seed", cmd_seed},
    {"key", cmd_key},
    {"refund", cmd_refund},
    {"payout", cmd_payout},
    {"deliveries", cmd_deliveries},
    {"redeliver", cmd_redeliver},
    {"webhooks", cmd_webhooks},
    {"site", cmd_site},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static bool is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static void print_entry(FILE *out, const help_entry *e)
{
    fprintf(out, "  %s\n%s", e->synopsis, e->text);
}

static int print_all(FILE *out)
{
    fputs(help_head, out);
    fputs("Commands:\n", out);
    for (size_t i = 0; i < COUNT(help); i++)
        print_entry(out, &help[i]);
    print_tail(out);
    return fflush(out) == 0 && !ferror(out) ? 0 : 1;
}

/* True when e belongs to command name and, with sub, is the sub-command sub ("key create"). */
static bool entry_matches(const help_entry *e, const char *name, const char *sub)
{
    if (strcmp(e->command, name) != 0)
        return false;
    if (sub == NULL)
        return true;
    const char *after = e->synopsis + strlen(name); /* the synopsis starts with name */
    if (*after != ' ')
        return false;
    const char *rest = after + 1;
    size_t sub_len = strlen(sub);
    return strncmp(rest, sub, sub_len) == 0 && rest[sub_len] == ' ';
}

/* True when help has an entry "name sub ..." (a command with sub-commands, as key). */
static bool has_sub(const char *name, const char *sub)
{
    for (size_t i = 0; i < COUNT(help); i++)
        if (entry_matches(&help[i], name, sub))
            return true;
    return false;
}

/* The entries of one command; with sub (the second word, as in "key create"), only that
 * one. A command or sub-command without an entry is a usage error. */
static int print_command(const char *name, const char *sub)
{
    int found = 0;
    for (size_t i = 0; i < COUNT(help); i++) {
        if (!entry_matches(&help[i], name, sub))
            continue;
        /* An entry's second synopsis line, if any, lines up under the first. */
        fprintf(stdout, "%sUsage: market-admin %s\n%s", found++ == 0 ? "" : "\n", help[i].synopsis,
                help[i].text);
    }
    if (found == 0) {
        if (sub != NULL)
            usage_fail("%s: unknown command %s (see market-admin %s --help)", name, sub, name);
        usage_fail("unknown command %s (see market-admin --help)", name);
    }
    print_tail(stdout);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

/* `--help`, `--version`, `help [COMMAND [SUB]]`, and a command line of which any argument
 * is --help or -h (`seed --help`, `key create --help`): the exit status when argv asks
 * for help or the version, else -1. */
static int help_or_version(int argc, char **argv)
{
    if (is_help(argv[1]))
        return print_all(stdout);
    if (strcmp(argv[1], "--version") == 0) {
        printf("market-admin %s\n", MARKET_VERSION);
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
    }
    if (strcmp(argv[1], "help") == 0)
        return argc > 2 ? print_command(argv[2], argc > 3 ? argv[3] : NULL) : print_all(stdout);
    for (int i = 2; i < argc; i++) {
        if (is_help(argv[i]))
            return print_command(argv[1], has_sub(argv[1], argv[2]) ? argv[2] : NULL);
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_all(stderr);
        return EXIT_USAGE;
    }
    int shown = help_or_version(argc, argv);
    if (shown >= 0)
        return shown;
    if (!crypto_init())
        fail("libgcrypt is too old");
    for (size_t i = 0; i < COUNT(commands); i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 2, argv + 2);
    usage_fail("unknown command %s (see market-admin --help)", argv[1]);
}
