package market_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	market "github.com/markethq/market/clients/go"
)

func ExampleNewClient() {
	// The base URL comes from WithBaseURL, else from MARKET_BASE_URL.
	c, err := market.NewClient(os.Getenv("MARKET_API_KEY"),
		market.WithBaseURL("http://127.0.0.1:8080"),
		market.WithMaxRetries(3),
		market.WithHTTPClient(&http.Client{Timeout: 20 * time.Second}),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c) // never shows the key
}

func ExampleProductsService_List() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	page, err := c.Products.List(context.Background(), &market.ProductListParams{
		Category: "fonts",
		Q:        "grotesk",
		MinPrice: "5",
		MaxPrice: "50.00",
		Sort:     market.SortPriceAsc,
		Limit:    10,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range page.Data {
		fmt.Println(p.ID, p.Title, p.Price, p.Seller)
	}
	if page.HasMore() {
		next, _ := c.Products.List(context.Background(), &market.ProductListParams{
			Category: "fonts", Q: "grotesk", MinPrice: "5", MaxPrice: "50.00",
			Sort: market.SortPriceAsc, Limit: 10, Cursor: page.NextCursor,
		})
		_ = next
	}
	rl := page.LastResponse.RateLimit
	fmt.Printf("%d of %d requests left for %v\n", rl.Remaining, rl.Limit, rl.Reset)
}

func ExampleProductsService_All() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	it := c.Products.All(context.Background(), &market.ProductListParams{Category: "fonts", Limit: 100})
	for it.Next() {
		p := it.Product()
		fmt.Println(p.ID, p.Price)
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
}

func ExampleProductsService_Get() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	p, err := c.Products.Get(context.Background(), "prod_font1")
	if errors.Is(err, market.ErrNotFound) {
		fmt.Println("no such product")
		return
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Title, p.Price, p.Currency)
	for _, t := range p.Tiers {
		fmt.Println(t.Name, t.Price, t.Licence["seats"])
	}
}

func ExampleSellersService_Get() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	s, err := c.Sellers.Get(context.Background(), "pixelforge", &market.SellerParams{Limit: 5})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Name, s.ProductCount)
	for _, p := range s.Products.Data {
		fmt.Println(p.ID, p.Title)
	}
}

func ExampleOrdersService_List() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	page, err := c.Orders.List(context.Background(), &market.OrderListParams{Status: market.OrderStatusPaid, Limit: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range page.Data {
		fmt.Println(o.ID, o.Total, o.Currency)
		for _, d := range o.Downloads {
			fmt.Println("  ", d.Filename, d.URL)
		}
	}
}

func ExampleOrdersService_All() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	it := c.Orders.All(context.Background(), nil)
	for it.Next() {
		fmt.Println(it.Order().ID)
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
}

func ExampleDownloadsService_CreateLink() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	link, err := c.Downloads.CreateLink(context.Background(), "dl_Xq3", &market.LinkParams{
		ExpiresIn:      600,                        // seconds
		IdempotencyKey: "order-42-font-download-1", // optional: one is generated otherwise
	})
	var e *market.Error
	switch {
	case errors.As(err, &e) && e.Code == "order_refunded":
		fmt.Println("refunded")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println(link.URL, link.ExpiresAt)
	}
}

func ExampleWebhooksService_Create() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	sub, err := c.Webhooks.Create(context.Background(), &market.WebhookParams{
		URL:         "https://hooks.example.com/market",
		Events:      []market.EventType{market.EventSaleCompleted, market.EventSaleRefunded},
		Description: "shop backend",
	})
	if err != nil {
		log.Fatal(err)
	}
	// The secret is shown only now: keep it for VerifyWebhook.
	fmt.Println(sub.ID, sub.Secret)
}

func ExampleWebhooksService_List() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	page, err := c.Webhooks.List(context.Background(), &market.WebhookListParams{Limit: 50})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range page.Data {
		fmt.Println(s.ID, s.URL, s.Events, s.Status, s.UpdatedAt) // never the secret
	}
}

func ExampleWebhooksService_All() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	it := c.Webhooks.All(context.Background(), nil)
	for it.Next() {
		fmt.Println(it.Subscription().ID, it.Subscription().Status)
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
}

func ExampleWebhooksService_Update() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	// Only the fields given change; market.String and market.Bool make the pointers.
	sub, err := c.Webhooks.Update(context.Background(), "we_Q2l0p3x9Vb7sK1mZr8aTn4Ye", &market.WebhookUpdateParams{
		Description: market.String("paused for maintenance"),
		Disabled:    market.Bool(true),
	})
	if errors.Is(err, market.ErrNotFound) {
		fmt.Println("no such subscription")
		return
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sub.Status, sub.UpdatedAt) // disabled ...
}

func ExampleWebhooksService_RotateSecret() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	sub, err := c.Webhooks.RotateSecret(context.Background(), "we_Q2l0p3x9Vb7sK1mZr8aTn4Ye", &market.RotateSecretParams{
		ExpireOldIn: market.Int(3600), // the old secret keeps signing for an hour; market.Int(0): not at all
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sub.Secret) // the new secret, shown only now: store it
}

func ExampleWebhooksService_Test() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	ev, err := c.Webhooks.Test(context.Background(), "we_Q2l0p3x9Vb7sK1mZr8aTn4Ye", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ev.ID, ev.Type, ev.Data.Subscription) // evt_... webhook.test we_...
}

func ExampleWebhooksService_Delete() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	del, err := c.Webhooks.Delete(context.Background(), "we_Q2l0p3x9Vb7sK1mZr8aTn4Ye", nil)
	if err != nil {
		log.Fatal(err) // a second Delete: errors.Is(err, market.ErrNotFound)
	}
	fmt.Println(del.ID, del.Deleted)
}

// Catching up on missed events: from the newest CreatedAt handled minus a margin, skip
// the ids already handled (delivery is at least once), remember the newest CreatedAt.
func ExampleEventsService_All() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	lastHandled := time.Now().Add(-24 * time.Hour) // from your store
	handled := map[string]bool{}                   // from your store
	newest := lastHandled
	it := c.Events.All(context.Background(), &market.EventListParams{
		CreatedGte: lastHandled.Add(-10 * time.Minute),
		Limit:      100,
	})
	for it.Next() {
		ev := it.Event()
		if !handled[ev.ID] {
			fmt.Println("handling", ev.ID, ev.Type)
			handled[ev.ID] = true
		}
		if ev.CreatedAt.After(newest) {
			newest = ev.CreatedAt
		}
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	lastHandled = newest
	fmt.Println("handled up to", lastHandled)
}

func ExampleEventsService_List() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	page, err := c.Events.List(context.Background(), &market.EventListParams{
		Type:       market.EventSaleCompleted,
		CreatedGte: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC),
		CreatedLt:  time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC),
		Limit:      100,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, ev := range page.Data {
		fmt.Println(ev.ID, ev.CreatedAt, ev.Data.Product, ev.Data.Amount, ev.Data.Currency)
	}
}

func ExampleEventsService_Get() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	ev, err := c.Events.Get(context.Background(), "evt_1f2e3d4c5b6a79880716253443526170")
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range ev.Deliveries {
		fmt.Println(d.Subscription, d.Status, d.Attempts, d.LastAttemptAt)
		if d.LastStatus != nil {
			fmt.Println("last answer: HTTP", *d.LastStatus)
		}
		if d.LastError != nil {
			fmt.Println("last error:", *d.LastError)
		}
	}
}

func ExampleVerifyWebhook() {
	secret := os.Getenv("MARKET_WEBHOOK_SECRET") // "whsec_..."
	http.HandleFunc("/market", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body) // the raw bytes, before any JSON parsing
		if err != nil {
			http.Error(w, "cannot read", http.StatusBadRequest)
			return
		}
		ev, err := market.VerifyWebhook(body, r.Header, secret)
		if err != nil {
			http.Error(w, "invalid signature", http.StatusBadRequest)
			return
		}
		switch ev.Type {
		case market.EventSaleCompleted:
			fmt.Println("sold", ev.Data.Product, "for", ev.Data.Amount, ev.Data.Currency)
		case market.EventPayoutSent:
			fmt.Println("payout", ev.Data.Payout, ev.Data.Amount, ev.Data.Currency)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func ExampleError() {
	c, _ := market.NewClient(os.Getenv("MARKET_API_KEY"))
	_, err := c.Products.Get(context.Background(), "prod_missing")
	var e *market.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Kind, e.Code, e.Param, e.RequestID, e.RateLimit.Remaining)
	}
	if errors.Is(err, market.ErrRateLimit) {
		fmt.Println("slow down for", e.RetryAfter)
	}
}

func ExampleDecimal() {
	price := market.Decimal("19.99") // as the API sends it
	cents, _ := price.MinorUnits(2)
	cmp, _ := price.Cmp("20")
	fmt.Println(price, cents, cmp)
	// Output: 19.99 1999 -1
}
