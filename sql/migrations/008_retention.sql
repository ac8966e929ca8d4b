-- 008_retention: what market-webhookd's retention pass needs (app/retention/retention.c;
-- the decision per table is docs/contract.md section 12).
--
-- Every table that only grows is pruned in batches of at most 1,000 rows, one short
-- statement each, oldest first. Each batch must find its rows through an index instead
-- of reading the table, hence:
--   * events_created: finished events older than MARKET_RETENTION, oldest first;
--   * download_tokens_expires: links expired more than MARKET_RETENTION ago;
--   * api_keys_dead: keys expired (rotated past their grace) or revoked, a small partial
--     index since live keys have neither time; least() skips a NULL;
--   * api_keys_replaced_by: a deleted key's successor points at nothing (the foreign key
--     below); without it every deleted key would read the whole table to find who
--     referenced it.
-- idempotency_keys already has idempotency_keys_created (001_core.sql).

CREATE INDEX events_created ON events (created_at);
CREATE INDEX download_tokens_expires ON download_tokens (expires_at);
CREATE INDEX api_keys_dead ON api_keys ((least(expires_at, revoked_at)))
    WHERE expires_at IS NOT NULL OR revoked_at IS NOT NULL;
CREATE INDEX api_keys_replaced_by ON api_keys (replaced_by) WHERE replaced_by IS NOT NULL;

-- replaced_by tells which key replaced a rotated one (market-admin key rotate refuses to
-- rotate a key twice by it). A key is pruned only once no key that still works or waits
-- out its grace points at it, but a chain of dead keys may be pruned in any order across
-- batches: the dead predecessor then forgets its dead successor instead of failing the
-- batch.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_replaced_by_fkey,
    ADD CONSTRAINT api_keys_replaced_by_fkey FOREIGN KEY (replaced_by)
        REFERENCES api_keys (id) ON DELETE SET NULL;

-- What every pass pruned so far, per table, for /metrics (market_retention_pruned_rows_total
-- and market_retention_last_pass_timestamp_seconds). One row per table: it never grows.
CREATE TABLE retention_totals (
    relation     text PRIMARY KEY,
    pruned       bigint NOT NULL DEFAULT 0 CHECK (pruned >= 0),
    last_pass_at timestamptz
);
INSERT INTO retention_totals (relation) VALUES
    ('events'), ('webhook_deliveries'), ('webhook_attempts'), ('download_tokens'),
    ('api_keys'), ('idempotency_keys');

-- One batch of finished events older than the cutoff, with their deliveries and attempts.
--
-- An event goes when it was created before the cutoff, none of its deliveries is pending
-- (waiting for an attempt, a retry, or sending right now under a lease) and none was
-- attempted since the cutoff: a delivery that failed for good is kept for the whole
-- period after its last attempt, so that it can be looked at and redelivered.
--
-- Two statements, because a single one would decide on a snapshot taken before it locked
-- the rows: `market-admin redeliver` turns finished deliveries back to pending, and one
-- that committed in between would be deleted unsent. So the first statement locks the
-- candidates (skipping rows locked by someone else), and the second, whose snapshot is
-- taken after those locks (PL/pgSQL takes one per statement), checks them again.
-- redeliver locks the event row first (FOR SHARE), so from then on none can change.
--
-- Deliveries and attempts are deleted explicitly rather than by the cascades, so that
-- the pass can count them; the order (attempts, deliveries, events) is that of the
-- foreign keys. batch: the candidates found, which is p_limit when more may be left.
CREATE FUNCTION retention_prune_events(p_cutoff timestamptz, p_limit integer,
                                       OUT batch integer, OUT events bigint,
                                       OUT deliveries bigint, OUT attempts bigint)
    LANGUAGE plpgsql AS $$
DECLARE
    v_candidates text[];
    v_doomed text[];
BEGIN
    SELECT coalesce(array_agg(c.id), '{}') INTO v_candidates
      FROM (SELECT e.id
              FROM events e
             WHERE e.created_at < p_cutoff
               AND NOT EXISTS (
                   SELECT 1 FROM webhook_deliveries d
                    WHERE d.event_id = e.id
                      AND (d.status = 'pending'
                           OR EXISTS (SELECT 1 FROM webhook_attempts a
                                       WHERE a.delivery_id = d.id
                                         AND a.attempted_at >= p_cutoff)))
             ORDER BY e.created_at
             LIMIT p_limit
               FOR UPDATE OF e SKIP LOCKED) c;
    batch := cardinality(v_candidates);

    SELECT coalesce(array_agg(c.id), '{}') INTO v_doomed
      FROM unnest(v_candidates) AS c(id)
     WHERE NOT EXISTS (
           SELECT 1 FROM webhook_deliveries d
            WHERE d.event_id = c.id
              AND (d.status = 'pending'
                   OR EXISTS (SELECT 1 FROM webhook_attempts a
                               WHERE a.delivery_id = d.id AND a.attempted_at >= p_cutoff)));

    DELETE FROM webhook_attempts a USING webhook_deliveries d
     WHERE a.delivery_id = d.id AND d.event_id = ANY (v_doomed);
    GET DIAGNOSTICS attempts = ROW_COUNT;
    DELETE FROM webhook_deliveries WHERE event_id = ANY (v_doomed);
    GET DIAGNOSTICS deliveries = ROW_COUNT;
    DELETE FROM events WHERE id = ANY (v_doomed);
    GET DIAGNOSTICS events = ROW_COUNT;
END
$$;
