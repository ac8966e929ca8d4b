package market

// Unit tests of the subscription management and events calls (issue 20): what goes on
// the wire, the time filters, the Idempotency-Key of POST and DELETE and its reuse on
// retries, the models.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	subJSON      = `{"id":"we_1","object":"webhook_subscription","url":"https://h.example/x","events":["sale.completed","payout.sent"],"description":"d","status":"disabled","livemode":false,"created_at":"2026-11-21T10:04:05Z","updated_at":"2026-11-22T11:05:06Z"}`
	rotatedJSON  = `{"id":"we_1","object":"webhook_subscription","url":"https://h.example/x","events":["sale.completed"],"description":"","status":"enabled","livemode":true,"secret":"whsec_new=","created_at":"2026-11-21T10:04:05Z","updated_at":"2026-11-23T00:00:00Z"}`
	deletedJSON  = `{"id":"we_1","object":"webhook_subscription","deleted":true}`
	testEvJSON   = `{"id":"evt_t1","type":"webhook.test","created_at":"2026-11-26T10:04:05Z","livemode":false,"data":{"subscription":"we_1"}}`
	eventGetJSON = `{"id":"evt_1","type":"payout.sent","created_at":"2026-11-21T10:04:05Z","livemode":false,
		"data":{"payout":"po_8fK2aQ","amount":12345678901234567.89,"currency":"USD"},
		"deliveries":[{"subscription":"we_1","status":"delivered","attempts":1,"last_attempt_at":"2026-11-21T10:04:06Z","last_status":204,"last_error":null},
		              {"subscription":"we_2","status":"failed","attempts":3,"last_attempt_at":"2026-11-21T10:05:00Z","last_status":null,"last_error":"connection refused"},
		              {"subscription":"we_3","status":"pending","attempts":0,"last_attempt_at":null,"last_status":null,"last_error":null},
		              {"subscription":"we_4","status":"endpoint_deleted","attempts":1,"last_attempt_at":"2026-11-21T10:04:07Z","last_status":500,"last_error":null}]}`
)

// manageAPI answers every route of the management and events calls plausibly.
func manageAPI(n int, w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case r.Method == "DELETE":
		io.WriteString(w, deletedJSON)
	case r.Method == "POST" && strings.HasSuffix(p, "/rotate_secret"):
		io.WriteString(w, rotatedJSON)
	case r.Method == "POST" && strings.HasSuffix(p, "/test"):
		w.WriteHeader(202)
		io.WriteString(w, testEvJSON)
	case r.Method == "POST":
		io.WriteString(w, subJSON)
	case strings.HasSuffix(p, "/v1/webhooks"):
		io.WriteString(w, `{"data":[`+subJSON+`],"next_cursor":null}`)
	case strings.HasSuffix(p, "/v1/events"):
		io.WriteString(w, `{"data":[`+testEvJSON+`],"next_cursor":null}`)
	case strings.Contains(p, "/v1/events/"):
		io.WriteString(w, eventGetJSON)
	default:
		io.WriteString(w, subJSON)
	}
}

func TestManagementRequestsOnTheWire(t *testing.T) {
	f := newFakeAPI(t, manageAPI)
	c, _ := newTestClient(t, f.srv.URL+"/base")
	ctx := context.Background()
	gte := time.Date(2026, 11, 26, 11, 4, 5, 0, time.FixedZone("CET", 3600))
	lt := time.Date(2026, 11, 27, 0, 0, 0, 250_000_000, time.UTC)
	calls := []func() error{
		func() error { _, err := c.Webhooks.List(ctx, nil); return err },
		func() error { _, err := c.Webhooks.List(ctx, &WebhookListParams{Limit: 50, Cursor: "c_1"}); return err },
		func() error { _, err := c.Webhooks.Get(ctx, "we_1"); return err },
		func() error { _, err := c.Webhooks.Get(ctx, "we_a/b c?"); return err },
		func() error {
			_, err := c.Webhooks.Update(ctx, "we_1", &WebhookUpdateParams{
				URL: String("https://h.example/y"), Events: []EventType{EventSaleCompleted, EventPayoutSent},
				Description: String(""), Disabled: Bool(true),
			})
			return err
		},
		func() error { _, err := c.Webhooks.Update(ctx, "we_1", nil); return err },
		func() error { _, err := c.Webhooks.Update(ctx, "we_1", &WebhookUpdateParams{}); return err },
		func() error {
			_, err := c.Webhooks.Update(ctx, "we_1", &WebhookUpdateParams{Disabled: Bool(false)})
			return err
		},
		func() error {
			_, err := c.Webhooks.Update(ctx, "we_1", &WebhookUpdateParams{Description: String("shop"), IdempotencyKey: "upd-1"})
			return err
		},
		func() error {
			_, err := c.Webhooks.Update(ctx, "we_1", &WebhookUpdateParams{Events: []EventType{}})
			return err
		},
		func() error { _, err := c.Webhooks.Delete(ctx, "we_1", nil); return err },
		func() error {
			_, err := c.Webhooks.Delete(ctx, "we_a/b", &WebhookDeleteParams{IdempotencyKey: "del-1"})
			return err
		},
		func() error { _, err := c.Webhooks.RotateSecret(ctx, "we_1", nil); return err },
		func() error {
			_, err := c.Webhooks.RotateSecret(ctx, "we_1", &RotateSecretParams{ExpireOldIn: Int(0)})
			return err
		},
		func() error {
			_, err := c.Webhooks.RotateSecret(ctx, "we_1", &RotateSecretParams{ExpireOldIn: Int(3600), IdempotencyKey: "rot-1"})
			return err
		},
		func() error { _, err := c.Webhooks.Test(ctx, "we_1", nil); return err },
		func() error {
			_, err := c.Webhooks.Test(ctx, "we_1", &WebhookTestParams{IdempotencyKey: "tst-1"})
			return err
		},
		func() error { _, err := c.Events.List(ctx, nil); return err },
		func() error {
			_, err := c.Events.List(ctx, &EventListParams{Type: EventWebhookTest, CreatedGte: gte, CreatedLt: lt, Limit: 5, Cursor: "c2"})
			return err
		},
		func() error { _, err := c.Events.List(ctx, &EventListParams{CreatedLt: lt}); return err },
		func() error { _, err := c.Events.Get(ctx, "evt_1"); return err },
		func() error { _, err := c.Events.Get(ctx, "evt_x/y"); return err },
	}
	want := []struct{ method, path, query, body, key string }{
		{"GET", "/base/v1/webhooks", "", "", ""},
		{"GET", "/base/v1/webhooks", "cursor=c_1&limit=50", "", ""},
		{"GET", "/base/v1/webhooks/we_1", "", "", ""},
		{"GET", "/base/v1/webhooks/we_a%2Fb%20c%3F", "", "", ""},
		{"POST", "/base/v1/webhooks/we_1", "", `{"url":"https://h.example/y","events":["sale.completed","payout.sent"],"description":"","disabled":true}`, "*"},
		{"POST", "/base/v1/webhooks/we_1", "", `{}`, "*"},
		{"POST", "/base/v1/webhooks/we_1", "", `{}`, "*"},
		{"POST", "/base/v1/webhooks/we_1", "", `{"disabled":false}`, "*"},
		{"POST", "/base/v1/webhooks/we_1", "", `{"description":"shop"}`, "upd-1"},
		{"POST", "/base/v1/webhooks/we_1", "", `{"events":[]}`, "*"},
		{"DELETE", "/base/v1/webhooks/we_1", "", "", "*"},
		{"DELETE", "/base/v1/webhooks/we_a%2Fb", "", "", "del-1"},
		{"POST", "/base/v1/webhooks/we_1/rotate_secret", "", "", "*"},
		{"POST", "/base/v1/webhooks/we_1/rotate_secret", "", `{"expire_old_in":0}`, "*"},
		{"POST", "/base/v1/webhooks/we_1/rotate_secret", "", `{"expire_old_in":3600}`, "rot-1"},
		{"POST", "/base/v1/webhooks/we_1/test", "", "", "*"},
		{"POST", "/base/v1/webhooks/we_1/test", "", "", "tst-1"},
		{"GET", "/base/v1/events", "", "", ""},
		{"GET", "/base/v1/events", "created_gte=2026-11-26T10%3A04%3A05Z&created_lt=2026-11-27T00%3A00%3A00.25Z&cursor=c2&limit=5&type=webhook.test", "", ""},
		{"GET", "/base/v1/events", "created_lt=2026-11-27T00%3A00%3A00.25Z", "", ""},
		{"GET", "/base/v1/events/evt_1", "", "", ""},
		{"GET", "/base/v1/events/evt_x%2Fy", "", "", ""},
	}
	for i, call := range calls {
		if err := call(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	reqs := f.requests()
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d", len(reqs), len(want))
	}
	generated := map[string]bool{}
	for i, w := range want {
		r := reqs[i]
		if r.Method != w.method || r.Path != w.path || r.RawQuery != w.query || r.Body != w.body {
			t.Errorf("request %d:\n got %s %s ?%s %s\nwant %s %s ?%s %s", i, r.Method, r.Path, r.RawQuery, r.Body, w.method, w.path, w.query, w.body)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk_test_0123456789abcdefghijABCDEFGHIJ0123456789" {
			t.Errorf("request %d: Authorization %q", i, got)
		}
		if ct := r.Header.Get("Content-Type"); (w.body != "") != (ct == "application/json") {
			t.Errorf("request %d: Content-Type %q with body %q", i, ct, w.body)
		}
		ik := r.Header.Get("Idempotency-Key")
		switch w.key {
		case "":
			if ik != "" {
				t.Errorf("request %d: a %s with Idempotency-Key %q", i, w.method, ik)
			}
		case "*":
			if !strings.HasPrefix(ik, "market-go-") || len(ik) != len("market-go-")+32 || generated[ik] {
				t.Errorf("request %d: generated Idempotency-Key %q (fresh, one per call)", i, ik)
			}
			generated[ik] = true
		default:
			if ik != w.key {
				t.Errorf("request %d: Idempotency-Key %q, want the caller's %q", i, ik, w.key)
			}
		}
	}
}

func TestFormatTime(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	cases := []struct {
		in   time.Time
		want string
	}{
		{time.Time{}, ""},
		{time.Date(2026, 11, 26, 10, 4, 5, 0, time.UTC), "2026-11-26T10:04:05Z"},
		{time.Date(2026, 11, 26, 11, 4, 5, 0, cet), "2026-11-26T10:04:05Z"}, // to UTC
		{time.Date(2026, 1, 1, 0, 30, 0, 0, cet), "2025-12-31T23:30:00Z"},   // across a year
		{time.Date(2026, 11, 26, 10, 4, 5, 500_000_000, time.UTC), "2026-11-26T10:04:05.5Z"},
		{time.Date(2026, 11, 26, 10, 4, 5, 120_000, time.UTC), "2026-11-26T10:04:05.00012Z"},
		{time.Date(2026, 11, 26, 10, 4, 5, 123_456_000, time.UTC), "2026-11-26T10:04:05.123456Z"},
		// Nanoseconds: rounded up to the microsecond (the API takes 6 digits at most).
		{time.Date(2026, 11, 26, 10, 4, 5, 123_456_001, time.UTC), "2026-11-26T10:04:05.123457Z"},
		{time.Date(2026, 11, 26, 10, 4, 5, 1, time.UTC), "2026-11-26T10:04:05.000001Z"},
		{time.Date(2026, 11, 26, 10, 4, 5, 999_999_001, time.UTC), "2026-11-26T10:04:06Z"},
	}
	for _, c := range cases {
		if got := formatTime(c.in); got != c.want {
			t.Errorf("formatTime(%v) = %q, want %q", c.in, got, c.want)
		}
	}
	// time.Now (with its monotonic reading and nanoseconds) always gives what the API
	// accepts: at most 6 fractional digits.
	for i := 0; i < 100; i++ {
		s := formatTime(time.Now())
		if _, err := time.Parse(time.RFC3339, s); err != nil || !strings.HasSuffix(s, "Z") {
			t.Fatalf("%q: %v", s, err)
		}
		if dot := strings.IndexByte(s, '.'); dot >= 0 && len(s)-dot-2 > 6 {
			t.Fatalf("%q has more than 6 fractional digits", s)
		}
	}
}

func TestEventListParamsEncoding(t *testing.T) {
	var p *EventListParams
	if q := p.values().Encode(); q != "" {
		t.Errorf("nil params: %q", q)
	}
	if q := (&EventListParams{}).values().Encode(); q != "" {
		t.Errorf("zero params (zero times unset): %q", q)
	}
	q := (&EventListParams{Type: EventSaleRefunded, CreatedGte: time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)}).values().Encode()
	if q != "created_gte=2026-02-03T04%3A05%3A06Z&type=sale.refunded" {
		t.Errorf("type and created_gte: %q", q)
	}
	var w *WebhookListParams
	if q := w.values().Encode(); q != "" {
		t.Errorf("nil webhook list params: %q", q)
	}
}

// Every POST and DELETE of the management calls keeps its Idempotency-Key (generated or
// the caller's) and its body for all its attempts: after a 503, and after a connection
// dropped without an answer (retried only because of the key).
func TestManagementIdempotencyKeyReusedOnRetry(t *testing.T) {
	type call struct {
		name, method, body string
		do                 func(c *Client, key string) error
	}
	ctx := context.Background()
	calls := []call{
		{"Update", "POST", `{"disabled":true}`, func(c *Client, key string) error {
			_, err := c.Webhooks.Update(ctx, "we_1", &WebhookUpdateParams{Disabled: Bool(true), IdempotencyKey: key})
			return err
		}},
		{"Delete", "DELETE", "", func(c *Client, key string) error {
			_, err := c.Webhooks.Delete(ctx, "we_1", &WebhookDeleteParams{IdempotencyKey: key})
			return err
		}},
		{"RotateSecret", "POST", `{"expire_old_in":60}`, func(c *Client, key string) error {
			_, err := c.Webhooks.RotateSecret(ctx, "we_1", &RotateSecretParams{ExpireOldIn: Int(60), IdempotencyKey: key})
			return err
		}},
		{"Test", "POST", "", func(c *Client, key string) error {
			_, err := c.Webhooks.Test(ctx, "we_1", &WebhookTestParams{IdempotencyKey: key})
			return err
		}},
	}
	for _, cl := range calls {
		for _, key := range []string{"", "caller-key-1"} {
			t.Run(fmt.Sprintf("%s key=%q after 503", cl.name, key), func(t *testing.T) {
				f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
					if n == 1 {
						w.Header().Set("Retry-After", "1")
						w.WriteHeader(503)
						io.WriteString(w, `{"error":{"type":"api_error","code":"service_unavailable","message":"m","request_id":"r"}}`)
						return
					}
					manageAPI(n, w, r)
				})
				c, s := newTestClient(t, f.srv.URL)
				if err := cl.do(c, key); err != nil {
					t.Fatal(err)
				}
				reqs := f.requests()
				if len(reqs) != 2 || len(s.d) != 1 || s.d[0] != time.Second {
					t.Fatalf("%d requests, waits %v; want 2 and [1s]", len(reqs), s.d)
				}
				k0 := reqs[0].Header.Get("Idempotency-Key")
				if k0 == "" || (key != "" && k0 != key) {
					t.Fatalf("first attempt's key %q (caller's %q)", k0, key)
				}
				for i, r := range reqs {
					if r.Method != cl.method || r.Header.Get("Idempotency-Key") != k0 || r.Body != cl.body {
						t.Errorf("attempt %d: %s key %q body %q; want %s, the first attempt's key %q and body %q",
							i, r.Method, r.Header.Get("Idempotency-Key"), r.Body, cl.method, k0, cl.body)
					}
				}
			})
			t.Run(fmt.Sprintf("%s key=%q after a dropped connection", cl.name, key), func(t *testing.T) {
				var seen []string
				u, dropped := dropFirst(t, 1, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					manageAPI(0, w, r)
				})
				// A transport of its own: no connection is reused, so that the retry is the
				// client's and not the transport's.
				tr := &http.Transport{}
				t.Cleanup(tr.CloseIdleConnections)
				c, _ := newTestClient(t, u, WithHTTPClient(&http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					seen = append(seen, r.Method+" "+r.Header.Get("Idempotency-Key"))
					return tr.RoundTrip(r)
				})}))
				if err := cl.do(c, key); err != nil {
					t.Fatal(err)
				}
				if *dropped != 1 || len(seen) != 2 || seen[0] != seen[1] || seen[0] == cl.method+" " ||
					(key != "" && seen[0] != cl.method+" "+key) {
					t.Errorf("dropped %d; attempts %q", *dropped, seen)
				}
			})
		}
	}
	// Two calls without a key get two keys.
	f := newFakeAPI(t, manageAPI)
	c, _ := newTestClient(t, f.srv.URL)
	for i := 0; i < 2; i++ {
		if _, err := c.Webhooks.Delete(ctx, "we_1", nil); err != nil {
			t.Fatal(err)
		}
	}
	if reqs := f.requests(); reqs[0].Header.Get("Idempotency-Key") == reqs[1].Header.Get("Idempotency-Key") {
		t.Errorf("two Deletes share the key %q", reqs[0].Header.Get("Idempotency-Key"))
	}
}

func TestManagementModels(t *testing.T) {
	f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "600")
		w.Header().Set("X-RateLimit-Remaining", fmt.Sprint(600-n))
		manageAPI(n, w, r)
	})
	c, _ := newTestClient(t, f.srv.URL)
	ctx := context.Background()
	day := func(d, h, m, s int) time.Time { return time.Date(2026, 11, d, h, m, s, 0, time.UTC) }

	sub, err := c.Webhooks.Get(ctx, "we_1")
	if err != nil {
		t.Fatal(err)
	}
	if sub.ID != "we_1" || sub.Object != "webhook_subscription" || sub.URL != "https://h.example/x" ||
		fmt.Sprint(sub.Events) != "[sale.completed payout.sent]" || sub.Description != "d" || sub.Status != WebhookStatusDisabled ||
		sub.Livemode || sub.Secret != "" || !sub.CreatedAt.Equal(day(21, 10, 4, 5)) || !sub.UpdatedAt.Equal(day(22, 11, 5, 6)) ||
		sub.LastResponse == nil || sub.LastResponse.StatusCode != 200 || sub.LastResponse.RateLimit.Remaining != 599 {
		t.Errorf("subscription: %+v", sub)
	}
	page, err := c.Webhooks.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != "we_1" || !page.Data[0].UpdatedAt.Equal(day(22, 11, 5, 6)) ||
		page.NextCursor != "" || page.HasMore() || page.LastResponse.RequestID != "req2" || page.Data[0].LastResponse != nil {
		t.Errorf("page: %+v", page)
	}
	upd, err := c.Webhooks.Update(ctx, "we_1", &WebhookUpdateParams{Disabled: Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if upd.Status != "disabled" || !upd.UpdatedAt.Equal(day(22, 11, 5, 6)) || upd.LastResponse.StatusCode != 200 {
		t.Errorf("updated: %+v", upd)
	}
	rot, err := c.Webhooks.RotateSecret(ctx, "we_1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if rot.Secret != "whsec_new=" || !rot.Livemode || rot.Status != WebhookStatusEnabled || !rot.UpdatedAt.Equal(day(23, 0, 0, 0)) {
		t.Errorf("rotated: %+v", rot)
	}
	del, err := c.Webhooks.Delete(ctx, "we_1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if del.ID != "we_1" || del.Object != "webhook_subscription" || !del.Deleted || del.LastResponse.StatusCode != 200 {
		t.Errorf("deleted: %+v", del)
	}
	ev, err := c.Webhooks.Test(ctx, "we_1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != "evt_t1" || ev.Type != EventWebhookTest || ev.Data.Subscription != "we_1" || string(ev.Data.Raw) != `{"subscription":"we_1"}` ||
		!ev.CreatedAt.Equal(day(26, 10, 4, 5)) || ev.Livemode || ev.Deliveries != nil || ev.LastResponse.StatusCode != 202 {
		t.Errorf("test event: %+v", ev)
	}
	evs, err := c.Events.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Data) != 1 || evs.Data[0].ID != "evt_t1" || evs.Data[0].Data.Subscription != "we_1" || evs.HasMore() || evs.LastResponse == nil {
		t.Errorf("event page: %+v", evs)
	}

	got, err := c.Events.Get(ctx, "evt_1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "evt_1" || got.Type != EventPayoutSent || got.Data.Payout != "po_8fK2aQ" || got.Data.Currency != "USD" ||
		got.Data.Amount != "12345678901234567.89" || got.LastResponse.StatusCode != 200 {
		t.Errorf("event: %+v", got)
	}
	if cents, err := got.Data.Amount.MinorUnits(2); err != nil || cents != 1234567890123456789 {
		t.Errorf("amount beyond a double, in cents: %d %v", cents, err)
	}
	if len(got.Deliveries) != 4 {
		t.Fatalf("deliveries: %+v", got.Deliveries)
	}
	d0, d1, d2, d3 := got.Deliveries[0], got.Deliveries[1], got.Deliveries[2], got.Deliveries[3]
	if d0.Subscription != "we_1" || d0.Status != DeliveryDelivered || d0.Attempts != 1 || d0.LastAttemptAt == nil ||
		!d0.LastAttemptAt.Equal(day(21, 10, 4, 6)) || d0.LastStatus == nil || *d0.LastStatus != 204 || d0.LastError != nil {
		t.Errorf("delivered: %+v", d0)
	}
	if d1.Subscription != "we_2" || d1.Status != DeliveryFailed || d1.Attempts != 3 || d1.LastAttemptAt == nil ||
		d1.LastStatus != nil || d1.LastError == nil || *d1.LastError != "connection refused" {
		t.Errorf("failed: %+v", d1)
	}
	if d2.Subscription != "we_3" || d2.Status != DeliveryPending || d2.Attempts != 0 || d2.LastAttemptAt != nil ||
		d2.LastStatus != nil || d2.LastError != nil {
		t.Errorf("pending, all nulls: %+v", d2)
	}
	if d3.Status != DeliveryEndpointDeleted || d3.LastStatus == nil || *d3.LastStatus != 500 || d3.LastError != nil {
		t.Errorf("endpoint_deleted: %+v", d3)
	}
}

func TestEventDataOfEveryType(t *testing.T) {
	cases := []struct {
		in    string
		check func(e Event) bool
	}{
		{`{"id":"evt_1","type":"sale.completed","created_at":"2026-11-21T10:04:05Z","livemode":true,"data":{"order":"ord_1","product":"prod_1","tier":"tier_1","amount":19.990,"currency":"EUR"}}`,
			func(e Event) bool {
				return e.Livemode && e.Data.Order == "ord_1" && e.Data.Product == "prod_1" && e.Data.Tier == "tier_1" && e.Data.Amount == "19.990" && e.Data.Currency == "EUR"
			}},
		{`{"id":"evt_2","type":"sale.refunded","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{"order":"ord_1","product":"prod_1","tier":"tier_1","amount":1200,"currency":"JPY"}}`,
			func(e Event) bool { return e.Type == EventSaleRefunded && e.Data.Amount == "1200" }},
		{`{"id":"evt_3","type":"review.created","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{"review":"rev_1","product":"prod_1","rating":5,"body":"Lovely"}}`,
			func(e Event) bool { return e.Data.Review == "rev_1" && e.Data.Rating == 5 && e.Data.Body == "Lovely" }},
		{`{"id":"evt_4","type":"webhook.test","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{"subscription":"we_9"},"deliveries":[]}`,
			func(e Event) bool {
				return e.Data.Subscription == "we_9" && e.Deliveries != nil && len(e.Deliveries) == 0
			}},
		// A type this version does not know: never an error; data kept raw.
		{`{"id":"evt_5","type":"payout.failed","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{"payout":"po_1","amount":"n/a","rating":4.5,"reason":{"code":"x"}}}`,
			func(e Event) bool {
				return e.Type == "payout.failed" && e.Data.Payout == "" &&
					string(e.Data.Raw) == `{"payout":"po_1","amount":"n/a","rating":4.5,"reason":{"code":"x"}}`
			}},
		{`{"id":"evt_6","type":"thing.happened","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":[1,2]}`,
			func(e Event) bool { return string(e.Data.Raw) == `[1,2]` }},
		{`{"id":"evt_7","type":"thing.happened","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{"payout":"po_2","extra":true}}`,
			func(e Event) bool {
				return e.Data.Payout == "po_2" && string(e.Data.Raw) == `{"payout":"po_2","extra":true}`
			}},
	}
	for _, c := range cases {
		var e Event
		if err := json.Unmarshal([]byte(c.in), &e); err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if !c.check(e) || !e.CreatedAt.Equal(time.Date(2026, 11, 21, 10, 4, 5, 0, time.UTC)) || !strings.HasPrefix(e.ID, "evt_") {
			t.Errorf("%s: %+v", c.in, e)
		}
	}
	// The data of a known type must fit.
	var e Event
	if err := json.Unmarshal([]byte(`{"id":"evt_8","type":"review.created","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{"rating":"five"}}`), &e); err == nil {
		t.Errorf("a review.created with a rating that is not a number: %+v", e)
	}
	// A page of mixed types, the unknown one included.
	var page EventPage
	if err := json.Unmarshal([]byte(`{"data":[`+testEvJSON+`,{"id":"evt_9","type":"new.kind","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{"amount":{"v":1}}}],"next_cursor":"n1"}`), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 || page.Data[1].ID != "evt_9" || string(page.Data[1].Data.Raw) != `{"amount":{"v":1}}` || !page.HasMore() {
		t.Errorf("page: %+v", page)
	}
}

func TestManagementIterators(t *testing.T) {
	subPages := map[string]string{
		"":   `{"data":[{"id":"we_3","object":"webhook_subscription","status":"enabled"},{"id":"we_2","status":"disabled"}],"next_cursor":"c1"}`,
		"c1": `{"data":[{"id":"we_1","status":"enabled"}],"next_cursor":null}`,
	}
	evPages := map[string]string{
		"":   `{"data":[{"id":"evt_3","type":"webhook.test","created_at":"2026-11-26T10:00:03Z","livemode":false,"data":{"subscription":"we_1"}}],"next_cursor":"e1"}`,
		"e1": `{"data":[],"next_cursor":"e2"}`,
		"e2": `{"data":[{"id":"evt_2","type":"payout.sent","created_at":"2026-11-26T10:00:02Z","livemode":false,"data":{"payout":"po_1","amount":5,"currency":"USD"}},{"id":"evt_1","type":"later.kind","created_at":"2026-11-26T10:00:01Z","livemode":false,"data":{}}],"next_cursor":null}`,
	}
	f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "600")
		w.Header().Set("X-RateLimit-Remaining", fmt.Sprint(600-n))
		if strings.HasSuffix(r.URL.Path, "/v1/webhooks") {
			io.WriteString(w, subPages[r.URL.Query().Get("cursor")])
			return
		}
		io.WriteString(w, evPages[r.URL.Query().Get("cursor")])
	})
	c, _ := newTestClient(t, f.srv.URL)
	ctx := context.Background()

	it := c.Webhooks.All(ctx, &WebhookListParams{Limit: 2})
	if len(f.requests()) != 0 || it.LastResponse() != nil {
		t.Fatal("Webhooks.All fetched before Next")
	}
	var ids []string
	for it.Next() {
		ids = append(ids, it.Subscription().ID+"="+it.Current().Status)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, ",") != "we_3=enabled,we_2=disabled,we_1=enabled" || it.Next() {
		t.Errorf("subscriptions %v", ids)
	}
	reqs := f.requests()
	if len(reqs) != 2 || reqs[0].RawQuery != "limit=2" || reqs[1].RawQuery != "cursor=c1&limit=2" || it.LastResponse().RateLimit.Remaining != 598 {
		t.Errorf("requests %+v", reqs)
	}

	since := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	eit := c.Events.All(ctx, &EventListParams{Type: "", CreatedGte: since, Limit: 1})
	ids = nil
	for eit.Next() {
		e := eit.Event()
		ids = append(ids, e.ID+"/"+string(eit.Current().Type))
		if len(ids) == 1 && len(f.requests()) != 3 {
			t.Fatalf("the first event needed %d requests", len(f.requests())-2)
		}
	}
	if err := eit.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, ",") != "evt_3/webhook.test,evt_2/payout.sent,evt_1/later.kind" {
		t.Errorf("events %v", ids)
	}
	reqs = f.requests()[2:]
	want := []string{
		"created_gte=2026-11-26T10%3A00%3A00Z&limit=1",
		"created_gte=2026-11-26T10%3A00%3A00Z&cursor=e1&limit=1",
		"created_gte=2026-11-26T10%3A00%3A00Z&cursor=e2&limit=1",
	}
	if len(reqs) != len(want) {
		t.Fatalf("%d event requests: %+v", len(reqs), reqs)
	}
	for i, r := range reqs {
		if r.Path != "/v1/events" || r.RawQuery != want[i] {
			t.Errorf("event page %d: %s ?%s, want ?%s (the filters on every page)", i, r.Path, r.RawQuery, want[i])
		}
	}

	// An error ends the iteration and is kept.
	g := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(403)
		io.WriteString(w, `{"error":{"type":"permission_error","code":"insufficient_scope","message":"m","request_id":"r"}}`)
	})
	c2, _ := newTestClient(t, g.srv.URL)
	eit = c2.Events.All(ctx, nil)
	if eit.Next() || !errors.Is(eit.Err(), ErrPermission) || eit.Err().(*Error).Code != "insufficient_scope" {
		t.Errorf("err %v", eit.Err())
	}
	wit := c2.Webhooks.All(ctx, nil)
	if wit.Next() || !errors.Is(wit.Err(), ErrPermission) {
		t.Errorf("err %v", wit.Err())
	}
}

func TestManagementEmptyIDsAreRefusedWithoutARequest(t *testing.T) {
	f := newFakeAPI(t, manageAPI)
	c, _ := newTestClient(t, f.srv.URL)
	ctx := context.Background()
	errs := map[string]error{}
	_, errs["Webhooks.Get"] = c.Webhooks.Get(ctx, "")
	_, errs["Webhooks.Update"] = c.Webhooks.Update(ctx, "", nil)
	_, errs["Webhooks.Delete"] = c.Webhooks.Delete(ctx, "", nil)
	_, errs["Webhooks.RotateSecret"] = c.Webhooks.RotateSecret(ctx, "", nil)
	_, errs["Webhooks.Test"] = c.Webhooks.Test(ctx, "", nil)
	_, errs["Events.Get"] = c.Events.Get(ctx, "")
	for name, err := range errs {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s with an empty id: %v", name, err)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestManagementNotFound(t *testing.T) {
	f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		io.WriteString(w, `{"error":{"type":"invalid_request_error","code":"resource_missing","message":"m","param":"id","request_id":"r"}}`)
	})
	c, _ := newTestClient(t, f.srv.URL)
	ctx := context.Background()
	_, err := c.Webhooks.Delete(ctx, "we_gone", nil)
	if !errors.Is(err, ErrNotFound) || err.(*Error).Code != "resource_missing" || err.(*Error).Param != "id" {
		t.Errorf("Delete: %v", err)
	}
	_, err = c.Events.Get(ctx, "evt_gone")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("Events.Get: %v", err)
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("a 404 was retried: %d requests", n)
	}
}

// VerifyWebhook returns the data of a webhook.test delivery, and does not fail on an
// event type it does not know.
func TestVerifyTestAndUnknownEvents(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ts := fmt.Sprint(now.Unix())
	for _, c := range []struct{ id, payload, want string }{
		{"evt_t1", testEvJSON, "we_1"},
		{"evt_n1", `{"id":"evt_n1","type":"subscription.paused","created_at":"2026-11-26T10:04:05Z","livemode":false,"data":{"subscription":["we_1"]}}`, ""},
	} {
		payload := []byte(c.payload)
		ev, err := verifyWebhookAt(payload, deliveryHeaders(c.id, ts, signFor(t, testSecret, c.id, ts, payload)), testSecret, now, WebhookTolerance)
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		if ev.ID != c.id || ev.Data.Subscription != c.want || !strings.HasPrefix(string(ev.Data.Raw), `{"subscription":`) {
			t.Errorf("%s: %+v", c.id, ev)
		}
	}
}
