-- 021_rank_titles_planned_each_time: in a relevance page (market_relevance_page, 018 and
-- 020), the read of a rank's titles through the GIN indexes is planned for its values at
-- each run, not once for any value.
--
-- The API's sessions plan every statement once (plan_cache_mode = force_generic_plan,
-- app/api/http/worker.c), and the setting reaches the statements inside this function.
-- Planned once, the read of a rank below the top one, which has two search conditions
-- (the rank's titles, title_search @@ v_group, and q itself, search @@ v_tsq), always read
-- q's matches through the index of title and description and checked each one's title
-- on the table: `edit design` by relevance (33,931 matches, all in descriptions, none at
-- ranks 2 and 1) visited 30,615 table blocks to find no title, 97 ms of a 142 ms page.
-- Planned for its values it reads the few titles holding the rank's words through the
-- index of titles: the page took 29 ms (bench/run --only search-peers, "market
-- statement", which runs the worker's statement in the worker's session). Only this read
-- is planned each time: it runs only when a rank's walk found no page, where planning
-- (a fraction of a millisecond) is small beside the read; planning every statement of
-- the function again (plan_cache_mode = auto or force_custom_plan on the function) made
-- the pages of a rare or absent q, which never get here, 0.7 - 0.9 ms slower.
--
-- EXECUTE takes the statement's text as a constant and every value as a parameter
-- (USING), as everywhere else. The scans of the table and of btree indexes stay off
-- around it (SET LOCAL), so its plan, like the others', follows the GIN indexes.
-- The rest of the function is 020's.
CREATE OR REPLACE FUNCTION market_relevance_page(p_mode text, p_limit int, p_q text, p_category text,
                                      p_seller text, p_min numeric, p_max numeric,
                                      p_rank int, p_after text)
RETURNS TABLE (match_id text, match_rank int)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    -- After every id of products (ids are 'prod_' and [A-Za-z0-9_]; '`' follows '_').
    c_top CONSTANT text := 'prod`';
    v_tsq tsquery := market_search_query(p_q);
    v_words text[];   -- the distinct words of q, as lexemes
    v_lits text[];    -- the same as tsquery literals
    v_any tsquery;    -- a title holding at least one of the words
    v_group tsquery;
    v_rank int;
    v_after text := coalesce(p_after, c_top);
    v_need int := p_limit;
    v_walk int;
    v_seen int;
    v_ids text[];
    v_ranks int[];
    v_counted boolean := false; -- q's matches were read once through its index
    v_walked boolean;
BEGIN
    IF numnode(v_tsq) = 0 THEN
        RETURN; -- stop words alone: nothing matches
    END IF;
    SELECT w.words, w.lits INTO v_words, v_lits FROM market_query_words(v_tsq) w;
    IF cardinality(v_words) > 0 THEN
        v_any := array_to_string(v_lits, ' | ')::tsquery;
    END IF;

    v_rank := least(coalesce(p_rank, cardinality(v_words)), cardinality(v_words));
    WHILE v_need > 0 AND v_rank >= 0 LOOP
        -- The walk: rows of this rank in id order, at most v_walk of them read: 16 per row
        -- wanted, then, when that found some but not a page, market_search_walk_rows.
        v_walk := 16 * v_need;
        <<walks>>
        LOOP
            IF v_rank >= 1 THEN
                SELECT max(w.n), array_agg(w.id ORDER BY w.n) FILTER (WHERE w.hit)
                  INTO v_seen, v_ids
                  FROM (SELECT v.id, v.hit, v.n
                          FROM (SELECT r.id,
                                       r.title_search @@ v_any
                                       AND market_title_rank(r.title_search, v_words) = v_rank
                                       AND EXISTS (SELECT 1 FROM products x
                                                    WHERE x.id = r.id AND x.search @@ v_tsq
                                                      AND market_search_filters(x.category, x.seller_id, x.price,
                                                                                p_category, p_seller, p_min, p_max)) AS hit,
                                       row_number() OVER () AS n
                                  FROM (SELECT p.id, p.title_search FROM products p
                                         WHERE p.mode = p_mode AND p.status = 'published' AND p.id < v_after
                                         ORDER BY p.id DESC LIMIT v_walk) r) v
                         WHERE v.hit OR v.n = v_walk
                         LIMIT v_need) w;
            ELSE
                SELECT max(w.n), array_agg(w.id ORDER BY w.n) FILTER (WHERE w.hit)
                  INTO v_seen, v_ids
                  FROM (SELECT v.id, v.hit, v.n
                          FROM (SELECT r.id,
                                       r.search @@ v_tsq
                                       AND (v_any IS NULL OR NOT r.title_search @@ v_any)
                                       AND market_search_filters(r.category, r.seller_id, r.price,
                                                                 p_category, p_seller, p_min, p_max) AS hit,
                                       row_number() OVER () AS n
                                  FROM (SELECT p.id, p.search, p.title_search, p.category, p.seller_id, p.price
                                          FROM products p
                                         WHERE p.mode = p_mode AND p.status = 'published' AND p.id < v_after
                                         ORDER BY p.id DESC LIMIT v_walk) r) v
                         WHERE v.hit OR v.n = v_walk
                         LIMIT v_need) w;
            END IF;
            -- The walk stops at its page: v_seen is v_walk when it read its last row
            -- without one (its rows outlasted it), less when the rank's rows ran out first.
            v_seen := coalesce(v_seen, 0);
            IF coalesce(cardinality(v_ids), 0) >= v_need THEN
                v_seen := v_walk;
            END IF;
            -- (The long walk only when the short one's matches are dense enough to fill a
            -- page within its bound.)
            EXIT walks WHEN coalesce(cardinality(v_ids), 0) >= v_need OR v_seen < v_walk
                            OR v_ids IS NULL OR v_walk >= market_search_walk_rows(v_need)
                            OR v_need::float8 * v_walk / cardinality(v_ids) > market_search_walk_rows(v_need);
            v_walk := market_search_walk_rows(v_need);
        END LOOP walks;
        -- The walk holds a page, or every row of the rank.
        v_walked := coalesce(cardinality(v_ids), 0) >= v_need OR v_seen < v_walk;
        -- (Not at the top rank, whose titles hold all of q's words: few, and found through
        -- the small index of titles alone, below.)
        IF NOT v_walked AND NOT v_counted AND v_rank < cardinality(v_words) THEN
            -- The first walk that finds no page: when q has few matches in all (32 rows per
            -- row wanted at most), one read of them through the index of q's words answers
            -- every rank left.
            v_counted := true;
            SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off;
            SELECT array_agg(m.id), array_agg(m.rank) INTO v_ids, v_ranks
              FROM (SELECT p.id, market_title_rank(p.title_search, v_words) AS rank
                      FROM products p
                     WHERE p.mode = p_mode AND p.status = 'published' AND p.search @@ v_tsq
                       AND market_search_filters(p.category, p.seller_id, p.price,
                                                 p_category, p_seller, p_min, p_max)
                     LIMIT 32 * v_need + 1) m;
            SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = on; SET LOCAL enable_indexonlyscan = on;
            IF coalesce(cardinality(v_ids), 0) <= 32 * v_need THEN
                RETURN QUERY
                    SELECT u.id, u.rank
                      FROM unnest(v_ids, v_ranks) u(id, rank)
                     WHERE (u.rank, u.id) < (v_rank, v_after)
                     ORDER BY u.rank DESC, u.id DESC
                     LIMIT v_need;
                RETURN;
            END IF;
        END IF;
        IF v_walked THEN
            RETURN QUERY SELECT u.id, v_rank FROM unnest(v_ids[1:v_need]) WITH ORDINALITY u(id, i) ORDER BY u.i;
            v_need := v_need - least(coalesce(cardinality(v_ids), 0), v_need);
        ELSE
            v_group := market_rank_query(v_lits, v_rank);
            IF v_group IS NULL THEN
                -- Every match of the ranks left, through the index of title and description.
                SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off;
                RETURN QUERY
                    SELECT m.id, m.rank
                      FROM (SELECT p.id, market_title_rank(p.title_search, v_words) AS rank
                              FROM products p
                             WHERE p.mode = p_mode AND p.status = 'published' AND p.search @@ v_tsq
                               AND market_search_filters(p.category, p.seller_id, p.price,
                                                         p_category, p_seller, p_min, p_max)) m
                     WHERE m.rank <= v_rank AND (m.rank, m.id) < (v_rank, v_after)
                     ORDER BY m.rank DESC, m.id DESC
                     LIMIT v_need;
                SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = on; SET LOCAL enable_indexonlyscan = on;
                RETURN;
            END IF;
            -- The rank's titles, through the GIN index of titles, of q's words or both; at the
            -- top rank through the index of titles alone (coalesce hides q from the planner:
            -- the titles holding every word of q are few, their words' entries in the index
            -- of title and description many).
            SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off;
            IF v_rank = cardinality(v_words) THEN
                v_ids := ARRAY(
                    SELECT p.id FROM products p
                     WHERE p.status = 'published' AND p.title_search @@ v_group
                       AND coalesce(p.search, '') @@ v_tsq
                       AND p.mode = p_mode AND p.id < v_after
                       AND market_search_filters(p.category, p.seller_id, p.price,
                                                 p_category, p_seller, p_min, p_max)
                     ORDER BY p.id DESC
                     LIMIT v_need);
            ELSE
                -- Planned for its values at each run (021_rank_titles_planned_each_time.sql).
                EXECUTE 'SELECT ARRAY(
                    SELECT p.id FROM products p
                     WHERE p.status = ''published'' AND p.title_search @@ $1 AND p.search @@ $2
                       AND market_title_rank(p.title_search, $3) = $4
                       AND p.mode = $5 AND p.id < $6
                       AND market_search_filters(p.category, p.seller_id, p.price, $7, $8, $9, $10)
                     ORDER BY p.id DESC
                     LIMIT $11)'
                   INTO v_ids
                  USING v_group, v_tsq, v_words, v_rank, p_mode, v_after,
                        p_category, p_seller, p_min, p_max, v_need;
            END IF;
            SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = on; SET LOCAL enable_indexonlyscan = on;
            RETURN QUERY SELECT u.id, v_rank FROM unnest(v_ids) WITH ORDINALITY u(id, i) ORDER BY u.i;
            v_need := v_need - cardinality(v_ids);
        END IF;
        v_rank := v_rank - 1;
        v_after := c_top;
    END LOOP;
END
$fn$;
