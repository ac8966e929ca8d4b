/* The files location: GET|HEAD <path of MARKET_DOWNLOAD_BASE_URL>/<token>, outside /v1.
 *
 * The token is the only credential (no API key, no rate limit). It is checked by its MAC
 * first (links.h), so forged or mistyped tokens cost no database work. A valid link
 * answers 200 with X-Accel-Redirect to nginx's internal location, which serves the file
 * itself (sendfile, Range, Content-Length; the type is the worker's, see mime.h): this
 * worker never reads a file. Errors are the API's JSON errors: an unknown, forged or revoked
 * token, or one whose order is no longer paid (refunded), is 404 resource_missing; an
 * expired one is 410 link_expired. */
#include <string.h>

#include "handlers.h"
#include "ids.h"
#include "links.h"
#include "log.h"
#include "mime.h"
#include "text.h"

/* The internal nginx location aliased to MARKET_FILES_ROOT (nginx/market.conf.template). */
#define FILES_INTERNAL_PREFIX "/_market_files/"

/* Revocation and refunds win over expiry: a dead link is 404 whatever its age. */
DB_STMT(file_lookup,
        "SELECT t.revoked_at IS NULL AND o.status = 'paid', t.expires_at > now(),"
        "       f.id, f.path, f.filename"
        "  FROM download_tokens t"
        "  JOIN downloads d ON d.id = t.download_id"
        "  JOIN orders o ON o.id = d.order_id"
        "  JOIN files f ON f.id = d.file_id"
        " WHERE t.token_hash = decode($1, 'hex')",
        1);

enum { C_LIVE, C_FRESH, C_FILE_ID, C_PATH, C_FILENAME };

/* Appends the internal URI of a file path relative to the files root, each segment
 * percent-encoded (nginx decodes X-Accel-Redirect). The path comes from the database,
 * not from the client, but a path that could leave the root is refused all the same, by
 * the rule market-admin checks before it stores one (lib/ids.h). */
static bool internal_uri(buf *b, const char *path)
{
    if (!ids_path_valid(path))
        return false;
    buf_puts(b, FILES_INTERNAL_PREFIX);
    for (const char *seg = path; seg != NULL;) {
        const char *slash = strchr(seg, '/');
        size_t len = slash != NULL ? (size_t)(slash - seg) : strlen(seg);
        percent_encode(b, seg, len, percent_unreserved);
        if (slash != NULL)
            buf_putc(b, '/');
        seg = slash != NULL ? slash + 1 : NULL;
    }
    return true;
}

/* attr-char of RFC 8187, the characters filename* may carry unencoded. */
static bool attr_char(unsigned char c)
{
    return percent_unreserved(c) || (c != '\0' && strchr("!#$&+^`|", c) != NULL);
}

/* attachment; filename="<ASCII, quotes and backslashes escaped, others as _>" and, when
 * that is not the exact name, filename*=UTF-8''<the name percent-encoded>. */
static void content_disposition(buf *b, const char *filename)
{
    size_t n = strlen(filename);
    bool exact = n > 0;
    buf_puts(b, "attachment; filename=\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)filename[i];
        if (c < 0x20 || c > 0x7e) {
            if ((c & 0xc0) != 0x80) /* one _ per character, not per UTF-8 byte */
                buf_putc(b, '_');
            exact = false;
            continue;
        }
        if (c == '"' || c == '\\')
            buf_putc(b, '\\');
        buf_putc(b, (char)c);
    }
    if (n == 0)
        buf_puts(b, "download");
    buf_putc(b, '"');
    if (!exact && n > 0) {
        buf_puts(b, "; filename*=UTF-8''");
        percent_encode(b, filename, n, attr_char);
    }
}

static void respond_no_link(request *r)
{
    respond_error(r, 404, "invalid_request_error", "resource_missing", NULL,
                  "no such download link");
}

static void respond_redirect(request *r, const db_result *res)
{
    buf *value = request_buf(r, 256);
    if (!internal_uri(value, db_text(res, 0, C_PATH))) {
        log_error("file %s has an unsafe path", db_text(res, 0, C_FILE_ID));
        respond_internal(r);
        return;
    }
    response_header(r, "X-Accel-Redirect", value->data);
    buf_clear(value);
    content_disposition(value, db_text(res, 0, C_FILENAME));
    response_header(r, "Content-Disposition", value->data);
    response_header(r, "Content-Type", mime_type(db_text(res, 0, C_FILENAME)));
    r->status = 200; /* and no body: nginx sends the file */
    r->accel_redirect = true;
}

void handle_file(request *r)
{
    char hash_hex[LINK_HEX_HASH_LEN + 1];
    if (!link_token_check(r->w, r->match.param, r->match.param_len, hash_hex)) {
        respond_no_link(r);
        return;
    }
    const char *params[] = {hash_hex};
    db_result *res = request_query(r, &file_lookup, params);
    if (res == NULL)
        return;
    if (db_rows(res) == 0 || strcmp(db_text(res, 0, C_LIVE), "t") != 0) {
        respond_no_link(r);
        return;
    }
    if (strcmp(db_text(res, 0, C_FRESH), "t") != 0) {
        respond_error(r, 410, "invalid_request_error", "link_expired", NULL,
                      "this download link has expired; mint a new one with "
                      "POST /v1/downloads/:id/link");
        return;
    }
    respond_redirect(r, res);
}
