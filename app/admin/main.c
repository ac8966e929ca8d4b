/* market-admin: command dispatch and usage. */
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "crypto.h"

static const char usage_text[] =
    "usage: market-admin COMMAND [ARGS]\n"
    "\n"
    "Commands:\n"
    "  migrate\n"
    "      Apply sql/migrations/*.sql in name order, each once and in its own transaction\n"
    "      (recorded in schema_migrations; safe to run concurrently). The directory is\n"
    "      MARKET_MIGRATIONS_DIR, else ../sql/migrations beside this binary.\n"
    "  import FILE|-\n"
    "      Load a JSON document (contract section 9) in one transaction, upserting by id.\n"
    "      An invalid document changes nothing; the error names the first bad path.\n"
    "  seed --mode test|live --products N [--sellers N] [--orders N] [--random-seed N]\n"
    "       [--files] [--replace]\n"
    "      Write a synthetic, deterministic catalogue (same seed, same data). Sellers\n"
    "      default to max(1, N/100), orders to 0 (buyers: max(1, orders/10)). --files also\n"
    "      writes each product's file under MARKET_FILES_ROOT. Seeding a mode that already\n"
    "      has seeded rows is refused unless --replace, which deletes that mode's seeded\n"
    "      products and orders first (in the same transaction).\n"
    "  key create --account ID --mode test|live --access read-only|read-write\n"
    "      Print a new API key (the only time it is shown).\n"
    "  key rotate KEY|-\n"
    "      Print a new key with the same account, mode and access; the old one expires\n"
    "      after MARKET_KEY_GRACE seconds (default 86400). An expired, revoked or already\n"
    "      rotated key cannot be rotated. \"-\" reads the key from standard input.\n"
    "  key revoke KEY|-\n"
    "      Revoke a key at once (revoking a revoked key keeps its first revocation time).\n"
    "  key list --account ID\n"
    "      A line per key: prefix, mode, access, created_at, expires_at, revoked_at.\n"
    "  refund ORDER_ID\n"
    "      Mark a paid order refunded and revoke all its download links.\n"
    "  payout --seller HANDLE --amount 12.34 --currency USD --mode test|live\n"
    "      Record a sent payout and print its id.\n"
    "  deliveries [--failed]\n"
    "      A line per webhook delivery: event id, event type, subscription id, status,\n"
    "      attempts, last HTTP status.\n"
    "  redeliver EVENT_ID\n"
    "      Queue that event's deliveries again now, with attempts reset to 0 so the full\n"
    "      retry schedule applies (the attempt history is kept).\n"
    "\n"
    "Environment: MARKET_DB (libpq connection string; empty: libpq defaults).\n"
    "Exit status: 0 success, 1 error, 2 usage error.\n";

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
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (!crypto_init())
        fail("libgcrypt is too old");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 2, argv + 2);
    usage_fail("unknown command %s (see market-admin --help)", argv[1]);
}
