package market_test

// Whole pages (contract section 5, decided 2026-11-27) through Products.All: a page holds
// Limit items whenever at least that many matches remain after its cursor; only the last
// holds fewer, and its next_cursor is null. So a walk of a search of N results takes
// max(1, ceil(N / Limit)) requests, and a search that matches nothing one.
//
// Requests are counted through the client's own hook (WithResponseHook: one call per
// HTTP attempt, retries included); a transport reads each answer's body, to see each
// page's size and next_cursor. Each walk uses a fresh key, so the stack's low rate limit
// (MARKET_RATE_LIMIT=10) never adds a retry.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	market "github.com/markethq/market/clients/go"
)

// wirePage is one answer of GET /v1/products as the wire carried it.
type wirePage struct {
	status int
	size   int
	next   *string
}

// pageReader is an http.RoundTripper that keeps the size and next_cursor of every
// product page it carries.
type pageReader struct {
	mu    sync.Mutex
	pages []wirePage
}

func (r *pageReader) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.URL.Path != "/v1/products" {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var page struct {
		Data       []json.RawMessage `json:"data"`
		NextCursor *string           `json:"next_cursor"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, fmt.Errorf("a products answer that is not a page: %v: %s", err, body)
	}
	r.mu.Lock()
	r.pages = append(r.pages, wirePage{status: resp.StatusCode, size: len(page.Data), next: page.NextCursor})
	r.mu.Unlock()
	return resp, nil
}

// pagesFixture is a small catalogue of its own: 8 products match word (5 by their title,
// 3 by their description only), 3 do not, and a draft that holds it is never shown.
type pagesFixture struct {
	x, word, account string
	hours, cents     []int
}

var (
	pagesOnce sync.Once
	pagesFx   *pagesFixture
	pagesErr  error
)

func (f *pagesFixture) pid(i int) string { return fmt.Sprintf("prod_gopw_%s_%02d", f.x, i) }

func pagesStack(t *testing.T) *pagesFixture {
	t.Helper()
	stack(t)
	pagesOnce.Do(func() {
		x := randomSuffix()
		f := &pagesFixture{
			x: x, word: "pagewalk" + x, account: "acct_gopw_" + x,
			// created_at hours and prices (cents) chosen so that each sort gives another
			// order; two prices tie (120) so that price_asc needs its id tie-break.
			hours: []int{3, 7, 0, 9, 5, 1, 10, 4, 8, 2, 6, 11},
			cents: []int{500, 120, 999, 350, 120, 780, 50, 610, 40, 30, 20, 10},
		}
		type m = map[string]any
		var products []m
		for i, h := range f.hours {
			title, description, status := fmt.Sprintf("Plain print %d", i), "A print for the page walk", "published"
			if i < 5 || i == 11 {
				title = fmt.Sprintf("%s poster %d", f.word, i)
			}
			if i >= 5 && i < 8 {
				description = "A print that mentions " + f.word + " in its description"
			}
			if i == 11 {
				status = "draft"
			}
			products = append(products, m{
				"id": f.pid(i), "seller": "gopw-" + x, "title": title, "description": description,
				"category": "gopw-" + x, "currency": "USD", "status": status,
				"created_at": time.Date(2026, 2, 1, h, 0, 0, 0, time.UTC).Format(time.RFC3339),
				"tiers": []m{{"id": fmt.Sprintf("tier_gopw_%s_%02d", x, i), "name": "Personal", "description": "",
					"price": json.Number(fmt.Sprintf("%d.%02d", f.cents[i]/100, f.cents[i]%100)), "licence": m{}}},
			})
		}
		doc, err := json.Marshal(m{
			"mode":     "test",
			"accounts": []m{{"id": f.account}},
			"sellers":  []m{{"id": "gopw-" + x, "account": f.account, "name": "Go Page Walk", "bio": ""}},
			"products": products,
		})
		if err == nil {
			_, err = admin(string(doc), "import", "-")
		}
		pagesFx, pagesErr = f, err
	})
	if pagesErr != nil {
		t.Fatalf("importing the page walk's products: %v", pagesErr)
	}
	return pagesFx
}

// expected returns the ids of the 8 matches in the order less gives their indexes.
func (f *pagesFixture) expected(less func(a, b int) bool) []string {
	idx := []int{0, 1, 2, 3, 4, 5, 6, 7}
	sort.Slice(idx, func(i, j int) bool { return less(idx[i], idx[j]) })
	ids := make([]string, len(idx))
	for i, k := range idx {
		ids[i] = f.pid(k)
	}
	return ids
}

// walkSearch walks Products.All(params) with a fresh key and checks the whole-page rule:
// requests == max(1, ceil(N/limit)) for the N items the walk returned, every page but the
// last full with a next_cursor, the last with next_cursor null. It returns the ids.
func walkSearch(t *testing.T, f *pagesFixture, params *market.ProductListParams) []string {
	t.Helper()
	var mu sync.Mutex
	var attempts []market.RequestInfo
	wire := &pageReader{}
	c, err := market.NewClient(newKey(t, f.account, "read-only"),
		market.WithBaseURL(os.Getenv("BASE_URL")),
		market.WithHTTPClient(&http.Client{Transport: wire, Timeout: 30 * time.Second}),
		market.WithResponseHook(func(info market.RequestInfo) {
			mu.Lock()
			attempts = append(attempts, info)
			mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	it := c.Products.All(ctxT(t), params)
	for it.Next() {
		ids = append(ids, it.Product().ID)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}

	n, limit := len(ids), params.Limit
	want := (n + limit - 1) / limit
	if want < 1 {
		want = 1
	}
	sizes := make([]int, len(wire.pages))
	total := 0
	for i, p := range wire.pages {
		sizes[i] = p.size
		total += p.size
	}
	for _, a := range attempts {
		if a.Status != http.StatusOK || a.Attempt != 1 {
			t.Errorf("no retry expected: %+v", a)
		}
	}
	if len(wire.pages) != len(attempts) {
		t.Errorf("the hook saw %d requests, the wire carried %d", len(attempts), len(wire.pages))
	}
	if len(attempts) != want {
		t.Errorf("%d results in pages of %d take %d request(s), not %d (page sizes %v)", n, limit, want, len(attempts), sizes)
	}
	for i, p := range wire.pages {
		if i < len(wire.pages)-1 {
			if p.size != limit || p.next == nil {
				t.Errorf("page %d of %d holds %d items (next_cursor %v): only the last page may hold fewer than %d (page sizes %v)",
					i+1, len(wire.pages), p.size, p.next != nil, limit, sizes)
				break // the first short page says it; the sizes show the rest
			}
		} else {
			if p.size > limit || (p.size == 0 && n != 0) {
				t.Errorf("the last page holds %d items, want 1..%d (none only when nothing matched)", p.size, limit)
			}
			if p.next != nil {
				t.Errorf("the last page has next_cursor %q, want null", *p.next)
			}
		}
	}
	if total != n {
		t.Errorf("the pages held %d items, the walk yielded %d", total, n)
	}
	return ids
}

func sameIDs(t *testing.T, got, want []string, what string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

func TestITSearchWholePagesRelevance(t *testing.T) {
	f := pagesStack(t)
	got := walkSearch(t, f, &market.ProductListParams{Q: f.word, Limit: 3}) // 8 matches: 3 + 3 + 2
	// Titles (0..4) first, then descriptions; id descending within a rank.
	want := f.expected(func(a, b int) bool {
		if (a < 5) != (b < 5) {
			return a < 5
		}
		return a > b
	})
	sameIDs(t, got, want, "every match once, titles first, id descending within a rank")
}

func TestITSearchWholePagesNewestEndsOnAFullPage(t *testing.T) {
	f := pagesStack(t)
	got := walkSearch(t, f, &market.ProductListParams{Q: f.word, Sort: market.SortNewest, Limit: 2}) // 2+2+2+2, no empty fifth page
	want := f.expected(func(a, b int) bool {
		if f.hours[a] != f.hours[b] {
			return f.hours[a] > f.hours[b]
		}
		return a > b
	})
	sameIDs(t, got, want, "every match once, newest first")
}

func TestITSearchWholePagesPrice(t *testing.T) {
	f := pagesStack(t)
	got := walkSearch(t, f, &market.ProductListParams{Q: f.word, Sort: market.SortPriceAsc, Limit: 3})
	want := f.expected(func(a, b int) bool {
		if f.cents[a] != f.cents[b] {
			return f.cents[a] < f.cents[b]
		}
		return a < b
	})
	sameIDs(t, got, want, "every match once, cheapest first, ties by id")
}

func TestITSearchMatchingNothingIsOneRequest(t *testing.T) {
	f := pagesStack(t)
	if got := walkSearch(t, f, &market.ProductListParams{Q: f.word + "nothing", Limit: 2}); len(got) != 0 {
		t.Errorf("a search that matches nothing returned %v", got)
	}
}
