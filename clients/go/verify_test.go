package market

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test vector of the Standard Webhooks specification
// (github.com/standard-webhooks/standard-webhooks, libraries' tests).
const (
	vecSecret  = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID      = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTS      = "1614265330"
	vecPayload = `{"test": 2432232314}`
	vecSig     = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

const testSecret = "whsec_mIlOgwzXJ4VmWsJYzg84D9eNuB70WWS6viqT4eMgl/o="

var testPayload = []byte(`{"id":"evt_5b0f8a2c9d3e4f1a8b7c6d5e4f3a2b1c","type":"sale.completed","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{"order":"ord_1","product":"prod_font1","tier":"tier_font1_p","amount":19.99,"currency":"USD"}}`)

// signFor signs like market-webhookd, computed here independently of sign().
func signFor(t *testing.T, secret, id, ts string, payload []byte) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "." + string(payload)))
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func deliveryHeaders(id, ts, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	h.Set("webhook-signature", sig)
	h.Set("X-Signature", sig)
	h.Set("Content-Type", "application/json")
	return h
}

func TestVerifyStandardWebhooksVector(t *testing.T) {
	h := http.Header{}
	h.Set("webhook-id", vecID)
	h.Set("webhook-timestamp", vecTS)
	h.Set("webhook-signature", vecSig)
	ts, _ := strconv.ParseInt(vecTS, 10, 64)
	_, err := verifyWebhookAt([]byte(vecPayload), h, vecSecret, time.Unix(ts, 0), WebhookTolerance)
	if err != nil {
		t.Fatalf("vector refused: %v", err)
	}
	h.Set("webhook-signature", vecSig[:len(vecSig)-2]+"X=")
	if _, err := verifyWebhookAt([]byte(vecPayload), h, vecSecret, time.Unix(ts, 0), WebhookTolerance); !errors.Is(err, ErrWebhookSignature) {
		t.Fatalf("altered vector signature: %v", err)
	}
	if got := signFor(t, vecSecret, vecID, vecTS, []byte(vecPayload)); got != vecSig {
		t.Fatalf("the test's own signer disagrees with the vector: %s", got)
	}
}

// The signature the client checks is the one openssl computes, when openssl is there.
func TestVerifyAgainstOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl")
	}
	const id, ts = "evt_5b0f8a2c9d3e4f1a8b7c6d5e4f3a2b1c", "1700000000"
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(testSecret, "whsec_"))
	cmd := exec.Command("openssl", "dgst", "-sha256", "-mac", "HMAC", "-macopt", "hexkey:"+hexOf(key), "-binary")
	cmd.Stdin = strings.NewReader(id + "." + ts + "." + string(testPayload))
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("openssl: %v", err)
	}
	sig := "v1," + base64.StdEncoding.EncodeToString(out)
	if sig != signFor(t, testSecret, id, ts, testPayload) {
		t.Fatalf("openssl and the test's signer disagree")
	}
	if _, err := verifyWebhookAt(testPayload, deliveryHeaders(id, ts, sig), testSecret, time.Unix(1700000000, 0), WebhookTolerance); err != nil {
		t.Fatalf("openssl's signature refused: %v", err)
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func TestVerifyWebhook(t *testing.T) {
	const id = "evt_5b0f8a2c9d3e4f1a8b7c6d5e4f3a2b1c"
	now := time.Unix(1_800_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	good := signFor(t, testSecret, id, ts, testPayload)
	otherSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("another secret of thirty-two b!!"))

	type tc struct {
		name    string
		payload []byte
		headers http.Header
		secret  string
		now     time.Time
		want    error // nil: valid
	}
	cases := []tc{
		{name: "valid", headers: deliveryHeaders(id, ts, good)},
		{name: "X-Signature alone", headers: func() http.Header {
			h := deliveryHeaders(id, ts, good)
			h.Del("webhook-signature")
			return h
		}()},
		{name: "webhook-signature alone", headers: func() http.Header {
			h := deliveryHeaders(id, ts, good)
			h.Del("X-Signature")
			return h
		}()},
		{name: "several signatures, the last one matches", headers: deliveryHeaders(id, ts,
			signFor(t, otherSecret, id, ts, testPayload)+" v1a,"+strings.TrimPrefix(good, "v1,")+" v1,bm90IGJhc2U2NA== garbage "+good)},
		{name: "several signatures, the first one matches", headers: deliveryHeaders(id, ts,
			good+" "+signFor(t, otherSecret, id, ts, testPayload))},
		{name: "lower-case header map built by hand", headers: http.Header{
			"webhook-id": {id}, "webhook-timestamp": {ts}, "webhook-signature": {good},
		}},
		{name: "timestamp 4m59s old", headers: deliveryHeaders(id, ts, good), now: now.Add(299 * time.Second)},
		{name: "timestamp 4m59s ahead", headers: deliveryHeaders(id, ts, good), now: now.Add(-299 * time.Second)},

		{name: "tampered payload", payload: []byte(strings.Replace(string(testPayload), "19.99", "1999", 1)),
			headers: deliveryHeaders(id, ts, good), want: ErrWebhookSignature},
		{name: "one byte appended", payload: append(append([]byte(nil), testPayload...), ' '),
			headers: deliveryHeaders(id, ts, good), want: ErrWebhookSignature},
		{name: "tampered id", headers: deliveryHeaders("evt_other", ts, good), want: ErrWebhookSignature},
		{name: "tampered timestamp", headers: deliveryHeaders(id, strconv.FormatInt(now.Unix()+1, 10), good),
			want: ErrWebhookSignature},
		{name: "tampered signature", headers: deliveryHeaders(id, ts, good[:10]+flip(good[10])+good[11:]),
			want: ErrWebhookSignature},
		{name: "wrong secret", headers: deliveryHeaders(id, ts, good), secret: otherSecret, want: ErrWebhookSignature},
		{name: "only signatures of another version", headers: deliveryHeaders(id, ts, "v2,"+strings.TrimPrefix(good, "v1,")),
			want: ErrWebhookSignature},
		{name: "signature without its version", headers: deliveryHeaders(id, ts, strings.TrimPrefix(good, "v1,")),
			want: ErrWebhookSignature},
		{name: "expired timestamp (5m01s old)", headers: deliveryHeaders(id, ts, good), now: now.Add(301 * time.Second),
			want: ErrWebhookTimestamp},
		{name: "timestamp from the future (5m01s ahead)", headers: deliveryHeaders(id, ts, good), now: now.Add(-301 * time.Second),
			want: ErrWebhookTimestamp},
		{name: "timestamp not a number", headers: deliveryHeaders(id, "2026-11-21T10:04:05Z", good), want: ErrWebhookTimestamp},
		{name: "missing webhook-id", headers: func() http.Header {
			h := deliveryHeaders(id, ts, good)
			h.Del("webhook-id")
			return h
		}(), want: ErrWebhookMissingHeader},
		{name: "missing timestamp", headers: func() http.Header {
			h := deliveryHeaders(id, ts, good)
			h.Del("webhook-timestamp")
			return h
		}(), want: ErrWebhookMissingHeader},
		{name: "no signature header", headers: func() http.Header {
			h := deliveryHeaders(id, ts, good)
			h.Del("webhook-signature")
			h.Del("X-Signature")
			return h
		}(), want: ErrWebhookMissingHeader},
		{name: "secret not base64", headers: deliveryHeaders(id, ts, good), secret: "whsec_%%%", want: ErrWebhookSecret},
		{name: "valid signature over a payload that is not JSON", payload: []byte("not json"),
			headers: deliveryHeaders(id, ts, signFor(t, testSecret, id, ts, []byte("not json"))), want: ErrWebhookPayload},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			payload, secret, at := c.payload, c.secret, c.now
			if payload == nil {
				payload = testPayload
			}
			if secret == "" {
				secret = testSecret
			}
			if at.IsZero() {
				at = now
			}
			ev, err := verifyWebhookAt(payload, c.headers, secret, at, WebhookTolerance)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if ev.ID != id || ev.Type != EventSaleCompleted || ev.Data.Amount != "19.99" ||
					ev.Data.Order != "ord_1" || ev.Data.Currency != "USD" || ev.Livemode ||
					!ev.CreatedAt.Equal(time.Date(2026, 11, 21, 10, 4, 5, 0, time.UTC)) {
					t.Fatalf("event not parsed right: %+v", ev)
				}
				if string(ev.Data.Raw) != `{"order":"ord_1","product":"prod_font1","tier":"tier_font1_p","amount":19.99,"currency":"USD"}` {
					t.Fatalf("raw data: %s", ev.Data.Raw)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %v", c.want)
			}
			if ev != nil {
				t.Fatalf("an event was returned with the error %v", err)
			}
			if !errors.Is(err, c.want) || !errors.Is(err, ErrWebhookVerification) {
				t.Fatalf("error %v: want %v and ErrWebhookVerification", err, c.want)
			}
		})
	}
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

// VerifyWebhook itself uses the current time and 5 minutes.
func TestVerifyWebhookUsesNow(t *testing.T) {
	const id = "evt_5b0f8a2c9d3e4f1a8b7c6d5e4f3a2b1c"
	fresh := strconv.FormatInt(time.Now().Unix(), 10)
	if _, err := VerifyWebhook(testPayload, deliveryHeaders(id, fresh, signFor(t, testSecret, id, fresh, testPayload)), testSecret); err != nil {
		t.Fatalf("fresh delivery refused: %v", err)
	}
	old := strconv.FormatInt(time.Now().Add(-6*time.Minute).Unix(), 10)
	if _, err := VerifyWebhook(testPayload, deliveryHeaders(id, old, signFor(t, testSecret, id, old, testPayload)), testSecret); !errors.Is(err, ErrWebhookTimestamp) {
		t.Fatalf("6-minute-old delivery: %v", err)
	}
}
