package market

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// EventsService reads the events of the key's account and mode back, with their
// deliveries: GET /v1/events and GET /v1/events/:id. Use it as c.Events, for instance to
// catch up on deliveries a receiver missed (see the README).
//
// Both routes belong to the API's extension webhook-management, which a server has only
// when its operator sets MARKET_API_EXTENSIONS=webhook-management (off by default).
// Without it every call here returns an *Error of KindNotFound (ErrNotFound), Status 404,
// Code route_not_found, never retried.
type EventsService struct{ c *Client }

// EventListParams are the query parameters of GET /v1/events. Zero values are left
// out.
type EventListParams struct {
	// Type filters by event type: one of the four kinds or EventWebhookTest ("" for
	// every type).
	Type EventType
	// CreatedGte selects the events created at or after this time; the zero time for
	// no lower bound.
	CreatedGte time.Time
	// CreatedLt selects the events created before this time; the zero time for no upper
	// bound.
	CreatedLt time.Time
	// Limit is the page size, 1..100 (0: the API's default, 20).
	Limit int
	// Cursor is the NextCursor of the previous page (with the same filters: the
	// cursor is bound to them).
	Cursor string
}

func (p *EventListParams) values() url.Values {
	v := url.Values{}
	if p == nil {
		return v
	}
	set(v, "type", string(p.Type))
	set(v, "created_gte", formatTime(p.CreatedGte))
	set(v, "created_lt", formatTime(p.CreatedLt))
	setInt(v, "limit", p.Limit)
	set(v, "cursor", p.Cursor)
	return v
}

// formatTime writes t as the API's filters take it: RFC 3339 in UTC, with a fraction
// of second only when there is one ("2026-11-26T10:04:05Z", "2026-11-26T10:04:05.5Z"),
// "" for the zero time. The API reads at most 6 fractional digits and stores times to
// the microsecond, so t is rounded up to the microsecond: for an event time e (whole
// microseconds), e >= t and e < t hold exactly when they hold for the rounded t.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	if r := t.Truncate(time.Microsecond); !r.Equal(t) {
		t = r.Add(time.Microsecond)
	}
	return t.Format(time.RFC3339Nano)
}

// List returns one page of the events of the key's account and mode, newest first
// (GET /v1/events), each exactly the payload that was (or will be) delivered.
// params may be nil.
//
// It needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without it
// the error is an *Error of KindNotFound with Code route_not_found.
func (s *EventsService) List(ctx context.Context, params *EventListParams) (*EventPage, error) {
	return getPage[EventPage](ctx, s.c, "/v1/events", params.values())
}

// All returns an iterator over every event params select, newest first, all pages
// included, fetched lazily (no request is sent before the first Next). params may be
// nil. It needs the extension webhook-management: without it the first Next returns
// false and Err is an *Error of KindNotFound (route_not_found).
func (s *EventsService) All(ctx context.Context, params *EventListParams) *EventIter {
	return &EventIter{p: walk[Event, EventPage](ctx, s.c, "/v1/events", params.values())}
}

// Get returns one event ("evt_...") with its Deliveries (GET /v1/events/:id). An event
// of another account or mode, pruned or unknown, is an *Error of KindNotFound
// (resource_missing).
//
// It needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without it
// the error is an *Error of KindNotFound with Code route_not_found.
func (s *EventsService) Get(ctx context.Context, id string) (*Event, error) {
	if id == "" {
		return nil, errors.New("market: Events.Get: empty event id")
	}
	return call[Event](ctx, s.c, request{method: http.MethodGet, path: "/v1/events/" + url.PathEscape(id)})
}
