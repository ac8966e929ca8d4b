package market

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// SellersService reads seller profiles: GET /v1/sellers/:id. Use it as c.Sellers.
type SellersService struct{ c *Client }

// SellerParams are the query parameters of GET /v1/sellers/:id; they page the seller's
// catalogue (Seller.Products).
type SellerParams struct {
	// Limit is the page size of Products, 1..100 (0: the API's default, 20).
	Limit int
	// Cursor is the Products.NextCursor of the previous call.
	Cursor string
}

func (p *SellerParams) values() url.Values {
	v := url.Values{}
	if p == nil {
		return v
	}
	setInt(v, "limit", p.Limit)
	set(v, "cursor", p.Cursor)
	return v
}

// Get returns a seller's profile and one page of its published catalogue
// (GET /v1/sellers/:id). id is the seller's handle; params may be nil. An unknown
// handle is an *Error of KindNotFound.
func (s *SellersService) Get(ctx context.Context, id string, params *SellerParams) (*Seller, error) {
	if id == "" {
		return nil, errors.New("market: Sellers.Get: empty seller id")
	}
	return call[Seller](ctx, s.c, request{
		method: http.MethodGet, path: "/v1/sellers/" + url.PathEscape(id), query: params.values(),
	})
}
