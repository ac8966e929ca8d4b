/* sender: all that market-webhookd asks of libcurl's transfers, in one file: the options
 * every request gets (https only, no redirects, no proxy, the URL as target.c's checked
 * parts, the pinned addresses, the CA file), a delivery's headers, and the attempt's
 * outcome as the drainer records it. */
#include "mem.h"
#include "sender.h"

#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

#define USER_AGENT "market-webhookd/1"

typedef struct {
    CURL *easy;
    struct curl_slist *headers;
    struct curl_slist *resolve;
    char errbuf[CURL_ERROR_SIZE];
    double started_at;    /* wall clock, for the record: when the attempt began */
    long long started_ms; /* monotonic, for the attempt's duration */
    bool busy;
} slot_state;

struct sender {
    CURLM *multi;
    CURLSH *share;
    slot_state *slots;
    int nslots;
    int in_flight;
    const char *ca_file;
    struct curl_waitfd *waitfds; /* sender_wait's descriptors in libcurl's type */
    unsigned capwait;
};

/* The receiver's answer body is not used: read and forget it. */
static size_t discard(char *data, size_t size, size_t n, void *user)
{
    (void)data;
    (void)user;
    return size * n;
}

sender *sender_create(int slots, const char *ca_file)
{
    sender *s = xcalloc(1, sizeof *s);
    s->slots = xcalloc((size_t)slots, sizeof *s->slots);
    s->nslots = slots;
    s->multi = curl_multi_init();
    /* TLS sessions are shared, so a new connection to a known receiver resumes its
     * session instead of a full handshake. */
    s->share = curl_share_init();
    if (s->multi == NULL || s->share == NULL)
        mem_exhausted(); /* libcurl's only reason to fail here */
    curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_multi_setopt(s->multi, CURLMOPT_MAXCONNECTS, (long)slots);
    s->ca_file = ca_file;
    return s;
}

void sender_destroy(sender *s)
{
    for (int i = 0; i < s->nslots; i++) {
        slot_state *st = &s->slots[i];
        if (st->easy != NULL) {
            if (st->busy)
                curl_multi_remove_handle(s->multi, st->easy);
            curl_easy_cleanup(st->easy);
        }
        curl_slist_free_all(st->headers);
        curl_slist_free_all(st->resolve);
    }
    curl_multi_cleanup(s->multi);
    curl_share_cleanup(s->share);
    free(s->waitfds);
    free(s->slots);
    free(s);
}

static struct curl_slist *add_header(struct curl_slist *list, const char *name, const char *value)
{
    char line[512];
    snprintf(line, sizeof line, "%s: %s", name, value);
    struct curl_slist *l = curl_slist_append(list, line);
    if (l == NULL)
        mem_exhausted();
    return l;
}

/* Standard Webhooks headers, and X-Signature (the interface specification's name) with
 * the same value. An empty "Expect:" stops libcurl from waiting for 100-continue on
 * large bodies. */
static struct curl_slist *build_headers(const sender_request *req)
{
    char ts[24];
    snprintf(ts, sizeof ts, "%lld", req->timestamp);
    struct curl_slist *h = add_header(NULL, "Content-Type", "application/json");
    h = add_header(h, "webhook-id", req->event_id);
    h = add_header(h, "webhook-timestamp", ts);
    h = add_header(h, "webhook-signature", req->signature);
    h = add_header(h, "X-Signature", req->signature);
    h = curl_slist_append(h, "Expect:");
    if (h == NULL)
        mem_exhausted();
    return h;
}

/* Options that are the same for every request of a slot. */
static void set_fixed_options(sender *s, CURL *e, slot_state *st)
{
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    /* Connect straight to the checked address, never through a proxy from the
     * environment: a proxy would resolve the name itself. */
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, USER_AGENT);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, st->errbuf);
    curl_easy_setopt(e, CURLOPT_SHARE, s->share);
    if (s->ca_file != NULL)
        curl_easy_setopt(e, CURLOPT_CAINFO, s->ca_file);
    /* No CA directory: libcurl caches the parsed CA store only when it comes from a
     * single file, and Debian's directory holds the same certificates as its bundle. */
    curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
}

bool sender_start(sender *s, int slot, const sender_request *req, char *err, size_t errlen)
{
    slot_state *st = &s->slots[slot];
    if (st->easy == NULL) {
        st->easy = curl_easy_init();
        if (st->easy == NULL)
            mem_exhausted();
        set_fixed_options(s, st->easy, st);
    }
    curl_slist_free_all(st->headers);
    curl_slist_free_all(st->resolve);
    st->headers = build_headers(req);
    st->resolve = NULL;
    if (req->resolve != NULL && (st->resolve = curl_slist_append(NULL, req->resolve)) == NULL)
        mem_exhausted();
    st->errbuf[0] = '\0';

    CURL *e = st->easy;
    /* The parts target.c checked, never a URL string for libcurl to parse (target.c). */
    curl_easy_setopt(e, CURLOPT_CURLU, req->url);
    curl_easy_setopt(e, CURLOPT_REQUEST_TARGET, req->request_target);
    curl_easy_setopt(e, CURLOPT_RESOLVE, st->resolve);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, st->headers);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? req->timeout_ms : 1L);
    curl_easy_setopt(e, CURLOPT_PRIVATE, (void *)(intptr_t)slot);
    st->started_at = req->started_at;
    st->started_ms = req->started_ms;
    CURLMcode rc = curl_multi_add_handle(s->multi, e);
    if (rc != CURLM_OK) {
        snprintf(err, errlen, "%s", curl_multi_strerror(rc));
        return false;
    }
    st->busy = true;
    s->in_flight++;
    return true;
}

/* The drainer's descriptors are poll()'s (lib/resolver.h gives c-ares' sockets so);
 * libcurl's wait takes its own type, whose flags are its own: converted there and back. */
void sender_wait(sender *s, struct pollfd *extra, unsigned nextra, int timeout_ms)
{
    if (nextra > s->capwait) {
        s->waitfds = xrealloc(s->waitfds, nextra * sizeof *s->waitfds);
        s->capwait = nextra;
    }
    for (unsigned i = 0; i < nextra; i++) {
        short events = (short)(((extra[i].events & POLLIN) ? CURL_WAIT_POLLIN : 0) |
                               ((extra[i].events & POLLOUT) ? CURL_WAIT_POLLOUT : 0));
        s->waitfds[i] = (struct curl_waitfd){extra[i].fd, events, 0};
    }
    curl_multi_poll(s->multi, s->waitfds, nextra, timeout_ms, NULL);
    for (unsigned i = 0; i < nextra; i++) {
        short got = s->waitfds[i].revents;
        extra[i].revents = (short)(((got & CURL_WAIT_POLLIN) ? POLLIN : 0) |
                                   ((got & CURL_WAIT_POLLPRI) ? POLLPRI : 0) |
                                   ((got & CURL_WAIT_POLLOUT) ? POLLOUT : 0));
    }
}

void sender_perform(sender *s)
{
    int running;
    curl_multi_perform(s->multi, &running);
}

static void fill_attempt(slot_state *st, CURLcode code, attempt *out)
{
    memset(out, 0, sizeof *out);
    out->started_at = st->started_at;
    out->duration_ms = (long)(clock_ms() - st->started_ms);
    long status = 0;
    curl_easy_getinfo(st->easy, CURLINFO_RESPONSE_CODE, &status);
    if (code == CURLE_OK) {
        out->http_status = status;
        out->ok = status >= 200 && status <= 299;
        return;
    }
    /* No complete answer: keep the status line if one came (a timeout mid-body). */
    out->http_status = status;
    snprintf(out->error, sizeof out->error, "%s",
             st->errbuf[0] != '\0' ? st->errbuf : curl_easy_strerror(code));
}

bool sender_next_done(sender *s, int *slot, attempt *out)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(s->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        void *priv = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
        int i = (int)(intptr_t)priv;
        slot_state *st = &s->slots[i];
        CURLcode code = m->data.result; /* m is invalid after remove_handle */
        fill_attempt(st, code, out);
        curl_multi_remove_handle(s->multi, st->easy);
        /* The drainer frees the request's URL handle next: keep no pointer to it. */
        curl_easy_setopt(st->easy, CURLOPT_CURLU, NULL);
        st->busy = false;
        s->in_flight--;
        *slot = i;
        return true;
    }
    return false;
}

int sender_in_flight(const sender *s)
{
    return s->in_flight;
}
