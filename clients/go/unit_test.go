package market

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// ---- retry decisions ------------------------------------------------------------------

func TestShouldRetry(t *testing.T) {
	cases := []struct {
		method  string
		idem    bool
		status  int
		attempt int
		max     int
		want    bool
	}{
		{"GET", false, 429, 0, 2, true},
		{"GET", false, 503, 1, 2, true},
		{"GET", false, 429, 2, 2, false}, // retries used up
		{"GET", false, 429, 0, 0, false}, // retries disabled
		{"POST", true, 429, 0, 2, true},
		{"POST", true, 503, 0, 2, true},
		{"POST", false, 429, 0, 2, true}, // a 429 was not carried out
		{"GET", false, 0, 0, 2, true},    // network failure, GET
		{"GET", false, 0, 1, 2, true},
		{"GET", false, 0, 2, 2, false},
		{"POST", true, 0, 0, 2, true},   // network failure, POST with Idempotency-Key
		{"POST", false, 0, 0, 2, false}, // ...without one: it may have been carried out
		{"DELETE", false, 0, 0, 2, false},
		{"GET", false, 500, 0, 2, false},
		{"GET", false, 502, 0, 2, true}, // the gateway: repeatable requests only
		{"GET", false, 504, 0, 2, true},
		{"POST", true, 502, 0, 2, true},
		{"DELETE", true, 504, 0, 2, true},
		{"POST", false, 502, 0, 2, false},
		{"POST", false, 504, 0, 2, false},
		{"GET", false, 502, 2, 2, false},
		{"GET", false, 400, 0, 2, false},
		{"GET", false, 401, 0, 2, false},
		{"GET", false, 404, 0, 2, false},
		{"POST", true, 409, 0, 2, false},
		{"GET", false, 200, 0, 2, false},
	}
	for _, c := range cases {
		if got := shouldRetry(c.method, c.idem, c.status, c.attempt, c.max); got != c.want {
			t.Errorf("shouldRetry(%s, idem=%v, %d, attempt %d of %d) = %v, want %v",
				c.method, c.idem, c.status, c.attempt, c.max, got, c.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"7", 7 * time.Second, true},
		{" 60 ", 60 * time.Second, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"", 0, false},
		{"soon", 0, false},
		{"1.5", 0, false},
		{"Sat, 21 Nov 2026 10:00:30 GMT", 30 * time.Second, true},
		{"Sat, 21 Nov 2026 09:59:00 GMT", 0, true},
	}
	for _, c := range cases {
		got, ok := parseRetryAfter(c.in, now)
		if got != c.want || ok != c.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	backoff := func(n int) time.Duration { return time.Duration(n+1) * time.Millisecond }
	h := http.Header{"Retry-After": {"17"}}
	if d := retryDelay(429, h, 0, backoff); d != 17*time.Second {
		t.Errorf("429 with Retry-After 17: %v", d)
	}
	if d := retryDelay(503, http.Header{"Retry-After": {"1"}}, 1, backoff); d != time.Second {
		t.Errorf("503 with Retry-After 1: %v", d)
	}
	if d := retryDelay(429, http.Header{}, 1, backoff); d != 2*time.Millisecond {
		t.Errorf("429 without Retry-After falls back to the back-off: %v", d)
	}
	if d := retryDelay(0, h, 0, backoff); d != time.Millisecond {
		t.Errorf("network failure: the back-off, not a stale Retry-After: %v", d)
	}
}

func TestNetworkBackoff(t *testing.T) {
	for attempt, max := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second} {
		for i := 0; i < 50; i++ {
			d := networkBackoff(attempt)
			if d < max/2 || d > max {
				t.Fatalf("networkBackoff(%d) = %v, want within [%v, %v]", attempt, d, max/2, max)
			}
		}
	}
}

// ---- parameter encoding ---------------------------------------------------------------

func TestProductListParamsEncoding(t *testing.T) {
	var nilParams *ProductListParams
	if q := nilParams.values().Encode(); q != "" {
		t.Errorf("nil params: %q", q)
	}
	if q := (&ProductListParams{}).values().Encode(); q != "" {
		t.Errorf("zero params: %q", q)
	}
	p := &ProductListParams{
		Category: "fonts", Q: `"retro font" or -serif`, Seller: "pixel_forge-1",
		MinPrice: "0", MaxPrice: "19.990", Sort: SortPriceDesc, Limit: 7, Cursor: "abc-_DEF",
	}
	got := p.values().Encode()
	want := "category=fonts&cursor=abc-_DEF&limit=7&max_price=19.990&min_price=0&q=%22retro+font%22+or+-serif&seller=pixel_forge-1&sort=price_desc"
	if got != want {
		t.Errorf("encoding:\n got %s\nwant %s", got, want)
	}
	// A negative limit is sent as it is, for the API to refuse (the client adds no rules).
	if got := (&ProductListParams{Limit: -1}).values().Encode(); got != "limit=-1" {
		t.Errorf("negative limit: %q", got)
	}
}

func TestSellerAndOrderParamsEncoding(t *testing.T) {
	var sp *SellerParams
	if q := sp.values().Encode(); q != "" {
		t.Errorf("nil seller params: %q", q)
	}
	if q := (&SellerParams{Limit: 3, Cursor: "c1"}).values().Encode(); q != "cursor=c1&limit=3" {
		t.Errorf("seller params: %q", q)
	}
	var op *OrderListParams
	if q := op.values().Encode(); q != "" {
		t.Errorf("nil order params: %q", q)
	}
	if q := (&OrderListParams{Status: OrderStatusRefunded, Limit: 100, Cursor: "x y"}).values().Encode(); q != "cursor=x+y&limit=100&status=refunded" {
		t.Errorf("order params: %q", q)
	}
}

// recorded is one request as a fake server saw it.
type recorded struct {
	Method, Path, RawQuery, Body string
	Header                       http.Header
}

// fakeAPI answers with the handler and records every request.
type fakeAPI struct {
	mu   sync.Mutex
	reqs []recorded
	srv  *httptest.Server
}

func newFakeAPI(t *testing.T, handler func(n int, w http.ResponseWriter, r *http.Request)) *fakeAPI {
	t.Helper()
	f := &fakeAPI{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, recorded{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, string(b), r.Header.Clone()})
		n := len(f.reqs)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("X-Request-Id", fmt.Sprintf("req%d", n))
		handler(n, w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// sleeps records the waits of a client instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func newTestClient(t *testing.T, base string, opts ...Option) (*Client, *sleeps) {
	t.Helper()
	s := &sleeps{}
	c, err := NewClient("sk_test_0123456789abcdefghijABCDEFGHIJ0123456789", append([]Option{WithBaseURL(base), withSleep(s.sleep)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	c.backoff = func(n int) time.Duration { return time.Duration(n+1) * time.Millisecond }
	return c, s
}

func TestRequestsOnTheWire(t *testing.T) {
	f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/link"):
			w.WriteHeader(201)
			io.WriteString(w, `{"object":"download_link","download":"dl_1","url":"http://x/files/t","expires_at":"2026-11-21T11:04:05Z"}`)
		case r.Method == "POST":
			w.WriteHeader(201)
			io.WriteString(w, `{"id":"we_1","object":"webhook_subscription","url":"https://h.example/x","events":["sale.completed"],"description":"d","status":"enabled","livemode":false,"secret":"whsec_abc=","created_at":"2026-11-21T10:04:05Z"}`)
		case strings.HasPrefix(r.URL.Path, "/base/v1/sellers/"):
			io.WriteString(w, `{"id":"s","name":"S","bio":"","website":null,"created_at":"2026-11-21T10:04:05Z","product_count":0,"products":{"data":[],"next_cursor":null}}`)
		case strings.HasPrefix(r.URL.Path, "/base/v1/products/"):
			io.WriteString(w, `{"id":"prod_1","title":"T","description":"D","category":"fonts","price":19.99,"currency":"USD","seller":"s","tiers":[],"rating":{"average":null,"count":0},"created_at":"2026-11-21T10:04:05Z","updated_at":"2026-11-21T10:04:05Z"}`)
		default:
			io.WriteString(w, `{"data":[],"next_cursor":null}`)
		}
	})
	c, _ := newTestClient(t, f.srv.URL+"/base/")
	ctx := context.Background()
	if _, err := c.Products.List(ctx, &ProductListParams{Category: "fonts", Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Products.Get(ctx, "prod_a/b c?"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sellers.Get(ctx, "pixel", &SellerParams{Limit: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Orders.List(ctx, &OrderListParams{Status: OrderStatusPaid}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Downloads.CreateLink(ctx, "dl_1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Downloads.CreateLink(ctx, "dl_1", &LinkParams{ExpiresIn: 120, IdempotencyKey: "mine-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Webhooks.Create(ctx, &WebhookParams{URL: "https://h.example/x", Events: []EventType{EventSaleCompleted}, Description: "d"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Webhooks.Create(ctx, &WebhookParams{URL: "https://h.example/x"}); err != nil {
		t.Fatal(err)
	}
	want := []struct{ method, path, query, body string }{
		{"GET", "/base/v1/products", "category=fonts&limit=5", ""},
		{"GET", "/base/v1/products/prod_a%2Fb%20c%3F", "", ""},
		{"GET", "/base/v1/sellers/pixel", "limit=2", ""},
		{"GET", "/base/v1/orders", "status=paid", ""},
		{"POST", "/base/v1/downloads/dl_1/link", "", ""},
		{"POST", "/base/v1/downloads/dl_1/link", "", `{"expires_in":120}`},
		{"POST", "/base/v1/webhooks", "", `{"url":"https://h.example/x","events":["sale.completed"],"description":"d"}`},
		{"POST", "/base/v1/webhooks", "", `{"url":"https://h.example/x"}`},
	}
	reqs := f.requests()
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d", len(reqs), len(want))
	}
	keys := map[string]bool{}
	for i, w := range want {
		r := reqs[i]
		if r.Method != w.method || r.Path != w.path || r.RawQuery != w.query || r.Body != w.body {
			t.Errorf("request %d: %s %s ?%s %s; want %s %s ?%s %s", i, r.Method, r.Path, r.RawQuery, r.Body, w.method, w.path, w.query, w.body)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk_test_0123456789abcdefghijABCDEFGHIJ0123456789" {
			t.Errorf("request %d: Authorization %q", i, got)
		}
		if !strings.HasPrefix(r.Header.Get("User-Agent"), "market-go/") {
			t.Errorf("request %d: User-Agent %q", i, r.Header.Get("User-Agent"))
		}
		ct := r.Header.Get("Content-Type")
		if (w.body != "") != (ct == "application/json") {
			t.Errorf("request %d: Content-Type %q with body %q", i, ct, w.body)
		}
		ik := r.Header.Get("Idempotency-Key")
		if w.method == "GET" && ik != "" {
			t.Errorf("request %d: a GET with Idempotency-Key %q", i, ik)
		}
		if w.method == "POST" {
			if ik == "" {
				t.Errorf("request %d: a POST without Idempotency-Key", i)
			}
			if keys[ik] {
				t.Errorf("request %d: Idempotency-Key %q used twice", i, ik)
			}
			keys[ik] = true
		}
	}
	if got := reqs[5].Header.Get("Idempotency-Key"); got != "mine-1" {
		t.Errorf("the caller's Idempotency-Key was not sent: %q", got)
	}
	if got := reqs[4].Header.Get("Idempotency-Key"); !strings.HasPrefix(got, "market-go-") || len(got) != len("market-go-")+32 {
		t.Errorf("generated Idempotency-Key %q", got)
	}
}

func TestEmptyIDsAreRefusedWithoutARequest(t *testing.T) {
	f := newFakeAPI(t, func(int, http.ResponseWriter, *http.Request) {})
	c, _ := newTestClient(t, f.srv.URL)
	ctx := context.Background()
	if _, err := c.Products.Get(ctx, ""); err == nil {
		t.Error("Products.Get with an empty id")
	}
	if _, err := c.Sellers.Get(ctx, "", nil); err == nil {
		t.Error("Sellers.Get with an empty id")
	}
	if _, err := c.Downloads.CreateLink(ctx, "", nil); err == nil {
		t.Error("Downloads.CreateLink with an empty id")
	}
	if _, err := c.Webhooks.Create(ctx, nil); err == nil {
		t.Error("Webhooks.Create without params")
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// ---- responses, errors and retries through a fake server -------------------------------

func TestDecodingIsExact(t *testing.T) {
	f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "600")
		w.Header().Set("X-RateLimit-Remaining", "598")
		w.Header().Set("X-RateLimit-Reset", "42")
		io.WriteString(w, `{"id":"prod_1","title":"T","description":"D","category":"fonts","price":1200.50,"currency":"USD","seller":"s",
		 "tiers":[{"id":"tier_1","name":"P","description":"","price":0.1,"currency":"USD","licence":{"seats":12345678901234567890,"commercial":false}},
		          {"id":"tier_2","name":"T","description":"","price":19.990000000000001,"currency":"USD","licence":null}],
		 "rating":{"average":4.25,"count":4},"created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:06Z","new_field":1}`)
	})
	c, _ := newTestClient(t, f.srv.URL)
	p, err := c.Products.Get(context.Background(), "prod_1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Price.String() != "1200.50" || p.Tiers[0].Price != "0.1" || p.Tiers[1].Price != "19.990000000000001" {
		t.Errorf("prices not kept as sent: %q %q %q", p.Price, p.Tiers[0].Price, p.Tiers[1].Price)
	}
	if p.Tiers[0].Licence["seats"] != json.Number("12345678901234567890") || p.Tiers[0].Licence["commercial"] != false || p.Tiers[1].Licence != nil {
		t.Errorf("licence: %#v %#v", p.Tiers[0].Licence, p.Tiers[1].Licence)
	}
	if p.Rating.Average == nil || *p.Rating.Average != "4.25" || p.Rating.Count != 4 {
		t.Errorf("rating: %+v", p.Rating)
	}
	if !p.UpdatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)) {
		t.Errorf("updated_at: %v", p.UpdatedAt)
	}
	rl := p.LastResponse.RateLimit
	if !rl.Present || rl.Limit != 600 || rl.Remaining != 598 || rl.Reset != 42*time.Second || p.LastResponse.RequestID != "req1" || p.LastResponse.StatusCode != 200 {
		t.Errorf("response: %+v", p.LastResponse)
	}
	if minor, err := p.Price.MinorUnits(2); err != nil || minor != 120050 {
		t.Errorf("MinorUnits: %d %v", minor, err)
	}
}

func TestDecimal(t *testing.T) {
	var d Decimal
	for _, in := range []string{`19.99`, `"19.99"`} {
		if err := json.Unmarshal([]byte(in), &d); err != nil || d != "19.99" {
			t.Errorf("unmarshal %s: %q %v", in, d, err)
		}
	}
	for _, in := range []string{`"x"`, `"1e"`, `"01"`, `true`} {
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("unmarshal %s accepted: %q", in, d)
		}
	}
	if b, err := json.Marshal(struct{ P Decimal }{"1200.5"}); err != nil || string(b) != `{"P":1200.5}` {
		t.Errorf("marshal: %s %v", b, err)
	}
	if _, err := ParseDecimal("19.9.9"); err == nil {
		t.Error("ParseDecimal accepted 19.9.9")
	}
	if c, err := Decimal("5").Cmp("5.00"); err != nil || c != 0 {
		t.Errorf("5 vs 5.00: %d %v", c, err)
	}
	if c, err := Decimal("0.1").Cmp("0.09"); err != nil || c != 1 {
		t.Errorf("0.1 vs 0.09: %d %v", c, err)
	}
	if _, err := Decimal("19.999").MinorUnits(2); err == nil {
		t.Error("19.999 in cents accepted")
	}
	if n, err := Decimal("1200").MinorUnits(0); err != nil || n != 1200 {
		t.Errorf("JPY: %d %v", n, err)
	}
	if f, err := Decimal("19.99").Float64(); err != nil || f != 19.99 {
		t.Errorf("Float64: %v %v", f, err)
	}
}

func TestErrorKinds(t *testing.T) {
	cases := []struct {
		status   int
		body     string
		kind     Kind
		sentinel error
	}{
		{401, `{"error":{"type":"authentication_error","code":"invalid_api_key","message":"m","request_id":"r401"}}`, KindAuthentication, ErrAuthentication},
		{403, `{"error":{"type":"permission_error","code":"insufficient_scope","message":"m","request_id":"r"}}`, KindPermission, ErrPermission},
		{404, `{"error":{"type":"invalid_request_error","code":"resource_missing","message":"m","param":"id","request_id":"r"}}`, KindNotFound, ErrNotFound},
		{400, `{"error":{"type":"invalid_request_error","code":"parameter_invalid","message":"m","param":"limit","request_id":"r"}}`, KindInvalidRequest, ErrInvalidRequest},
		{405, `{"error":{"type":"invalid_request_error","code":"method_not_allowed","message":"m","request_id":"r"}}`, KindInvalidRequest, ErrInvalidRequest},
		{413, `{"error":{"type":"invalid_request_error","code":"body_too_large","message":"m","request_id":"r"}}`, KindInvalidRequest, ErrInvalidRequest},
		{415, `{"error":{"type":"invalid_request_error","code":"unsupported_media_type","message":"m","request_id":"r"}}`, KindInvalidRequest, ErrInvalidRequest},
		{409, `{"error":{"type":"invalid_request_error","code":"order_refunded","message":"m","request_id":"r"}}`, KindConflict, ErrConflict},
		{429, `{"error":{"type":"rate_limit_error","code":"rate_limited","message":"m","request_id":"r"}}`, KindRateLimit, ErrRateLimit},
		{500, `{"error":{"type":"api_error","code":"internal_error","message":"m","request_id":"r"}}`, KindServer, ErrServer},
		{503, `{"error":{"type":"api_error","code":"service_unavailable","message":"m","request_id":"r"}}`, KindServer, ErrServer},
		{502, `<html>bad gateway</html>`, KindServer, ErrServer},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-RateLimit-Limit", "10")
				w.Header().Set("X-RateLimit-Remaining", "0")
				w.Header().Set("X-RateLimit-Reset", "9")
				w.Header().Set("Retry-After", "9")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			c, _ := newTestClient(t, f.srv.URL, WithMaxRetries(0))
			_, err := c.Products.List(context.Background(), nil)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("not an *Error: %v", err)
			}
			if e.Kind != tc.kind || e.Status != tc.status || !errors.Is(err, tc.sentinel) || KindOf(err) != tc.kind {
				t.Fatalf("got kind %s status %d for %d", e.Kind, e.Status, tc.status)
			}
			for _, other := range []error{ErrAuthentication, ErrPermission, ErrNotFound, ErrInvalidRequest, ErrConflict, ErrRateLimit, ErrServer, ErrConnection} {
				if other != tc.sentinel && errors.Is(err, other) {
					t.Errorf("errors.Is(err, %v) is true too", other)
				}
			}
			if !e.RateLimit.Present || e.RateLimit.Limit != 10 || e.RateLimit.Remaining != 0 || e.RateLimit.Reset != 9*time.Second {
				t.Errorf("rate limit: %+v", e.RateLimit)
			}
			if strings.HasPrefix(tc.body, "{") {
				var env struct{ Error map[string]string }
				_ = json.Unmarshal([]byte(tc.body), &env)
				if e.Type != env.Error["type"] || e.Code != env.Error["code"] || e.Message != "m" || e.Param != env.Error["param"] || e.RequestID != env.Error["request_id"] {
					t.Errorf("fields: %+v", e)
				}
			} else if e.Message != "Bad Gateway" || e.RequestID != "req1" {
				t.Errorf("non-JSON error: %+v", e)
			}
			if (tc.status == 429 || tc.status == 503 || tc.status == 502) != (e.RetryAfter == 9*time.Second) {
				t.Errorf("RetryAfter %v for %d", e.RetryAfter, tc.status)
			}
			if !strings.Contains(e.Error(), fmt.Sprint(tc.status)) {
				t.Errorf("message %q", e.Error())
			}
		})
	}
}

func TestRateLimitedIsRetriedAfterRetryAfter(t *testing.T) {
	f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			w.Header().Set("Retry-After", fmt.Sprint(10*n))
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"type":"rate_limit_error","code":"rate_limited","message":"slow down","request_id":"x"}}`)
			return
		}
		w.WriteHeader(201)
		io.WriteString(w, `{"object":"download_link","download":"dl_1","url":"u","expires_at":"2026-11-21T11:04:05Z"}`)
	})
	c, s := newTestClient(t, f.srv.URL)
	link, err := c.Downloads.CreateLink(context.Background(), "dl_1", &LinkParams{ExpiresIn: 60})
	if err != nil {
		t.Fatal(err)
	}
	if link.URL != "u" || link.LastResponse.StatusCode != 201 {
		t.Errorf("link %+v", link)
	}
	if fmt.Sprint(s.d) != "[10s 20s]" {
		t.Errorf("waits %v, want [10s 20s] (the Retry-After of each 429)", s.d)
	}
	reqs := f.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	key := reqs[0].Header.Get("Idempotency-Key")
	for i, r := range reqs {
		if r.Header.Get("Idempotency-Key") != key || r.Body != `{"expires_in":60}` {
			t.Errorf("attempt %d: key %q body %q; want the first attempt's", i, r.Header.Get("Idempotency-Key"), r.Body)
		}
	}
}

func TestRetriesStopAtMaxRetries(t *testing.T) {
	for _, max := range []int{0, 1, 2, 3} {
		f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
			io.WriteString(w, `{"error":{"type":"api_error","code":"service_unavailable","message":"db down","request_id":"x"}}`)
		})
		c, s := newTestClient(t, f.srv.URL, WithMaxRetries(max))
		_, err := c.Orders.List(context.Background(), nil)
		if !errors.Is(err, ErrServer) || err.(*Error).Code != "service_unavailable" {
			t.Errorf("max %d: %v", max, err)
		}
		if n := len(f.requests()); n != max+1 {
			t.Errorf("max %d: %d requests", max, n)
		}
		if len(s.d) != max {
			t.Errorf("max %d: %d waits", max, len(s.d))
		}
	}
}

func TestDefaultMaxRetriesIsTwo(t *testing.T) {
	f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(429)
	})
	c, _ := newTestClient(t, f.srv.URL)
	if c.MaxRetries() != 2 {
		t.Errorf("MaxRetries() = %d", c.MaxRetries())
	}
	_, err := c.Products.List(context.Background(), nil)
	if !errors.Is(err, ErrRateLimit) || len(f.requests()) != 3 {
		t.Errorf("%v after %d requests", err, len(f.requests()))
	}
}

func TestOtherErrorsAreNotRetried(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 409, 500, 501} {
		f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(status)
		})
		c, _ := newTestClient(t, f.srv.URL)
		if _, err := c.Products.Get(context.Background(), "prod_1"); err == nil {
			t.Errorf("%d: no error", status)
		}
		if n := len(f.requests()); n != 1 {
			t.Errorf("%d: %d requests", status, n)
		}
	}
}

// dropFirst is a listener whose first n connections are closed after the request
// arrives, without an answer; later ones are served.
func dropFirst(t *testing.T, n int, handler http.HandlerFunc) (string, *int) {
	t.Helper()
	var mu sync.Mutex
	dropped := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		drop := dropped < n
		if drop {
			dropped++
		}
		mu.Unlock()
		if drop {
			io.ReadAll(r.Body)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		handler(w, r)
	}))
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, &dropped
}

func TestNetworkFailures(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	ok := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Method == "POST" {
			w.WriteHeader(201)
			io.WriteString(w, `{"object":"download_link","download":"dl_1","url":"u","expires_at":"2026-11-21T11:04:05Z"}`)
			return
		}
		io.WriteString(w, `{"data":[],"next_cursor":null}`)
	}

	t.Run("GET is retried", func(t *testing.T) {
		u, dropped := dropFirst(t, 2, ok)
		c, s := newTestClient(t, u)
		if _, err := c.Products.List(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if *dropped != 2 || len(s.d) != 2 {
			t.Errorf("dropped %d, waits %v", *dropped, s.d)
		}
	})
	t.Run("POST with a generated key is retried with the same key", func(t *testing.T) {
		mu.Lock()
		keys = nil
		mu.Unlock()
		u, _ := dropFirst(t, 1, func(w http.ResponseWriter, r *http.Request) { ok(w, r) })
		var seen []string
		c, _ := newTestClient(t, u, WithHTTPClient(&http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			seen = append(seen, r.Header.Get("Idempotency-Key"))
			return http.DefaultTransport.RoundTrip(r)
		})}))
		if _, err := c.Downloads.CreateLink(context.Background(), "dl_1", nil); err != nil {
			t.Fatal(err)
		}
		if len(seen) != 2 || seen[0] == "" || seen[0] != seen[1] || len(keys) != 1 || keys[0] != seen[0] {
			t.Errorf("keys sent %v, served %v", seen, keys)
		}
	})
	t.Run("retries stop at MaxRetries with a connection error", func(t *testing.T) {
		u, dropped := dropFirst(t, 100, ok)
		c, s := newTestClient(t, u, WithMaxRetries(1))
		_, err := c.Orders.List(context.Background(), nil)
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindConnection || !errors.Is(err, ErrConnection) || e.Status != 0 || e.Err == nil {
			t.Fatalf("%#v", err)
		}
		if *dropped != 2 || len(s.d) != 1 {
			t.Errorf("dropped %d, waits %v", *dropped, s.d)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		c, s := newTestClient(t, "http://"+addr)
		_, err = c.Products.Get(context.Background(), "prod_1")
		if KindOf(err) != KindConnection || len(s.d) != 2 {
			t.Errorf("%v after %d waits", err, len(s.d))
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestContextEndsTheWait(t *testing.T) {
	f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(429)
	})
	// A deadline shorter than Retry-After: the 429 comes back at once, without a wait.
	c, s := newTestClient(t, f.srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.Products.List(ctx, nil)
	if !errors.Is(err, ErrRateLimit) || len(s.d) != 0 || len(f.requests()) != 1 {
		t.Errorf("%v; waits %v; %d requests", err, s.d, len(f.requests()))
	}
	// Cancelled while waiting (the real sleep): the call ends with the context's error.
	c2, err := NewClient("sk_test_x", WithBaseURL(f.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel2)
	start := time.Now()
	_, err = c2.Products.List(ctx2, nil)
	if !errors.Is(err, context.Canceled) || KindOf(err) != KindConnection {
		t.Errorf("cancelled wait: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the wait was not cut short: %v", time.Since(start))
	}
}

func TestIterators(t *testing.T) {
	pages := map[string]string{
		"":   `{"data":[{"id":"p1","title":"a","price":1,"seller":"s"},{"id":"p2","title":"b","price":2.5,"seller":"s"}],"next_cursor":"c1"}`,
		"c1": `{"data":[],"next_cursor":"c2"}`,
		"c2": `{"data":[{"id":"p3","title":"c","price":0,"seller":"s"}],"next_cursor":null}`,
	}
	f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "600")
		w.Header().Set("X-RateLimit-Remaining", fmt.Sprint(600-n))
		io.WriteString(w, pages[r.URL.Query().Get("cursor")])
	})
	c, _ := newTestClient(t, f.srv.URL)
	it := c.Products.All(context.Background(), &ProductListParams{Category: "fonts", Limit: 2})
	if len(f.requests()) != 0 {
		t.Fatal("All fetched before Next")
	}
	var ids []string
	for it.Next() {
		ids = append(ids, it.Product().ID+"="+it.Current().Price.String())
		if len(ids) == 1 && len(f.requests()) != 1 {
			t.Fatalf("the first item needed %d requests", len(f.requests()))
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, ",") != "p1=1,p2=2.5,p3=0" {
		t.Errorf("items %v", ids)
	}
	if it.Next() {
		t.Error("Next after the end")
	}
	reqs := f.requests()
	if len(reqs) != 3 || reqs[0].RawQuery != "category=fonts&limit=2" || reqs[1].RawQuery != "category=fonts&cursor=c1&limit=2" || reqs[2].RawQuery != "category=fonts&cursor=c2&limit=2" {
		t.Errorf("requests %+v", reqs)
	}
	if it.LastResponse().RateLimit.Remaining != 597 {
		t.Errorf("last response %+v", it.LastResponse())
	}

	// An error ends the iteration and is kept.
	g := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			io.WriteString(w, `{"data":[{"id":"ord_1","status":"paid","created_at":"2026-11-21T10:04:05Z","currency":"USD","total":5,"items":[],"downloads":[{"id":"dl_1","product":"p","filename":"f","size_bytes":3,"url":null,"expires_at":null}]}],"next_cursor":"c1"}`)
			return
		}
		w.WriteHeader(400)
		io.WriteString(w, `{"error":{"type":"invalid_request_error","code":"cursor_invalid","message":"m","param":"cursor","request_id":"r"}}`)
	})
	c2, _ := newTestClient(t, g.srv.URL)
	oit := c2.Orders.All(context.Background(), &OrderListParams{Status: OrderStatusPaid})
	n := 0
	for oit.Next() {
		n++
		o := oit.Order()
		if o.ID != "ord_1" || o.Downloads[0].URL != "" || o.Downloads[0].ExpiresAt != nil || oit.Current().Total != "5" {
			t.Errorf("order %+v", o)
		}
	}
	if n != 1 || !errors.Is(oit.Err(), ErrInvalidRequest) || oit.Err().(*Error).Code != "cursor_invalid" {
		t.Errorf("n=%d err=%v", n, oit.Err())
	}
}

// ---- construction and printing ---------------------------------------------------------

func TestNewClient(t *testing.T) {
	t.Setenv("MARKET_BASE_URL", "")
	if _, err := NewClient("sk_test_abc"); err == nil {
		t.Error("no base URL accepted")
	}
	if _, err := NewClient("", WithBaseURL("http://127.0.0.1:1")); err == nil {
		t.Error("empty key accepted")
	}
	for _, bad := range []string{"127.0.0.1:8080", "ftp://x", "http://", "http://h/?q=1", "http://u:p@h/"} {
		if _, err := NewClient("sk_test_abc", WithBaseURL(bad)); err == nil {
			t.Errorf("base URL %q accepted", bad)
		}
	}
	t.Setenv("MARKET_BASE_URL", "http://127.0.0.1:9/api/")
	c, err := NewClient("sk_test_abc")
	if err != nil || c.BaseURL() != "http://127.0.0.1:9/api" {
		t.Fatalf("from the environment: %v %v", c, err)
	}
	c, err = NewClient("sk_test_abc", WithBaseURL("https://api.example.com"))
	if err != nil || c.BaseURL() != "https://api.example.com" {
		t.Fatalf("the option wins over the environment: %v %v", c, err)
	}
}

func TestClientNeverPrintsItsKey(t *testing.T) {
	const key = "sk_live_SECRETsecretSECRETsecretSECRETsecret42"
	c, err := NewClient(key, WithBaseURL("http://127.0.0.1:8080"))
	if err != nil {
		t.Fatal(err)
	}
	type holder struct {
		C      *Client
		V      Client
		hidden *Client
		hv     Client
	}
	h := holder{C: c, V: *c, hidden: c, hv: *c}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v"} {
		for _, v := range []any{c, *c, h, &h, c.Products, c.Webhooks, []any{c}, map[string]*Client{"c": c}} {
			out := fmt.Sprintf(verb, v)
			if verb == "%T %v" {
				out = fmt.Sprintf(verb, v, v)
			}
			if strings.Contains(out, "SECRET") || strings.Contains(out, strings.ToLower("SECRETsecret")) {
				t.Errorf("%s of %T shows the key: %s", verb, v, out)
			}
		}
	}
	if s := c.String(); !strings.Contains(s, "sk_live_") || !strings.Contains(s, "redacted") || !strings.Contains(s, "127.0.0.1:8080") {
		t.Errorf("String() = %s", s)
	}
	// Nor does an error of a call.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c2, _ := NewClient(key, WithBaseURL("http://"+addr), WithMaxRetries(0))
	_, err = c2.Products.Get(context.Background(), "x")
	if err == nil || strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), "SECRET") {
		t.Errorf("error shows the key (or no error): %v", err)
	}
}

func TestRetryAfterOverTheCapIsNotWaitedFor(t *testing.T) {
	f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "61")
		w.WriteHeader(429)
	})
	c, s := newTestClient(t, f.srv.URL)
	_, err := c.Products.Get(context.Background(), "prod_1")
	if KindOf(err) != KindRateLimit || len(f.requests()) != 1 || len(s.d) != 0 {
		t.Fatalf("err %v after %d requests and waits %v; want the 429 at once", err, len(f.requests()), s.d)
	}
}

func TestResponseHookSeesEveryAttemptButNeverTheKey(t *testing.T) {
	const key = "sk_test_0123456789abcdefghijABCDEFGHIJ0123456789"
	f := newFakeAPI(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", fmt.Sprintf("req_%d", n))
		switch n {
		case 1:
			w.WriteHeader(502)
		case 2:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(503)
		default:
			io.WriteString(w, `{"data":[],"next_cursor":null}`)
		}
	})
	var infos []RequestInfo
	c, _ := newTestClient(t, f.srv.URL, WithResponseHook(func(i RequestInfo) { infos = append(infos, i) }))
	if _, err := c.Products.List(context.Background(), &ProductListParams{Limit: 2}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range infos {
		got = append(got, fmt.Sprintf("%s %s %d %v %s %d", i.Method, i.Path, i.Status, i.Err, i.RequestID, i.Attempt))
		if i.Duration < 0 {
			t.Errorf("negative duration %v", i.Duration)
		}
	}
	want := []string{
		"GET /v1/products?limit=2 502 <nil> req_1 1",
		"GET /v1/products?limit=2 503 <nil> req_2 2",
		"GET /v1/products?limit=2 200 <nil> req_3 3",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("hook saw %q, want %q", got, want)
	}
	shown := fmt.Sprintf("%v %+v %#v", infos, infos, infos)
	if strings.Contains(shown, key) || strings.Contains(shown, key[8:]) || strings.Contains(strings.ToLower(shown), "bearer") {
		t.Errorf("the key reached the hook: %s", shown)
	}

	// A connection error reaches the hook as Err; a panicking hook changes nothing.
	infos = nil
	c2, _ := newTestClient(t, "http://127.0.0.1:1", WithMaxRetries(1), WithResponseHook(func(i RequestInfo) {
		infos = append(infos, i)
		panic("a broken hook")
	}))
	if _, err := c2.Products.Get(context.Background(), "prod_1"); KindOf(err) != KindConnection {
		t.Fatalf("want a connection error, got %v", err)
	}
	if len(infos) != 2 || infos[0].Status != 0 || infos[0].Err == nil || infos[1].Attempt != 2 {
		t.Errorf("hook saw %+v", infos)
	}
}
