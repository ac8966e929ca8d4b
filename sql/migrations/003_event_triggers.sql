-- 003_event_triggers: the producers of the transactional outbox (see 002_webhooks.sql).
--
-- Each trigger writes its events and their deliveries in the same transaction as the
-- change that causes them, then sends NOTIFY market_webhooks, which PostgreSQL delivers
-- only at commit: market-webhookd wakes within milliseconds of the commit, and a rolled
-- back change never leaves an event behind.
--
-- Decisions:
--   * Sale events are built by DEFERRED constraint triggers on orders, which run at commit
--     time. market-admin import writes an order row before its order_items rows, so a
--     trigger that ran when the order row was inserted would see no items. At commit the
--     items are there, whichever order the statements came in; an UPDATE pending -> paid
--     of an existing order behaves the same (in autocommit the commit follows the
--     statement at once). Triggers on order_items instead would fire again for items
--     re-written by a later re-import of an already paid order and announce the sale
--     twice; tying the event to the status change of the order cannot.
--     Do not run SET CONSTRAINTS ALL IMMEDIATE before inserting an order's items: the
--     trigger would then run before the items exist and announce nothing.
--   * An order INSERTed as paid counts as becoming paid (sale.completed per item). An
--     order INSERTed as refunded announces nothing: no sale.completed was ever sent for
--     it, and a refund of a sale its seller never heard of would only confuse. An UPDATE
--     to refunded sends sale.refunded per item (full refund of each item's price).
--   * An event is only written when at least one enabled subscription of the recipient
--     account, in the row's mode, asked for its kind. The outbox then grows with what
--     has to be sent, not with every sale (seeding a large sandbox writes no events), and
--     nothing else reads events. A subscription created later does not receive earlier
--     events.
--   * body is the exact payload that is signed and sent, fixed here so that every retry
--     sends the same bytes. It is built as text, not with json_build_object (whose output
--     has spaces) or jsonb (which reorders keys): compact, in the contract's key order.
--   * Never across modes: the recipient's subscriptions are looked up in the mode of the
--     row that caused the event.

-- A JSON string literal of a text value (quotes and escapes included).
CREATE FUNCTION webhook_json_string(value text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN to_json(value)::text;

-- Minor units as a JSON number in major units of a currency of that exponent: exact
-- numeric arithmetic, trailing fractional zeros trimmed (1999, 2 -> 19.99; 500, 2 -> 5;
-- 120050, 2 -> 1200.5). A plain expression, so PostgreSQL inlines it.
CREATE FUNCTION webhook_json_money(minor bigint, exponent smallint) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN trim_scale(minor::numeric / power(10::numeric, exponent::numeric))::text;

-- Writes one event for one recipient account, one delivery per enabled subscription of
-- that account in that mode that asked for the kind, and the wake-up notification; or
-- nothing at all when no such subscription exists. One statement, so one plan, cached
-- by PL/pgSQL for the session. p_data is the already serialised JSON "data" object.
CREATE FUNCTION webhook_emit(p_mode text, p_account text, p_type text, p_data text)
    RETURNS void
    LANGUAGE plpgsql AS $$
DECLARE
    v_id text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
    v_at timestamptz := clock_timestamp();
    v_deliveries bigint;
BEGIN
    WITH subscriptions AS (
        SELECT s.id
          FROM webhook_subscriptions s
         WHERE s.account_id = p_account AND s.mode = p_mode
           AND s.status = 'enabled' AND p_type = ANY (s.events)
    ), event AS (
        INSERT INTO events (id, mode, account_id, type, body, created_at)
        SELECT v_id, p_mode, p_account, p_type,
               '{"id":' || webhook_json_string(v_id)
               || ',"type":' || webhook_json_string(p_type)
               || ',"created_at":'
               || webhook_json_string(to_char(v_at AT TIME ZONE 'UTC',
                                              'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
               || ',"livemode":' || CASE WHEN p_mode = 'live' THEN 'true' ELSE 'false' END
               || ',"data":' || p_data || '}',
               v_at
         WHERE EXISTS (SELECT 1 FROM subscriptions)
        RETURNING id
    )
    INSERT INTO webhook_deliveries (event_id, subscription_id)
    SELECT event.id, subscriptions.id FROM event CROSS JOIN subscriptions;
    GET DIAGNOSTICS v_deliveries = ROW_COUNT;
    IF v_deliveries > 0 THEN
        PERFORM pg_notify('market_webhooks', '');
    END IF;
END
$$;

-- sale.completed / sale.refunded: one event per order item, to the seller of its product.
-- Runs at commit (see the header), so it reads the items as they are then.
CREATE FUNCTION webhook_order_event() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    v_type text := CASE NEW.status WHEN 'paid' THEN 'sale.completed'
                                   WHEN 'refunded' THEN 'sale.refunded' END;
    v_exponent smallint;
    r record;
BEGIN
    SELECT c.exponent INTO v_exponent FROM currencies c WHERE c.code = NEW.currency;
    -- One query per order finds the items whose seller wants the event at all, so orders
    -- of sellers without subscriptions (a seeded sandbox) cost a single lookup. The items
    -- are fetched first by the order's key (MATERIALIZED): left to itself, a planner
    -- without statistics (right after a bulk import) may start from the subscriptions and
    -- scan every sale of the product instead, once per order.
    FOR r IN
        WITH items AS MATERIALIZED (
            SELECT i.position, i.product_id, i.tier_id, i.price_minor
              FROM order_items i
             WHERE i.order_id = NEW.id
        )
        SELECT items.product_id, items.tier_id, items.price_minor, s.account_id
          FROM items
          JOIN products p ON p.id = items.product_id
          JOIN sellers s ON s.id = p.seller_id
         WHERE EXISTS (SELECT 1 FROM webhook_subscriptions w
                        WHERE w.account_id = s.account_id AND w.mode = NEW.mode
                          AND w.status = 'enabled' AND v_type = ANY (w.events))
         ORDER BY items.position
    LOOP
        PERFORM webhook_emit(NEW.mode, r.account_id, v_type,
            '{"order":' || webhook_json_string(NEW.id)
            || ',"product":' || webhook_json_string(r.product_id)
            || ',"tier":' || webhook_json_string(r.tier_id)
            || ',"amount":' || webhook_json_money(r.price_minor, v_exponent)
            || ',"currency":' || webhook_json_string(NEW.currency::text) || '}');
    END LOOP;
    RETURN NULL;
END
$$;

-- Two triggers because the WHEN of an INSERT trigger cannot mention OLD.
CREATE CONSTRAINT TRIGGER orders_paid_insert_event
    AFTER INSERT ON orders
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.status = 'paid')
    EXECUTE FUNCTION webhook_order_event();

CREATE CONSTRAINT TRIGGER orders_status_event
    AFTER UPDATE OF status ON orders
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status
                       AND NEW.status IN ('paid', 'refunded'))
    EXECUTE FUNCTION webhook_order_event();

-- review.created: to the account of the seller of the reviewed product.
CREATE FUNCTION webhook_review_event() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    v_account text;
BEGIN
    SELECT s.account_id INTO v_account
      FROM products p JOIN sellers s ON s.id = p.seller_id
     WHERE p.id = NEW.product_id;
    PERFORM webhook_emit(NEW.mode, v_account, 'review.created',
        '{"review":' || webhook_json_string(NEW.id)
        || ',"product":' || webhook_json_string(NEW.product_id)
        || ',"rating":' || NEW.rating::text
        || ',"body":' || webhook_json_string(NEW.body) || '}');
    RETURN NULL;
END
$$;

CREATE TRIGGER reviews_created_event
    AFTER INSERT ON reviews
    FOR EACH ROW
    EXECUTE FUNCTION webhook_review_event();

-- payout.sent: to the seller's account, when a payout is inserted as sent or becomes sent.
CREATE FUNCTION webhook_payout_event() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    v_account text;
    v_exponent smallint;
BEGIN
    SELECT s.account_id INTO v_account FROM sellers s WHERE s.id = NEW.seller_id;
    SELECT c.exponent INTO v_exponent FROM currencies c WHERE c.code = NEW.currency;
    PERFORM webhook_emit(NEW.mode, v_account, 'payout.sent',
        '{"payout":' || webhook_json_string(NEW.id)
        || ',"amount":' || webhook_json_money(NEW.amount_minor, v_exponent)
        || ',"currency":' || webhook_json_string(NEW.currency::text) || '}');
    RETURN NULL;
END
$$;

CREATE TRIGGER payouts_sent_insert_event
    AFTER INSERT ON payouts
    FOR EACH ROW WHEN (NEW.status = 'sent')
    EXECUTE FUNCTION webhook_payout_event();

CREATE TRIGGER payouts_sent_update_event
    AFTER UPDATE OF status ON payouts
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status = 'sent')
    EXECUTE FUNCTION webhook_payout_event();
