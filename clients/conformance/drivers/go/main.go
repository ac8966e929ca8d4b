// The Go driver of the conformance suite: driver <base_url> <call> <id> <api_key>
// Makes one call with the client (2 retries, 500 ms timeout) and prints one JSON line:
// {ok, error: {kind, status, timeout} | null, hook: [...]}.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	market "github.com/markethq/market/clients/go"
)

type record struct {
	Method     string  `json:"method"`
	Path       string  `json:"path"`
	Status     *int    `json:"status"`
	Error      *string `json:"error"`
	DurationMs float64 `json:"duration_ms"`
	RequestID  *string `json:"request_id"`
	Attempt    int     `json:"attempt"`
}

func main() {
	base, call, id, key := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	var hook []record
	c, err := market.NewClient(key, market.WithBaseURL(base), market.WithMaxRetries(2),
		market.WithHTTPClient(&http.Client{Timeout: 500 * time.Millisecond}),
		market.WithResponseHook(func(i market.RequestInfo) {
			r := record{Method: i.Method, Path: i.Path, DurationMs: float64(i.Duration) / 1e6, Attempt: i.Attempt}
			if i.Status != 0 {
				s := i.Status
				r.Status = &s
			}
			if i.Err != nil {
				s := i.Err.Error()
				if isTimeout(i.Err) {
					s = "timeout"
				}
				r.Error = &s
			}
			if i.RequestID != "" {
				s := i.RequestID
				r.RequestID = &s
			}
			hook = append(hook, r)
		}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := context.Background()
	switch call {
	case "get":
		_, err = c.Products.Get(ctx, id)
	case "list":
		_, err = c.Products.List(ctx, &market.ProductListParams{Category: id, Limit: 2})
	case "post":
		_, err = c.Downloads.CreateLink(ctx, id, nil)
	case "delete":
		_, err = c.Webhooks.Delete(ctx, id, nil)
	default:
		fmt.Fprintln(os.Stderr, "unknown call", call)
		os.Exit(2)
	}
	out := map[string]any{"ok": err == nil, "error": nil, "hook": hook}
	if err != nil {
		var e *market.Error
		if !errors.As(err, &e) {
			fmt.Fprintln(os.Stderr, "not a *market.Error:", err)
			os.Exit(2)
		}
		kind := "api"
		if e.Kind == market.KindConnection {
			kind = "connection"
		}
		var status any
		if e.Status != 0 {
			status = e.Status
		}
		out["error"] = map[string]any{"kind": kind, "status": status, "timeout": kind == "connection" && isTimeout(err), "class": string(e.Kind)}
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
