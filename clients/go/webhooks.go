package market

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// WebhooksService subscribes to events and manages the subscriptions: POST and GET
// /v1/webhooks, GET, POST and DELETE /v1/webhooks/:id, POST
// /v1/webhooks/:id/rotate_secret and POST /v1/webhooks/:id/test. Use it as c.Webhooks.
//
// Create (POST /v1/webhooks) is a route of the specification and works on every server.
// The other calls use routes of the API's extension webhook-management, which a server
// has only when its operator sets MARKET_API_EXTENSIONS=webhook-management (off by
// default). Without it they return the client's usual *Error, never retried: KindNotFound
// (ErrNotFound), Status 404, Code route_not_found for Get, Update, Delete, RotateSecret
// and Test; KindInvalidRequest, Status 405, Code method_not_allowed, header Allow: POST
// for List and All, whose path exists for Create.
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
// WebhookSubscription.Secret for VerifyWebhook. It works with or without the server's
// extension webhook-management.
func (s *WebhooksService) Create(ctx context.Context, params *WebhookParams) (*WebhookSubscription, error) {
	if params == nil {
		return nil, errors.New("market: Webhooks.Create: params with a URL are required")
	}
	return call[WebhookSubscription](ctx, s.c, request{
		method:         http.MethodPost,
		path:           "/v1/webhooks",
		body:           webhookBody{URL: params.URL, Events: params.Events, Description: params.Description},
		idempotencyKey: params.IdempotencyKey,
	})
}

// WebhookListParams are the query parameters of GET /v1/webhooks. Zero values are left
// out.
type WebhookListParams struct {
	// Limit is the page size, 1..100 (0: the API's default, 20).
	Limit int
	// Cursor is the NextCursor of the previous page.
	Cursor string
}

func (p *WebhookListParams) values() url.Values {
	v := url.Values{}
	if p == nil {
		return v
	}
	setInt(v, "limit", p.Limit)
	set(v, "cursor", p.Cursor)
	return v
}

// List returns one page of the subscriptions of the key's account and mode, newest
// first (GET /v1/webhooks), without their secrets. params may be nil.
//
// It needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without it
// the error is an *Error of KindInvalidRequest, Status 405, Code method_not_allowed.
func (s *WebhooksService) List(ctx context.Context, params *WebhookListParams) (*WebhookSubscriptionPage, error) {
	return getPage[WebhookSubscriptionPage](ctx, s.c, "/v1/webhooks", params.values())
}

// All returns an iterator over every subscription, all pages included, fetched lazily
// (no request is sent before the first Next). Limit sets the page size; a Cursor
// starts the walk from that page. params may be nil. It needs the extension
// webhook-management: without it the first Next returns false and Err is an *Error of
// KindInvalidRequest (405 method_not_allowed).
func (s *WebhooksService) All(ctx context.Context, params *WebhookListParams) *WebhookSubscriptionIter {
	return &WebhookSubscriptionIter{p: walk[WebhookSubscription, WebhookSubscriptionPage](ctx, s.c, "/v1/webhooks", params.values())}
}

// subscriptionPath is the path of subscription id, escaped, followed by suffix.
func subscriptionPath(id, suffix string) string {
	return "/v1/webhooks/" + url.PathEscape(id) + suffix
}

// Get returns one subscription ("we_...") of the key's account and mode
// (GET /v1/webhooks/:id), without its secret. An unknown, deleted or invisible id is
// an *Error of KindNotFound (resource_missing).
//
// It needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without it
// the error is an *Error of KindNotFound with Code route_not_found.
func (s *WebhooksService) Get(ctx context.Context, id string) (*WebhookSubscription, error) {
	if id == "" {
		return nil, errors.New("market: Webhooks.Get: empty subscription id")
	}
	return call[WebhookSubscription](ctx, s.c, request{method: http.MethodGet, path: subscriptionPath(id, "")})
}

// WebhookUpdateParams are the inputs of POST /v1/webhooks/:id: the fields to change.
// A nil field is left out and keeps its value; with none set, the body is {} and
// nothing changes. market.String and market.Bool make the pointers.
type WebhookUpdateParams struct {
	// URL is a new receiver, an absolute https:// URL, checked again like at creation.
	URL *string
	// Events are the new kinds to receive. nil keeps them; a non-nil empty slice is
	// sent as [] (which the API refuses: parameter_invalid).
	Events []EventType
	// Description is a new description ("" clears it).
	Description *string
	// Disabled true disables the subscription (it receives nothing), false enables it.
	Disabled *bool
	// IdempotencyKey is sent as the Idempotency-Key header; when it is "", the client
	// generates one for this call, kept for all its retries.
	IdempotencyKey string
}

type webhookUpdateBody struct {
	URL         *string      `json:"url,omitempty"`
	Events      *[]EventType `json:"events,omitempty"`
	Description *string      `json:"description,omitempty"`
	Disabled    *bool        `json:"disabled,omitempty"`
}

// Update changes a subscription (POST /v1/webhooks/:id) and returns it as it is now,
// without its secret. params may be nil (nothing changes).
//
// It needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without it
// the error is an *Error of KindNotFound with Code route_not_found.
func (s *WebhooksService) Update(ctx context.Context, id string, params *WebhookUpdateParams) (*WebhookSubscription, error) {
	if id == "" {
		return nil, errors.New("market: Webhooks.Update: empty subscription id")
	}
	body := webhookUpdateBody{}
	req := request{method: http.MethodPost, path: subscriptionPath(id, ""), body: &body}
	if params != nil {
		body.URL, body.Description, body.Disabled = params.URL, params.Description, params.Disabled
		if params.Events != nil {
			events := params.Events
			body.Events = &events
		}
		req.idempotencyKey = params.IdempotencyKey
	}
	return call[WebhookSubscription](ctx, s.c, req)
}

// WebhookDeleteParams are the options of DELETE /v1/webhooks/:id.
type WebhookDeleteParams struct {
	// IdempotencyKey is sent as the Idempotency-Key header: a repeated DELETE with the
	// same key replays the first answer instead of a 404. When it is "", the client
	// generates one for this call, kept for all its retries.
	IdempotencyKey string
}

// Delete removes a subscription (DELETE /v1/webhooks/:id): it receives nothing more,
// and its deliveries still pending end as DeliveryEndpointDeleted. params may be nil.
// A second Delete (with another key) is an *Error of KindNotFound.
//
// It needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without it
// the error is an *Error of KindNotFound with Code route_not_found.
func (s *WebhooksService) Delete(ctx context.Context, id string, params *WebhookDeleteParams) (*DeletedWebhookSubscription, error) {
	if id == "" {
		return nil, errors.New("market: Webhooks.Delete: empty subscription id")
	}
	req := request{method: http.MethodDelete, path: subscriptionPath(id, "")}
	if params != nil {
		req.idempotencyKey = params.IdempotencyKey
	}
	return call[DeletedWebhookSubscription](ctx, s.c, req)
}

// RotateSecretParams are the inputs of POST /v1/webhooks/:id/rotate_secret.
type RotateSecretParams struct {
	// ExpireOldIn is how many seconds (0..604800) the replaced secret keeps signing
	// beside the new one; until then each delivery carries both signatures. nil: the
	// server's default (MARKET_WEBHOOK_SECRET_GRACE, 24 h); market.Int(0) ends the old
	// secret at once (a leaked secret).
	ExpireOldIn *int
	// IdempotencyKey is sent as the Idempotency-Key header: the same key within 24
	// hours replays the first answer (the same new secret). When it is "", the client
	// generates one for this call, kept for all its retries.
	IdempotencyKey string
}

// rotateBody is the JSON body; no body at all is sent without ExpireOldIn.
type rotateBody struct {
	ExpireOldIn int `json:"expire_old_in"`
}

// RotateSecret gives a subscription a new signing secret
// (POST /v1/webhooks/:id/rotate_secret) and returns the subscription with it in
// Secret, shown only here: store it. params may be nil.
//
// It needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without it
// the error is an *Error of KindNotFound with Code route_not_found.
func (s *WebhooksService) RotateSecret(ctx context.Context, id string, params *RotateSecretParams) (*WebhookSubscription, error) {
	if id == "" {
		return nil, errors.New("market: Webhooks.RotateSecret: empty subscription id")
	}
	req := request{method: http.MethodPost, path: subscriptionPath(id, "/rotate_secret")}
	if params != nil {
		if params.ExpireOldIn != nil {
			req.body = rotateBody{ExpireOldIn: *params.ExpireOldIn}
		}
		req.idempotencyKey = params.IdempotencyKey
	}
	return call[WebhookSubscription](ctx, s.c, req)
}

// WebhookTestParams are the options of POST /v1/webhooks/:id/test.
type WebhookTestParams struct {
	// IdempotencyKey is sent as the Idempotency-Key header: a replay answers the same
	// event and queues nothing more. When it is "", the client generates one for this
	// call, kept for all its retries.
	IdempotencyKey string
}

// Test queues a webhook.test event for this subscription alone
// (POST /v1/webhooks/:id/test) and returns it (202), exactly the payload that will be
// delivered: Type EventWebhookTest, Data.Subscription the subscription's id. params
// may be nil.
//
// It needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without it
// the error is an *Error of KindNotFound with Code route_not_found.
func (s *WebhooksService) Test(ctx context.Context, id string, params *WebhookTestParams) (*Event, error) {
	if id == "" {
		return nil, errors.New("market: Webhooks.Test: empty subscription id")
	}
	req := request{method: http.MethodPost, path: subscriptionPath(id, "/test")}
	if params != nil {
		req.idempotencyKey = params.IdempotencyKey
	}
	return call[Event](ctx, s.c, req)
}
