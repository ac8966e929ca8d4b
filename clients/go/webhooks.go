package market

import (
	"context"
	"errors"
	"net/http"
)

// WebhooksService subscribes to events: POST /v1/webhooks. Use it as c.Webhooks.
type WebhooksService struct{ c *Client }

// WebhookParams are the inputs of POST /v1/webhooks.
type WebhookParams struct {
	// URL is the receiver, an absolute https:// URL (required).
	URL string
	// Events are the kinds to receive; nil (or empty) for all four.
	Events []EventType
	// Description is a free text of at most 500 characters (optional).
	Description string
	// IdempotencyKey is sent as the Idempotency-Key header: the same key and inputs
	// within 24 hours replay the first answer (the same subscription and secret). When
	// it is "", the client generates one for this call, kept for all its retries.
	IdempotencyKey string
}

type webhookBody struct {
	URL         string      `json:"url,omitempty"`
	Events      []EventType `json:"events,omitempty"`
	Description string      `json:"description,omitempty"`
}

// Create subscribes an HTTPS endpoint to events (POST /v1/webhooks) and returns the
// subscription with its signing secret, which is shown only here: keep
// WebhookSubscription.Secret for VerifyWebhook.
func (s *WebhooksService) Create(ctx context.Context, params *WebhookParams) (*WebhookSubscription, error) {
	if params == nil {
		return nil, errors.New("market: Webhooks.Create: params with a URL are required")
	}
	sub := &WebhookSubscription{}
	resp, err := s.c.do(ctx, request{
		method:         http.MethodPost,
		path:           "/v1/webhooks",
		body:           webhookBody{URL: params.URL, Events: params.Events, Description: params.Description},
		idempotencyKey: params.IdempotencyKey,
	}, sub)
	if err != nil {
		return nil, err
	}
	sub.LastResponse = resp
	return sub, nil
}
