package market

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimit holds the rate-limit figures of one answer: the X-RateLimit-Limit,
// X-RateLimit-Remaining and X-RateLimit-Reset headers that every authenticated answer
// carries, errors included. Read it on a result as result.LastResponse.RateLimit, on an
// iterator as it.LastResponse().RateLimit and on an error as err.(*market.Error).RateLimit.
type RateLimit struct {
	// Present is false when the answer had no rate-limit headers (a 401, an answer of
	// nginx itself); the other fields are then 0.
	Present bool
	// Limit is the number of requests the key may make per window (one Unix minute).
	Limit int
	// Remaining is the number of requests left in the current window after this one.
	Remaining int
	// Reset is the time until the current window ends (whole seconds, 1..60 s).
	Reset time.Duration
}

// Response describes the HTTP answer a result came from. Every result of the Client
// (Product, Seller, ProductPage, OrderPage, DownloadLink, WebhookSubscription,
// WebhookSubscriptionPage, DeletedWebhookSubscription, Event, EventPage) has it as its
// LastResponse field.
type Response struct {
	// StatusCode is the HTTP status (200, 201, or 202 for Webhooks.Test).
	StatusCode int
	// Header holds every response header.
	Header http.Header
	// RequestID is the X-Request-Id of the answer; quote it when reporting a problem.
	RequestID string
	// RateLimit holds the X-RateLimit-* figures of the answer.
	RateLimit RateLimit
	// IdempotentReplayed is true when the answer is the replay of an earlier request
	// with the same Idempotency-Key (header Idempotent-Replayed: true).
	IdempotentReplayed bool
}

func newResponse(status int, h http.Header) *Response {
	return &Response{
		StatusCode:         status,
		Header:             h,
		RequestID:          h.Get("X-Request-Id"),
		RateLimit:          parseRateLimit(h),
		IdempotentReplayed: strings.EqualFold(h.Get("Idempotent-Replayed"), "true"),
	}
}

func parseRateLimit(h http.Header) RateLimit {
	var rl RateLimit
	limit, err1 := strconv.Atoi(strings.TrimSpace(h.Get("X-RateLimit-Limit")))
	remaining, err2 := strconv.Atoi(strings.TrimSpace(h.Get("X-RateLimit-Remaining")))
	if err1 != nil || err2 != nil {
		return rl
	}
	rl.Present, rl.Limit, rl.Remaining = true, limit, remaining
	if reset, err := strconv.Atoi(strings.TrimSpace(h.Get("X-RateLimit-Reset"))); err == nil && reset >= 0 {
		rl.Reset = time.Duration(reset) * time.Second
	}
	return rl
}

// ProductSort is the order of a product listing (the sort parameter).
type ProductSort string

// The orders of GET /v1/products.
const (
	// SortRelevance: full-text rank, best first; only with Q (the default then).
	SortRelevance ProductSort = "relevance"
	// SortNewest: newest first (the default without Q).
	SortNewest ProductSort = "newest"
	// SortPriceAsc: cheapest first.
	SortPriceAsc ProductSort = "price_asc"
	// SortPriceDesc: dearest first.
	SortPriceDesc ProductSort = "price_desc"
)

// OrderStatus is the status of an order as the API shows it.
type OrderStatus string

// The statuses of a listed order.
const (
	OrderStatusPaid     OrderStatus = "paid"
	OrderStatusRefunded OrderStatus = "refunded"
)

// EventType is the kind of a webhook event.
type EventType string

// The event kinds a subscription can ask for (WebhookParams.Events,
// WebhookUpdateParams.Events), in the API's canonical order.
const (
	EventSaleCompleted EventType = "sale.completed"
	EventSaleRefunded  EventType = "sale.refunded"
	EventReviewCreated EventType = "review.created"
	EventPayoutSent    EventType = "payout.sent"
)

// EventWebhookTest is the type of the event Webhooks.Test sends. It is not a kind one
// can subscribe to (the API refuses it in WebhookParams.Events with parameter_invalid):
// a test event goes to the one subscription tested, whatever kinds it asked for. Events
// and deliveries carry it, and EventListParams.Type filters on it.
const EventWebhookTest EventType = "webhook.test"

// known reports whether t is one of the five event types this version knows.
func (t EventType) known() bool {
	switch t {
	case EventSaleCompleted, EventSaleRefunded, EventReviewCreated, EventPayoutSent, EventWebhookTest:
		return true
	}
	return false
}

// WebhookStatus values: WebhookSubscription.Status is "enabled" or "disabled".
const (
	WebhookStatusEnabled  = "enabled"
	WebhookStatusDisabled = "disabled"
)

// DeliveryStatus is the state of one delivery of an event (EventDelivery.Status).
type DeliveryStatus string

// The states of a delivery.
const (
	// DeliveryPending: not sent yet, or to be retried.
	DeliveryPending DeliveryStatus = "pending"
	// DeliveryDelivered: the receiver answered 2xx.
	DeliveryDelivered DeliveryStatus = "delivered"
	// DeliveryFailed: every attempt failed, or the subscription was disabled.
	DeliveryFailed DeliveryStatus = "failed"
	// DeliveryEndpointDeleted: the subscription was deleted before it was sent.
	DeliveryEndpointDeleted DeliveryStatus = "endpoint_deleted"
)

// ProductSummary is a product as a listing shows it: exactly the four fields of the
// interface specification. Price is the lowest tier price, in the product's own
// currency, which a listing does not name (read it with Products.Get).
type ProductSummary struct {
	ID     string  `json:"id"`
	Title  string  `json:"title"`
	Price  Decimal `json:"price"`
	Seller string  `json:"seller"`
}

// ProductPage is one page of products. NextCursor is "" on the last page; otherwise
// pass it as Cursor to read the next page (or use Products.All).
type ProductPage struct {
	Data       []ProductSummary `json:"data"`
	NextCursor string           `json:"next_cursor"`
	// LastResponse describes the HTTP answer (rate limit, request id); nil for the
	// page embedded in a Seller.
	LastResponse *Response `json:"-"`
}

// HasMore reports whether there is a page after this one.
func (p *ProductPage) HasMore() bool { return p.NextCursor != "" }

func (p *ProductPage) page() ([]ProductSummary, string, *Response) {
	return p.Data, p.NextCursor, p.LastResponse
}

// Product is one product with its licence tiers (GET /v1/products/:id).
type Product struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	// Category is the category slug.
	Category string `json:"category"`
	// Price is the lowest tier price.
	Price Decimal `json:"price"`
	// Currency is the ISO 4217 code of every price of the product.
	Currency string `json:"currency"`
	// Seller is the handle (id) of the seller.
	Seller string `json:"seller"`
	// Tiers are ordered by price, then id.
	Tiers        []Tier    `json:"tiers"`
	Rating       Rating    `json:"rating"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	LastResponse *Response `json:"-"`
}

// Tier is a licence tier of a product: a price and the licence terms it buys.
type Tier struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Price       Decimal `json:"price"`
	Currency    string  `json:"currency"`
	// Licence is the licence terms as the seller recorded them (a JSON object); its
	// numbers are json.Number values.
	Licence map[string]any `json:"licence"`
}

// UnmarshalJSON decodes a tier, keeping the numbers of Licence as json.Number.
func (t *Tier) UnmarshalJSON(b []byte) error {
	type plain Tier
	var raw struct {
		plain
		Licence json.RawMessage `json:"licence"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*t = Tier(raw.plain)
	t.Licence = nil
	if len(raw.Licence) > 0 && string(raw.Licence) != "null" {
		dec := json.NewDecoder(strings.NewReader(string(raw.Licence)))
		dec.UseNumber()
		if err := dec.Decode(&t.Licence); err != nil {
			return err
		}
	}
	return nil
}

// Rating summarises the reviews of a product.
type Rating struct {
	// Average is the mean rating rounded to two decimals, nil when Count is 0.
	Average *Decimal `json:"average"`
	Count   int      `json:"count"`
}

// Seller is a seller's profile with one page of its published catalogue
// (GET /v1/sellers/:id).
type Seller struct {
	// ID is the seller's handle.
	ID   string `json:"id"`
	Name string `json:"name"`
	Bio  string `json:"bio"`
	// Website is "" when the seller has none.
	Website   string    `json:"website"`
	CreatedAt time.Time `json:"created_at"`
	// ProductCount counts the seller's published products in the key's mode.
	ProductCount int `json:"product_count"`
	// Products is one page of the seller's catalogue, newest first; SellerParams
	// Limit and Cursor page it.
	Products     ProductPage `json:"products"`
	LastResponse *Response   `json:"-"`
}

// Order is one of the caller's orders with its download links.
type Order struct {
	ID        string      `json:"id"`
	Status    OrderStatus `json:"status"`
	CreatedAt time.Time   `json:"created_at"`
	// Currency is the ISO 4217 code of Total and of the items' prices.
	Currency string `json:"currency"`
	// Total is the sum of the items' prices.
	Total     Decimal     `json:"total"`
	Items     []OrderItem `json:"items"`
	Downloads []Download  `json:"downloads"`
}

// OrderItem is a line of an order as it was at purchase: Title, TierName and Price are
// copies kept on the order, not today's catalogue.
type OrderItem struct {
	Product  string  `json:"product"`
	Title    string  `json:"title"`
	Tier     string  `json:"tier"`
	TierName string  `json:"tier_name"`
	Price    Decimal `json:"price"`
}

// Download is a file the caller may download, with a working link. URL is "" and
// ExpiresAt nil for a refunded order.
type Download struct {
	ID        string     `json:"id"`
	Product   string     `json:"product"`
	Filename  string     `json:"filename"`
	SizeBytes int64      `json:"size_bytes"`
	URL       string     `json:"url"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// OrderPage is one page of orders, newest first. NextCursor is "" on the last page.
type OrderPage struct {
	Data         []Order   `json:"data"`
	NextCursor   string    `json:"next_cursor"`
	LastResponse *Response `json:"-"`
}

// HasMore reports whether there is a page after this one.
func (p *OrderPage) HasMore() bool { return p.NextCursor != "" }

func (p *OrderPage) page() ([]Order, string, *Response) { return p.Data, p.NextCursor, p.LastResponse }

// DownloadLink is a freshly minted download link (POST /v1/downloads/:id/link).
type DownloadLink struct {
	// Object is "download_link".
	Object string `json:"object"`
	// Download is the id of the download the link is for.
	Download string `json:"download"`
	// URL downloads the file without an API key until ExpiresAt.
	URL          string    `json:"url"`
	ExpiresAt    time.Time `json:"expires_at"`
	LastResponse *Response `json:"-"`
}

// WebhookSubscription is a webhook subscription, as Webhooks.Create, List, Get, Update
// and RotateSecret answer it.
type WebhookSubscription struct {
	ID string `json:"id"`
	// Object is "webhook_subscription".
	Object      string      `json:"object"`
	URL         string      `json:"url"`
	Events      []EventType `json:"events"`
	Description string      `json:"description"`
	// Status is "enabled" or "disabled" (WebhookStatusEnabled, WebhookStatusDisabled).
	Status string `json:"status"`
	// Livemode is true for a subscription made with an sk_live_ key.
	Livemode bool `json:"livemode"`
	// Secret ("whsec_...") signs the deliveries; pass it to VerifyWebhook. It is shown
	// only by Webhooks.Create and Webhooks.RotateSecret (and their idempotent replays):
	// store it. It is "" in every other answer.
	Secret    string    `json:"secret"`
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is the time of the last change (CreatedAt in Webhooks.Create's answer).
	UpdatedAt    time.Time `json:"updated_at"`
	LastResponse *Response `json:"-"`
}

// WebhookSubscriptionPage is one page of subscriptions, newest first
// (Webhooks.List). NextCursor is "" on the last page.
type WebhookSubscriptionPage struct {
	Data         []WebhookSubscription `json:"data"`
	NextCursor   string                `json:"next_cursor"`
	LastResponse *Response             `json:"-"`
}

// HasMore reports whether there is a page after this one.
func (p *WebhookSubscriptionPage) HasMore() bool { return p.NextCursor != "" }

func (p *WebhookSubscriptionPage) page() ([]WebhookSubscription, string, *Response) {
	return p.Data, p.NextCursor, p.LastResponse
}

// DeletedWebhookSubscription is the answer of Webhooks.Delete.
type DeletedWebhookSubscription struct {
	ID string `json:"id"`
	// Object is "webhook_subscription".
	Object string `json:"object"`
	// Deleted is true.
	Deleted      bool      `json:"deleted"`
	LastResponse *Response `json:"-"`
}

// Event is a webhook event: as delivered (and as VerifyWebhook returns it), as
// Webhooks.Test and Events.List answer it, and with its Deliveries as Events.Get
// answers it.
type Event struct {
	// ID ("evt_...") is also the webhook-id header: the same on every retry, so use it
	// to drop duplicate deliveries.
	ID        string    `json:"id"`
	Type      EventType `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	Livemode  bool      `json:"livemode"`
	Data      EventData `json:"data"`
	// Deliveries are the event's deliveries, one per subscription it was queued for,
	// oldest first: only in the answer of Events.Get (nil elsewhere).
	Deliveries []EventDelivery `json:"deliveries,omitempty"`
	// LastResponse describes the HTTP answer of Webhooks.Test and Events.Get; nil for an
	// event of a page, and for VerifyWebhook's.
	LastResponse *Response `json:"-"`
}

// UnmarshalJSON decodes an event. The data of the five known types must fit
// EventData; the data of a type this version does not know is kept in Data.Raw
// whatever its shape, its known fields filled where they fit, so that a new type of
// event never makes a call or VerifyWebhook fail.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event
	var raw struct {
		plain
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = Event(raw.plain)
	e.Data = EventData{}
	if len(raw.Data) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw.Data, &e.Data); err != nil {
		if e.Type.known() {
			return err
		}
		e.Data = EventData{Raw: append(json.RawMessage(nil), raw.Data...)}
	}
	return nil
}

// EventDelivery is one delivery of an event, to one subscription (Event.Deliveries).
type EventDelivery struct {
	// Subscription is the id ("we_...") of the subscription it goes to.
	Subscription string `json:"subscription"`
	// Status is DeliveryPending, DeliveryDelivered, DeliveryFailed or
	// DeliveryEndpointDeleted.
	Status DeliveryStatus `json:"status"`
	// Attempts is the number of attempts made.
	Attempts int `json:"attempts"`
	// LastAttemptAt is when the last attempt began; nil before the first.
	LastAttemptAt *time.Time `json:"last_attempt_at"`
	// LastStatus is the HTTP status the receiver answered to the last attempt; nil when
	// none came (a timeout, a connection error) or before the first.
	LastStatus *int `json:"last_status"`
	// LastError says why the last attempt failed when no HTTP status says it (a
	// timeout, a TLS or connection error, "subscription disabled"); nil otherwise.
	LastError *string `json:"last_error"`
}

// EventPage is one page of events, newest first (Events.List). NextCursor is "" on
// the last page.
type EventPage struct {
	Data         []Event   `json:"data"`
	NextCursor   string    `json:"next_cursor"`
	LastResponse *Response `json:"-"`
}

// HasMore reports whether there is a page after this one.
func (p *EventPage) HasMore() bool { return p.NextCursor != "" }

func (p *EventPage) page() ([]Event, string, *Response) { return p.Data, p.NextCursor, p.LastResponse }

// EventData is the data object of an event. Which fields are set depends on the type:
//
//	sale.completed, sale.refunded: Order, Product, Tier, Amount, Currency
//	review.created:                Review, Product, Rating, Body
//	payout.sent:                   Payout, Amount, Currency
//	webhook.test:                  Subscription
//
// Raw holds the object as delivered, for fields this version does not know (and the
// whole data of an event type it does not know): json.Unmarshal it into a struct or a
// map of your own (with a json.Decoder and UseNumber to keep amounts exact).
type EventData struct {
	Order        string  `json:"order,omitempty"`
	Product      string  `json:"product,omitempty"`
	Tier         string  `json:"tier,omitempty"`
	Review       string  `json:"review,omitempty"`
	Payout       string  `json:"payout,omitempty"`
	Amount       Decimal `json:"amount,omitempty"`
	Currency     string  `json:"currency,omitempty"`
	Rating       int     `json:"rating,omitempty"`
	Body         string  `json:"body,omitempty"`
	Subscription string  `json:"subscription,omitempty"`
	// Raw is the data object exactly as delivered.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the known fields and keeps the raw object in Raw.
func (d *EventData) UnmarshalJSON(b []byte) error {
	type plain EventData
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*d = EventData(p)
	d.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// String returns a pointer to s, for the optional fields of WebhookUpdateParams.
func String(s string) *string { return &s }

// Bool returns a pointer to b, for WebhookUpdateParams.Disabled.
func Bool(b bool) *bool { return &b }

// Int returns a pointer to n, for RotateSecretParams.ExpireOldIn.
func Int(n int) *int { return &n }

// setLastResponse lets call set the LastResponse of what it decodes.
func (r *ProductPage) setLastResponse(resp *Response)                { r.LastResponse = resp }
func (r *Product) setLastResponse(resp *Response)                    { r.LastResponse = resp }
func (r *Seller) setLastResponse(resp *Response)                     { r.LastResponse = resp }
func (r *OrderPage) setLastResponse(resp *Response)                  { r.LastResponse = resp }
func (r *DownloadLink) setLastResponse(resp *Response)               { r.LastResponse = resp }
func (r *WebhookSubscription) setLastResponse(resp *Response)        { r.LastResponse = resp }
func (r *WebhookSubscriptionPage) setLastResponse(resp *Response)    { r.LastResponse = resp }
func (r *DeletedWebhookSubscription) setLastResponse(resp *Response) { r.LastResponse = resp }
func (r *Event) setLastResponse(resp *Response)                      { r.LastResponse = resp }
func (r *EventPage) setLastResponse(resp *Response)                  { r.LastResponse = resp }
