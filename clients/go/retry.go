package market

import (
	"math/rand"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter is the longest Retry-After the client waits for; an answer asking for
// more is returned to the caller at once.
const maxRetryAfter = 60 * time.Second

// shouldRetry decides whether the attempt numbered attempt (0 for the first) of a call
// may be followed by another one, given its outcome: status is the HTTP status of the
// answer, or 0 when there was no answer (a network failure). The policy is
// docs/clients.md's, the same in the four clients:
//
//   - Never once maxRetries retries were made.
//   - 429 (rate limited) and 503 (service unavailable): always; the request was not
//     carried out.
//   - 502 and 504 (the gateway: the request may have run) and a network failure (no
//     complete answer, a timeout): for GET and HEAD (nothing changes on the server) and
//     for a POST or DELETE that carries an Idempotency-Key (the server replays the first
//     answer instead of acting twice); never for another request, which may have been
//     carried out.
//   - Any other answer: never (it is the API's final word).
func shouldRetry(method string, hasIdempotencyKey bool, status, attempt, maxRetries int) bool {
	if attempt >= maxRetries {
		return false
	}
	repeatable := method == http.MethodGet || method == http.MethodHead || hasIdempotencyKey
	switch status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	case 0, http.StatusBadGateway, http.StatusGatewayTimeout:
		return repeatable
	default:
		return false
	}
}

// retryDelay is the wait before retrying an answer with this status and headers: its
// Retry-After when it has a valid one, else the back-off of the attempt.
func retryDelay(status int, h http.Header, attempt int, backoff func(int) time.Duration) time.Duration {
	if status != 0 {
		if d, ok := parseRetryAfter(h.Get("Retry-After"), time.Now()); ok {
			return d
		}
	}
	return backoff(attempt)
}

// parseRetryAfter reads a Retry-After value: whole seconds (what the API sends) or an
// HTTP date (RFC 9110). ok is false when v is empty or neither.
func parseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > 24*3600 {
			n = 24 * 3600
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d.Round(time.Second), true
		}
		return 0, true
	}
	return 0, false
}

// networkBackoff is the wait before retry attempt+1 after a network failure or an
// answer without Retry-After:
// 0.5 s, 1 s, 2 s... up to 8 s, each spread at random over its upper half so that
// clients that failed together do not come back together.
func networkBackoff(attempt int) time.Duration {
	d := 500 * time.Millisecond
	for i := 0; i < attempt && d < 8*time.Second; i++ {
		d *= 2
	}
	if d > 8*time.Second {
		d = 8 * time.Second
	}
	return d/2 + time.Duration(rand.Int63n(int64(d/2)+1))
}
