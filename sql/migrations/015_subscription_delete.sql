-- 015_subscription_delete: what deleting a webhook subscription does, defined once for
-- DELETE /v1/webhooks/:id (app/api/webhooks/subscription_delete.c) and market-admin webhooks delete.
--
-- The subscription is marked deleted (the event triggers queue nothing for it from the
-- commit on) and its pending deliveries end as endpoint_deleted, unsent, except one whose
-- send a drainer has already begun (send_started_at, set under the delivery's row lock by
-- market-webhookd's store_begin_send): that send started first in the database's order,
-- and any retry of it ends as endpoint_deleted. The row stays, so that the deliveries of
-- past events still name it.
--
-- p_account and p_mode scope the API's call to the caller's account and mode; the
-- operator passes NULL for both. Returns the subscription's id and how many deliveries
-- ended, or no row when there is no such subscription (or it is already deleted).
CREATE FUNCTION webhook_subscription_delete(p_id text, p_account text, p_mode text)
    RETURNS TABLE (subscription_id text, deliveries_ended bigint)
    LANGUAGE sql AS $$
    WITH s AS (
        UPDATE webhook_subscriptions SET status = 'deleted', updated_at = now()
         WHERE id = p_id AND status <> 'deleted'
           AND (p_account IS NULL OR account_id = p_account)
           AND (p_mode IS NULL OR mode = p_mode)
        RETURNING id
    ), ended AS (
        UPDATE webhook_deliveries d
           SET status = 'endpoint_deleted', lease_until = NULL, leased_by = NULL
          FROM s WHERE d.subscription_id = s.id AND d.status = 'pending'
           AND d.send_started_at IS NULL
        RETURNING d.id
    )
    SELECT s.id, (SELECT count(*) FROM ended) FROM s
$$;
