// Package market is the Go client of the market API (docs/api.md): search and read the
// catalogue, read your orders with their download links, mint download links, subscribe
// to webhooks and manage the subscriptions, read the events back, plus VerifyWebhook for
// the receiving side.
//
//	c, err := market.NewClient(os.Getenv("MARKET_API_KEY"),
//		market.WithBaseURL("http://127.0.0.1:8080"))
//	if err != nil { ... }
//	page, err := c.Products.List(ctx, &market.ProductListParams{Category: "fonts", Limit: 10})
//
// One call per route: Products.List, Products.All, Products.Get, Sellers.Get,
// Orders.List, Orders.All, Downloads.CreateLink, Webhooks.Create, Webhooks.List,
// Webhooks.All, Webhooks.Get, Webhooks.Update, Webhooks.Delete, Webhooks.RotateSecret,
// Webhooks.Test, Events.List, Events.All and Events.Get. Results are
// structs; money is a Decimal, the exact text of the number the API sent. Every result
// carries the HTTP answer it came from in LastResponse (rate limit, request id). Every
// failed call returns an *Error; see Kind for the classes.
//
// Retries (docs/clients.md): an answer 429, 502, 503 or 504 is retried after its
// Retry-After (one over 60 s is not waited for), a network failure or an answer without
// Retry-After after a jittered back-off (0.5 s doubling up to 8 s), up to MaxRetries
// times (default 2), as long as the context allows. 502, 504 and network failures are
// retried only for GETs and for POSTs and DELETEs that carry an Idempotency-Key, and
// every POST and DELETE carries one: the caller's, or one
// the client generates (crypto/rand) and keeps for all the attempts of that call, so
// that a retried POST never mints two links or two subscriptions, and a retried DELETE
// gets the first answer replayed instead of a 404.
//
// The package uses the standard library only.
package market

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Version is the version of this client, sent in the User-Agent header.
const Version = "0.2.0"

// DefaultMaxRetries is how many times a call is retried unless WithMaxRetries says
// otherwise.
const DefaultMaxRetries = 2

// maxBodyBytes bounds the answers the client reads (the API's are far smaller).
const maxBodyBytes = 64 << 20

// The API key is kept inside a closure (Client.key): fmt, whatever the verb and however
// deep the Client sits in the value printed, shows a func as an address only, so the
// key cannot leak through printing even from an unexported field.
func keeper(key string) func() string { return func() string { return key } }

// redact shows the mode prefix of a key only: "sk_test_…".
func redact(key string) string {
	for _, p := range []string{"sk_live_", "sk_test_"} {
		if strings.HasPrefix(key, p) {
			return p + "…(redacted)"
		}
	}
	return "…(redacted)"
}

// Client is a client of the market API. Make one with NewClient; it is safe for
// concurrent use. Printing a Client (any fmt verb) never shows its API key.
type Client struct {
	// Products: GET /v1/products and GET /v1/products/:id.
	Products *ProductsService
	// Sellers: GET /v1/sellers/:id.
	Sellers *SellersService
	// Orders: GET /v1/orders.
	Orders *OrdersService
	// Downloads: POST /v1/downloads/:id/link.
	Downloads *DownloadsService
	// Webhooks: POST and GET /v1/webhooks, GET, POST and DELETE /v1/webhooks/:id,
	// POST /v1/webhooks/:id/rotate_secret and POST /v1/webhooks/:id/test.
	Webhooks *WebhooksService
	// Events: GET /v1/events and GET /v1/events/:id.
	Events *EventsService

	key        func() string // the API key; see keeper
	baseURL    *url.URL
	maxRetries int
	httpClient *http.Client
	userAgent  string
	// sleep waits d or until ctx ends (tests replace it).
	sleep func(ctx context.Context, d time.Duration) error
	// backoff is the wait before retrying a network failure, by attempt (0-based).
	backoff func(attempt int) time.Duration
	// onResponse is told about every attempt (WithResponseHook); nil for none.
	onResponse func(RequestInfo)
}

// RequestInfo is what the hook of WithResponseHook is told about one HTTP attempt. It
// never holds the API key nor the Authorization header.
type RequestInfo struct {
	Method string
	// Path is the route's path with its query ("/v1/products?limit=2"), without the
	// base URL.
	Path string
	// Status is the HTTP status, or 0 when no complete answer came (see Err).
	Status int
	// Err is why no answer came (a timeout, a refused or reset connection, a cut body);
	// nil with a status.
	Err error
	// Duration of the attempt, from sending to the end of the answer's body.
	Duration time.Duration
	// RequestID is the X-Request-Id response header ("" without one).
	RequestID string
	// Attempt is 1 for the first attempt of a call, 2 for its first retry...
	Attempt int
}

// Option configures a Client in NewClient.
type Option func(*options)

type options struct {
	baseURL    string
	maxRetries int
	httpClient *http.Client
	userAgent  string
	sleep      func(ctx context.Context, d time.Duration) error
	onResponse func(RequestInfo)
}

// WithResponseHook sets a function called once per HTTP attempt, retries included, with
// the method, path and query, status (or the connection error), duration, request id
// and attempt number; never the API key. It runs on the goroutine of the call; a panic
// in it is recovered and ignored.
func WithResponseHook(f func(RequestInfo)) Option {
	return func(o *options) { o.onResponse = f }
}

// WithBaseURL sets the base URL of the API, such as "http://127.0.0.1:8080" or
// "https://api.example.com/market" (routes are appended: BASE/v1/products). Without it,
// NewClient reads the environment variable MARKET_BASE_URL.
func WithBaseURL(u string) Option {
	return func(o *options) { o.baseURL = u }
}

// WithMaxRetries sets how many times a call is retried after a 429, 502, 503 or 504
// answer or a retryable network failure (default 2; 0 disables retries).
func WithMaxRetries(n int) Option {
	return func(o *options) {
		if n < 0 {
			n = 0
		}
		o.maxRetries = n
	}
}

// WithHTTPClient sets the *http.Client the client sends requests with (for proxies,
// custom TLS, timeouts, instrumentation). The default has a 60-second timeout and does
// not follow redirects (the API never redirects).
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) { o.httpClient = hc }
}

// WithUserAgent appends s to the User-Agent header ("market-go/" + Version + " s").
func WithUserAgent(s string) Option {
	return func(o *options) { o.userAgent = s }
}

// withSleep replaces the function that waits between attempts (tests).
func withSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(o *options) { o.sleep = f }
}

// NewClient returns a client that authenticates with apiKey ("sk_live_..." or
// "sk_test_..."). The base URL is WithBaseURL's, else the environment variable
// MARKET_BASE_URL; without either, with a base URL that is not an absolute http(s)
// URL, or with an empty apiKey, NewClient returns an error.
func NewClient(apiKey string, opts ...Option) (*Client, error) {
	o := options{maxRetries: DefaultMaxRetries}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if strings.TrimSpace(apiKey) == "" {
		return nil, errors.New("market: an API key is required")
	}
	if strings.ContainsAny(apiKey, "\r\n\x00") {
		return nil, errors.New("market: the API key contains a control character")
	}
	raw := o.baseURL
	if raw == "" {
		raw = os.Getenv("MARKET_BASE_URL")
	}
	if raw == "" {
		return nil, errors.New("market: no base URL: pass market.WithBaseURL or set MARKET_BASE_URL")
	}
	base, err := url.Parse(raw)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" ||
		base.User != nil || base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("market: base URL %q is not an absolute http(s) URL without query or fragment", raw)
	}
	base.Path = strings.TrimRight(base.Path, "/")
	base.RawPath = ""
	c := &Client{
		key:        keeper(apiKey),
		baseURL:    base,
		maxRetries: o.maxRetries,
		httpClient: o.httpClient,
		userAgent:  "market-go/" + Version,
		sleep:      o.sleep,
		backoff:    networkBackoff,
		onResponse: o.onResponse,
	}
	if o.userAgent != "" {
		c.userAgent += " " + o.userAgent
	}
	if c.httpClient == nil {
		c.httpClient = &http.Client{
			Timeout: 60 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	c.Products = &ProductsService{c: c}
	c.Sellers = &SellersService{c: c}
	c.Orders = &OrdersService{c: c}
	c.Downloads = &DownloadsService{c: c}
	c.Webhooks = &WebhooksService{c: c}
	c.Events = &EventsService{c: c}
	return c, nil
}

// BaseURL returns the base URL the client sends requests to.
func (c *Client) BaseURL() string { return c.baseURL.String() }

// MaxRetries returns how many times a call may be retried.
func (c *Client) MaxRetries() int { return c.maxRetries }

// String describes the client without its API key.
func (c Client) String() string {
	base := "<nil>"
	if c.baseURL != nil {
		base = c.baseURL.String()
	}
	key := "<none>"
	if c.key != nil {
		key = redact(c.key())
	}
	return fmt.Sprintf("market.Client{BaseURL: %q, APIKey: %q, MaxRetries: %d}", base, key, c.maxRetries)
}

// GoString is String, so that %#v does not show the API key either.
func (c Client) GoString() string { return c.String() }

// Format prints String for every verb (%v, %+v, %#v, %s, %q...), so that no verb shows
// the API key.
func (c Client) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", c.String())
		return
	}
	io.WriteString(f, c.String())
}

// sleepCtx waits d, or returns ctx's error as soon as ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// NewIdempotencyKey returns a fresh random Idempotency-Key (128 bits from crypto/rand,
// as 32 hex digits after "market-go-"). The client makes one for every POST and DELETE
// that has none; make your own with it when you want to retry a call yourself later
// with the same key.
func NewIdempotencyKey() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported systems; if it ever does, a key that
		// is not random would be worse than none.
		panic("market: crypto/rand: " + err.Error())
	}
	return "market-go-" + hex.EncodeToString(b[:])
}

// request is one call of the API: a route and its inputs.
type request struct {
	method string
	path   string     // "/v1/products", identifiers already escaped (url.PathEscape)
	query  url.Values // nil for none
	body   any        // nil for no body; otherwise marshalled as JSON
	// idempotencyKey is sent as Idempotency-Key (POST and DELETE only; do makes one
	// when it is "").
	idempotencyKey string
}

// answer is a pointer to what a call decodes: a result type with a LastResponse field.
type answer[R any] interface {
	*R
	setLastResponse(*Response)
}

// call sends req as do does (an Idempotency-Key and a JSON body for a changing request)
// and returns the decoded answer with its LastResponse set.
func call[R any, P answer[R]](ctx context.Context, c *Client, req request) (*R, error) {
	out := new(R)
	resp, err := c.do(ctx, req, out)
	if err != nil {
		return nil, err
	}
	P(out).setLastResponse(resp)
	return out, nil
}

// do sends req, retrying as the package documentation says, and decodes a 2xx answer
// into out (which must have a LastResponse *Response field set by the caller from the
// returned Response).
func (c *Client) do(ctx context.Context, req request, out any) (*Response, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var body []byte
	if req.body != nil {
		var err error
		if body, err = json.Marshal(req.body); err != nil {
			return nil, fmt.Errorf("market: encoding the request body: %w", err)
		}
	}
	if (req.method == http.MethodPost || req.method == http.MethodDelete) && req.idempotencyKey == "" {
		req.idempotencyKey = NewIdempotencyKey()
	}
	pathAndQuery := req.path
	if len(req.query) > 0 {
		pathAndQuery += "?" + req.query.Encode()
	}
	target := c.baseURL.String() + pathAndQuery

	for attempt := 0; ; attempt++ {
		hreq, err := http.NewRequestWithContext(ctx, req.method, target, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("market: building the request: %w", err)
		}
		if body == nil {
			hreq.Body, hreq.GetBody, hreq.ContentLength = http.NoBody, nil, 0
		} else {
			hreq.Header.Set("Content-Type", "application/json")
		}
		hreq.Header.Set("Authorization", "Bearer "+c.key())
		hreq.Header.Set("Accept", "application/json")
		hreq.Header.Set("User-Agent", c.userAgent)
		if req.idempotencyKey != "" {
			hreq.Header.Set("Idempotency-Key", req.idempotencyKey)
		}

		started := time.Now()
		status, header, respBody, netErr := c.roundTrip(hreq)
		c.report(RequestInfo{
			Method: req.method, Path: pathAndQuery, Status: status, Err: netErr,
			Duration: time.Since(started), RequestID: header.Get("X-Request-Id"), Attempt: attempt + 1,
		})
		if netErr != nil {
			cerr := &Error{Kind: KindConnection, Message: req.method + " " + req.path, Err: netErr}
			if ctx.Err() != nil {
				cerr.Err = ctx.Err()
				return nil, cerr
			}
			if !shouldRetry(req.method, req.idempotencyKey != "", 0, attempt, c.maxRetries) {
				return nil, cerr
			}
			if err := c.wait(ctx, c.backoff(attempt)); err != nil {
				cerr.Err = err
				return nil, cerr
			}
			continue
		}

		resp := newResponse(status, header)
		if status >= 200 && status < 300 {
			if out != nil {
				if err := json.Unmarshal(respBody, out); err != nil {
					return resp, &Error{
						Kind: KindServer, Status: status, Code: "invalid_response",
						Message:   "the answer is not the JSON expected: " + err.Error(),
						RequestID: resp.RequestID, RateLimit: resp.RateLimit, Header: header,
					}
				}
			}
			return resp, nil
		}

		apiErr := parseError(status, header, respBody)
		if !shouldRetry(req.method, req.idempotencyKey != "", status, attempt, c.maxRetries) {
			return nil, apiErr
		}
		delay := retryDelay(status, header, attempt, c.backoff)
		if delay > maxRetryAfter {
			return nil, apiErr
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			// The context would end before the retry could be sent: answer now.
			return nil, apiErr
		}
		if err := c.wait(ctx, delay); err != nil {
			return nil, &Error{Kind: KindConnection, Message: "waiting to retry after " + apiErr.Error(), Err: err}
		}
	}
}

// report tells the hook about one attempt; a panic in the hook is recovered.
func (c *Client) report(info RequestInfo) {
	if c.onResponse == nil {
		return
	}
	defer func() { _ = recover() }()
	c.onResponse(info)
}

func (c *Client) wait(ctx context.Context, d time.Duration) error {
	if err := c.sleep(ctx, d); err != nil {
		return err
	}
	return ctx.Err()
}

// roundTrip sends one request and reads the whole answer. A failure to read the body
// counts as a network failure, like a failure to connect.
func (c *Client) roundTrip(req *http.Request) (int, http.Header, []byte, error) {
	resp, err := c.httpClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, b, nil
}

// parseError builds the *Error of an answer that is not 2xx. A body that is not the
// API's error envelope (a proxy's page) still gives an *Error with Status and Kind.
func parseError(status int, h http.Header, body []byte) *Error {
	e := &Error{
		Kind:      kindForStatus(status),
		Status:    status,
		RequestID: h.Get("X-Request-Id"),
		RateLimit: parseRateLimit(h),
		Header:    h,
	}
	switch status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		e.RetryAfter, _ = parseRetryAfter(h.Get("Retry-After"), time.Now())
	}
	var env struct {
		Error *struct {
			Type      string `json:"type"`
			Code      string `json:"code"`
			Message   string `json:"message"`
			Param     string `json:"param"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		e.Type, e.Code, e.Message, e.Param = env.Error.Type, env.Error.Code, env.Error.Message, env.Error.Param
		if env.Error.RequestID != "" {
			e.RequestID = env.Error.RequestID
		}
	} else {
		e.Message = http.StatusText(status)
		if e.Message == "" {
			e.Message = fmt.Sprintf("HTTP status %d", status)
		}
	}
	return e
}
