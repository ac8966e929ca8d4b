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
    "       [--jobs N] [--files] [--replace] [--no-vacuum]\n"
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
    "      (seed --replace starts over).\n"
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
