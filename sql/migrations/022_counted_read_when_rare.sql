-- 022_counted_read_when_rare: in a relevance page (market_relevance_page, 018, 020, 021),
-- the one read of all of q's matches (the "counted read") runs only when q looks rare, and
-- may run at the top rank too.
--
-- The counted read asks the GIN index of title and description for q's matches, at most
-- 32 per row wanted, and answers every rank left when there are no more. Its cost is the
-- intersection of q's words' entries, whatever it returns: some 17 ms for two words each
-- in ~200,000 of a million products. 021 ran it at the first rank below the top whose walk
-- found no page, so
--   `edit design` (33,931 matches, all in descriptions) paid 30 ms for a read that found
--   more than it may answer, and then the walk of rank 0 found the page in 2.5 ms;
--   `pack font` (no match, both words in ~200,000 titles) read the intersection twice:
--   once in the index of titles for the top rank, once more here (36 ms).
-- Now the first walk that finds no page is followed by a probe: the same rows in id order
-- (16 per row wanted, from the walk's start), counting q's matches at any rank; it reads
-- the table for those rows, 0.5 - 0.8 ms. When it finds none, q is rare enough for the
-- counted read to be worth its cost (at 640 matches in a million rows, 32 per row wanted
-- at limit 20, the probe of 320 rows finds none 82 % of the time; at 3,000, 38 %); when
-- it finds some, q's matches are spread over the table at a rate that puts thousands in
-- it, more than the counted read may answer, and the ranks are read as before.
-- At the top rank of a q of two words or more (titles holding all of them), the counted
-- read is tried only when q's words are in many titles: one in 16 of the rows the walk
-- read holds one of them in its title (counted on the index of ids and titles, ~0.1 ms).
-- Then the read of the titles holding them all costs their intersection too, and the
-- counted read takes its place (`pack font`: 36 -> 19 ms). Else those titles are few and
-- cheap to read, and are read first: the two-word searches of the shared benchmark's mix
-- (`bold maple`, `tasty orchid`) fill their page there. Their walk, which finds no page
-- in titles so rare, reads 4 rows per row wanted there, not 16 (0.6 -> 0.15 ms): those
-- ten searches take 1.4 ms on average instead of 1.6 - 1.7 ms.
--
-- And a rank's long walk is longer and taken more often. `retro` (20,164 matches, 8,331
-- of them in titles, 0.8 % of the table) showed why:
--   at limit 26 its short walk found 2 titles in 416 rows (3.5 on average), too few by
--   021's rule for the long walk, so the page read all 8,331 titles through the index of
--   titles and then the table, to sort them by id (17 ms), where the long walk finds it
--   in 5,200 rows (4 ms); at limit 57 (a cursor's page) 3 in 912 rows (7.6 on average).
--   The short walk's few matches tell their rate to a factor of two at best, so the long
--   walk is now taken when that rate would fill the page within twice its bound;
--   at limit 54 (a cursor's page) the long walk of sqrt(rows wanted x rows of the table),
--   7,400 rows (8 ms), found 50 titles, not 54, and the read of the titles followed
--   (23 ms). A walk reads a row from the index of ids and titles alone, ~1.1 us; the read
--   of the titles visits the table for each title, ~2.7 us, for all of the rank's titles
--   after the cursor. The worst page is a long walk that just fails: its bound W plus the
--   titles of a rate just under need / W; W = 1.5 x sqrt(rows wanted x rows of the table)
--   makes the sum smallest for those two costs (sqrt(2.7 / 1.1) = 1.57), some 15 ms at
--   limit 20 and 25 ms at limit 54 on a million products, where 021's bound gave 28 ms at
--   limit 54. The other sorts' walks (search_sql.c) read the table for each row, as their
--   index read does, and keep market_search_walk_rows.
--
-- Neither choice changes a page's rows, only its cost (make search-exact-check).
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
    v_long int;       -- the rows a long walk reads (022_counted_read_when_rare.sql)
    v_titled int;     -- the rows the top rank's walk read whose title holds a word of q
    v_probe int;      -- q's matches among the rows a walk reads, whatever their rank
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
        -- wanted, then, when that found some but not a page, v_long (below). At the top
        -- rank of a q of two words or more, 4 per row wanted: titles that hold every word
        -- of q are rare, and a walk that finds no page there only tells how many titles
        -- hold some of them (022_counted_read_when_rare.sql).
        v_walk := CASE WHEN v_rank >= 2 AND v_rank = cardinality(v_words) THEN 4 ELSE 16 END * v_need;
        v_long := NULL;
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
            -- page within twice its bound: the few matches of a short walk tell their rate
            -- to a factor of two at best, and a long walk costs at most its bound where the
            -- read of the titles costs all of the rank's titles after the cursor.)
            EXIT walks WHEN coalesce(cardinality(v_ids), 0) >= v_need OR v_seen < v_walk
                            OR v_ids IS NULL OR v_long IS NOT NULL;
            v_long := 3 * market_search_walk_rows(v_need) / 2;
            EXIT walks WHEN v_need::float8 * v_walk / cardinality(v_ids) > 2 * v_long;
            v_walk := v_long;
        END LOOP walks;
        -- The walk holds a page, or every row of the rank.
        v_walked := coalesce(cardinality(v_ids), 0) >= v_need OR v_seen < v_walk;
        -- The first walk that finds no page: when q has few matches in all (32 rows per
        -- row wanted at most), one read of them through the index of q's words answers
        -- every rank left. That read costs the intersection of q's words in the index
        -- whatever it finds, so it is tried only when q looks rare: no match of q, at any
        -- rank, among the rows this walk read (the probe). At the top rank of a q of two
        -- words or more only when its words are in many titles (one in 16 of the rows the
        -- walk read, counted on the index of ids and titles), where reading the titles
        -- that hold them all costs that intersection too; else those titles, few, are
        -- read first (022_counted_read_when_rare.sql). The count reads the walk's rows
        -- again rather than being kept by the walk: a running count in the walk's window
        -- cost every walk of every rank ~0.5 us a row, this one read only the failed
        -- top-rank walks.
        v_titled := 0;
        IF NOT v_walked AND NOT v_counted AND v_rank >= 2 AND v_rank = cardinality(v_words) THEN
            SELECT count(*) INTO v_titled
              FROM (SELECT p.title_search FROM products p
                     WHERE p.mode = p_mode AND p.status = 'published' AND p.id < v_after
                     ORDER BY p.id DESC LIMIT v_seen) r
             WHERE r.title_search @@ v_any;
        END IF;
        IF NOT v_walked AND NOT v_counted
           AND (v_rank < cardinality(v_words) OR 16 * v_titled >= v_seen) THEN
            v_counted := true;
            SELECT count(*) INTO v_probe
              FROM (SELECT p.search, p.category, p.seller_id, p.price FROM products p
                     WHERE p.mode = p_mode AND p.status = 'published' AND p.id < v_after
                     ORDER BY p.id DESC LIMIT 16 * v_need) r
             WHERE r.search @@ v_tsq
               AND market_search_filters(r.category, r.seller_id, r.price,
                                         p_category, p_seller, p_min, p_max);
        END IF;
        IF NOT v_walked AND v_probe = 0 THEN
            v_probe := NULL; -- read once
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
