-- 009_graded_relevance: relevance graded by how many words of q a title holds (contract
-- section 6, decided 2026-11-26). The rank of a match is the number of distinct words of
-- q, stemmed by the english configuration, that its title holds; a match by its
-- description alone has rank 0; higher rank first, then id descending. The cost of a page
-- still follows the page, not the number of matches.
--
-- market_relevance_page answers one page (app/api/catalogue/search_sql.c calls it): the ids of
-- the page in order with their rank, and at most one boundary row (below). It reads the
-- matches in the cheapest way that keeps the order exact:
--   1. every match at once through the GIN index of title and description, when q
--      matches few products (fewer than a window's rows, and few index entries by the
--      column's statistics): the candidates are ranked and sorted;
--   2. otherwise rank by rank, from the highest: the ranks down to 1 at once through
--      the GIN index of titles when few titles hold any word of q; else a rank r through
--      the titles holding r of the words (one AND per combination of r words, at most
--      64 combinations), when those are few;
--   3. otherwise a walk of the rank in id order over (mode, id), each row's rank taken
--      from the title vector the index carries (no table access) and only the rows of the
--      rank checked against q and the filters: a probe of a tenth of the window first,
--      then the window. When the window comes up short before the end of the rows, the
--      page ends there: its matches, then a boundary row (the window's last id, which is
--      no item) where the next page goes on. A page may so hold fewer items than the
--      limit while next_cursor is not null (docs/api.md).
-- Each walk reads at most p_window rows of the index (p_window * 2 / 5 rows of the table
-- for rank 0, whose rows must be read), so a page costs a few windows at most.

-- The entries of the most common words of title_search and search in their GIN indexes,
-- copied from the planner's statistics (pg_stats, whose arrays are slow to search on every
-- request) by market_refresh_word_stats: after each ANALYZE of products, by the first
-- search that finds the copy older than the last ANALYZE (on the primary, in a transaction
-- that may write), and by market-admin after a seed or an import.
CREATE TABLE search_word_stats (
    col      text NOT NULL,
    word     text NOT NULL,
    postings float8 NOT NULL,
    PRIMARY KEY (col, word)
);
CREATE TABLE search_word_stats_state (
    one         boolean PRIMARY KEY DEFAULT true CHECK (one),
    analyzed_at timestamptz NOT NULL -- the ANALYZE of products the copy is of
);

-- When products was last analyzed (NULL where unknown: on a standby).
CREATE FUNCTION market_products_analyzed_at() RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT greatest(pg_stat_get_last_analyze_time('products'::regclass),
                    pg_stat_get_last_autoanalyze_time('products'::regclass))
$$;

CREATE FUNCTION market_refresh_word_stats() RETURNS void
LANGUAGE sql AS $$
    DELETE FROM search_word_stats;
    INSERT INTO search_word_stats (col, word, postings)
    SELECT s.attname, u.word, max(u.freq) * max(greatest(c.reltuples, 0))
      FROM pg_stats s
      JOIN pg_class c ON c.oid = 'products'::regclass
     CROSS JOIN unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) u(word, freq)
     WHERE s.schemaname = current_schema() AND s.tablename = 'products'
       AND s.attname IN ('search', 'title_search') AND u.word IS NOT NULL
     GROUP BY s.attname, u.word;
    INSERT INTO search_word_stats_state (analyzed_at)
    VALUES (coalesce(market_products_analyzed_at(), now()))
    ON CONFLICT (one) DO UPDATE SET analyzed_at = EXCLUDED.analyzed_at;
$$;

-- The copy is up to date (true), or brought up to date now because products was analyzed
-- since it was taken and this transaction can write (on the primary, not read-only;
-- one transaction at a time: the others go on with pg_stats); false when it is stale.
-- Called by every relevance search and once per retention pass of market-webhookd, so a
-- pool reading from standbys gets a fresh copy too.
CREATE FUNCTION market_word_stats_fresh() RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    analyzed timestamptz := market_products_analyzed_at();
BEGIN
    IF coalesce(analyzed <= (SELECT s.analyzed_at FROM search_word_stats_state s), false)
       OR analyzed IS NULL AND EXISTS (SELECT 1 FROM search_word_stats_state) THEN
        RETURN true;
    END IF;
    IF pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'
       OR NOT pg_try_advisory_xact_lock(hashtext('market_refresh_word_stats')) THEN
        RETURN false;
    END IF;
    PERFORM market_refresh_word_stats();
    RETURN true;
END
$$;

-- The entries of one word in the GIN index of column p_col (0 for a word not among its
-- most common): from the copy, or from pg_stats itself while the copy is stale.
CREATE FUNCTION market_word_postings(p_word text, p_col text, p_from_view boolean) RETURNS float8
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF p_from_view THEN
        RETURN coalesce((SELECT s.most_common_elem_freqs[array_position(s.most_common_elems::text::text[], p_word)]
                           FROM pg_stats s
                          WHERE s.schemaname = current_schema() AND s.tablename = 'products'
                            AND s.attname = p_col), 0)
               * (SELECT greatest(c.reltuples, 0) FROM pg_class c WHERE c.oid = 'products'::regclass);
    END IF;
    RETURN coalesce((SELECT w.postings FROM search_word_stats w WHERE w.col = p_col AND w.word = p_word), 0);
END
$$;

-- What reading a tsquery (as text: ORs of ANDs, as querytree writes them) through the GIN
-- index of column p_col costs, by the statistics: the candidates it finds (each AND's
-- words taken as independent) and the index entries it reads (the rarest word of each
-- AND: GIN skips through the others). Infinite when the index cannot answer it ('T').
CREATE FUNCTION market_query_cost(p_query text, p_col text, p_from_view boolean,
                                  OUT candidates float8, OUT entries float8)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    total float8 := greatest((SELECT c.reltuples FROM pg_class c WHERE c.oid = 'products'::regclass), 1);
    branch text;
    f float8;
    found_ float8;
    rarest float8;
BEGIN
    candidates := 0;
    entries := 0;
    IF p_query IS NULL OR p_query = 'T' THEN
        candidates := 'Infinity';
        entries := 'Infinity';
        RETURN;
    END IF;
    FOREACH branch IN ARRAY string_to_array(p_query, '|') LOOP
        found_ := total;
        rarest := NULL;
        FOR f IN SELECT market_word_postings(replace(m[1], '''''', ''''), p_col, p_from_view)
                   FROM regexp_matches(branch, '''((?:[^'']|'''')*)''', 'g') m LOOP
            found_ := found_ * greatest(f, 0.5) / total;
            rarest := least(rarest, f);
        END LOOP;
        candidates := candidates + found_;
        entries := entries + coalesce(rarest, total);
    END LOOP;
END
$$;

-- One page of a relevance search: its ids in order with their rank, and after them at
-- most one boundary row (is_boundary: the page ends at a window's last row, which is no
-- item). p_limit is the page size plus one; p_rank and p_after the cursor's rank and id
-- (NULL on a first page); p_window MARKET_SEARCH_WINDOW.
CREATE FUNCTION market_relevance_page(p_mode text, p_limit int, p_q text, p_category text,
                                      p_seller text, p_min numeric, p_max numeric,
                                      p_rank int, p_after text, p_window int)
RETURNS TABLE (match_id text, match_rank int, is_boundary boolean)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    -- Before every id of products (ids are 'prod_' and [A-Za-z0-9_]; '`' follows '_').
    c_top CONSTANT text := 'prod`';
    -- A GIN index is read for all its candidates when the statistics promise at most
    -- half a window of them, reading at most this many index entries per window row.
    c_entries_per_row CONSTANT int := 16;
    v_tsq tsquery := websearch_to_tsquery('english', p_q);
    v_tree text := querytree(v_tsq);
    v_rows int := (p_window * 2 + 4) / 5; -- rows read from the table in one walk
    v_view boolean;                       -- the copy of the statistics is stale
    v_words text[];   -- the distinct words of q, as lexemes
    v_lits text[];    -- the same as tsquery literals
    v_n int;
    v_any tsquery;    -- a title holding at least one of the words
    v_any_tried boolean := false;
    v_at tsquery;
    v_at_text text;
    v_floor int;
    v_cost record;
    v_combos float8;
    v_rank int;
    v_after text := coalesce(p_after, c_top);
    v_need int := p_limit;
    v_got int;
    v_walk int;
    v_ids text[];
    v_ranks int[];
    v_scanned int;
    v_last text;
BEGIN
    -- The words that can match: those of the part of q an index can answer (querytree
    -- drops what is excluded); when no part can ('T': an OR with an exclusion), those
    -- of q not excluded.
    SELECT coalesce(array_agg(w.word ORDER BY w.word), '{}'), coalesce(array_agg(w.lit ORDER BY w.word), '{}')
      INTO v_words, v_lits
      FROM (SELECT DISTINCT replace(m[3], '''''', '''') AS word, m[2] AS lit
              FROM regexp_matches(CASE WHEN v_tree = 'T' THEN v_tsq::text ELSE v_tree END,
                                  '(!?)(''((?:[^'']|'''')*)'')', 'g') m
             WHERE m[1] = '') w;
    v_n := cardinality(v_words);
    IF v_n > 0 THEN
        v_any := array_to_string(v_lits, ' | ')::tsquery;
    END IF;

    v_view := NOT market_word_stats_fresh();

    -- 1. Few matches: all of them, ranked and sorted.
    v_cost := market_query_cost(v_tree, 'search', v_view);
    IF v_cost.candidates <= v_rows / 2 AND v_cost.entries <= c_entries_per_row * v_rows THEN
        SELECT count(*),
               array_agg(c.id ORDER BY c.rank DESC, c.id DESC) FILTER (WHERE c.page),
               array_agg(c.rank ORDER BY c.rank DESC, c.id DESC) FILTER (WHERE c.page)
          INTO v_scanned, v_ids, v_ranks
          FROM (SELECT p.id, length(p.title_search) - length(ts_delete(p.title_search, v_words)) AS rank,
                       p.mode = p_mode AND p.search @@ v_tsq
                       AND (p_category IS NULL OR p.category = p_category)
                       AND (p_seller IS NULL OR p.seller_id = p_seller)
                       AND (p_min IS NULL OR p.price >= p_min)
                       AND (p_max IS NULL OR p.price <= p_max) AS page
                  FROM products p
                 WHERE p.status = 'published'
                   AND p.search @@ regexp_replace(v_tree, ' <(-|[0-9]+)> ', ' & ', 'g')::tsquery
                 LIMIT v_rows) c;
        IF v_scanned < v_rows THEN
            RETURN QUERY
                SELECT u.id, u.rank, false
                  FROM unnest(v_ids, v_ranks) WITH ORDINALITY u(id, rank, i)
                 WHERE p_rank IS NULL OR (u.rank, u.id) < (p_rank, p_after)
                 ORDER BY u.i
                 LIMIT p_limit;
            RETURN;
        END IF;
    END IF;

    -- 2. and 3. Rank by rank, from the highest (or the cursor's). The read of the
    -- titles' candidates below is the statement of 1. with the other GIN index: an index
    -- cannot be chosen by a parameter in a plan made once, so each has its own.
    v_rank := least(coalesce(p_rank, v_n), v_n);
    <<ranks>>
    WHILE v_need > 0 AND v_rank >= 0 LOOP
        -- 2. The titles of every rank left (those holding any word), or of this rank
        -- (those holding v_rank of the words), when they are few.
        FOR choice IN 1 .. 2 LOOP
            v_at := NULL;
            IF choice = 1 AND v_rank >= 1 AND NOT v_any_tried THEN
                v_any_tried := true;
                v_at := v_any;
                v_floor := 1;
            ELSIF choice = 2 AND v_rank >= 2 THEN
                v_combos := 1;
                FOR i IN 1 .. v_rank LOOP
                    v_combos := v_combos * (v_n - v_rank + i) / i;
                END LOOP;
                IF v_combos <= 64 THEN
                    WITH RECURSIVE c(last, expr, size) AS (
                        SELECT i, v_lits[i], 1 FROM generate_subscripts(v_lits, 1) i
                        UNION ALL
                        SELECT j, c.expr || ' & ' || v_lits[j], c.size + 1
                          FROM c, generate_series(c.last + 1, v_n) j
                         WHERE c.size < v_rank)
                    SELECT string_agg(c.expr, ' | ') INTO v_at_text FROM c WHERE c.size = v_rank;
                    v_at := v_at_text::tsquery;
                    v_floor := v_rank;
                END IF;
            END IF;
            CONTINUE WHEN v_at IS NULL;
            v_cost := market_query_cost(v_at::text, 'title_search', v_view);
            CONTINUE WHEN v_cost.candidates > v_rows / 2 OR v_cost.entries > c_entries_per_row * v_rows;
            SELECT count(*),
                   array_agg(c.id ORDER BY c.rank DESC, c.id DESC) FILTER (WHERE c.page),
                   array_agg(c.rank ORDER BY c.rank DESC, c.id DESC) FILTER (WHERE c.page)
              INTO v_scanned, v_ids, v_ranks
              FROM (SELECT p.id, length(p.title_search) - length(ts_delete(p.title_search, v_words)) AS rank,
                           p.mode = p_mode AND p.search @@ v_tsq
                           AND (p_category IS NULL OR p.category = p_category)
                           AND (p_seller IS NULL OR p.seller_id = p_seller)
                           AND (p_min IS NULL OR p.price >= p_min)
                           AND (p_max IS NULL OR p.price <= p_max) AS page
                      FROM products p
                     WHERE p.status = 'published' AND p.title_search @@ v_at
                     LIMIT v_rows) c;
            CONTINUE WHEN v_scanned >= v_rows; -- more than the statistics said
            RETURN QUERY
                SELECT u.id, u.rank, false
                  FROM unnest(v_ids, v_ranks) WITH ORDINALITY u(id, rank, i)
                 WHERE u.rank >= v_floor AND (u.rank, u.id) < (v_rank, v_after)
                 ORDER BY u.i
                 LIMIT v_need;
            GET DIAGNOSTICS v_got = ROW_COUNT;
            v_need := v_need - v_got;
            v_rank := v_floor - 1;
            v_after := c_top;
            CONTINUE ranks;
        END LOOP;

        -- 3. The walk in id order: a probe of a tenth of the window, then the window.
        FOR attempt IN 1 .. 2 LOOP
            v_walk := CASE WHEN v_rank >= 1 THEN p_window ELSE v_rows END;
            IF attempt = 1 THEN
                v_walk := (v_walk + 9) / 10;
            END IF;
            IF v_rank >= 1 THEN
                -- The rank from the title vector the index carries; the table only for
                -- the rows of the rank.
                v_ids := ARRAY(
                    SELECT w.id
                      FROM (SELECT p.id, p.title_search FROM products p
                             WHERE p.mode = p_mode AND p.status = 'published' AND p.id < v_after
                             ORDER BY p.id DESC LIMIT v_walk) w
                     WHERE w.title_search @@ v_any
                       AND length(w.title_search) - length(ts_delete(w.title_search, v_words)) = v_rank
                       AND EXISTS (SELECT 1 FROM products x
                                    WHERE x.id = w.id AND x.search @@ v_tsq
                                      AND (p_category IS NULL OR x.category = p_category)
                                      AND (p_seller IS NULL OR x.seller_id = p_seller)
                                      AND (p_min IS NULL OR x.price >= p_min)
                                      AND (p_max IS NULL OR x.price <= p_max))
                     ORDER BY w.id DESC
                     LIMIT v_need);
            ELSE
                v_ids := ARRAY(
                    SELECT w.id
                      FROM (SELECT p.id, p.search, p.title_search, p.category, p.seller_id, p.price
                              FROM products p
                             WHERE p.mode = p_mode AND p.status = 'published' AND p.id < v_after
                             ORDER BY p.id DESC LIMIT v_walk) w
                     WHERE w.search @@ v_tsq
                       AND (v_any IS NULL OR NOT w.title_search @@ v_any)
                       AND (p_category IS NULL OR w.category = p_category)
                       AND (p_seller IS NULL OR w.seller_id = p_seller)
                       AND (p_min IS NULL OR w.price >= p_min)
                       AND (p_max IS NULL OR w.price <= p_max)
                     ORDER BY w.id DESC
                     LIMIT v_need);
            END IF;
            EXIT WHEN cardinality(v_ids) >= v_need;
            SELECT count(*), min(x.id) INTO v_scanned, v_last
              FROM (SELECT p.id FROM products p
                     WHERE p.mode = p_mode AND p.status = 'published' AND p.id < v_after
                     ORDER BY p.id DESC LIMIT v_walk) x;
            EXIT WHEN v_scanned < v_walk; -- the walk reached the last row: the rank is whole
            IF attempt = 2 THEN
                -- The window came up short: the page ends at its last row, where the next
                -- page goes on.
                RETURN QUERY SELECT u.id, v_rank, false FROM unnest(v_ids) WITH ORDINALITY u(id, i) ORDER BY u.i;
                RETURN QUERY SELECT v_last, v_rank, true;
                RETURN;
            END IF;
        END LOOP;
        RETURN QUERY SELECT u.id, v_rank, false FROM unnest(v_ids) WITH ORDINALITY u(id, i) ORDER BY u.i;
        v_need := v_need - cardinality(v_ids);
        v_rank := v_rank - 1;
        v_after := c_top;
    END LOOP ranks;
END
$fn$;

-- The copy of the statistics, from those of today's catalogue.
SELECT market_refresh_word_stats();
ANALYZE search_word_stats;
