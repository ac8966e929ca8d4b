package market

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WebhookTolerance is how far a delivery's webhook-timestamp may be from the current
// time, in either direction, for VerifyWebhook to accept it.
const WebhookTolerance = 5 * time.Minute

// Errors of VerifyWebhook, for errors.Is. Each error VerifyWebhook returns wraps one of
// them (and ErrWebhookVerification).
var (
	// ErrWebhookVerification is wrapped by every error of VerifyWebhook.
	ErrWebhookVerification = errors.New("market: webhook verification failed")
	// ErrWebhookMissingHeader: webhook-id, webhook-timestamp, or both of
	// webhook-signature and X-Signature, are missing.
	ErrWebhookMissingHeader = errors.New("missing header")
	// ErrWebhookTimestamp: webhook-timestamp is not Unix seconds, or is more than
	// WebhookTolerance away from now (a replayed or delayed delivery).
	ErrWebhookTimestamp = errors.New("timestamp outside the tolerance")
	// ErrWebhookSignature: no signature of the headers matches the payload.
	ErrWebhookSignature = errors.New("no matching signature")
	// ErrWebhookSecret: the secret is not "whsec_" followed by base64.
	ErrWebhookSecret = errors.New("invalid secret")
	// ErrWebhookPayload: the signature is valid but the payload is not an event.
	ErrWebhookPayload = errors.New("invalid payload")
)

// verifyError wraps one specific error and ErrWebhookVerification.
type verifyError struct {
	kind error
	msg  string
}

func (e *verifyError) Error() string {
	return "market: webhook verification failed: " + e.kind.Error() + ": " + e.msg
}

func (e *verifyError) Is(target error) bool {
	return target == ErrWebhookVerification || target == e.kind
}

func verifyErr(kind error, format string, args ...any) error {
	return &verifyError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// VerifyWebhook checks a webhook delivery as the Standard Webhooks specification
// describes it and returns the event it carries:
//
//   - payload is the request body exactly as received (read it whole, before any JSON
//     parsing);
//   - headers are the request headers (r.Header); they must hold webhook-id,
//     webhook-timestamp and a signature, in webhook-signature or X-Signature (the
//     same value under the name of the interface specification);
//   - secret is the subscription's "whsec_..." secret (WebhookSubscription.Secret).
//
// The signature is "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." +
// payload)), key being the base64-decoded part of the secret after "whsec_". A header
// may hold several space-separated signatures (as during a secret rotation); one match,
// compared in constant time, is enough. The timestamp must be within WebhookTolerance
// (5 minutes) of now, so that a captured delivery cannot be replayed later.
//
// On failure the error wraps ErrWebhookVerification and one of ErrWebhookMissingHeader,
// ErrWebhookTimestamp, ErrWebhookSignature, ErrWebhookSecret or ErrWebhookPayload: answer
// such a request with a 4xx and ignore it. Deliveries are at least once: drop
// duplicates by Event.ID.
func VerifyWebhook(payload []byte, headers http.Header, secret string) (*Event, error) {
	return verifyWebhookAt(payload, headers, secret, time.Now(), WebhookTolerance)
}

func verifyWebhookAt(payload []byte, headers http.Header, secret string, now time.Time, tolerance time.Duration) (*Event, error) {
	id := headerValue(headers, "webhook-id")
	ts := headerValue(headers, "webhook-timestamp")
	sigs := headerValues(headers, "webhook-signature")
	sigs = append(sigs, headerValues(headers, "x-signature")...)
	switch {
	case id == "":
		return nil, verifyErr(ErrWebhookMissingHeader, "webhook-id")
	case ts == "":
		return nil, verifyErr(ErrWebhookMissingHeader, "webhook-timestamp")
	case len(sigs) == 0:
		return nil, verifyErr(ErrWebhookMissingHeader, "webhook-signature or X-Signature")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, verifyErr(ErrWebhookTimestamp, "webhook-timestamp %q is not Unix seconds", ts)
	}
	sent := time.Unix(sec, 0)
	if d := now.Sub(sent); d > tolerance || d < -tolerance {
		return nil, verifyErr(ErrWebhookTimestamp, "webhook-timestamp is %s away from now", d.Round(time.Second))
	}
	key, err := webhookKey(secret)
	if err != nil {
		return nil, err
	}
	expected := sign(key, id, ts, payload)
	matched := false
	for _, header := range sigs {
		for _, s := range strings.Fields(header) {
			version, value, ok := strings.Cut(s, ",")
			if !ok || version != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(value)
			if err != nil {
				continue
			}
			if hmac.Equal(got, expected) {
				matched = true
			}
		}
	}
	if !matched {
		return nil, verifyErr(ErrWebhookSignature, "the payload, its id or its timestamp do not match any v1 signature")
	}
	ev := &Event{}
	if err := json.Unmarshal(payload, ev); err != nil {
		return nil, verifyErr(ErrWebhookPayload, "%v", err)
	}
	if ev.ID != "" && ev.ID != id {
		return nil, verifyErr(ErrWebhookPayload, "event id %q is not the webhook-id %q", ev.ID, id)
	}
	return ev, nil
}

// webhookKey decodes a "whsec_..." secret (a bare base64 secret is accepted too).
func webhookKey(secret string) ([]byte, error) {
	b64 := strings.TrimPrefix(strings.TrimSpace(secret), "whsec_")
	if b64 == "" {
		return nil, verifyErr(ErrWebhookSecret, "empty secret")
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		if key, err = base64.RawStdEncoding.DecodeString(b64); err != nil {
			return nil, verifyErr(ErrWebhookSecret, "the secret is not whsec_ followed by base64")
		}
	}
	return key, nil
}

// sign returns HMAC-SHA256(key, id + "." + timestamp + "." + payload).
func sign(key []byte, id, timestamp string, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(payload)
	return m.Sum(nil)
}

// headerValues returns every value of a header, whatever the case of its name in h
// (http.Header canonicalises names, but a map built by hand may not).
func headerValues(h http.Header, name string) []string {
	if v, ok := h[http.CanonicalHeaderKey(name)]; ok {
		return append([]string(nil), v...)
	}
	var out []string
	for k, v := range h {
		if strings.EqualFold(k, name) {
			out = append(out, v...)
		}
	}
	return out
}

func headerValue(h http.Header, name string) string {
	for _, v := range headerValues(h, name) {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
