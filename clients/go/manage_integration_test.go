package market_test

// Integration tests of the subscription management and events calls (issue 20) against
// the stack of clients/go/test.sh: a real HTTPS receiver gets the test events from
// market-webhookd, and the client's own VerifyWebhook checks them under the secrets
// RotateSecret gave.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	market "github.com/markethq/market/clients/go"
)

// receiver is an HTTPS endpoint (the test CA's certificate for 127.0.0.1) that answers
// every delivery 204 and keeps it by its webhook-id.
type receiver struct {
	url string
	mu  sync.Mutex
	got map[string]delivery
}

func startReceiver(t *testing.T) *receiver {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(env(t, "MARKET_IT_TLS_CERT"), env(t, "MARKET_IT_TLS_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	rx := &receiver{got: map[string]delivery{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost {
			rx.mu.Lock()
			rx.got[r.Header.Get("webhook-id")] = delivery{r.Header.Clone(), b}
			rx.mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	rx.url = srv.URL
	return rx
}

func (rx *receiver) delivery(id string) (delivery, bool) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	d, ok := rx.got[id]
	return d, ok
}

// wait returns the delivery of event id, polling until a deadline.
func (rx *receiver) wait(t *testing.T, id string) delivery {
	t.Helper()
	var d delivery
	eventually(t, "the delivery of "+id, func() bool {
		var ok bool
		d, ok = rx.delivery(id)
		return ok
	})
	return d
}

// eventually polls cond every 100 ms until it holds, failing the test after 30 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 30 s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// keyring hands out clients of one account and access, each on a key of its own once
// the previous key made 8 requests, so that the stack's low rate limit (10 a minute)
// never binds here. exchanges returns every request of every key, in order.
type keyring struct {
	t               *testing.T
	account, access string
	c               *market.Client
	rec             *recorder
	recs            []*recorder
}

func (k *keyring) client() *market.Client {
	if k.c == nil || len(k.rec.exchanges()) >= 8 {
		return k.fresh()
	}
	return k.c
}

func (k *keyring) fresh() *market.Client {
	k.c, k.rec = client(k.t, newKey(k.t, k.account, k.access))
	k.recs = append(k.recs, k.rec)
	return k.c
}

func (k *keyring) exchanges() []exchange {
	var all []exchange
	for _, r := range k.recs {
		all = append(all, r.exchanges()...)
	}
	return all
}

// deliveryStatus reads the status of the delivery of event to subscription.
func deliveryStatus(t *testing.T, event, subscription string) string {
	return mustPsql(t, fmt.Sprintf("SELECT status FROM webhook_deliveries WHERE event_id = '%s' AND subscription_id = '%s'", event, subscription))
}

func signatures(d delivery) int { return len(strings.Fields(d.header.Get("webhook-signature"))) }

func TestITWebhooksManageAndEvents(t *testing.T) {
	f := stack(t)
	ctx := ctxT(t)
	// An account of its own: its subscriptions and events are exactly this test's.
	acct := "acct_gowh_" + f.run
	if _, err := admin(`{"mode":"test","accounts":[{"id":"`+acct+`"}]}`, "import", "-"); err != nil {
		t.Fatal(err)
	}
	rx := startReceiver(t)
	rw := &keyring{t: t, account: acct, access: "read-write"}

	// Two subscriptions.
	subA, err := rw.client().Webhooks.Create(ctx, &market.WebhookParams{
		URL: rx.url + "/a", Events: []market.EventType{market.EventPayoutSent}, Description: "A " + f.run,
	})
	if err != nil {
		t.Fatal(err)
	}
	subB, err := rw.client().Webhooks.Create(ctx, &market.WebhookParams{URL: rx.url + "/b", Description: "B " + f.run})
	if err != nil {
		t.Fatal(err)
	}

	// List: both, newest first, without their secrets.
	page, err := rw.client().Webhooks.List(ctx, &market.WebhookListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 || page.HasMore() || page.LastResponse.StatusCode != 200 {
		t.Fatalf("list: %+v", page)
	}
	for i, want := range []*market.WebhookSubscription{subB, subA} {
		got := page.Data[i]
		if got.ID != want.ID || got.Object != "webhook_subscription" || got.URL != want.URL ||
			fmt.Sprint(got.Events) != fmt.Sprint(want.Events) || got.Description != want.Description ||
			got.Status != market.WebhookStatusEnabled || got.Livemode || got.Secret != "" ||
			!got.CreatedAt.Equal(want.CreatedAt) || got.UpdatedAt.Before(got.CreatedAt) {
			t.Errorf("listed %d: %+v, want %+v", i, got, want)
		}
	}
	// The iterator, one subscription a page: both, newest first, two requests.
	c1, rec1 := client(t, newKey(t, acct, "read-write"))
	it := c1.Webhooks.All(ctx, &market.WebhookListParams{Limit: 1})
	var ids []string
	for it.Next() {
		ids = append(ids, it.Subscription().ID)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	ex := rec1.exchanges()
	if strings.Join(ids, ",") != subB.ID+","+subA.ID || len(ex) != 2 || ex[0].path != "/v1/webhooks?limit=1" ||
		!strings.HasPrefix(ex[1].path, "/v1/webhooks?cursor=") || it.LastResponse() == nil {
		t.Errorf("walked %v in %+v", ids, ex)
	}

	// Get: what the list showed.
	got, err := rw.client().Webhooks.Get(ctx, subA.ID)
	if err != nil {
		t.Fatal(err)
	}
	listed := page.Data[1]
	gotCopy := *got
	gotCopy.LastResponse = nil
	if !reflect.DeepEqual(gotCopy, listed) || got.LastResponse.StatusCode != 200 {
		t.Errorf("get: %+v, listed %+v", gotCopy, listed)
	}

	// Update B: a description and disabled.
	before := time.Now().Add(-time.Second)
	upd, err := rw.client().Webhooks.Update(ctx, subB.ID, &market.WebhookUpdateParams{
		Description: market.String("B paused " + f.run), Disabled: market.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	if upd.ID != subB.ID || upd.Status != market.WebhookStatusDisabled || upd.Description != "B paused "+f.run ||
		upd.URL != subB.URL || fmt.Sprint(upd.Events) != fmt.Sprint(subB.Events) || upd.Secret != "" ||
		upd.UpdatedAt.Before(before) || upd.UpdatedAt.After(time.Now().Add(time.Second)) || upd.UpdatedAt.Before(upd.CreatedAt) ||
		upd.LastResponse.StatusCode != 200 {
		t.Errorf("updated: %+v", upd)
	}
	again, err := rw.client().Webhooks.Get(ctx, subB.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != "disabled" || again.Description != upd.Description || !again.UpdatedAt.Equal(upd.UpdatedAt) {
		t.Errorf("after the update: %+v", again)
	}
	// No field: {} changes nothing.
	same, err := rw.client().Webhooks.Update(ctx, subB.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if same.Status != "disabled" || same.Description != upd.Description || same.URL != subB.URL {
		t.Errorf("after an empty update: %+v", same)
	}

	// A test event to the disabled B: recorded, its delivery ended unsent.
	evB, err := rw.client().Webhooks.Test(ctx, subB.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now() // after evB, before every other event of the account

	// Rotate A's secret with the default grace: deliveries carry both signatures.
	rot1, err := rw.client().Webhooks.RotateSecret(ctx, subA.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rot1.ID != subA.ID || !strings.HasPrefix(rot1.Secret, "whsec_") || rot1.Secret == subA.Secret ||
		rot1.Status != "enabled" || rot1.LastResponse.StatusCode != 200 || rot1.UpdatedAt.IsZero() {
		t.Errorf("rotated: %+v", rot1)
	}
	ev1, err := rw.client().Webhooks.Test(ctx, subA.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ev1.ID, "evt_") || ev1.Type != market.EventWebhookTest || ev1.Data.Subscription != subA.ID ||
		ev1.Livemode || ev1.LastResponse.StatusCode != 202 || ev1.CreatedAt.Before(since.Add(-time.Second)) {
		t.Errorf("test event: %+v", ev1)
	}
	d1 := rx.wait(t, ev1.ID)
	if n := signatures(d1); n != 2 {
		t.Errorf("%d signatures during the grace, want 2: %q", n, d1.header.Get("webhook-signature"))
	}
	for name, secret := range map[string]string{"new": rot1.Secret, "old": subA.Secret} {
		v, err := market.VerifyWebhook(d1.body, d1.header, secret)
		if err != nil {
			t.Errorf("the %s secret during the grace: %v", name, err)
		} else if v.ID != ev1.ID || v.Type != market.EventWebhookTest || v.Data.Subscription != subA.ID || !v.CreatedAt.Equal(ev1.CreatedAt) {
			t.Errorf("verified event: %+v", v)
		}
	}
	if _, err := market.VerifyWebhook(d1.body, d1.header, subB.Secret); !errors.Is(err, market.ErrWebhookSignature) {
		t.Errorf("a secret that never signed: %v", err)
	}

	// Rotate again, the old secret ended at once: only the newest signs.
	rot2, err := rw.client().Webhooks.RotateSecret(ctx, subA.ID, &market.RotateSecretParams{ExpireOldIn: market.Int(0)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rot2.Secret, "whsec_") || rot2.Secret == rot1.Secret || rot2.Secret == subA.Secret {
		t.Errorf("rotated again: %+v", rot2)
	}
	ev2, err := rw.client().Webhooks.Test(ctx, subA.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	d2 := rx.wait(t, ev2.ID)
	if n := signatures(d2); n != 1 {
		t.Errorf("%d signatures after expire_old_in 0, want 1: %q", n, d2.header.Get("webhook-signature"))
	}
	if _, err := market.VerifyWebhook(d2.body, d2.header, rot2.Secret); err != nil {
		t.Errorf("the newest secret: %v", err)
	}
	for name, secret := range map[string]string{"replaced": rot1.Secret, "first": subA.Secret} {
		if _, err := market.VerifyWebhook(d2.body, d2.header, secret); !errors.Is(err, market.ErrWebhookSignature) {
			t.Errorf("the %s secret after expire_old_in 0: %v", name, err)
		}
	}

	// Events: the three test events, newest first, as Test answered them.
	evs, err := rw.client().Events.List(ctx, &market.EventListParams{Type: market.EventWebhookTest, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Data) != 3 || evs.HasMore() {
		t.Fatalf("events: %+v", evs)
	}
	for i, want := range []*market.Event{ev2, ev1, evB} {
		e := evs.Data[i]
		if e.ID != want.ID || e.Type != market.EventWebhookTest || !e.CreatedAt.Equal(want.CreatedAt) || e.Livemode ||
			string(e.Data.Raw) != string(want.Data.Raw) || e.Data.Subscription != want.Data.Subscription || e.Deliveries != nil {
			t.Errorf("event %d: %+v, want %+v", i, e, want)
		}
	}
	if evB.Data.Subscription != subB.ID {
		t.Errorf("B's test event: %+v", evB)
	}
	// The iterator from just before the first test of A, one event a page: evB is older.
	c3, rec3 := client(t, newKey(t, acct, "read-write"))
	eit := c3.Events.All(ctx, &market.EventListParams{CreatedGte: since, Limit: 1})
	ids = nil
	for eit.Next() {
		ids = append(ids, eit.Event().ID)
	}
	if err := eit.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, ",") != ev2.ID+","+ev1.ID {
		t.Errorf("events since %v: %v, want %s,%s", since, ids, ev2.ID, ev1.ID)
	}
	if ex := rec3.exchanges(); len(ex) != 2 || !strings.Contains(ex[0].path, "created_gte=") {
		t.Errorf("requests: %+v", ex)
	}
	// Before it: only evB; and no sale.completed at all.
	old, err := c3.Events.List(ctx, &market.EventListParams{CreatedLt: since})
	if err != nil {
		t.Fatal(err)
	}
	if len(old.Data) != 1 || old.Data[0].ID != evB.ID {
		t.Errorf("events before %v: %+v", since, old.Data)
	}
	sales, err := c3.Events.List(ctx, &market.EventListParams{Type: market.EventSaleCompleted})
	if err != nil {
		t.Fatal(err)
	}
	if len(sales.Data) != 0 || sales.HasMore() {
		t.Errorf("sales: %+v", sales.Data)
	}

	// One event with its delivery, once market-webhookd recorded the receiver's answer.
	eventually(t, "delivered status of "+ev1.ID, func() bool { return deliveryStatus(t, ev1.ID, subA.ID) == "delivered" })
	e1, err := rw.client().Events.Get(ctx, ev1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if e1.ID != ev1.ID || e1.Type != market.EventWebhookTest || e1.Data.Subscription != subA.ID || len(e1.Deliveries) != 1 {
		t.Fatalf("event with deliveries: %+v", e1)
	}
	dl := e1.Deliveries[0]
	if dl.Subscription != subA.ID || dl.Status != market.DeliveryDelivered || dl.Attempts != 1 || dl.LastAttemptAt == nil ||
		dl.LastAttemptAt.Before(e1.CreatedAt) || dl.LastStatus == nil || *dl.LastStatus != 204 || dl.LastError != nil {
		t.Errorf("delivery: %+v", dl)
	}
	// B's event: failed unsent, with nulls where nothing was sent.
	eventually(t, "final status of "+evB.ID, func() bool { return deliveryStatus(t, evB.ID, subB.ID) != "pending" })
	eB, err := rw.client().Events.Get(ctx, evB.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(eB.Deliveries) != 1 {
		t.Fatalf("B's event: %+v", eB)
	}
	db := eB.Deliveries[0]
	if db.Subscription != subB.ID || db.Status != market.DeliveryFailed || db.LastStatus != nil || db.LastError == nil ||
		*db.LastError != "subscription disabled" {
		t.Errorf("delivery to a disabled subscription: %+v (last_error %v)", db, db.LastError)
	}
	if _, sent := rx.delivery(evB.ID); sent {
		t.Errorf("the disabled subscription was sent %s", evB.ID)
	}

	// Delete B through a proxy that drops the first DELETE's answer: the client retries
	// with the same Idempotency-Key and gets the first answer replayed, not a 404.
	proxy := startDropProxy(t, strings.TrimPrefix(os.Getenv("BASE_URL"), "http://"))
	proxy.mu.Lock()
	proxy.dropMethod = http.MethodDelete
	proxy.mu.Unlock()
	var waits []time.Duration
	cp, err := market.NewClient(newKey(t, acct, "read-write"), market.WithBaseURL("http://"+proxy.l.Addr().String()),
		market.WithHTTPClient(&http.Client{Transport: &http.Transport{}}),
		market.WithSleepFunc(func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	del, err := cp.Webhooks.Delete(ctx, subB.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if del.ID != subB.ID || !del.Deleted || del.Object != "webhook_subscription" || !del.LastResponse.IdempotentReplayed {
		t.Errorf("deleted: %+v (replayed %v)", del, del.LastResponse.IdempotentReplayed)
	}
	preqs := proxy.requests()
	if len(preqs) != 2 || !preqs[0].dropped || preqs[0].method != "DELETE" || preqs[0].idempotencyKey == "" ||
		preqs[1].idempotencyKey != preqs[0].idempotencyKey || preqs[0].status != 200 || preqs[1].status != 200 || len(waits) != 1 {
		t.Errorf("through the proxy: %+v, waits %v", preqs, waits)
	}
	// Gone: 404 resource_missing.
	_, err = rw.client().Webhooks.Get(ctx, subB.ID)
	if e := asError(t, err); e.Status != 404 || e.Kind != market.KindNotFound || !errors.Is(err, market.ErrNotFound) ||
		e.Code != "resource_missing" || e.Param != "id" {
		t.Errorf("get after delete: %+v", e)
	}
	_, err = rw.client().Webhooks.Delete(ctx, subB.ID, nil)
	if e := asError(t, err); e.Status != 404 || e.Code != "resource_missing" {
		t.Errorf("a second delete: %+v", e)
	}
	// The caller's key: the same DELETE again replays the first answer.
	key := market.NewIdempotencyKey()
	first, err := rw.client().Webhooks.Delete(ctx, subA.ID, &market.WebhookDeleteParams{IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	replay, err := rw.client().Webhooks.Delete(ctx, subA.ID, &market.WebhookDeleteParams{IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Deleted || first.LastResponse.IdempotentReplayed || !replay.Deleted || replay.ID != subA.ID || !replay.LastResponse.IdempotentReplayed {
		t.Errorf("delete and its replay: %+v %+v", first, replay)
	}
	left, err := rw.client().Webhooks.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Data) != 0 {
		t.Errorf("listed after deleting both: %+v", left.Data)
	}

	// A delivery still pending when its subscription is deleted ends endpoint_deleted,
	// with the error of its failed attempt and no HTTP status.
	gone, err := rw.client().Webhooks.Create(ctx, &market.WebhookParams{URL: "https://127.0.0.1:1/refused"})
	if err != nil {
		t.Fatal(err)
	}
	evG, err := rw.client().Webhooks.Test(ctx, gone.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "a failed attempt of "+evG.ID, func() bool {
		return mustPsql(t, "SELECT attempts > 0 AND status = 'pending' FROM webhook_deliveries WHERE event_id = '"+evG.ID+"'") == "t"
	})
	if _, err := rw.client().Webhooks.Delete(ctx, gone.ID, nil); err != nil {
		t.Fatal(err)
	}
	eG, err := rw.client().Events.Get(ctx, evG.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(eG.Deliveries) != 1 {
		t.Fatalf("deliveries: %+v", eG.Deliveries)
	}
	dg := eG.Deliveries[0]
	if dg.Subscription != gone.ID || dg.Status != market.DeliveryEndpointDeleted || dg.Attempts < 1 || dg.LastAttemptAt == nil ||
		dg.LastStatus != nil || dg.LastError == nil || *dg.LastError == "" {
		t.Errorf("delivery of a deleted subscription: %+v", dg)
	}

	// Every POST and DELETE carried an Idempotency-Key of its own (but the replay), and
	// no GET one.
	seen := map[string]bool{}
	for _, x := range rw.exchanges() {
		switch x.method {
		case http.MethodGet:
			if x.idempotencyKey != "" {
				t.Errorf("a GET with an Idempotency-Key: %+v", x)
			}
		case http.MethodPost, http.MethodDelete:
			if x.idempotencyKey == "" || (seen[x.idempotencyKey] && x.idempotencyKey != key) {
				t.Errorf("%s %s with Idempotency-Key %q", x.method, x.path, x.idempotencyKey)
			}
			seen[x.idempotencyKey] = true
		}
	}

	// A read-only key: the permission error, on reading subscriptions and events too.
	ro, _ := client(t, newKey(t, acct, "read-only"))
	_, err = ro.Webhooks.List(ctx, nil)
	if e := asError(t, err); e.Status != 403 || e.Kind != market.KindPermission || !errors.Is(err, market.ErrPermission) ||
		e.Code != "insufficient_scope" || e.Type != "permission_error" {
		t.Errorf("read-only Webhooks.List: %+v", e)
	}
	_, err = ro.Events.List(ctx, nil)
	if !errors.Is(err, market.ErrPermission) {
		t.Errorf("read-only Events.List: %v", err)
	}
	_, err = ro.Webhooks.Update(ctx, subA.ID, &market.WebhookUpdateParams{Disabled: market.Bool(false)})
	if !errors.Is(err, market.ErrPermission) {
		t.Errorf("read-only Webhooks.Update: %v", err)
	}
}
