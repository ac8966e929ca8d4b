-- 013_webhook_test_event: POST /v1/webhooks/:id/test (docs/contract.md section 13).
--
-- A webhook.test event goes to the one subscription it names, whatever kinds that
-- subscription asked for, through the same outbox as every event: the same signing,
-- retries, leases and records. It is an event like the others (GET /v1/events lists it).
-- A disabled subscription gets the event queued all the same, and market-webhookd ends
-- its delivery unsent ("subscription disabled"), as for any delivery of a disabled
-- subscription: the answer and the delivery's record say what happened.
ALTER TABLE events DROP CONSTRAINT events_type_check,
    ADD CONSTRAINT events_type_check CHECK (type IN ('sale.completed', 'sale.refunded',
                                                     'review.created', 'payout.sent',
                                                     'webhook.test'));

-- Writes the event and its one delivery for subscription p_subscription of p_account in
-- p_mode (not deleted), notifies the drainers, and returns the event's body; no row when
-- there is no such subscription. The body is built as webhook_emit builds it (003).
CREATE FUNCTION webhook_emit_test(p_subscription text, p_account text, p_mode text)
    RETURNS TABLE (event_id text, event_body text)
    LANGUAGE plpgsql AS $$
DECLARE
    v_id text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
    v_at timestamptz := clock_timestamp();
BEGIN
    PERFORM 1 FROM webhook_subscriptions s
      WHERE s.id = p_subscription AND s.account_id = p_account AND s.mode = p_mode
        AND s.status <> 'deleted'
        FOR KEY SHARE; -- a DELETE committing meanwhile waits for this event's delivery
    IF NOT FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH event AS (
        INSERT INTO events (id, mode, account_id, type, body, created_at)
        VALUES (v_id, p_mode, p_account, 'webhook.test',
                '{"id":' || webhook_json_string(v_id)
                || ',"type":"webhook.test","created_at":'
                || webhook_json_string(to_char(v_at AT TIME ZONE 'UTC',
                                               'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
                || ',"livemode":' || CASE WHEN p_mode = 'live' THEN 'true' ELSE 'false' END
                || ',"data":{"subscription":' || webhook_json_string(p_subscription) || '}}',
                v_at)
        RETURNING id, body
    ), delivery AS (
        INSERT INTO webhook_deliveries (event_id, subscription_id)
        SELECT event.id, p_subscription FROM event
    )
    SELECT event.id, event.body FROM event;
    PERFORM pg_notify('market_webhooks', '');
END
$$;
