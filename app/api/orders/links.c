/* links: the download link token format in one place. Both ends of a link use it: the
 * routes that mint or show one (download_link.c, orders_list.c) and the files location
 * that checks one (file.c), so a new format is a change here and a new tag. */
#include "links.h"

#include <string.h>

#include "buf.h"
#include "crypto.h"

/* A version tag inside the MAC: a later token format gets another tag, so a token of one
 * format can never verify as the other. */
static const char mac_tag[] = "dl1";

static void link_mac(const worker *w, const uint8_t id[LINK_ID_LEN], uint8_t mac[SHA256_LEN])
{
    uint8_t input[sizeof mac_tag - 1 + LINK_ID_LEN];
    memcpy(input, mac_tag, sizeof mac_tag - 1);
    memcpy(input + sizeof mac_tag - 1, id, LINK_ID_LEN);
    crypto_hmac_sha256(w->link_key, sizeof w->link_key, input, sizeof input, mac);
}

/* Writes the token text of id into token (LINK_TOKEN_LEN characters and a NUL). */
static void link_token(const worker *w, const uint8_t id[LINK_ID_LEN],
                       char token[LINK_TOKEN_LEN + 1])
{
    uint8_t raw[LINK_ID_LEN + SHA256_LEN];
    memcpy(raw, id, LINK_ID_LEN);
    link_mac(w, id, raw + LINK_ID_LEN);
    buf text;
    buf_init(&text, LINK_TOKEN_LEN + 1);
    base64url_encode(&text, raw, LINK_ID_LEN + LINK_MAC_LEN);
    memcpy(token, text.data, LINK_TOKEN_LEN + 1);
    buf_free(&text);
}

static void token_hash_hex(const char *token, size_t len, char hash_hex[LINK_HEX_HASH_LEN + 1])
{
    uint8_t hash[SHA256_LEN];
    crypto_sha256(token, len, hash);
    hex_write(hash_hex, hash, SHA256_LEN);
}

void link_generate(const worker *w, link_fresh *out)
{
    uint8_t id[LINK_ID_LEN];
    crypto_random(id, sizeof id);
    link_token(w, id, out->token);
    hex_write(out->id_hex, id, sizeof id);
    token_hash_hex(out->token, LINK_TOKEN_LEN, out->hash_hex);
}

bool link_token_from_hex(const worker *w, const char *id_hex, char token[LINK_TOKEN_LEN + 1])
{
    uint8_t id[LINK_ID_LEN];
    if (!hex_decode(id_hex, id, LINK_ID_LEN))
        return false;
    link_token(w, id, token);
    return true;
}

bool link_token_check(const worker *w, const char *text, size_t len,
                      char hash_hex[LINK_HEX_HASH_LEN + 1])
{
    if (len != LINK_TOKEN_LEN)
        return false;
    /* base64url_decode accepts only the canonical encoding, so each token has exactly
     * one spelling and one hash. */
    uint8_t raw[LINK_ID_LEN + LINK_MAC_LEN];
    size_t n = sizeof raw;
    if (!base64url_decode(text, len, raw, &n) || n != sizeof raw)
        return false;
    uint8_t mac[SHA256_LEN];
    link_mac(w, raw, mac);
    if (!crypto_equal(mac, raw + LINK_ID_LEN, LINK_MAC_LEN))
        return false;
    token_hash_hex(text, len, hash_hex);
    return true;
}

const char *link_url(request *r, const char *token)
{
    return arena_printf(r->arena, "%s/%s", r->w->cfg.download_base_url, token);
}
