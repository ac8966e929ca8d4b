-- 018_whole_pages: a search page is whole (contract section 5, decided 2026-11-27): it
-- holds `limit` items whenever that many matches remain after its cursor, and never ends
-- early to bound its cost.
--
-- 009_graded_relevance.sql read a page's matches by walking a window of rows in the
-- sort's order and, when the window came up short and the statistics said the GIN index
-- was dear, ended the page at the window's last row. Now a page reads its matches one of
-- two ways, both exact and whole:
--   walk   the next rows in the sort's order, each checked against q: 16 per row wanted,
--          then, when those held matches dense enough to fill a page within it, up to
--          market_search_walk_rows(need) (the square root of rows wanted x rows of the
--          catalogue: a few thousand on a million products);
--   index  else every match after the cursor through the GIN index of q's words, sorted:
--          matches too sparse for the walk, so fewer than the walk would have read.
-- No estimate decides between them: the statistics copy (search_word_stats) and the
-- window setting go. Relevance applies the same two ways to each rank in turn
-- (market_relevance_page below; app/api/catalogue/search_sql.c builds the other sorts'
-- statements). PostgreSQL's RUM index, whose posting lists can keep a sort's order, would
-- retire the walk; Debian 12's build of it never reads them in that order (README,
-- "Whole search pages").

-- The rows a walk may read to find p_need matches: sqrt(p_need x the table's rows), at
-- least 16 x p_need (a page of dense matches is found without an index read) and at most
-- 40,000.
CREATE FUNCTION market_search_walk_rows(p_need int) RETURNS int
LANGUAGE sql STABLE PARALLEL SAFE
RETURN least(40000, greatest(16 * p_need,
    sqrt(p_need * greatest((SELECT c.reltuples FROM pg_class c WHERE c.oid = 'products'::regclass), 0))))::int;

-- q as websearch_to_tsquery reads it, less the alternatives that cannot match: an AND that
-- holds a word and its exclusion ("includes -includes", "edit -edit or design -design").
-- An index reads every entry of such a word to find nothing; here they cost nothing.
-- Reads the query's text (alternatives are split at '|' and their parts at '&', outside
-- quotes and parentheses; literals are quoted, '' inside one).
CREATE FUNCTION market_search_query(p_q text) RETURNS tsquery
LANGUAGE plpgsql IMMUTABLE AS $fn$
DECLARE
    v_tsq tsquery := websearch_to_tsquery('english', p_q);
    v_text text := v_tsq::text;
    v_len int := length(v_text);
    v_kept text[] := '{}';
    v_dropped boolean := false;
    v_start int := 1;    -- where the current part starts
    v_branch text[] := '{}';
    v_depth int := 0;
    v_quoted boolean := false;
    v_ch text;
    v_part text;
    v_pos text[];
    v_neg text[];
BEGIN
    FOR i IN 1 .. v_len + 1 LOOP
        v_ch := CASE WHEN i <= v_len THEN substr(v_text, i, 1) ELSE '|' END;
        IF v_ch = '''' THEN
            v_quoted := NOT v_quoted; -- a doubled quote toggles twice
        ELSIF v_quoted THEN
            CONTINUE;
        ELSIF v_ch = '(' THEN
            v_depth := v_depth + 1;
        ELSIF v_ch = ')' THEN
            v_depth := v_depth - 1;
        ELSIF v_depth = 0 AND v_ch IN ('&', '|') THEN
            v_branch := v_branch || btrim(substr(v_text, v_start, i - v_start));
            v_start := i + 1;
            IF v_ch = '|' THEN
                -- One alternative ends: the simple words it requires and excludes.
                v_pos := '{}';
                v_neg := '{}';
                FOREACH v_part IN ARRAY v_branch LOOP
                    IF v_part ~ '^''([^'']|'''')*''$' THEN
                        v_pos := v_pos || v_part;
                    ELSIF v_part ~ '^!''([^'']|'''')*''$' THEN
                        v_neg := v_neg || substr(v_part, 2);
                    END IF;
                END LOOP;
                IF v_pos && v_neg THEN
                    v_dropped := true;
                ELSE
                    v_kept := v_kept || array_to_string(v_branch, ' & ');
                END IF;
                v_branch := '{}';
            END IF;
        END IF;
    END LOOP;
    IF NOT v_dropped THEN
        RETURN v_tsq;
    END IF;
    RETURN coalesce(array_to_string(v_kept, ' | '), '')::tsquery;
END
$fn$;

-- A match's rank (contract section 6): how many of q's words (lexemes) its title holds.
CREATE FUNCTION market_title_rank(title_search tsvector, words text[]) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN length(title_search) - length(ts_delete(title_search, words));

-- The filters of a search other than q (each NULL when not given), for one product: one
-- expression, inlined where it is called.
CREATE FUNCTION market_search_filters(category text, seller_id text, price numeric,
                                      p_category text, p_seller text, p_min numeric,
                                      p_max numeric)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (p_category IS NULL OR category = p_category) AND (p_seller IS NULL OR seller_id = p_seller)
   AND (p_min IS NULL OR price >= p_min) AND (p_max IS NULL OR price <= p_max);

-- The titles holding at least p_rank of p_lits (q's words, as tsquery literals): an OR of
-- one AND per choice of p_rank words; NULL past 64 choices (eight words or more).
CREATE FUNCTION market_rank_query(p_lits text[], p_rank int) RETURNS tsquery
LANGUAGE plpgsql IMMUTABLE AS $fn$
DECLARE
    v_n int := cardinality(p_lits);
    v_choices float8 := 1;
    v_text text;
BEGIN
    IF p_rank < 1 OR p_rank > v_n THEN
        RETURN NULL;
    END IF;
    FOR i IN 1 .. p_rank LOOP
        v_choices := v_choices * (v_n - p_rank + i) / i;
    END LOOP;
    IF v_choices > 64 THEN
        RETURN NULL;
    END IF;
    WITH RECURSIVE c(last, expr, size) AS (
        SELECT i, p_lits[i], 1 FROM generate_subscripts(p_lits, 1) i
        UNION ALL
        SELECT j, c.expr || ' & ' || p_lits[j], c.size + 1
          FROM c, generate_series(c.last + 1, v_n) j
         WHERE c.size < p_rank)
    SELECT string_agg('(' || c.expr || ')', ' | ') INTO v_text FROM c WHERE c.size = p_rank;
    RETURN v_text::tsquery;
END
$fn$;

-- The distinct words of a tsquery that a match's title can hold toward its rank (contract
-- section 6): every lexeme but those under a NOT ("-word", "-\"a phrase\""), as lexemes and
-- as tsquery literals. Reads the query's text: literals are quoted, '' inside one.
CREATE FUNCTION market_query_words(p_query tsquery, OUT words text[], OUT lits text[])
LANGUAGE plpgsql IMMUTABLE AS $fn$
DECLARE
    v_text text := p_query::text;
    v_len int := length(v_text);
    v_pos int := 1;
    v_depth int := 0;       -- parentheses open inside an excluded group
    v_excluded boolean := false;
    v_ch text;
    v_end int;
    v_lit text;
BEGIN
    words := '{}';
    lits := '{}';
    WHILE v_pos <= v_len LOOP
        v_ch := substr(v_text, v_pos, 1);
        IF v_ch = '''' THEN
            -- A literal: up to the next quote that is not doubled.
            v_end := v_pos + 1;
            WHILE v_end <= v_len LOOP
                EXIT WHEN substr(v_text, v_end, 1) = '''' AND substr(v_text, v_end + 1, 1) <> '''';
                v_end := v_end + CASE WHEN substr(v_text, v_end, 1) = '''' THEN 2 ELSE 1 END;
            END LOOP;
            v_lit := substr(v_text, v_pos, v_end - v_pos + 1);
            IF NOT v_excluded AND v_depth = 0
               AND NOT replace(substr(v_lit, 2, length(v_lit) - 2), '''''', '''') = ANY (words) THEN
                words := words || replace(substr(v_lit, 2, length(v_lit) - 2), '''''', '''');
                lits := lits || v_lit;
            END IF;
            v_excluded := false;
            v_pos := v_end + 1;
        ELSIF v_ch = '!' THEN
            v_excluded := true;
            v_pos := v_pos + 1;
        ELSIF v_ch = '(' THEN
            IF v_excluded OR v_depth > 0 THEN
                v_depth := v_depth + 1;
            END IF;
            v_excluded := false;
            v_pos := v_pos + 1;
        ELSIF v_ch = ')' THEN
            v_depth := greatest(v_depth - 1, 0);
            v_pos := v_pos + 1;
        ELSE
            v_pos := v_pos + 1;
        END IF;
    END LOOP;
END
$fn$;

DROP FUNCTION market_relevance_page(text, int, text, text, text, numeric, numeric, int, text, int);
DROP FUNCTION market_query_cost(text, text, boolean);
DROP FUNCTION market_word_postings(text, text, boolean);
DROP FUNCTION market_word_stats_fresh();
DROP FUNCTION market_refresh_word_stats();
DROP FUNCTION market_products_analyzed_at();
DROP TABLE search_word_stats, search_word_stats_state;

-- Every read through a GIN index below runs with scans of the table and of btree indexes
-- turned off (SET LOCAL, back on after it): a plan made once for any q (the API's sessions
-- plan each statement once) could otherwise read the table or a btree index in search of
-- rare matches, a cost that follows the rows rather than the matches.
--
-- One page of a relevance search: its ids in order with their rank, at most p_limit (the
-- page size plus one). p_rank and p_after are the cursor's rank and id (NULL on a first
-- page). A match's rank is the number of q's words its title holds (contract section 6);
-- higher ranks first, then ids descending.
--
-- Rank by rank from the highest (or the cursor's): the walk in id order over (mode, id),
-- whose index carries the title's vector, so a row's rank costs no table access and only
-- the rows of the rank are checked against q and the filters (16 rows per row wanted,
-- then, when those held some matches but not a page, market_search_walk_rows); when it
-- finds no page, the
-- rank's titles through the GIN index of titles (those holding that many of the words,
-- the rank checked on each), or, for rank 0 and past 64 choices of words, every match of the ranks left
-- through the GIN index of title and description, ranked and sorted: the page ends there.
CREATE FUNCTION market_relevance_page(p_mode text, p_limit int, p_q text, p_category text,
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
                SELECT count(*), array_agg(w.id ORDER BY w.id DESC) FILTER (WHERE w.hit)
                  INTO v_seen, v_ids
                  FROM (SELECT r.id,
                               r.title_search @@ v_any
                               AND market_title_rank(r.title_search, v_words) = v_rank
                               AND EXISTS (SELECT 1 FROM products x
                                            WHERE x.id = r.id AND x.search @@ v_tsq
                                              AND market_search_filters(x.category, x.seller_id, x.price,
                                                                        p_category, p_seller, p_min, p_max)) AS hit
                          FROM (SELECT p.id, p.title_search FROM products p
                                 WHERE p.mode = p_mode AND p.status = 'published' AND p.id < v_after
                                 ORDER BY p.id DESC LIMIT v_walk) r) w;
            ELSE
                SELECT count(*), array_agg(w.id ORDER BY w.id DESC) FILTER (WHERE w.hit)
                  INTO v_seen, v_ids
                  FROM (SELECT p.id,
                               p.search @@ v_tsq
                               AND (v_any IS NULL OR NOT p.title_search @@ v_any)
                               AND market_search_filters(p.category, p.seller_id, p.price,
                                                         p_category, p_seller, p_min, p_max) AS hit
                          FROM products p
                         WHERE p.mode = p_mode AND p.status = 'published' AND p.id < v_after
                         ORDER BY p.id DESC LIMIT v_walk) w;
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
                v_ids := ARRAY(
                    SELECT p.id FROM products p
                     WHERE p.status = 'published' AND p.title_search @@ v_group AND p.search @@ v_tsq
                       AND market_title_rank(p.title_search, v_words) = v_rank
                       AND p.mode = p_mode AND p.id < v_after
                       AND market_search_filters(p.category, p.seller_id, p.price,
                                                 p_category, p_seller, p_min, p_max)
                     ORDER BY p.id DESC
                     LIMIT v_need);
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
