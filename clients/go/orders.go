package market

import (
	"context"
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
	return getPage[OrderPage](ctx, s.c, "/v1/orders", params.values())
}

// All returns an iterator over every order params select, all pages included, fetched
// lazily. params may be nil.
func (s *OrdersService) All(ctx context.Context, params *OrderListParams) *OrderIter {
	return &OrderIter{p: walk[Order, OrderPage](ctx, s.c, "/v1/orders", params.values())}
}
