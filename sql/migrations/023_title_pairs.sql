-- 023_title_pairs: the titles holding every word of a q of two words or more (the top rank
-- of relevance, contract section 6) are read through a GIN index of the pairs of words each
-- title holds, not by intersecting each word's entries in the index of titles.
--
-- Where the time of the shared benchmark's published mix went with the page cache off
-- (pg_stat_statements, ../shared/bench/run --compare, 2026-11-29): its ten two-word
-- searches by relevance (`bold maple`, `dusty raven`: 300 - 500 matches, 54 - 68 titles
-- holding both words) were 9 % of its requests and 82 % of PostgreSQL's time in
-- statements, 1.1 ms each alone. 0.76 ms of that was the read of the titles holding both
-- words: GIN's intersection of the words' entries in the index of titles (`bold` in 8,477
-- titles, `mapl` in 6,256), 0.55 ms for 68 rows, some 37 ns an entry whatever the
-- intersection holds. The index of pairs has one entry list per pair of words found
-- together in a title: `bold mapl` holds the 68 titles, read in 0.02 ms; the read of the
-- titles takes 0.17 ms.
--
-- market_title_pairs(title_search) is every pair of distinct lexemes of a title, each
-- written 'a b' with a before b in byte order: n (n - 1) / 2 of them for a title of n
-- words (3.6 words on average in the bench catalogue: 29 MB for a million products, 18 s
-- to build). A pair of q's words is in the entries of every title that holds both, so the
-- pairs of q select a superset of the titles holding all of q's words; the read checks
-- each against the rank's query as before (two lexemes holding a space could write the
-- same pair as two others: that title is read, then dropped by the check). The pairs grow
-- as the square of a title's words, but title_search holds the first 300 characters of a
-- title only (006_search.sql): at most some 150 distinct words, 11,000 pairs, whatever an
-- import holds. The page's rows are the same (make search-exact-check); only the index
-- they are found through changed.
-- The rest of the function is 022's.
CREATE FUNCTION market_title_pairs(p_title tsvector) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(a.lexeme || ' ' || b.lexeme), '{}')
      FROM unnest(tsvector_to_array(p_title)) a(lexeme)
      JOIN unnest(tsvector_to_array(p_title)) b(lexeme) ON a.lexeme < b.lexeme COLLATE "C"
$$;

CREATE INDEX products_title_pairs ON products USING gin (market_title_pairs(title_search))
    WHERE status = 'published';

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
    v_pairs text[];   -- the pairs of q's words, as market_title_pairs writes them
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
            -- The rank's titles, through a GIN index. At the top rank of a q of two words or
            -- more, through the index of the titles' pairs of words (023_title_pairs.sql):
            -- its entries for q's pairs are the titles holding them all, where the index of
            -- titles intersects each word's entries, thousands for a word common in titles.
            -- The titles are read alone, and checked after (OFFSET 0): planned once for any
            -- value, this read is estimated at 0.5 % of the table, and at twice that the
            -- planner intersects it with the index of ids for `id < after` (a third of the
            -- table by its rule), 150 - 300 ms. At the top rank of a q of one word, through the
            -- index of titles alone (its entries are the rank's titles; coalesce hides q's
            -- other conditions from the planner).
            SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off;
            IF v_rank = cardinality(v_words) AND v_rank >= 2 THEN
                -- (Written here, not for every page: most pages never read the titles.)
                v_pairs := market_title_pairs(array_to_tsvector(v_words));
                v_ids := ARRAY(
                    SELECT t.id
                      FROM (SELECT p.id, p.mode, p.title_search, p.search, p.category,
                                   p.seller_id, p.price
                              FROM products p
                             WHERE p.status = 'published'
                               AND market_title_pairs(p.title_search) @> v_pairs
                            OFFSET 0) t
                     WHERE t.title_search @@ v_group AND t.search @@ v_tsq
                       AND t.mode = p_mode AND t.id < v_after
                       AND market_search_filters(t.category, t.seller_id, t.price,
                                                 p_category, p_seller, p_min, p_max)
                     ORDER BY t.id DESC
                     LIMIT v_need);
            ELSIF v_rank = cardinality(v_words) THEN
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
