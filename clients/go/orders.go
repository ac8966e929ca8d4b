package market

import (
	"context"
	"net/http"
	"net/url"
)

// OrdersService reads the caller's own orders: GET /v1/orders. Use it as c.Orders.
type OrdersService struct{ c *Client }

// OrderListParams are the query parameters of GET /v1/orders. Zero values are left out.
type OrderListParams struct {
	// Status filters by status: OrderStatusPaid or OrderStatusRefunded ("" for both).
	Status OrderStatus
	// Limit is the page size, 1..100 (0: the API's default, 20).
	Limit int
	// Cursor is the NextCursor of the previous page.
	Cursor string
}

func (p *OrderListParams) values() url.Values {
	v := url.Values{}
	if p == nil {
		return v
	}
	set(v, "status", string(p.Status))
	setInt(v, "limit", p.Limit)
	set(v, "cursor", p.Cursor)
	return v
}

// List returns one page of the orders the key's account bought, newest first, each
// with its items and download links (GET /v1/orders). params may be nil.
func (s *OrdersService) List(ctx context.Context, params *OrderListParams) (*OrderPage, error) {
	page := &OrderPage{}
	resp, err := s.c.do(ctx, request{method: http.MethodGet, path: "/v1/orders", query: params.values()}, page)
	if err != nil {
		return nil, err
	}
	page.LastResponse = resp
	return page, nil
}

// All returns an iterator over every order params select, all pages included, fetched
// lazily. params may be nil.
func (s *OrdersService) All(ctx context.Context, params *OrderListParams) *OrderIter {
	var p OrderListParams
	if params != nil {
		p = *params
	}
	it := &OrderIter{}
	it.p.ctx = ctx
	it.p.cursor = p.Cursor
	it.p.fetch = func(ctx context.Context, cursor string) ([]Order, string, *Response, error) {
		q := p
		q.Cursor = cursor
		page, err := s.List(ctx, &q)
		if err != nil {
			return nil, "", nil, err
		}
		return page.Data, page.NextCursor, page.LastResponse, nil
	}
	return it
}
