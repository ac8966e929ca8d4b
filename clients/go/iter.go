package market

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// pager walks the pages of a listing lazily: fetch is called for the first page on the
// first next, and for each further page only when the items of the previous one are
// used up.
type pager[T any] struct {
	ctx     context.Context
	fetch   func(ctx context.Context, cursor string) (items []T, next string, resp *Response, err error)
	cursor  string
	started bool
	items   []T
	i       int
	cur     T
	err     error
	last    *Response
}

func (p *pager[T]) next() bool {
	for {
		if p.err != nil {
			return false
		}
		if p.i < len(p.items) {
			p.cur = p.items[p.i]
			p.i++
			return true
		}
		if p.started && p.cursor == "" {
			var zero T
			p.cur = zero
			return false
		}
		items, next, resp, err := p.fetch(p.ctx, p.cursor)
		if err != nil {
			p.err = err
			var zero T
			p.cur = zero
			return false
		}
		if p.started && next != "" && next == p.cursor {
			p.err = errors.New("market: the API answered the same cursor twice; stopping the iteration")
			return false
		}
		p.started = true
		p.items, p.i, p.cursor, p.last = items, 0, next, resp
	}
}

// listPage is a pointer to a page of a listing of T: its items, the next cursor and
// the answer.
type listPage[Page, T any] interface {
	answer[Page]
	page() (items []T, next string, resp *Response)
}

// getPage GETs one page of the listing at path with the query values query.
func getPage[Page any, P answer[Page]](ctx context.Context, c *Client, path string, query url.Values) (*Page, error) {
	return call[Page, P](ctx, c, request{method: http.MethodGet, path: path, query: query})
}

// walk returns the pager of every item of the listing at path that query selects, all
// pages included, fetched lazily: it starts from the query's cursor and asks for each
// further page with the same query and that page's cursor.
func walk[T, Page any, P listPage[Page, T]](ctx context.Context, c *Client, path string, query url.Values) pager[T] {
	return pager[T]{ctx: ctx, cursor: query.Get("cursor"), fetch: func(ctx context.Context, cursor string) ([]T, string, *Response, error) {
		q := url.Values{}
		for name, values := range query {
			q[name] = values
		}
		q.Del("cursor")
		set(q, "cursor", cursor)
		page, err := getPage[Page, P](ctx, c, path, q)
		if err != nil {
			return nil, "", nil, err
		}
		items, next, resp := P(page).page()
		return items, next, resp, nil
	}}
}

// ProductIter iterates over every product of a listing, page after page, fetching each
// page only when the previous one is used up. Use it as
//
//	it := c.Products.All(ctx, &market.ProductListParams{Category: "fonts"})
//	for it.Next() {
//		p := it.Product()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
type ProductIter struct{ p pager[ProductSummary] }

// Next advances to the next product, fetching the next page if needed. It returns
// false at the end of the listing or on an error (see Err).
func (it *ProductIter) Next() bool { return it.p.next() }

// Current returns the product Next advanced to.
func (it *ProductIter) Current() ProductSummary { return it.p.cur }

// Product is Current.
func (it *ProductIter) Product() ProductSummary { return it.p.cur }

// Err returns the error that ended the iteration, nil if it ended with the listing.
func (it *ProductIter) Err() error { return it.p.err }

// LastResponse describes the answer of the last page fetched (its rate-limit figures
// and request id), nil before the first.
func (it *ProductIter) LastResponse() *Response { return it.p.last }

// OrderIter iterates over every order of a listing, page after page, fetching each
// page only when the previous one is used up. Use it as
//
//	it := c.Orders.All(ctx, nil)
//	for it.Next() {
//		o := it.Order()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
type OrderIter struct{ p pager[Order] }

// Next advances to the next order, fetching the next page if needed. It returns false
// at the end of the listing or on an error (see Err).
func (it *OrderIter) Next() bool { return it.p.next() }

// Current returns the order Next advanced to.
func (it *OrderIter) Current() Order { return it.p.cur }

// Order is Current.
func (it *OrderIter) Order() Order { return it.p.cur }

// Err returns the error that ended the iteration, nil if it ended with the listing.
func (it *OrderIter) Err() error { return it.p.err }

// LastResponse describes the answer of the last page fetched, nil before the first.
func (it *OrderIter) LastResponse() *Response { return it.p.last }

// WebhookSubscriptionIter iterates over every webhook subscription, page after page,
// fetching each page only when the previous one is used up. Use it as
//
//	it := c.Webhooks.All(ctx, nil)
//	for it.Next() {
//		sub := it.Subscription()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
type WebhookSubscriptionIter struct{ p pager[WebhookSubscription] }

// Next advances to the next subscription, fetching the next page if needed. It
// returns false at the end of the listing or on an error (see Err).
func (it *WebhookSubscriptionIter) Next() bool { return it.p.next() }

// Current returns the subscription Next advanced to.
func (it *WebhookSubscriptionIter) Current() WebhookSubscription { return it.p.cur }

// Subscription is Current.
func (it *WebhookSubscriptionIter) Subscription() WebhookSubscription { return it.p.cur }

// Err returns the error that ended the iteration, nil if it ended with the listing.
func (it *WebhookSubscriptionIter) Err() error { return it.p.err }

// LastResponse describes the answer of the last page fetched, nil before the first.
func (it *WebhookSubscriptionIter) LastResponse() *Response { return it.p.last }

// EventIter iterates over every event of a listing, newest first, page after page,
// fetching each page only when the previous one is used up. Use it as
//
//	it := c.Events.All(ctx, &market.EventListParams{CreatedGte: since})
//	for it.Next() {
//		ev := it.Event()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
type EventIter struct{ p pager[Event] }

// Next advances to the next event, fetching the next page if needed. It returns false
// at the end of the listing or on an error (see Err).
func (it *EventIter) Next() bool { return it.p.next() }

// Current returns the event Next advanced to.
func (it *EventIter) Current() Event { return it.p.cur }

// Event is Current.
func (it *EventIter) Event() Event { return it.p.cur }

// Err returns the error that ended the iteration, nil if it ended with the listing.
func (it *EventIter) Err() error { return it.p.err }

// LastResponse describes the answer of the last page fetched, nil before the first.
func (it *EventIter) LastResponse() *Response { return it.p.last }
