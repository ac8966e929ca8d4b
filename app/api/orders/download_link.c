/* POST /v1/downloads/:id/link: mints a fresh download link.
 *
 * Body: none, or {"expires_in": 60..86400} (default MARKET_DOWNLOAD_TTL; routes.c). A
 * download of another account or mode, or of an order that is neither paid nor refunded,
 * is 404 (never 403: its existence is not the caller's business); one of the caller's
 * refunded orders is 409 order_refunded. Honours Idempotency-Key (idempotency.h).
 *
 * One statement looks the download up and, only for a paid order, records the link, so
 * a mint costs one round trip (three with an Idempotency-Key: claim, mint, store). */
#include <stdio.h>
#include <string.h>

#include "catalogue.h"
#include "handlers.h"
#include "idempotency.h"
#include "ids.h"
#include "links.h"

DB_STMT(download_link_mint,
        "WITH d AS ("
        "  SELECT d.id, o.status FROM downloads d JOIN orders o ON o.id = d.order_id"
        "   WHERE d.id = $1 AND o.account_id = $2 AND o.mode = $3"
        "     AND o.status IN ('paid', 'refunded')),"
        " ins AS ("
        "  INSERT INTO download_tokens (download_id, token_hash, link_id, expires_at)"
        "  SELECT d.id, decode($4, 'hex'), decode($5, 'hex'),"
        "         now() + make_interval(secs => $6::integer)"
        "    FROM d WHERE d.status = 'paid'"
        "  RETURNING expires_at)"
        "SELECT d.status, (SELECT " SQL_UTC_TEXT("ins.expires_at") " FROM ins) FROM d",
        6);

static void respond_link(request *r, const char *download, const char *token,
                         const char *expires_at)
{
    respond_json(r, 201);
    json_writer *j = &r->json;
    jw_object_begin(j);
    jw_kv_string(j, "object", "download_link");
    jw_kv_string(j, "download", download);
    jw_kv_string(j, "url", link_url(r, token));
    jw_kv_string(j, "expires_at", expires_at);
    jw_object_end(j);
}

/* The effect: answers 201, 404 or 409 (or 5xx from request_query). */
static void mint(request *r, bool in_transaction)
{
    (void)in_transaction; /* one statement: atomic on its own */
    const char *download = r->in.id;
    long ttl = r->in.expires_in;
    if (!ids_prefixed_valid(download, "dl_")) {
        respond_missing(r, "download");
        return;
    }
    link_fresh link;
    link_generate(r->w, &link);
    db_arg ttl_arg;
    const char *params[] = {download,      r->caller.account_id, r->caller.mode,
                            link.hash_hex, link.id_hex,          db_arg_int(&ttl_arg, ttl)};
    db_result *res = request_query(r, &download_link_mint, params);
    if (res == NULL)
        return;
    if (db_rows(res) == 0) {
        respond_missing(r, "download");
        return;
    }
    if (strcmp(db_text(res, 0, 0), "refunded") == 0) {
        respond_error(r, 409, "invalid_request_error", "order_refunded", "id",
                      "the order of this download was refunded; its links no longer work");
        return;
    }
    respond_link(r, download, link.token, db_text(res, 0, 1));
}

void handle_download_link(request *r)
{
    idem_run(r, mint);
}
