package market

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
)

// ProductsService reads the catalogue: GET /v1/products and GET /v1/products/:id.
// Use it as c.Products.
type ProductsService struct{ c *Client }

// ProductListParams are the query parameters of GET /v1/products. Zero values are left
// out (the API's defaults apply).
type ProductListParams struct {
	// Category filters by category slug, exactly.
	Category string
	// Q searches titles and descriptions (full text, 1..200 characters, web-search
	// syntax: "exact phrase", or, -exclude).
	Q string
	// Seller filters by seller handle, exactly.
	Seller string
	// MinPrice and MaxPrice bound the (lowest tier) price, inclusive, in the product's
	// own currency: decimals >= 0 such as "19.99".
	MinPrice Decimal
	MaxPrice Decimal
	// Sort is the order: SortRelevance (default with Q; only with Q), SortNewest
	// (default without Q), SortPriceAsc or SortPriceDesc.
	Sort ProductSort
	// Limit is the page size, 1..100 (0: the API's default, 20).
	Limit int
	// Cursor is the NextCursor of the previous page.
	Cursor string
}

// values encodes the parameters as a query string.
func (p *ProductListParams) values() url.Values {
	v := url.Values{}
	if p == nil {
		return v
	}
	set(v, "category", p.Category)
	set(v, "q", p.Q)
	set(v, "seller", p.Seller)
	set(v, "min_price", p.MinPrice.String())
	set(v, "max_price", p.MaxPrice.String())
	set(v, "sort", string(p.Sort))
	setInt(v, "limit", p.Limit)
	set(v, "cursor", p.Cursor)
	return v
}

func set(v url.Values, name, value string) {
	if value != "" {
		v.Set(name, value)
	}
}

func setInt(v url.Values, name string, n int) {
	if n != 0 {
		v.Set(name, strconv.Itoa(n))
	}
}

// List returns one page of published products (GET /v1/products). params may be nil.
func (s *ProductsService) List(ctx context.Context, params *ProductListParams) (*ProductPage, error) {
	return getPage[ProductPage](ctx, s.c, "/v1/products", params.values())
}

// All returns an iterator over every product of the listing that params select, all
// pages included, fetched lazily (no request is sent before the first Next). Limit
// sets the page size; a Cursor starts the walk from that page. params may be nil.
func (s *ProductsService) All(ctx context.Context, params *ProductListParams) *ProductIter {
	return &ProductIter{p: walk[ProductSummary, ProductPage](ctx, s.c, "/v1/products", params.values())}
}

// Get returns one published product with its licence tiers (GET /v1/products/:id).
// An unknown id is an *Error of KindNotFound.
func (s *ProductsService) Get(ctx context.Context, id string) (*Product, error) {
	if id == "" {
		return nil, errors.New("market: Products.Get: empty product id")
	}
	return call[Product](ctx, s.c, request{method: http.MethodGet, path: "/v1/products/" + url.PathEscape(id)})
}
