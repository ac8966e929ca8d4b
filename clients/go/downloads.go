package market

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// DownloadsService mints download links: POST /v1/downloads/:id/link. Use it as
// c.Downloads.
type DownloadsService struct{ c *Client }

// LinkParams are the inputs of POST /v1/downloads/:id/link.
type LinkParams struct {
	// ExpiresIn is the lifetime of the link in seconds, 60..86400 (0: the server's
	// default, MARKET_DOWNLOAD_TTL, 3600 unless configured).
	ExpiresIn int
	// IdempotencyKey is sent as the Idempotency-Key header: the same key and inputs
	// within 24 hours replay the first answer (the same link). When it is "", the
	// client generates one for this call, kept for all its retries.
	IdempotencyKey string
}

// linkBody is the JSON body; no body at all is sent without ExpiresIn.
type linkBody struct {
	ExpiresIn int `json:"expires_in"`
}

// CreateLink mints a fresh download link for download id (a "dl_..." id from
// Order.Downloads) (POST /v1/downloads/:id/link). params may be nil. A download that is
// not the caller's is an *Error of KindNotFound; one of a refunded order, KindConflict
// with Code "order_refunded".
func (s *DownloadsService) CreateLink(ctx context.Context, id string, params *LinkParams) (*DownloadLink, error) {
	if id == "" {
		return nil, errors.New("market: Downloads.CreateLink: empty download id")
	}
	req := request{method: http.MethodPost, path: "/v1/downloads/" + url.PathEscape(id) + "/link"}
	if params != nil {
		if params.ExpiresIn != 0 {
			req.body = linkBody{ExpiresIn: params.ExpiresIn}
		}
		req.idempotencyKey = params.IdempotencyKey
	}
	return call[DownloadLink](ctx, s.c, req)
}
