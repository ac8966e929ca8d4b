package market_test

// Integration tests against a real stack (nginx, the market-api FastCGI workers,
// PostgreSQL, market-webhookd), as clients/go/test.sh starts it. They run only with
// MARKET_IT=1 and the variables of `tools/stack up` exported (BASE_URL, MARKET_DB,
// MARKET_ADMIN, FILES_ROOT, DOWNLOAD_BASE_URL, MARKET_SECRET_FILE), plus
// MARKET_IT_TLS_CERT / MARKET_IT_TLS_KEY: a certificate for 127.0.0.1 signed by the CA
// the stack's market-webhookd trusts (MARKET_WEBHOOK_CA_FILE). The stack must run with
// MARKET_WEBHOOK_ALLOW_PRIVATE=1, MARKET_API_EXTENSIONS=webhook-management (the
// subscription management and events calls) and a low MARKET_RATE_LIMIT (test.sh uses
// 10): each test uses keys of its own so that the limit binds only where a test wants it
// to. TestITExtensionOff needs a second stack without any extension, its variables
// exported with the prefix PLAIN_ (test.sh starts it).
//
// The data is imported once per run with market-admin, under ids that carry a random
// suffix, so the tests can run again against the same stack.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	market "github.com/markethq/market/clients/go"
)

// ---- the stack and its data ------------------------------------------------------------

type fixture struct {
	run                    string // random suffix of every id
	sellerAcct, buyerAcct  string
	seller                 string // handle
	walkCategory           string
	walkIDs                []string // the 45 products of walkCategory
	font, fontTierP        string   // the detailed product and its cheaper tier
	fontsCategory          string
	paidOrder, refundOrder string
	paidDownload           string // a download of paidOrder
	refundedDownload       string // a download of refundOrder (refunded after import)
	fileBytes              []byte // content of the font's file
	sellerProducts         int
}

var (
	setupOnce sync.Once
	fx        *fixture
	setupErr  error
)

func env(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set: run clients/go/test.sh, or export the variables of tools/stack up", name)
	}
	return v
}

// stack skips the test unless MARKET_IT=1, and imports the data once.
func stack(t *testing.T) *fixture {
	t.Helper()
	if os.Getenv("MARKET_IT") != "1" {
		t.Skip("integration test: set MARKET_IT=1 and run against a stack (clients/go/test.sh)")
	}
	for _, v := range []string{"BASE_URL", "MARKET_DB", "MARKET_ADMIN", "FILES_ROOT", "DOWNLOAD_BASE_URL"} {
		env(t, v)
	}
	setupOnce.Do(func() { fx, setupErr = seed() })
	if setupErr != nil {
		t.Fatalf("seeding the stack: %v", setupErr)
	}
	return fx
}

func randomSuffix() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

func adminEnv() []string {
	return append(os.Environ(),
		"MARKET_FILES_ROOT="+os.Getenv("FILES_ROOT"),
		"MARKET_DOWNLOAD_BASE_URL="+os.Getenv("DOWNLOAD_BASE_URL"))
}

// admin runs market-admin and returns its stdout.
func admin(stdin string, args ...string) (string, error) {
	cmd := exec.Command(os.Getenv("MARKET_ADMIN"), args...)
	cmd.Env = adminEnv()
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("market-admin %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// psql runs SQL on the stack's database and returns its unaligned, tuples-only output.
func psql(sql string) (string, error) {
	cmd := exec.Command("psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", os.Getenv("MARKET_DB"), "-f", "-")
	cmd.Stdin = strings.NewReader(sql)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("psql: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func mustPsql(t *testing.T, sql string) string {
	t.Helper()
	out, err := psql(sql)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func seed() (*fixture, error) {
	x := randomSuffix()
	f := &fixture{
		run:           x,
		sellerAcct:    "acct_gos_" + x,
		buyerAcct:     "acct_gob_" + x,
		seller:        "go-" + x,
		walkCategory:  "gowalk-" + x,
		fontsCategory: "gofonts-" + x,
		font:          "prod_gofont_" + x,
		fontTierP:     "tier_gofont_p_" + x,
		paidOrder:     "ord_gopaid_" + x,
		refundOrder:   "ord_gorefund_" + x,
		fileBytes:     []byte("grotesk font files for " + x + "\n"),
	}
	rel := filepath.Join("go-"+x, "grotesk.zip")
	path := filepath.Join(os.Getenv("FILES_ROOT"), rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, f.fileBytes, 0o644); err != nil {
		return nil, err
	}

	type m = map[string]any
	var products []m
	// 45 products in one category: creation times in groups of three equal timestamps
	// and prices from a small set, so that the keyset pages have ties to get right.
	prices := []string{"19.99", "5", "1200.5", "0.1", "7.25", "19.99", "0"}
	for i := 0; i < 45; i++ {
		id := fmt.Sprintf("prod_gowalk_%s_%02d", x, i)
		f.walkIDs = append(f.walkIDs, id)
		products = append(products, m{
			"id": id, "seller": f.seller, "title": fmt.Sprintf("Go walk item %02d", i),
			"description": "an item of the walk", "category": f.walkCategory, "currency": "USD",
			"status":     "published",
			"created_at": time.Date(2026, 1, 1, i/3, 0, 0, 0, time.UTC).Format(time.RFC3339),
			"tiers": []m{{"id": fmt.Sprintf("tier_gowalk_%s_%02d", x, i), "name": "Personal",
				"price": json.Number(prices[i%len(prices)]), "licence": m{"seats": 1}}},
		})
	}
	products = append(products,
		m{"id": "prod_godraft_" + x, "seller": f.seller, "title": "Go draft", "category": f.walkCategory,
			"currency": "USD", "status": "draft", "tiers": []m{{"id": "tier_godraft_" + x, "name": "P", "price": 1}}},
		m{"id": f.font, "seller": f.seller, "title": "Grotesk Gopher Sans", "description": "A neo-grotesque family for gophers",
			"category": f.fontsCategory, "currency": "USD", "status": "published", "created_at": "2026-03-01T00:00:00Z",
			"tiers": []m{
				{"id": "tier_gofont_t_" + x, "name": "Team", "description": "ten seats", "price": json.Number("49.5"),
					"licence": m{"seats": 10, "commercial": true}},
				{"id": f.fontTierP, "name": "Personal", "description": "one seat", "price": json.Number("19.99"),
					"licence": m{"seats": 1, "commercial": false}},
			},
			"files": []m{{"id": "file_gofont_" + x, "filename": "grotesk.zip", "path": rel, "size_bytes": len(f.fileBytes)}},
		})
	f.sellerProducts = 46
	doc := m{
		"mode":     "test",
		"accounts": []m{{"id": f.sellerAcct, "email": "seller@" + x + ".example"}, {"id": f.buyerAcct}},
		"sellers": []m{{"id": f.seller, "account": f.sellerAcct, "name": "Go Seller " + x, "bio": "Fonts for gophers",
			"website": "https://go-" + x + ".example"}},
		"products": products,
		"orders": []m{
			{"id": f.paidOrder, "account": f.buyerAcct, "status": "paid", "created_at": "2026-04-01T00:00:00Z",
				"items": []m{{"product": f.font, "tier": f.fontTierP}}},
			{"id": f.refundOrder, "account": f.buyerAcct, "status": "paid", "created_at": "2026-04-02T00:00:00Z",
				"items": []m{{"product": f.font, "tier": f.fontTierP}}},
		},
		"reviews": []m{
			{"id": "rev_go1_" + x, "product": f.font, "account": f.buyerAcct, "rating": 4, "body": "Good"},
			{"id": "rev_go2_" + x, "product": f.font, "account": f.sellerAcct, "rating": 5, "body": "Lovely"},
		},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	if _, err := admin(string(b), "import", "-"); err != nil {
		return nil, err
	}
	if _, err := admin("", "refund", f.refundOrder); err != nil {
		return nil, err
	}
	if f.paidDownload, err = psql("SELECT id FROM downloads WHERE order_id = '" + f.paidOrder + "'"); err != nil {
		return nil, err
	}
	if f.refundedDownload, err = psql("SELECT id FROM downloads WHERE order_id = '" + f.refundOrder + "'"); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(f.paidDownload, "dl_") || !strings.HasPrefix(f.refundedDownload, "dl_") {
		return nil, fmt.Errorf("downloads not found: %q %q", f.paidDownload, f.refundedDownload)
	}
	return f, nil
}

// newKey makes an API key with market-admin.
func newKey(t *testing.T, account, access string) string {
	t.Helper()
	out, err := admin("", "key", "create", "--account", account, "--mode", "test", "--access", access)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// exchange is one request and its answer as a counting transport saw them.
type exchange struct {
	method, path, idempotencyKey string
	status                       int
	retryAfter                   string
}

// recorder is an http.RoundTripper that records every exchange.
type recorder struct {
	mu  sync.Mutex
	log []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	e := exchange{method: req.Method, path: req.URL.RequestURI(), idempotencyKey: req.Header.Get("Idempotency-Key")}
	if err == nil {
		e.status, e.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	}
	r.mu.Lock()
	r.log = append(r.log, e)
	r.mu.Unlock()
	return resp, err
}

func (r *recorder) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.log...)
}

// client makes a client for key on the stack, recording its exchanges.
func client(t *testing.T, key string, opts ...market.Option) (*market.Client, *recorder) {
	t.Helper()
	rec := &recorder{}
	all := append([]market.Option{
		market.WithBaseURL(os.Getenv("BASE_URL")),
		market.WithHTTPClient(&http.Client{Transport: rec, Timeout: 30 * time.Second}),
	}, opts...)
	c, err := market.NewClient(key, all...)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

func buyer(t *testing.T, f *fixture, opts ...market.Option) (*market.Client, *recorder, string) {
	key := newKey(t, f.buyerAcct, "read-write")
	c, rec := client(t, key, opts...)
	return c, rec, key
}

// ctxT bounds a test. Three minutes, not one: the client refuses to wait for a
// Retry-After that would outlast the context, and a window's Retry-After can be 60 s.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func asError(t *testing.T, err error) *market.Error {
	t.Helper()
	var e *market.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a *market.Error, got %T %v", err, err)
	}
	return e
}

// ---- every call -------------------------------------------------------------------------

func TestITProducts(t *testing.T) {
	f := stack(t)
	c, rec, _ := buyer(t, f)
	ctx := ctxT(t)

	page, err := c.Products.List(ctx, &market.ProductListParams{Category: f.fontsCategory})
	if err != nil {
		t.Fatal(err)
	}
	want := market.ProductSummary{ID: f.font, Title: "Grotesk Gopher Sans", Price: "19.99", Seller: f.seller}
	if len(page.Data) != 1 || page.Data[0] != want || page.NextCursor != "" || page.HasMore() {
		t.Fatalf("category page: %+v", page)
	}
	rl := page.LastResponse.RateLimit
	if !rl.Present || rl.Limit < 5 || rl.Remaining != rl.Limit-1 || rl.Reset < time.Second || rl.Reset > 60*time.Second {
		t.Errorf("rate limit of a successful answer: %+v", rl)
	}
	if page.LastResponse.RequestID == "" || page.LastResponse.StatusCode != 200 {
		t.Errorf("response: %+v", page.LastResponse)
	}

	// Every filter of the route at once.
	page, err = c.Products.List(ctx, &market.ProductListParams{
		Q: "gopher grotesk", Seller: f.seller, Category: f.fontsCategory,
		MinPrice: "19.99", MaxPrice: "19.99", Sort: market.SortRelevance, Limit: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != f.font {
		t.Errorf("search: %+v", page.Data)
	}
	page, err = c.Products.List(ctx, &market.ProductListParams{Seller: f.seller, MinPrice: "1200.5", Sort: market.SortPriceAsc, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range page.Data {
		if p.Price != "1200.5" {
			t.Errorf("min_price 1200.5 listed %+v", p)
		}
	}
	if len(page.Data) != 7 { // the walk products i with i%7 == 2
		t.Errorf("%d products at 1200.5 or more, want 7: %+v", len(page.Data), page.Data)
	}

	p, err := c.Products.Get(ctx, f.font)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != f.font || p.Title != "Grotesk Gopher Sans" || p.Description != "A neo-grotesque family for gophers" ||
		p.Category != f.fontsCategory || p.Price != "19.99" || p.Currency != "USD" || p.Seller != f.seller ||
		!p.CreatedAt.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) || p.UpdatedAt.IsZero() {
		t.Errorf("product: %+v", p)
	}
	if len(p.Tiers) != 2 || p.Tiers[0].ID != f.fontTierP || p.Tiers[0].Price != "19.99" || p.Tiers[0].Name != "Personal" ||
		p.Tiers[0].Description != "one seat" || p.Tiers[0].Currency != "USD" || p.Tiers[1].Price != "49.5" ||
		p.Tiers[0].Licence["seats"] != json.Number("1") || p.Tiers[1].Licence["commercial"] != true {
		t.Errorf("tiers (ordered by price): %+v", p.Tiers)
	}
	if p.Rating.Count != 2 || p.Rating.Average == nil || *p.Rating.Average != "4.5" {
		t.Errorf("rating: %+v", p.Rating)
	}
	if n := len(rec.exchanges()); n != 4 {
		t.Errorf("%d requests for 4 calls", n)
	}
}

func TestITSellers(t *testing.T) {
	f := stack(t)
	c, _, _ := buyer(t, f)
	ctx := ctxT(t)
	s, err := c.Sellers.Get(ctx, f.seller, &market.SellerParams{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != f.seller || s.Name != "Go Seller "+f.run || s.Bio != "Fonts for gophers" || s.Website != "https://go-"+f.run+".example" ||
		s.ProductCount != f.sellerProducts || s.CreatedAt.IsZero() || s.LastResponse == nil || !s.LastResponse.RateLimit.Present {
		t.Errorf("seller: %+v", s)
	}
	// Newest first: the font (2026-03-01), then the newest walk products.
	if len(s.Products.Data) != 2 || s.Products.Data[0].ID != f.font || !s.Products.HasMore() {
		t.Fatalf("first page of the catalogue: %+v", s.Products)
	}
	next, err := c.Sellers.Get(ctx, f.seller, &market.SellerParams{Limit: 2, Cursor: s.Products.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Products.Data) != 2 || next.Products.Data[0].ID == s.Products.Data[0].ID || next.Products.Data[0].ID == s.Products.Data[1].ID {
		t.Errorf("second page: %+v after %+v", next.Products.Data, s.Products.Data)
	}
}

func TestITOrdersAndDownloads(t *testing.T) {
	f := stack(t)
	c, _, _ := buyer(t, f)
	ctx := ctxT(t)

	page, err := c.Orders.List(ctx, &market.OrderListParams{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != f.refundOrder || !page.HasMore() {
		t.Fatalf("first page (newest first): %+v", page)
	}
	ref := page.Data[0]
	if ref.Status != market.OrderStatusRefunded || ref.Total != "19.99" || ref.Currency != "USD" ||
		len(ref.Downloads) != 1 || ref.Downloads[0].URL != "" || ref.Downloads[0].ExpiresAt != nil {
		t.Errorf("refunded order: %+v", ref)
	}

	paid, err := c.Orders.List(ctx, &market.OrderListParams{Status: market.OrderStatusPaid, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(paid.Data) != 1 || paid.HasMore() {
		t.Fatalf("paid orders: %+v", paid)
	}
	o := paid.Data[0]
	if o.ID != f.paidOrder || o.Status != market.OrderStatusPaid || o.Total != "19.99" ||
		!o.CreatedAt.Equal(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)) ||
		len(o.Items) != 1 || o.Items[0] != (market.OrderItem{Product: f.font, Title: "Grotesk Gopher Sans", Tier: f.fontTierP, TierName: "Personal", Price: "19.99"}) {
		t.Errorf("paid order: %+v", o)
	}
	d := o.Downloads[0]
	if len(o.Downloads) != 1 || d.ID != f.paidDownload || d.Product != f.font || d.Filename != "grotesk.zip" ||
		d.SizeBytes != int64(len(f.fileBytes)) || !strings.HasPrefix(d.URL, os.Getenv("DOWNLOAD_BASE_URL")+"/") || d.ExpiresAt == nil {
		t.Errorf("download: %+v", d)
	}

	// Every order through the iterator, one order per page.
	var ids []string
	it := c.Orders.All(ctx, &market.OrderListParams{Limit: 1})
	for it.Next() {
		ids = append(ids, it.Order().ID)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, ",") != f.refundOrder+","+f.paidOrder {
		t.Errorf("orders walked: %v", ids)
	}

	// A fresh link, with a lifetime, that downloads the file.
	link, err := c.Downloads.CreateLink(ctx, f.paidDownload, &market.LinkParams{ExpiresIn: 120})
	if err != nil {
		t.Fatal(err)
	}
	left := time.Until(link.ExpiresAt)
	if link.Object != "download_link" || link.Download != f.paidDownload || link.URL == d.URL ||
		!strings.HasPrefix(link.URL, os.Getenv("DOWNLOAD_BASE_URL")+"/") || left < 100*time.Second || left > 121*time.Second ||
		link.LastResponse.StatusCode != 201 || link.LastResponse.IdempotentReplayed {
		t.Errorf("link: %+v (expires in %v)", link, left)
	}
	resp, err := http.Get(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(body, f.fileBytes) {
		t.Errorf("fetching the link: %d %q", resp.StatusCode, body)
	}

	// The caller's Idempotency-Key: the second call replays the first link.
	key := market.NewIdempotencyKey()
	a, err := c.Downloads.CreateLink(ctx, f.paidDownload, &market.LinkParams{IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Downloads.CreateLink(ctx, f.paidDownload, &market.LinkParams{IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	if a.URL != b.URL || !b.LastResponse.IdempotentReplayed || a.LastResponse.IdempotentReplayed {
		t.Errorf("replay: %s vs %s (replayed %v)", a.URL, b.URL, b.LastResponse.IdempotentReplayed)
	}
}

func TestITWebhooksCreate(t *testing.T) {
	f := stack(t)
	c, rec := client(t, newKey(t, f.sellerAcct, "read-write"))
	ctx := ctxT(t)
	sub, err := c.Webhooks.Create(ctx, &market.WebhookParams{
		URL:         "https://127.0.0.1:9/hooks/" + f.run,
		Events:      []market.EventType{market.EventPayoutSent, market.EventSaleCompleted, market.EventPayoutSent},
		Description: "Go client test " + f.run,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sub.ID, "we_") || sub.Object != "webhook_subscription" || sub.URL != "https://127.0.0.1:9/hooks/"+f.run ||
		fmt.Sprint(sub.Events) != "[sale.completed payout.sent]" || sub.Description != "Go client test "+f.run ||
		sub.Status != "enabled" || sub.Livemode || !strings.HasPrefix(sub.Secret, "whsec_") || sub.CreatedAt.IsZero() ||
		sub.LastResponse.StatusCode != 201 {
		t.Errorf("subscription: %+v", sub)
	}
	// Default events: all four.
	all, err := c.Webhooks.Create(ctx, &market.WebhookParams{URL: "https://127.0.0.1:9/all/" + f.run})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(all.Events) != "[sale.completed sale.refunded review.created payout.sent]" || all.Description != "" {
		t.Errorf("default events: %+v", all)
	}
	ex := rec.exchanges()
	if len(ex) != 2 || ex[0].idempotencyKey == "" || ex[0].idempotencyKey == ex[1].idempotencyKey {
		t.Errorf("each POST carries its own generated Idempotency-Key: %+v", ex)
	}
}

// ---- a whole category through the iterator ---------------------------------------------

func TestITWalkCategory(t *testing.T) {
	f := stack(t)
	c, rec, _ := buyer(t, f)
	ctx := ctxT(t)
	it := c.Products.All(ctx, &market.ProductListParams{Category: f.walkCategory, Limit: 10})
	if n := len(rec.exchanges()); n != 0 {
		t.Fatalf("All sent %d requests before Next", n)
	}
	seen := map[string]int{}
	var order []string
	for it.Next() {
		p := it.Product()
		seen[p.ID]++
		order = append(order, p.ID)
		if it.Current() != p || p.Seller != f.seller || p.Price == "" {
			t.Errorf("item %+v", p)
		}
		// Pages are fetched lazily: after k items, ceil(k/10) requests.
		if want := (len(order) + 9) / 10; len(rec.exchanges()) != want {
			t.Fatalf("after %d items, %d requests (want %d)", len(order), len(rec.exchanges()), want)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if len(order) != 45 || len(seen) != 45 {
		t.Fatalf("walked %d items, %d distinct; want 45", len(order), len(seen))
	}
	for _, id := range f.walkIDs {
		if seen[id] != 1 {
			t.Errorf("%s seen %d times", id, seen[id])
		}
	}
	// Newest first, ties broken by id descending: the reverse of the import order.
	for i, id := range order {
		if id != f.walkIDs[44-i] {
			t.Fatalf("position %d: %s, want %s", i, id, f.walkIDs[44-i])
		}
	}
	if n := len(rec.exchanges()); n != 5 {
		t.Errorf("%d requests for 45 products by 10, want 5", n)
	}
	if lr := it.LastResponse(); lr == nil || !lr.RateLimit.Present {
		t.Errorf("LastResponse of the iterator: %+v", lr)
	}

	// By price: non-decreasing, exactly (Decimal.Cmp), each product once.
	c2, _, _ := buyer(t, f)
	it = c2.Products.All(ctx, &market.ProductListParams{Category: f.walkCategory, Sort: market.SortPriceAsc, Limit: 10})
	var prev market.Decimal
	n := 0
	byPrice := map[string]bool{}
	for it.Next() {
		p := it.Product()
		if prev != "" {
			if cmp, err := prev.Cmp(p.Price); err != nil || cmp > 0 {
				t.Errorf("%s after %s (%v)", p.Price, prev, err)
			}
		}
		prev = p.Price
		byPrice[p.ID] = true
		n++
	}
	if err := it.Err(); err != nil || n != 45 || len(byPrice) != 45 {
		t.Errorf("price walk: %d items, %d distinct, %v", n, len(byPrice), err)
	}
}

// ---- errors -----------------------------------------------------------------------------

func TestITErrorKinds(t *testing.T) {
	f := stack(t)
	ctx := ctxT(t)

	check := func(t *testing.T, err error, status int, kind market.Kind, sentinel error, code, param string) *market.Error {
		t.Helper()
		e := asError(t, err)
		if e.Status != status || e.Kind != kind || !errors.Is(err, sentinel) || e.Code != code || e.Param != param ||
			e.Message == "" || e.RequestID == "" || e.Type == "" {
			t.Errorf("want %d %s %s param %q, got %+v", status, kind, code, param, e)
		}
		if status != 401 && !e.RateLimit.Present {
			t.Errorf("no rate-limit figures on the %d: %+v", status, e.RateLimit)
		}
		return e
	}

	t.Run("401 unknown key", func(t *testing.T) {
		c, rec := client(t, "sk_test_"+strings.Repeat("Z", 40))
		_, err := c.Products.List(ctx, nil)
		e := check(t, err, 401, market.KindAuthentication, market.ErrAuthentication, "invalid_api_key", "")
		if e.Type != "authentication_error" || len(rec.exchanges()) != 1 {
			t.Errorf("%+v after %d requests", e, len(rec.exchanges()))
		}
	})
	t.Run("403 read-only key on POST", func(t *testing.T) {
		c, _ := client(t, newKey(t, f.buyerAcct, "read-only"))
		_, err := c.Webhooks.Create(ctx, &market.WebhookParams{URL: "https://127.0.0.1:9/x"})
		e := check(t, err, 403, market.KindPermission, market.ErrPermission, "insufficient_scope", "")
		if e.Type != "permission_error" {
			t.Errorf("type %q", e.Type)
		}
		_, err = c.Downloads.CreateLink(ctx, f.paidDownload, nil)
		check(t, err, 403, market.KindPermission, market.ErrPermission, "insufficient_scope", "")
		// The same key reads.
		if _, err := c.Products.Get(ctx, f.font); err != nil {
			t.Errorf("a read-only key reads: %v", err)
		}
	})
	t.Run("404", func(t *testing.T) {
		c, _, _ := buyer(t, f)
		_, err := c.Products.Get(ctx, "prod_nothing_"+f.run)
		check(t, err, 404, market.KindNotFound, market.ErrNotFound, "resource_missing", "id")
		_, err = c.Products.Get(ctx, "prod_godraft_"+f.run) // unpublished
		check(t, err, 404, market.KindNotFound, market.ErrNotFound, "resource_missing", "id")
		_, err = c.Sellers.Get(ctx, "nobody-"+f.run, nil)
		check(t, err, 404, market.KindNotFound, market.ErrNotFound, "resource_missing", "id")
		_, err = c.Downloads.CreateLink(ctx, "dl_nothing_"+f.run, nil)
		check(t, err, 404, market.KindNotFound, market.ErrNotFound, "resource_missing", "id")
	})
	t.Run("400", func(t *testing.T) {
		c, _, _ := buyer(t, f)
		_, err := c.Products.List(ctx, &market.ProductListParams{Sort: market.SortRelevance})
		check(t, err, 400, market.KindInvalidRequest, market.ErrInvalidRequest, "parameter_invalid", "sort")
		_, err = c.Products.List(ctx, &market.ProductListParams{Limit: 101})
		check(t, err, 400, market.KindInvalidRequest, market.ErrInvalidRequest, "parameter_invalid", "limit")
		_, err = c.Orders.List(ctx, &market.OrderListParams{Status: "pending"})
		check(t, err, 400, market.KindInvalidRequest, market.ErrInvalidRequest, "parameter_invalid", "status")
		_, err = c.Products.List(ctx, &market.ProductListParams{Cursor: "not-a-cursor"})
		check(t, err, 400, market.KindInvalidRequest, market.ErrInvalidRequest, "cursor_invalid", "cursor")
		_, err = c.Downloads.CreateLink(ctx, f.paidDownload, &market.LinkParams{ExpiresIn: 59})
		check(t, err, 400, market.KindInvalidRequest, market.ErrInvalidRequest, "parameter_invalid", "expires_in")
	})
	t.Run("400 on webhooks", func(t *testing.T) {
		c, _ := client(t, newKey(t, f.sellerAcct, "read-write"))
		_, err := c.Webhooks.Create(ctx, &market.WebhookParams{URL: "http://127.0.0.1:9/x"})
		check(t, err, 400, market.KindInvalidRequest, market.ErrInvalidRequest, "url_not_https", "url")
		_, err = c.Webhooks.Create(ctx, &market.WebhookParams{})
		check(t, err, 400, market.KindInvalidRequest, market.ErrInvalidRequest, "parameter_missing", "url")
		_, err = c.Webhooks.Create(ctx, &market.WebhookParams{URL: "https://127.0.0.1:9/x", Events: []market.EventType{"sale.exploded"}})
		check(t, err, 400, market.KindInvalidRequest, market.ErrInvalidRequest, "parameter_invalid", "events")
		// webhook.test is an event type, not a kind one can subscribe to.
		_, err = c.Webhooks.Create(ctx, &market.WebhookParams{URL: "https://127.0.0.1:9/x", Events: []market.EventType{market.EventWebhookTest}})
		check(t, err, 400, market.KindInvalidRequest, market.ErrInvalidRequest, "parameter_invalid", "events")
	})
	t.Run("409 refunded order", func(t *testing.T) {
		c, rec, _ := buyer(t, f)
		_, err := c.Downloads.CreateLink(ctx, f.refundedDownload, nil)
		check(t, err, 409, market.KindConflict, market.ErrConflict, "order_refunded", "id")
		if n := len(rec.exchanges()); n != 1 {
			t.Errorf("a 409 was retried: %d requests", n)
		}
	})
	t.Run("409 idempotency conflict", func(t *testing.T) {
		c, _, _ := buyer(t, f)
		key := market.NewIdempotencyKey()
		if _, err := c.Downloads.CreateLink(ctx, f.paidDownload, &market.LinkParams{ExpiresIn: 600, IdempotencyKey: key}); err != nil {
			t.Fatal(err)
		}
		_, err := c.Downloads.CreateLink(ctx, f.paidDownload, &market.LinkParams{ExpiresIn: 700, IdempotencyKey: key})
		check(t, err, 409, market.KindConflict, market.ErrConflict, "idempotency_conflict", "")
	})
	t.Run("connection", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		var waits []time.Duration
		c, err := market.NewClient("sk_test_x", market.WithBaseURL("http://"+addr),
			market.WithSleepFunc(func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Products.List(ctx, nil)
		e := asError(t, err)
		if e.Kind != market.KindConnection || e.Status != 0 || !errors.Is(err, market.ErrConnection) || e.Err == nil || len(waits) != 2 {
			t.Errorf("%+v after %d waits", e, len(waits))
		}
	})
}

// ---- 429 retried after Retry-After -------------------------------------------------------

func TestITRateLimitRetriedAfterRetryAfter(t *testing.T) {
	f := stack(t)
	ctx := ctxT(t)
	for attempt := 0; attempt < 3; attempt++ {
		key := newKey(t, f.buyerAcct, "read-only")
		// Use up the window with a client that does not retry.
		burner, _ := client(t, key, market.WithMaxRetries(0))
		var limited *market.Error
		for i := 0; i < 250 && limited == nil; i++ {
			_, err := burner.Products.Get(ctx, f.font)
			if err != nil {
				if e := asError(t, err); e.Kind == market.KindRateLimit {
					limited = e
				} else {
					t.Fatal(err)
				}
			}
		}
		if limited == nil {
			t.Fatal("no 429 after 250 requests: run the stack with a low MARKET_RATE_LIMIT (test.sh uses 10)")
		}
		ra, _ := strconv.Atoi(limited.Header.Get("Retry-After"))
		if limited.Code != "rate_limited" || limited.Type != "rate_limit_error" || ra < 1 || ra > 60 ||
			limited.RetryAfter != time.Duration(ra)*time.Second || limited.RateLimit.Remaining != 0 || !limited.RateLimit.Present {
			t.Fatalf("the 429: %+v", limited)
		}

		// The client under test: its waits are recorded instead of slept, and each wait
		// ends the window on the server (the key's counter is deleted), as time would.
		var waits []time.Duration
		sleep := func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			_, err := psql(fmt.Sprintf(`DELETE FROM rate_counters WHERE key_id =
				(SELECT id FROM api_keys WHERE key_hash = decode('%s', 'hex'))`, sha256Hex(key)))
			return err
		}
		c, rec := client(t, key, market.WithSleepFunc(sleep))
		p, err := c.Products.Get(ctx, f.font)
		ex := rec.exchanges()
		if err == nil && len(ex) == 1 && ex[0].status == 200 {
			t.Logf("the window ended between the burst and the call; again")
			continue
		}
		if err != nil {
			t.Fatalf("after the retry: %v (exchanges %+v)", err, ex)
		}
		if len(ex) != 2 || ex[0].status != 429 || ex[1].status != 200 || ex[0].path != ex[1].path {
			t.Fatalf("exchanges: %+v, want a 429 then the same request answered 200", ex)
		}
		want, _ := strconv.Atoi(ex[0].retryAfter)
		if want < 1 || len(waits) != 1 || waits[0] != time.Duration(want)*time.Second {
			t.Fatalf("waits %v, want exactly the server's Retry-After %ss", waits, ex[0].retryAfter)
		}
		if p.ID != f.font || p.LastResponse.RateLimit.Remaining != p.LastResponse.RateLimit.Limit-1 {
			t.Errorf("the product after the retry: %+v %+v", p, p.LastResponse.RateLimit)
		}

		// With the window used up again and MaxRetries 1: two 429s, then the error.
		for i := 0; i < 250; i++ {
			if _, err := burner.Products.Get(ctx, f.font); err != nil {
				break
			}
		}
		waits = nil
		c1, rec1 := client(t, key, market.WithMaxRetries(1),
			market.WithSleepFunc(func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }))
		_, err = c1.Products.Get(ctx, f.font)
		ex = rec1.exchanges()
		if len(ex) == 2 && ex[0].status == 429 && ex[1].status == 429 {
			if !errors.Is(err, market.ErrRateLimit) || len(waits) != 1 {
				t.Errorf("retries used up: %v, waits %v", err, waits)
			}
		} else {
			t.Logf("window boundary during the second part; exchanges %+v", ex)
		}
		return
	}
	t.Fatal("three window boundaries in three short runs")
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// ---- a POST retried after a dropped connection --------------------------------------------

// dropProxy forwards HTTP/1.1 requests from the client to nginx one by one, and drops
// the client's connection instead of answering the first request of dropMethod (POST
// unless changed) after nginx answered it.
type dropProxy struct {
	upstream   string
	l          net.Listener
	mu         sync.Mutex
	seen       []proxied
	dropped    bool
	dropMethod string
}

type proxied struct {
	method, path, idempotencyKey string
	status                       int
	body                         string
	dropped                      bool
}

func startDropProxy(t *testing.T, upstream string) *dropProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{upstream: upstream, l: l, dropMethod: http.MethodPost}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(conn)
		}
	}()
	t.Cleanup(func() { l.Close() })
	return p
}

func (p *dropProxy) serve(conn net.Conn) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.upstream)
		if err != nil {
			return
		}
		req.Header.Set("Connection", "close")
		if err := req.Write(up); err != nil {
			up.Close()
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(up), req)
		if err != nil {
			up.Close()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		up.Close()
		p.mu.Lock()
		drop := req.Method == p.dropMethod && !p.dropped
		if drop {
			p.dropped = true
		}
		p.seen = append(p.seen, proxied{req.Method, req.URL.RequestURI(), req.Header.Get("Idempotency-Key"), resp.StatusCode, string(body), drop})
		p.mu.Unlock()
		if drop {
			return // nginx answered; the client gets nothing but a closed connection
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.TransferEncoding = nil
		resp.Close = false
		if err := resp.Write(conn); err != nil {
			return
		}
	}
}

func (p *dropProxy) requests() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxied(nil), p.seen...)
}

func TestITPostRetriedAfterDroppedConnection(t *testing.T) {
	f := stack(t)
	ctx := ctxT(t)
	key := newKey(t, f.buyerAcct, "read-write")
	base := os.Getenv("BASE_URL")
	proxy := startDropProxy(t, strings.TrimPrefix(base, "http://"))

	count := func() int {
		n, err := strconv.Atoi(mustPsql(t, "SELECT count(*) FROM download_tokens WHERE download_id = '"+f.paidDownload+"'"))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	var waits []time.Duration
	// A transport of its own, so that no connection of another test is reused (Go's
	// transport itself replays a request with an Idempotency-Key that failed on a reused
	// connection; here the retry must be the client's).
	c, err := market.NewClient(key, market.WithBaseURL("http://"+proxy.l.Addr().String()),
		market.WithHTTPClient(&http.Client{Transport: &http.Transport{}}),
		market.WithSleepFunc(func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	link, err := c.Downloads.CreateLink(ctx, f.paidDownload, &market.LinkParams{ExpiresIn: 300})
	if err != nil {
		t.Fatal(err)
	}
	reqs := proxy.requests()
	if len(reqs) != 2 || !reqs[0].dropped || reqs[1].dropped {
		t.Fatalf("through the proxy: %+v", reqs)
	}
	if reqs[0].idempotencyKey == "" || reqs[0].idempotencyKey != reqs[1].idempotencyKey {
		t.Fatalf("the retry must carry the first attempt's Idempotency-Key: %q then %q", reqs[0].idempotencyKey, reqs[1].idempotencyKey)
	}
	if reqs[0].status != 201 || reqs[1].status != 201 || len(waits) != 1 {
		t.Fatalf("statuses %d, %d; waits %v", reqs[0].status, reqs[1].status, waits)
	}
	var first market.DownloadLink
	if err := json.Unmarshal([]byte(reqs[0].body), &first); err != nil {
		t.Fatal(err)
	}
	if link.URL != first.URL || !link.LastResponse.IdempotentReplayed {
		t.Errorf("the retry replayed the dropped answer: %s vs %s (replayed %v)", link.URL, first.URL, link.LastResponse.IdempotentReplayed)
	}
	if after := count(); after != before+1 {
		t.Errorf("download_tokens rows: %d before, %d after; want one link minted", before, after)
	}

	// Without the client's retry there would have been an error: a client with no
	// retries sees the drop as a connection error (and the proxy drops only once, so
	// make it drop again).
	proxy.mu.Lock()
	proxy.dropped = false
	proxy.mu.Unlock()
	c0, _ := market.NewClient(key, market.WithBaseURL("http://"+proxy.l.Addr().String()), market.WithMaxRetries(0),
		market.WithHTTPClient(&http.Client{Transport: &http.Transport{}}))
	_, err = c0.Downloads.CreateLink(ctx, f.paidDownload, nil)
	if market.KindOf(err) != market.KindConnection {
		t.Errorf("no retries: %v", err)
	}
}

// ---- a real webhook delivery ---------------------------------------------------------------

type delivery struct {
	header http.Header
	body   []byte
}

func TestITWebhookDeliveryVerified(t *testing.T) {
	f := stack(t)
	ctx := ctxT(t)
	cert, err := tls.LoadX509KeyPair(env(t, "MARKET_IT_TLS_CERT"), env(t, "MARKET_IT_TLS_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan delivery, 16)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost && r.URL.Path == "/hook" {
			got <- delivery{r.Header.Clone(), b}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS() // listens on 127.0.0.1
	t.Cleanup(srv.Close)

	c, _ := client(t, newKey(t, f.sellerAcct, "read-write"))
	sub, err := c.Webhooks.Create(ctx, &market.WebhookParams{
		URL: srv.URL + "/hook", Events: []market.EventType{market.EventPayoutSent}, Description: "payouts",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin("", "payout", "--seller", f.seller, "--amount", "12.34", "--currency", "USD", "--mode", "test"); err != nil {
		t.Fatal(err)
	}
	var d delivery
	select {
	case d = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery from market-webhookd within 30 s")
	}

	ev, err := market.VerifyWebhook(d.body, d.header, sub.Secret)
	if err != nil {
		t.Fatalf("a real delivery refused: %v\nheaders %v\nbody %s", err, d.header, d.body)
	}
	if ev.Type != market.EventPayoutSent || ev.ID != d.header.Get("webhook-id") || !strings.HasPrefix(ev.ID, "evt_") ||
		ev.Livemode || ev.Data.Amount != "12.34" || ev.Data.Currency != "USD" || !strings.HasPrefix(ev.Data.Payout, "po_") ||
		time.Since(ev.CreatedAt) > 5*time.Minute {
		t.Errorf("event: %+v", ev)
	}
	if cents, err := ev.Data.Amount.MinorUnits(2); err != nil || cents != 1234 {
		t.Errorf("amount in cents: %d %v", cents, err)
	}

	// X-Signature alone (the name of the interface specification).
	h := d.header.Clone()
	h.Del("webhook-signature")
	if h.Get("X-Signature") == "" {
		t.Fatal("the delivery has no X-Signature")
	}
	if _, err := market.VerifyWebhook(d.body, h, sub.Secret); err != nil {
		t.Errorf("X-Signature alone refused: %v", err)
	}
	// Several signatures in one header, one of them valid.
	h = d.header.Clone()
	h.Set("webhook-signature", "v1,"+strings.Repeat("A", 43)+"= "+d.header.Get("webhook-signature"))
	if _, err := market.VerifyWebhook(d.body, h, sub.Secret); err != nil {
		t.Errorf("several signatures refused: %v", err)
	}

	// Tampered copies are refused.
	tampered := bytes.Replace(d.body, []byte("12.34"), []byte("99.99"), 1)
	if bytes.Equal(tampered, d.body) {
		t.Fatalf("the body has no 12.34: %s", d.body)
	}
	if _, err := market.VerifyWebhook(tampered, d.header, sub.Secret); !errors.Is(err, market.ErrWebhookSignature) {
		t.Errorf("tampered body: %v", err)
	}
	h = d.header.Clone()
	ts, _ := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	h.Set("webhook-timestamp", strconv.FormatInt(ts-1, 10))
	if _, err := market.VerifyWebhook(d.body, h, sub.Secret); !errors.Is(err, market.ErrWebhookSignature) {
		t.Errorf("tampered timestamp: %v", err)
	}
	h = d.header.Clone()
	h.Set("webhook-id", "evt_forged")
	if _, err := market.VerifyWebhook(d.body, h, sub.Secret); !errors.Is(err, market.ErrWebhookVerification) {
		t.Errorf("tampered id: %v", err)
	}
	other, err := c.Webhooks.Create(ctx, &market.WebhookParams{URL: srv.URL + "/other", Events: []market.EventType{market.EventReviewCreated}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := market.VerifyWebhook(d.body, d.header, other.Secret); !errors.Is(err, market.ErrWebhookSignature) {
		t.Errorf("another subscription's secret: %v", err)
	}
	// No other delivery for this subscription (one payout, one event).
	select {
	case extra := <-got:
		if extra.header.Get("webhook-id") != d.header.Get("webhook-id") {
			t.Errorf("an unexpected second event: %s", extra.body)
		}
	case <-time.After(500 * time.Millisecond):
	}
}
