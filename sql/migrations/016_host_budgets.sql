-- 016_host_budgets: the rate limit counted by hosts in blocks, and API keys kept by hosts
-- (docs/contract.md section 3; app/api/keys/key_budget.h, app/api/keys/auth.c).
--
-- rate_counters.count stays the window's total as PostgreSQL granted it, now to hosts:
-- a host takes a block of requests at once and counts them out in its shared memory.
--   holder  the host that took the window's first requests (app/api/keys/key_budget's host id);
--   shared  another host took from the window too: from then on every host takes one
--           request at a time, and the holder gives back what it did not use;
--   lent    blocks granted and not given back yet (a host gives back all of its blocks
--           at once, used or not): a refusal in a shared window waits until it is 0, so
--           that 429 still means that the limit's every request was served;
--   last_grant  what the statement that wrote the row granted;
--   incarnation a random number given to the row when it is made: a host that finds
--           another in its window's row knows that the window started again (the row was
--           deleted, or the database failed over: the table is unlogged), and takes
--           PostgreSQL's count for the window's, forgetting what it held.
ALTER TABLE rate_counters
    ADD COLUMN holder bigint NOT NULL DEFAULT 0,
    ADD COLUMN shared boolean NOT NULL DEFAULT false,
    ADD COLUMN lent integer NOT NULL DEFAULT 0,
    ADD COLUMN last_grant integer NOT NULL DEFAULT 1,
    ADD COLUMN incarnation bigint NOT NULL
        DEFAULT (1 + floor(random() * 9.0e18))::bigint;

-- The workers LISTEN on market_auth. A change of api_keys (a rotation, a revocation, an
-- expiry moved, a prune) makes every host forget the key rows it kept, at once; a window
-- that becomes shared while its holder has blocks out asks the holder to give them back.
CREATE FUNCTION notify_auth() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('market_auth', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_notify AFTER UPDATE OR DELETE OR TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION notify_auth();
ALTER TABLE api_keys ENABLE ALWAYS TRIGGER api_keys_notify;

-- Only the update that shares a window with blocks out calls the function: the WHEN is
-- checked without it, so the hot path pays nothing.
CREATE TRIGGER rate_counters_shared AFTER UPDATE ON rate_counters
    FOR EACH ROW WHEN (NEW.shared AND NOT OLD.shared AND NEW.lent > 0)
    EXECUTE FUNCTION notify_auth();
