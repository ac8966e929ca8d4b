// bench/search_peers/xapian.cc: market's searches answered by Xapian, in process.
//
//   MARKET_DB=conninfo peers_xapian load DIR   the catalogue from market's PostgreSQL into DIR
//   peers_xapian run DIR PLAN [--requests N] [--budget S] [--only TEXT]
//
// The index. One document per published test-mode product, its docid following the newest
// order (docid 1 is the newest product). Its terms are PostgreSQL's own lexemes of `search`
// (unnest(search)) at PostgreSQL's own positions, so that Xapian matches exactly what
// PostgreSQL matches, phrases included (websearch_to_tsquery's `a <-> b`: OP_PHRASE with a
// window of its length); its title lexemes (title_search) are boolean terms with the prefix
// XT, for the relevance rank. Value slots, compared bytewise as Xapian compares values:
//   0  the id (relevance's tie-break, id descending; and what a page returns);
//   1  the price key: price * 10^6 as 8 bytes big-endian, then the id (price, then id);
//   2  the title's lexemes " a b c ", for relevance's keyset (below).
// The database is compacted once loaded (Compactor::FULLER), as a read-mostly one is.
//
// The queries, translated from PostgreSQL's websearch_to_tsquery output (runner.h: the
// plan), not written by hand; one Enquire per page, get_mset(0, limit + 1):
//   newest      BoolWeight, docid ascending: the matcher stops once it holds the page (no
//               weights to compare, docids come in order); the keyset is docid > cursor, a
//               PostingSource of ours that skips straight to the cursor's docid;
//   price_*     BoolWeight, sort by value slot 1 (reversed for price_desc); the keyset is
//               a value range on slot 1 (OP_VALUE_GE key + "\0", OP_VALUE_LE key);
//   relevance   CoordWeight (each matching term counts 1) over AND_MAYBE(the query scaled
//               by 0, OR of the words' XT terms): a document's weight is exactly how many
//               of the words its title holds; sort by relevance then value slot 0
//               reversed (id descending). Xapian has no keyset on a weight: a cursor page
//               filters with a MatchDecider that computes the rank from slot 2 and keeps
//               (rank, id) < the cursor's.
#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <unistd.h>
#include <string>
#include <vector>
#include <xapian.h>

#include "pg.h"
#include "runner.h"

static const Xapian::valueno SLOT_ID = 0, SLOT_PRICE = 1, SLOT_TITLE = 2;

static std::string price_key(int64_t price, const char *id) {
    std::string k(8, '\0');
    uint64_t v = (uint64_t)price;
    for (int i = 7; i >= 0; i--, v >>= 8) k[(size_t)i] = (char)(v & 0xff);
    return k + id;
}

// ------------------------------------------------------------------ load

struct loader_t {
    Xapian::WritableDatabase *db;
    double t0;
    long collisions;
};

static void load_row(void *ctx, const pg_row_t *r) {
    loader_t *l = static_cast<loader_t *>(ctx);
    Xapian::Document doc;
    for (int i = 0; i < r->npos; i++) {
        if (strlen(r->lex[i]) > 240) die("product %s: a lexeme too long for Xapian", r->id);
        doc.add_posting(r->lex[i], (Xapian::termpos)r->pos[i]);
    }
    std::string title = " ";
    for (int i = 0; i < r->ntitle; i++) {
        doc.add_boolean_term(std::string("XT") + r->title[i]);
        title += r->title[i];
        title += ' ';
    }
    doc.add_value(SLOT_ID, r->id);
    doc.add_value(SLOT_PRICE, price_key(r->price_key, r->id));
    doc.add_value(SLOT_TITLE, title);
    l->db->replace_document((Xapian::docid)r->seq, doc);
    l->collisions += r->collisions;
    if (r->seq % 100000 == 0) fprintf(stderr, "xapian: %ld rows, %.0f s\n", r->seq, (now_ms() - l->t0) / 1e3);
}

static long long dir_size(const std::string &path) {
    long long total = 0;
    DIR *d = opendir(path.c_str());
    if (!d) return 0;
    while (struct dirent *e = readdir(d)) {
        struct stat st;
        std::string p = path + "/" + e->d_name;
        if (e->d_name[0] != '.' && stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += st.st_size;
    }
    closedir(d);
    return total;
}

static void remove_dir(const std::string &path) {
    DIR *d = opendir(path.c_str());
    if (!d) return;
    while (struct dirent *e = readdir(d))
        if (e->d_name[0] != '.') remove((path + "/" + e->d_name).c_str());
    closedir(d);
    rmdir(path.c_str());
}

static int load(const std::string &path) {
    loader_t l = {nullptr, now_ms(), 0};
    std::string tmp = path + ".tmp", old = path + ".old";
    remove_dir(tmp);
    // Flush to disk every 200,000 documents rather than 10,000: fewer, bigger batches.
    setenv("XAPIAN_FLUSH_THRESHOLD", "200000", 1);
    long rows;
    {
        Xapian::WritableDatabase db(tmp, Xapian::DB_CREATE_OR_OVERWRITE | Xapian::DB_BACKEND_GLASS);
        l.db = &db;
        rows = pg_catalogue(load_row, &l);
        db.commit();
        db.close();
    }
    double t_rows = now_ms();
    remove_dir(old);
    rename(path.c_str(), old.c_str());
    Xapian::Database(tmp).compact(path, Xapian::DBCOMPACT_NO_RENUMBER | Xapian::Compactor::FULLER);
    remove_dir(tmp);
    remove_dir(old);
    long long size = dir_size(path);
    printf("LOAD\txapian\t%ld\t%.1f\t%.1f\t%lld\n", rows, (now_ms() - l.t0) / 1e3, (now_ms() - t_rows) / 1e3, size);
    fprintf(stderr, "xapian: loaded %ld products in %.1f s (of which compaction %.1f s), %.0f MB; %ld positions"
            " holding two lexemes\n", rows, (now_ms() - l.t0) / 1e3, (now_ms() - t_rows) / 1e3, (double)size / 1e6,
            l.collisions);
    return 0;
}

// ------------------------------------------------------------------ queries

static Xapian::Query to_query(const qnode_t *t) {
    switch (t->type) {
    case Q_LEX:
        return Xapian::Query(t->lex[0]);
    case Q_PHRASE: {
        std::vector<std::string> terms(t->lex, t->lex + t->n);
        return Xapian::Query(Xapian::Query::OP_PHRASE, terms.begin(), terms.end(), (Xapian::termcount)t->n);
    }
    case Q_OR: {
        std::vector<Xapian::Query> kids;
        for (int i = 0; i < t->n; i++) kids.push_back(to_query(t->kid[i]));
        return Xapian::Query(Xapian::Query::OP_OR, kids.begin(), kids.end());
    }
    case Q_AND: {  // the positive parts AND_NOT the OR of the excluded ones
        std::vector<Xapian::Query> pos, neg;
        for (int i = 0; i < t->n; i++) {
            if (t->kid[i]->type == Q_NOT) neg.push_back(to_query(t->kid[i]->kid[0]));
            else pos.push_back(to_query(t->kid[i]));
        }
        Xapian::Query p = pos.empty() ? Xapian::Query::MatchAll
                                      : Xapian::Query(Xapian::Query::OP_AND, pos.begin(), pos.end());
        if (neg.empty()) return p;
        return Xapian::Query(Xapian::Query::OP_AND_NOT, p, Xapian::Query(Xapian::Query::OP_OR, neg.begin(), neg.end()));
    }
    case Q_NOT:
        return Xapian::Query(Xapian::Query::OP_AND_NOT, Xapian::Query::MatchAll, to_query(t->kid[0]));
    }
    die("bad query tree");
}

// The documents from docid lo on: skip_to goes straight there.
class DocidFrom : public Xapian::PostingSource {
    Xapian::docid lo, cur = 0, last = 0;
    Xapian::doccount n = 0;

  public:
    explicit DocidFrom(Xapian::docid lo_) : lo(lo_) {}
    void init(const Xapian::Database &db) override {
        last = db.get_lastdocid();
        cur = 0;
        n = last >= lo ? last - lo + 1 : 0;
    }
    Xapian::doccount get_termfreq_min() const override { return n; }
    Xapian::doccount get_termfreq_est() const override { return n; }
    Xapian::doccount get_termfreq_max() const override { return n; }
    void next(double) override { cur = cur == 0 ? lo : cur + 1; }
    void skip_to(Xapian::docid did, double) override {
        if (cur == 0 || did > cur) cur = did > lo ? did : lo;
    }
    bool check(Xapian::docid did, double) override {
        skip_to(did, 0);
        return true;
    }
    bool at_end() const override { return cur > last; }
    Xapian::docid get_docid() const override { return cur; }
    PostingSource *clone() const override { return new DocidFrom(lo); }
    std::string name() const override { return "DocidFrom"; }
};

// Keeps the documents whose (rank, id) is below the cursor's, the rank computed as the
// weight is: how many of the words the title's lexemes (slot 2) hold.
class RankBefore : public Xapian::MatchDecider {
    std::vector<std::string> pats;
    int rank;
    std::string id;

  public:
    RankBefore(const shape_t *s, int rank_, const char *id_) : rank(rank_), id(id_) {
        for (int i = 0; i < s->nwords; i++) pats.push_back(std::string(" ") + s->words[i] + " ");
    }
    bool operator()(const Xapian::Document &doc) const override {
        std::string title = doc.get_value(SLOT_TITLE);
        int r = 0;
        for (const std::string &p : pats) r += title.find(p) != std::string::npos;
        return r < rank || (r == rank && doc.get_value(SLOT_ID) < id);
    }
};

struct engine_t {
    Xapian::Database db;
    const plan_t *plan;
    std::vector<Xapian::Query> match;  // per shape; MatchNothing when the query is empty
    std::vector<Xapian::Query> ranked; // per shape: relevance's weighted query
};

static int page_(engine_t *e, const shape_t *shape, int sort, int limit, const char *cursor, page_t *out) {
    size_t si = (size_t)(shape - e->plan->shapes);
    if (!shape->tree) return 0;
    long long key = 0;
    char id[ID_MAX] = "";
    if (cursor && sscanf(cursor, "%lld %79s", &key, id) < 1) die("bad cursor %s", cursor);
    Xapian::Enquire enq(e->db);
    Xapian::Query q = e->match[si];
    std::string skip;  // price_desc: the cursor's own row, which OP_VALUE_LE keeps
    RankBefore *decider = nullptr;
    switch (sort) {
    case SORT_NEWEST:
        enq.set_weighting_scheme(Xapian::BoolWeight());
        enq.set_docid_order(Xapian::Enquire::ASCENDING);
        if (cursor)
            q = Xapian::Query(Xapian::Query::OP_FILTER, q,
                              Xapian::Query((new DocidFrom((Xapian::docid)key + 1))->release()));
        break;
    case SORT_PRICE_ASC:
    case SORT_PRICE_DESC: {
        enq.set_weighting_scheme(Xapian::BoolWeight());
        enq.set_sort_by_value(SLOT_PRICE, sort == SORT_PRICE_DESC);
        if (!cursor) break;
        std::string k = price_key(key, id);
        if (sort == SORT_PRICE_ASC) {
            q = Xapian::Query(Xapian::Query::OP_FILTER, q, Xapian::Query(Xapian::Query::OP_VALUE_GE, SLOT_PRICE, k + '\0'));
        } else {
            q = Xapian::Query(Xapian::Query::OP_FILTER, q, Xapian::Query(Xapian::Query::OP_VALUE_LE, SLOT_PRICE, k));
            skip = id;
        }
        break;
    }
    case SORT_RELEVANCE:
        enq.set_weighting_scheme(Xapian::CoordWeight());
        q = e->ranked[si];
        enq.set_sort_by_relevance_then_value(SLOT_ID, true);
        if (cursor) decider = new RankBefore(shape, (int)key, id);
        break;
    }
    enq.set_query(q);
    Xapian::MSet m = enq.get_mset(0, (Xapian::doccount)limit + 1 + !skip.empty(), 0, nullptr, decider);
    for (Xapian::MSetIterator it = m.begin(); it != m.end(); ++it) {
        Xapian::Document doc = it.get_document();
        std::string rid = doc.get_value(SLOT_ID);
        if (!skip.empty() && rid == skip) continue;
        if (out->n == limit) {
            out->has_next = 1;
            break;
        }
        if (rid.size() >= ID_MAX) die("id too long");
        strcpy(out->ids[out->n++], rid.c_str());
        long long k = sort == SORT_NEWEST ? (long long)*it
                      : sort == SORT_RELEVANCE ? (long long)it.get_weight()
                                               : 0;
        if (sort == SORT_PRICE_ASC || sort == SORT_PRICE_DESC) {
            std::string pk = doc.get_value(SLOT_PRICE);
            uint64_t v = 0;
            for (size_t i = 0; i < 8; i++) v = v << 8 | (unsigned char)pk[i];
            k = (long long)v;
        }
        snprintf(out->next, sizeof out->next, "%lld %s", k, rid.c_str());
    }
    delete decider;
    return 0;
}

static int page(void *ctx, const shape_t *shape, int sort, int limit, const char *cursor, page_t *out) {
    try {
        return page_(static_cast<engine_t *>(ctx), shape, sort, limit, cursor, out);
    } catch (const Xapian::Error &err) {
        fprintf(stderr, "xapian: %s\n", err.get_description().c_str());
        return -1;
    }
}

static int run(const std::string &path, const char *plan_path, const run_opts_t *o) {
    static plan_t plan;
    plan_read(plan_path, &plan);
    engine_t e;
    e.db = Xapian::Database(path);
    e.plan = &plan;
    for (int i = 0; i < plan.n; i++) {
        const shape_t *s = &plan.shapes[i];
        Xapian::Query q = s->tree ? to_query(s->tree) : Xapian::Query::MatchNothing;
        std::vector<Xapian::Query> titles;
        for (int w = 0; w < s->nwords; w++) titles.push_back(Xapian::Query(std::string("XT") + s->words[w]));
        Xapian::Query zero(Xapian::Query::OP_SCALE_WEIGHT, q, 0.0);
        e.match.push_back(q);
        e.ranked.push_back(titles.empty() ? zero
                                          : Xapian::Query(Xapian::Query::OP_AND_MAYBE, zero,
                                                          Xapian::Query(Xapian::Query::OP_OR, titles.begin(), titles.end())));
        fprintf(stderr, "xapian: %-40s %s\n", s->name, q.get_description().c_str());
    }
    return run_all("xapian", &plan, page, &e, o) ? 3 : 0;
}

int main(int argc, char **argv) {
    try {
        if (argc >= 3 && strcmp(argv[1], "load") == 0) return load(argv[2]);
        if (argc >= 4 && strcmp(argv[1], "run") == 0) {
            run_opts_t o;
            run_opts_parse(&o, argc, argv, 4);
            return run(argv[2], argv[3], &o);
        }
    } catch (const Xapian::Error &err) {
        die("xapian: %s", err.get_description().c_str());
    }
    die("usage: peers_xapian load DIR | run DIR PLAN [--requests N] [--budget S] [--only TEXT]");
}
