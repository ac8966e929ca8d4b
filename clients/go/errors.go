package market

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Kind classifies an *Error by what the caller can do about it. Compare it with the
// Kind constants (err.Kind == market.KindNotFound), or test an error with errors.Is
// and the matching sentinel (errors.Is(err, market.ErrNotFound)).
type Kind string

// The kinds of *Error, by HTTP status.
const (
	// KindAuthentication: 401, the API key is missing, unknown, revoked or expired
	// (codes missing_api_key, invalid_api_key, api_key_expired).
	KindAuthentication Kind = "authentication"
	// KindPermission: 403, the key lacks the scope the route needs (a read-only key on
	// a POST route; code insufficient_scope).
	KindPermission Kind = "permission"
	// KindNotFound: 404, an unknown or invisible resource (resource_missing) or path
	// (route_not_found: also a call of the extension webhook-management, WebhooksService
	// but Create and EventsService, on a server without it).
	KindNotFound Kind = "not_found"
	// KindRateLimit: 429, the key's requests per minute are used up (rate_limited).
	// RetryAfter tells how long until the window ends.
	KindRateLimit Kind = "rate_limit"
	// KindInvalidRequest: 400 and the other 4xx statuses that mean the request itself
	// is wrong: 405, 408, 410, 413, 414, 415, 416. Code and Param say what.
	KindInvalidRequest Kind = "invalid_request"
	// KindConflict: 409, the request conflicts with the state of the resource
	// (order_refunded) or with an earlier request of the same Idempotency-Key
	// (idempotency_conflict).
	KindConflict Kind = "conflict"
	// KindServer: 5xx, a fault of the service or its gateway (internal_error,
	// service_unavailable).
	KindServer Kind = "server"
	// KindConnection: no HTTP answer at all (connection refused or dropped, DNS, TLS,
	// timeout, context cancelled). Status is 0 and Err holds the cause.
	KindConnection Kind = "connection"
)

// Sentinel errors, one per Kind, for errors.Is: errors.Is(err, ErrNotFound) is true
// for an *Error of KindNotFound.
var (
	ErrAuthentication = errors.New("market: authentication error")
	ErrPermission     = errors.New("market: permission error")
	ErrNotFound       = errors.New("market: not found")
	ErrRateLimit      = errors.New("market: rate limit exceeded")
	ErrInvalidRequest = errors.New("market: invalid request")
	ErrConflict       = errors.New("market: conflict")
	ErrServer         = errors.New("market: server error")
	ErrConnection     = errors.New("market: connection error")
)

var kindSentinels = map[Kind]error{
	KindAuthentication: ErrAuthentication,
	KindPermission:     ErrPermission,
	KindNotFound:       ErrNotFound,
	KindRateLimit:      ErrRateLimit,
	KindInvalidRequest: ErrInvalidRequest,
	KindConflict:       ErrConflict,
	KindServer:         ErrServer,
	KindConnection:     ErrConnection,
}

// Error is every error a call of the Client returns, once the call was made (errors in
// the arguments themselves, such as an empty id, are plain errors). Its fields are the
// API's error object (see "Errors" in docs/api.md) and the figures of the HTTP answer:
//
//	{"error": {"type": "invalid_request_error", "code": "parameter_invalid",
//	           "message": "...", "param": "limit", "request_id": "..."}}
//
// Branch on Kind (or errors.Is with the sentinels) for the broad class and on Code for
// the exact reason; Message is for people.
type Error struct {
	// Kind is the class of the error, from Status.
	Kind Kind
	// Status is the HTTP status code, 0 for a KindConnection error.
	Status int
	// Type is the API's error type: invalid_request_error, authentication_error,
	// permission_error, rate_limit_error or api_error.
	Type string
	// Code is the API's error code, e.g. resource_missing, parameter_invalid,
	// order_refunded, rate_limited.
	Code string
	// Message is a human-readable explanation.
	Message string
	// Param names the parameter at fault, when one is ("limit", "sort", "url", "id").
	Param string
	// RequestID identifies the request in the service's logs (the X-Request-Id header,
	// or request_id of the body).
	RequestID string
	// RateLimit holds the X-RateLimit-* figures of the answer (absent on a 401, which
	// is answered before the key is counted).
	RateLimit RateLimit
	// RetryAfter is the Retry-After of a 429, 502, 503 or 504 answer, 0 when there is none.
	RetryAfter time.Duration
	// Header holds the response headers (nil for a KindConnection error).
	Header http.Header
	// Err is the underlying cause of a KindConnection error (a *url.Error, io.EOF,
	// context.Canceled, context.DeadlineExceeded...), nil otherwise. errors.Is and
	// errors.As see through it.
	Err error
}

// Error formats the error as "market: STATUS TYPE/CODE: MESSAGE (param P, request_id R)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("market: ")
	if e.Status == 0 {
		b.WriteString("connection error")
		if e.Message != "" {
			b.WriteString(": ")
			b.WriteString(e.Message)
		}
		if e.Err != nil {
			b.WriteString(": ")
			b.WriteString(e.Err.Error())
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%d", e.Status)
	if e.Type != "" || e.Code != "" {
		fmt.Fprintf(&b, " %s/%s", e.Type, e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	var extra []string
	if e.Param != "" {
		extra = append(extra, "param "+e.Param)
	}
	if e.RequestID != "" {
		extra = append(extra, "request_id "+e.RequestID)
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, ", ") + ")")
	}
	return b.String()
}

// Unwrap returns the cause of a KindConnection error.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotFound) (and the other sentinels) true for an *Error of
// the matching Kind.
func (e *Error) Is(target error) bool {
	s, ok := kindSentinels[e.Kind]
	return ok && s == target
}

// KindOf returns the Kind of err if it is, or wraps, an *Error; "" otherwise.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// kindForStatus maps an HTTP status code to its Kind.
func kindForStatus(status int) Kind {
	switch {
	case status == http.StatusUnauthorized:
		return KindAuthentication
	case status == http.StatusForbidden:
		return KindPermission
	case status == http.StatusNotFound:
		return KindNotFound
	case status == http.StatusTooManyRequests:
		return KindRateLimit
	case status == http.StatusConflict:
		return KindConflict
	case status >= 500:
		return KindServer
	case status >= 400:
		return KindInvalidRequest
	default:
		// A status the API never sends as an error (1xx, 3xx): the request did not do
		// what was asked; the caller has to look at it.
		return KindInvalidRequest
	}
}
