/* key create | rotate | revoke | list.
 *
 * A key is shown once, on stdout, when it is created or rotated; the database keeps only
 * its SHA-256 and its first 12 characters. Keys given on the command line are looked up
 * by hash and never echoed, not even in errors. */
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "crypto.h"
#include "ids.h"
#include "text.h"

#define KEY_RANDOM_CHARS 40
#define KEY_MAX 128
#define KEY_PREFIX_LEN 12

typedef struct {
    char text[KEY_MAX];
    char hash_hex[2 * SHA256_LEN + 1];
} api_key;

static void key_hash_hex(api_key *k)
{
    uint8_t hash[SHA256_LEN];
    crypto_sha256(k->text, strlen(k->text), hash);
    buf hex;
    buf_init(&hex, 2 * SHA256_LEN + 1);
    hex_encode(&hex, hash, SHA256_LEN);
    memcpy(k->hash_hex, hex.data, sizeof k->hash_hex);
    buf_free(&hex);
}

static void key_generate(api_key *k, const char *mode)
{
    char random[KEY_RANDOM_CHARS + 1];
    crypto_random_alnum(random, KEY_RANDOM_CHARS);
    snprintf(k->text, sizeof k->text, "sk_%s_%s", mode, random);
    key_hash_hex(k);
}

/* The key argument, or a line of standard input for "-" (keeps it out of ps). */
static void key_from_argument(api_key *k, const char *command, const char *arg)
{
    if (strcmp(arg, "-") == 0) {
        if (fgets(k->text, sizeof k->text, stdin) == NULL)
            fail("%s: no key on standard input", command);
        k->text[strcspn(k->text, "\r\n")] = '\0';
    } else {
        snprintf(k->text, sizeof k->text, "%s", arg);
    }
    bool shaped = (strncmp(k->text, "sk_test_", 8) == 0 || strncmp(k->text, "sk_live_", 8) == 0) &&
                  token_valid(k->text + 8, KEY_MAX - 9, NULL);
    if (!shaped)
        fail("%s: not an API key (expected sk_test_... or sk_live_...)", command);
    key_hash_hex(k);
}

/* Inserts k and returns its id (text). */
static void key_insert(db *d, const api_key *k, const char *account, const char *mode,
                       const char *access, char *id_out, size_t idsz)
{
    char prefix[KEY_PREFIX_LEN + 1];
    memcpy(prefix, k->text, KEY_PREFIX_LEN); /* keys are longer than their prefix */
    prefix[KEY_PREFIX_LEN] = '\0';
    const char *params[] = {k->hash_hex, prefix, account, mode, access};
    db_result *res = sql_run(d, "key",
                             "INSERT INTO api_keys (key_hash, prefix, account_id, mode, access)"
                             " VALUES (decode($1, 'hex'), $2, $3, $4, $5) RETURNING id",
                             5, params);
    snprintf(id_out, idsz, "%s", db_text(res, 0, 0));
    db_clear(res);
}

static void require_account(db *d, const char *command, const char *account)
{
    if (!ids_prefixed_valid(account, "acct_"))
        fail("%s: %s is not an account id (acct_...)", command, account);
    const char *params[] = {account};
    db_result *res = sql_run(d, command, "SELECT 1 FROM accounts WHERE id = $1", 1, params);
    if (db_rows(res) == 0)
        fail("%s: no such account %s", command, account);
    db_clear(res);
}

static int key_create(int argc, char **argv)
{
    option opts[] = {
        {"--account", false, NULL}, {"--mode", false, NULL}, {"--access", false, NULL}};
    parse_options("key create", argc, argv, opts, 3, NULL, 0);
    const char *account = option_required("key create", &opts[0]);
    const char *mode = parse_mode("key create", option_required("key create", &opts[1]));
    const char *access = option_required("key create", &opts[2]);
    if (strcmp(access, "read-only") != 0 && strcmp(access, "read-write") != 0)
        usage_fail("key create: --access must be read-only or read-write");

    market_config cfg;
    db *d = admin_connect(0, &cfg);
    require_account(d, "key create", account);
    api_key k;
    key_generate(&k, mode);
    char id[32];
    key_insert(d, &k, account, mode, access, id, sizeof id);
    puts(k.text);
    db_close(d);
    return 0;
}

static const char *single_key_argument(const char *command, int argc, char **argv)
{
    const char *pos[1];
    if (parse_options(command, argc, argv, NULL, 0, pos, 1) != 1)
        usage_fail("%s: KEY is required", command);
    return pos[0];
}

/* The columns of the rotated key's row, as key_rotate selects them. */
enum { OLD_ID, OLD_ACCOUNT, OLD_MODE, OLD_ACCESS, OLD_REVOKED, OLD_EXPIRED, OLD_REPLACED };

static int key_rotate(int argc, char **argv)
{
    const char *arg = single_key_argument("key rotate", argc, argv);
    market_config cfg;
    db *d = admin_connect(0, &cfg);
    api_key old;
    key_from_argument(&old, "key rotate", arg);

    sql_begin(d, "key rotate", DB_READ_COMMITTED);
    const char *find[] = {old.hash_hex};
    db_result *res =
        sql_run(d, "key rotate",
                "SELECT id, account_id, mode, access, revoked_at IS NOT NULL,"
                " expires_at IS NOT NULL AND expires_at <= now(), replaced_by IS NOT NULL"
                " FROM api_keys WHERE key_hash = decode($1, 'hex') FOR UPDATE",
                1, find);
    if (db_rows(res) == 0)
        fail("key rotate: unknown key");
    if (db_bool(res, 0, OLD_REVOKED))
        fail("key rotate: the key is revoked");
    if (db_bool(res, 0, OLD_EXPIRED))
        fail("key rotate: the key has expired");
    /* Rotating a key in its grace period again would extend its life indefinitely. */
    if (db_bool(res, 0, OLD_REPLACED))
        fail("key rotate: the key was already rotated; rotate its replacement");

    api_key fresh;
    key_generate(&fresh, db_text(res, 0, OLD_MODE));
    char new_id[32];
    key_insert(d, &fresh, db_text(res, 0, OLD_ACCOUNT), db_text(res, 0, OLD_MODE),
               db_text(res, 0, OLD_ACCESS), new_id, sizeof new_id);
    db_arg grace;
    const char *retire[] = {db_text(res, 0, OLD_ID), db_arg_int(&grace, cfg.key_grace), new_id};
    sql_do(d, "key rotate",
           "UPDATE api_keys SET expires_at = now() + make_interval(secs => $2::bigint),"
           " replaced_by = $3 WHERE id = $1",
           3, retire);
    db_clear(res);
    sql_commit(d, "key rotate");
    puts(fresh.text);
    db_close(d);
    return 0;
}

static int key_revoke(int argc, char **argv)
{
    const char *arg = single_key_argument("key revoke", argc, argv);
    market_config cfg;
    db *d = admin_connect(0, &cfg);
    api_key k;
    key_from_argument(&k, "key revoke", arg);
    const char *params[] = {k.hash_hex};
    db_result *res = sql_run(d, "key revoke",
                             "UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())"
                             " WHERE key_hash = decode($1, 'hex') RETURNING prefix",
                             1, params);
    if (db_rows(res) == 0)
        fail("key revoke: unknown key");
    printf("revoked %s\n", db_text(res, 0, 0));
    db_clear(res);
    db_close(d);
    return 0;
}

static const char key_list_sql[] =
    "SELECT prefix, mode, access, " SQL_RFC3339("created_at") " AS created_at, " SQL_RFC3339(
        "expires_at") " AS expires_at, " SQL_RFC3339("revoked_at") " AS revoked_at"
                                                                   " FROM api_keys WHERE "
                                                                   "account_id = $1"
                                                                   " ORDER BY api_keys.created_at, "
                                                                   "api_keys.id";

static int key_list(int argc, char **argv)
{
    option opts[] = {{"--account", false, NULL}, {"--json", true, NULL}};
    parse_options("key list", argc, argv, opts, 2, NULL, 0);
    const char *account = option_required("key list", &opts[0]);
    market_config cfg;
    db *d = admin_connect(0, &cfg);
    require_account(d, "key list", account);
    const char *params[] = {account};
    db_result *res = sql_run(d, "key list", key_list_sql, 1, params);
    print_table(res, opts[1].value != NULL);
    db_clear(res);
    db_close(d);
    return 0;
}

int cmd_key(int argc, char **argv)
{
    if (argc < 1)
        usage_fail("key: expected create, rotate, revoke or list");
    if (strcmp(argv[0], "create") == 0)
        return key_create(argc - 1, argv + 1);
    if (strcmp(argv[0], "rotate") == 0)
        return key_rotate(argc - 1, argv + 1);
    if (strcmp(argv[0], "revoke") == 0)
        return key_revoke(argc - 1, argv + 1);
    if (strcmp(argv[0], "list") == 0)
        return key_list(argc - 1, argv + 1);
    usage_fail("key: unknown subcommand %s (create, rotate, revoke or list)", argv[0]);
}
