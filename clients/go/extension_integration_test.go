package market_test

// The calls of contract section 13 against a stack without the server's extension.
// clients/go/test.sh starts a second, plain stack without MARKET_API_EXTENSIONS (the
// specification's six routes) and exports its variables with the prefix PLAIN_. There
// Webhooks.Create (POST /v1/webhooks, a route of the specification) still subscribes,
// and every other Webhooks call and every Events call returns the client's own error for
// a route the server does not have: an *Error of KindNotFound (errors.Is ErrNotFound),
// Status 404, Code route_not_found; except Webhooks.List and Webhooks.All, whose path
// /v1/webhooks exists for POST and so answers 405 method_not_allowed with Allow: POST
// (KindInvalidRequest). The control: the main stack, started with
// MARKET_API_EXTENSIONS=webhook-management, answers the same calls.

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	market "github.com/markethq/market/clients/go"
)

// plainStack skips the test unless MARKET_IT=1 and fails it without the plain stack's
// variables.
func plainStack(t *testing.T) {
	t.Helper()
	if os.Getenv("MARKET_IT") != "1" {
		t.Skip("integration test: set MARKET_IT=1 and run against a stack (clients/go/test.sh)")
	}
	for _, v := range []string{"PLAIN_BASE_URL", "PLAIN_MARKET_ADMIN", "PLAIN_MARKET_DB", "PLAIN_MARKET_SECRET_FILE"} {
		env(t, v)
	}
}

// plainAdmin runs market-admin on the plain stack's database and secret.
func plainAdmin(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	var e []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MARKET_API_EXTENSIONS=") {
			e = append(e, kv)
		}
	}
	e = append(e, "MARKET_DB="+os.Getenv("PLAIN_MARKET_DB"), "MARKET_SECRET_FILE="+os.Getenv("PLAIN_MARKET_SECRET_FILE"),
		"MARKET_FILES_ROOT="+os.Getenv("PLAIN_FILES_ROOT"), "MARKET_DOWNLOAD_BASE_URL="+os.Getenv("PLAIN_DOWNLOAD_BASE_URL"))
	cmd := exec.Command(os.Getenv("PLAIN_MARKET_ADMIN"), args...)
	cmd.Env = e
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		t.Fatalf("market-admin %s (plain stack): %v: %s", strings.Join(args, " "), err, msg)
	}
	return string(out)
}

// plainClient is a client of the plain stack with a fresh read-write key of account and
// no retries (a 404 or a 405 is final anyway; nothing may hide behind a retry).
func plainClient(t *testing.T, account string) *market.Client {
	t.Helper()
	key := strings.TrimSpace(plainAdmin(t, "", "key", "create", "--account", account, "--mode", "test", "--access", "read-write"))
	c, err := market.NewClient(key, market.WithBaseURL(os.Getenv("PLAIN_BASE_URL")), market.WithMaxRetries(0),
		market.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestITExtensionOff(t *testing.T) {
	plainStack(t)
	ctx := ctxT(t)
	account := "acct_goext_" + randomSuffix()
	plainAdmin(t, `{"mode": "test", "accounts": [{"id": "`+account+`"}]}`, "import", "-")
	c := plainClient(t, account)

	// The one call of the group that is a route of the specification: it works.
	sub, err := c.Webhooks.Create(ctx, &market.WebhookParams{
		URL: "https://127.0.0.1:9/market-go-ext", Events: []market.EventType{market.EventSaleCompleted}, Description: "ext off",
	})
	if err != nil {
		t.Fatalf("Webhooks.Create without the extension: %v", err)
	}
	if !strings.HasPrefix(sub.ID, "we_") || !strings.HasPrefix(sub.Secret, "whsec_") || sub.Status != "enabled" ||
		len(sub.Events) != 1 || sub.Events[0] != market.EventSaleCompleted || sub.LastResponse.StatusCode != 201 {
		t.Fatalf("Webhooks.Create: %+v", sub)
	}

	// Each call with a path of its own: the route does not exist. The subscription id is
	// a real one of this account, so the 404 is the route's, not the row's.
	missing := []struct {
		name string
		call func(*market.Client) error
	}{
		{"Webhooks.Get", func(c *market.Client) error { _, err := c.Webhooks.Get(ctx, sub.ID); return err }},
		{"Webhooks.Update", func(c *market.Client) error {
			_, err := c.Webhooks.Update(ctx, sub.ID, &market.WebhookUpdateParams{Disabled: market.Bool(true)})
			return err
		}},
		{"Webhooks.Delete", func(c *market.Client) error { _, err := c.Webhooks.Delete(ctx, sub.ID, nil); return err }},
		{"Webhooks.RotateSecret", func(c *market.Client) error {
			_, err := c.Webhooks.RotateSecret(ctx, sub.ID, &market.RotateSecretParams{ExpireOldIn: market.Int(0)})
			return err
		}},
		{"Webhooks.Test", func(c *market.Client) error { _, err := c.Webhooks.Test(ctx, sub.ID, nil); return err }},
		{"Events.List", func(c *market.Client) error {
			_, err := c.Events.List(ctx, &market.EventListParams{Type: market.EventSaleCompleted})
			return err
		}},
		{"Events.All", func(c *market.Client) error {
			it := c.Events.All(ctx, nil)
			if it.Next() {
				return nil
			}
			return it.Err()
		}},
		{"Events.Get", func(c *market.Client) error {
			_, err := c.Events.Get(ctx, "evt_1f2e3d4c5b6a79880716253443526170")
			return err
		}},
	}
	for _, m := range missing {
		t.Run(m.name, func(t *testing.T) {
			err := m.call(c)
			if err == nil {
				t.Fatalf("%s answered without the extension: the route exists", m.name)
			}
			e := asError(t, err)
			if !errors.Is(err, market.ErrNotFound) || e.Kind != market.KindNotFound || e.Status != 404 ||
				e.Type != "invalid_request_error" || e.Code != "route_not_found" || e.RequestID == "" {
				t.Fatalf("%s: want KindNotFound 404 route_not_found, got %+v", m.name, e)
			}
		})
	}

	for _, m := range []struct {
		name string
		call func(*market.Client) error
	}{
		{"Webhooks.List", func(c *market.Client) error {
			_, err := c.Webhooks.List(ctx, &market.WebhookListParams{Limit: 5})
			return err
		}},
		{"Webhooks.All", func(c *market.Client) error {
			it := c.Webhooks.All(ctx, nil)
			if it.Next() {
				return nil
			}
			return it.Err()
		}},
	} {
		t.Run(m.name, func(t *testing.T) {
			err := m.call(c)
			if err == nil {
				t.Fatalf("%s answered without the extension: GET /v1/webhooks exists", m.name)
			}
			e := asError(t, err)
			if !errors.Is(err, market.ErrInvalidRequest) || errors.Is(err, market.ErrNotFound) || e.Status != 405 ||
				e.Type != "invalid_request_error" || e.Code != "method_not_allowed" || e.Header.Get("Allow") != "POST" {
				t.Fatalf("%s: want KindInvalidRequest 405 method_not_allowed with Allow: POST, got %+v", m.name, e)
			}
		})
	}

	t.Run("control: the main stack has the extension", func(t *testing.T) {
		stack(t)
		acct := "acct_goexton_" + randomSuffix()
		if _, err := admin(`{"mode": "test", "accounts": [{"id": "`+acct+`"}]}`, "import", "-"); err != nil {
			t.Fatal(err)
		}
		mc, _ := client(t, newKey(t, acct, "read-write"), market.WithMaxRetries(0))
		page, err := mc.Webhooks.List(ctx, nil)
		if err != nil || len(page.Data) != 0 || page.NextCursor != "" {
			t.Fatalf("Webhooks.List on the main stack: %+v %v", page, err)
		}
		events, err := mc.Events.List(ctx, nil)
		if err != nil || len(events.Data) != 0 {
			t.Fatalf("Events.List on the main stack: %+v %v", events, err)
		}
		_, err = mc.Events.Get(ctx, "evt_1f2e3d4c5b6a79880716253443526170")
		if e := asError(t, err); e.Kind != market.KindNotFound || e.Code != "resource_missing" {
			t.Fatalf("with the extension an unknown event is a missing resource, not a missing route: %+v", e)
		}
	})
}
