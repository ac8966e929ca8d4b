-- 011_webhook_endpoints: subscriptions a subscriber manages (docs/contract.md section 13).
--
-- A deleted subscription stays as a row with status 'deleted' (never shown, never counted,
-- a second DELETE is 404): the deliveries of its events keep a subscription to name, and
-- GET /v1/events/:id shows them as endpoint_deleted. updated_at is the time of the last
-- change through the API or market-admin.
ALTER TABLE webhook_subscriptions ADD COLUMN updated_at timestamptz;
UPDATE webhook_subscriptions SET updated_at = created_at;
ALTER TABLE webhook_subscriptions ALTER COLUMN updated_at SET NOT NULL,
                                  ALTER COLUMN updated_at SET DEFAULT now();
ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_status_check,
    ADD CONSTRAINT webhook_subscriptions_status_check
        CHECK (status IN ('enabled', 'disabled', 'deleted'));

-- GET /v1/webhooks: an account's subscriptions in a mode, newest first (keyset on
-- created_at, id); also what the limit of 16 counts.
CREATE INDEX webhook_subscriptions_list ON webhook_subscriptions (account_id, mode, created_at, id)
    WHERE status <> 'deleted';

-- A delivery pending when its subscription is deleted ends as endpoint_deleted, unsent.
-- send_started_at: a drainer about to send an attempt first sets it, with a statement that
-- finds the delivery still pending and its subscription enabled; DELETE and disable end
-- or skip only deliveries without it. Row locks order the two: either the send began
-- before the change (it goes on, and its outcome is recorded), or the change came first
-- and the drainer sends nothing. So nothing is sent to a subscription after the answer to
-- its DELETE or disable. A claim (a new attempt) clears it.
ALTER TABLE webhook_deliveries ADD COLUMN send_started_at timestamptz;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_status_check,
    ADD CONSTRAINT webhook_deliveries_status_check
        CHECK (status IN ('pending', 'delivered', 'failed', 'endpoint_deleted'));
