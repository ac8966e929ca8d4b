/* seed: the deterministic generator of sellers, products and orders. Word lists make
 * titles and descriptions that read like a real marketplace, so full-text search for
 * "grotesk", "minimal" or "retro" finds something. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "seed.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct {
    const char *slug;
    const char *nouns[6];
    const char *features[6];
    const char *use;
} category;

static const category categories[] = {
    {"fonts",
     {"Grotesk", "Sans", "Serif", "Slab", "Script", "Mono"},
     {"six weights with italics", "variable axes", "extended Latin and Cyrillic",
      "ligatures and alternates", "web font files", "tabular figures"},
     "for branding, editorial layouts and packaging"},
    {"templates",
     {"Resume Template", "Pitch Deck", "Invoice Template", "Newsletter Kit", "Landing Page",
      "Portfolio Template"},
     {"layered source files", "auto layout", "print-ready bleed", "light and dark versions",
      "editable text styles", "a quick start guide"},
     "for freelancers, startups and small teams"},
    {"icons",
     {"Icon Set", "Line Icons", "Glyph Pack", "Emoji Pack", "UI Icons", "Pictograms"},
     {"SVG and PNG exports", "a 24 px grid", "two stroke weights", "filled and outline styles",
      "an icon font", "Figma components"},
     "for apps, dashboards and websites"},
    {"plugins",
     {"Figma Plugin", "WordPress Plugin", "Sketch Plugin", "Lightroom Plugin", "Audio Plugin",
      "Blender Add-on"},
     {"one-click install", "lifetime updates", "batch processing", "keyboard shortcuts",
      "a settings panel", "detailed documentation"},
     "for faster everyday work"},
    {"audio",
     {"Sound Effects", "Loop Pack", "Drum Kit", "Ambient Textures", "Foley Library", "Music Bed"},
     {"24-bit WAV files", "tempo-labelled loops", "royalty-free stems", "layered one-shots",
      "field recordings", "seamless loops"},
     "for games, podcasts and video"},
    {"photos",
     {"Photo Pack", "Stock Photos", "Textures", "Backgrounds", "Overlays", "Skies"},
     {"high resolution JPEGs", "RAW originals", "model releases", "consistent colour grading",
      "portrait and landscape crops", "seamless tiles"},
     "for websites, social media and print"},
    {"mockups",
     {"Device Mockup", "Packaging Mockup", "Poster Mockup", "T-Shirt Mockup", "Book Mockup",
      "Mug Mockup"},
     {"smart objects", "realistic shadows", "changeable backgrounds", "4K renders",
      "separated layers", "several camera angles"},
     "for presenting designs to clients"},
    {"themes",
     {"WordPress Theme", "Shopify Theme", "Ghost Theme", "Hugo Theme", "Admin Dashboard",
      "Blog Theme"},
     {"a responsive layout", "dark mode", "fast page loads", "accessible markup",
      "built-in SEO settings", "demo content"},
     "for shops, blogs and portfolios"},
    {"illustrations",
     {"Illustration Pack", "Character Set", "Doodles", "Isometric Scenes", "Spot Illustrations",
      "Patterns"},
     {"vector source files", "editable colours", "transparent PNGs", "mix and match parts",
      "a consistent line style", "animated versions"},
     "for onboarding screens, blogs and landing pages"},
    {"3d-models",
     {"Low Poly Pack", "Furniture Models", "Character Rig", "Vehicle Kit", "Props Bundle",
      "Architecture Kit"},
     {"PBR textures", "FBX, OBJ and glTF formats", "game-ready topology", "rigged and animated",
      "4K texture maps", "Blender source files"},
     "for games, renders and AR scenes"},
    {"brushes",
     {"Procreate Brushes", "Photoshop Brushes", "Ink Brushes", "Watercolor Brushes",
      "Charcoal Brushes", "Texture Brushes"},
     {"pressure sensitivity", "natural grain", "stamp and stroke brushes", "a colour palette",
      "a practice sheet", "tilt support"},
     "for illustrators and lettering artists"},
    {"presets",
     {"Lightroom Presets", "LUT Pack", "Color Grades", "Film Presets", "Mobile Presets",
      "Video LUTs"},
     {"desktop and mobile versions", "before and after samples", "adjustable strength",
      "one-click looks", "skin-tone friendly grades", "installation guide"},
     "for photographers and video creators"},
};

static const char *const adjectives[] = {
    "Minimal", "Retro",     "Vintage",   "Modern",     "Bold",   "Elegant", "Playful",    "Clean",
    "Organic", "Geometric", "Brutalist", "Neon",       "Pastel", "Grunge",  "Handmade",   "Nordic",
    "Urban",   "Cosmic",    "Tropical",  "Monochrome", "Dreamy", "Rustic",  "Futuristic", "Classic",
    "Cozy",    "Sleek",     "Vivid",     "Soft",       "Dark",   "Golden",
};

static const char *const themes[] = {
    "Aurora", "Harbor", "Summit", "Meadow", "Atlas",   "Nova",     "Ember",   "Drift",
    "Pixel",  "Canyon", "Orbit",  "Willow", "Echo",    "Solstice", "Granite", "Lumen",
    "Mosaic", "Velvet", "Tide",   "Cedar",  "Horizon", "Quartz",   "Saffron", "Juniper",
    "Nimbus", "Marble", "Copper", "Fjord",  "Kite",    "Lotus",
};

static const char *const styles[] = {
    "inspired by Swiss posters",
    "minimal",
    "retro with soft grain",
    "hand-crafted",
    "sharp and geometric",
    "high contrast",
    "playful",
    "tested in client work",
};

static const char *const studio_first[] = {
    "pixel", "north", "paper",  "bright", "quiet",  "bold",   "little", "wild",
    "blue",  "iron",  "golden", "silver", "velvet", "atomic", "lunar",  "cedar",
    "maple", "coral", "amber",  "stone",  "cloud",  "river",  "ember",  "nova",
};

static const char *const studio_second[] = {
    "forge",      "works",  "lab",   "studio", "foundry", "supply", "type",    "press",
    "collective", "design", "goods", "craft",  "house",   "shop",   "factory", "garden",
};

const char *const seed_tier_names[SEED_MAX_TIERS] = {"Personal", "Commercial", "Extended"};
const char *const seed_tier_descriptions[SEED_MAX_TIERS] = {
    "For personal projects by one person.",
    "For commercial work by a team of up to five.",
    "For products for sale, broadcast and unlimited seats.",
};
const char *const seed_tier_licences[SEED_MAX_TIERS] = {
    "{\"seats\": 1, \"commercial\": false}",
    "{\"seats\": 5, \"commercial\": true}",
    "{\"seats\": null, \"commercial\": true, \"resale\": true}",
};

/* --- randomness ------------------------------------------------------------------------ */

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

seed_rng seed_rng_for(uint64_t seed, uint64_t kind, uint64_t number)
{
    uint64_t s = seed;
    uint64_t a = splitmix(&s) ^ (kind * 0xD1B54A32D192ED03ULL);
    uint64_t b = splitmix(&a) ^ number;
    seed_rng rng = {splitmix(&b)};
    return rng;
}

uint64_t seed_next(seed_rng *rng)
{
    return splitmix(&rng->state);
}

uint32_t seed_below(seed_rng *rng, uint32_t n)
{
    /* Multiply-shift: no modulo bias worth mentioning for these small n. */
    return (uint32_t)(((seed_next(rng) >> 32) * (uint64_t)n) >> 32);
}

#define PICK(r, list) (list)[seed_below((r), (uint32_t)COUNT(list))]

/* --- rows ----------------------------------------------------------------------------- */

void seed_time_text(long t, char *out, size_t outsz)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, outsz, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* From the number alone: the same seller in every mode and for every seed. */
static void seller_words(long number, const char **first, const char **second)
{
    size_t nf = COUNT(studio_first), ns = COUNT(studio_second);
    *first = studio_first[(size_t)(number - 1) % nf];
    *second = studio_second[(size_t)(number - 1) / nf % ns];
}

static void seller_handle(long number, char *out, size_t outsz)
{
    const char *first, *second;
    seller_words(number, &first, &second);
    snprintf(out, outsz, "%s%s-%ld", first, second, number);
}

void seed_make_seller(long number, seed_seller *s)
{
    const char *first, *second;
    seller_words(number, &first, &second);
    seller_handle(number, s->handle, sizeof s->handle);
    snprintf(s->account, sizeof s->account, "acct_seller_%ld", number);
    snprintf(s->name, sizeof s->name, "%c%s %c%s", toupper((unsigned char)first[0]), first + 1,
             toupper((unsigned char)second[0]), second + 1);
    const category *a = &categories[(size_t)number % COUNT(categories)];
    const category *b = &categories[(size_t)(number / 3 + 5) % COUNT(categories)];
    snprintf(s->bio, sizeof s->bio, "Independent studio making %s and %s.", a->slug, b->slug);
    snprintf(s->website, sizeof s->website, "https://%s.example", s->handle);
    s->created = SEED_ANCHOR - SEED_SPAN - 86400L * (number % 365);
}

static void make_prices(seed_rng *rng, seed_product *p)
{
    static const int64_t cents[] = {500, 900, 1200, 1500, 1900, 2400, 2900, 3900, 4900, 7900};
    static const int64_t yen[] = {500, 800, 1200, 1800, 2400, 3600, 4800, 6000};
    static const int factor[SEED_MAX_TIERS] = {1, 3, 10};
    int64_t base = p->exponent == 0 ? PICK(rng, yen) : PICK(rng, cents);
    bool ninety_nine = p->exponent != 0 && seed_below(rng, 2) == 0;
    for (int t = 0; t < p->ntiers && t < SEED_MAX_TIERS; t++)
        p->price[t] = base * factor[t] - (ninety_nine ? 1 : 0);
}

static void slugify(const char *title, char *out, size_t outsz)
{
    size_t n = 0;
    for (const char *s = title; *s != '\0' && n + 1 < outsz; s++)
        out[n++] = isalnum((unsigned char)*s) ? (char)tolower((unsigned char)*s) : '-';
    out[n] = '\0';
}

/* Short on purpose: the stored tsvector of every product is computed at insert time and
 * is the largest single cost of a million-row seed, so every word counts. */
static void make_text(seed_rng *rng, seed_product *p, const category *cat)
{
    const char *adjective = PICK(rng, adjectives);
    const char *theme = PICK(rng, themes);
    const char *noun = PICK(rng, cat->nouns);
    snprintf(p->title, sizeof p->title, "%s %s %s", adjective, theme, noun);
    const char *feature = PICK(rng, cat->features);
    char mood[24];
    slugify(PICK(rng, adjectives), mood, sizeof mood);
    mood[0] = (char)toupper((unsigned char)mood[0]);
    snprintf(p->description, sizeof p->description, "%s and %s, %s. Includes %s.", mood,
             PICK(rng, styles), cat->use, feature);
}

/* Products are numbered in the order they were listed: product n of N falls in the n-th
 * slice of the two years. Besides being plausible, this makes the created_at indexes grow
 * at their right edge during the seed instead of being written all over. */
static long creation_time(seed_rng *rng, long number, long nproducts)
{
    long slice = SEED_SPAN / nproducts > 1 ? SEED_SPAN / nproducts : 1;
    long start = SEED_ANCHOR - SEED_SPAN + (number - 1) * SEED_SPAN / nproducts;
    long t = start + (long)(seed_next(rng) % (uint64_t)slice);
    return t < SEED_ANCHOR ? t : SEED_ANCHOR - 1;
}

void seed_make_product(uint64_t seed, char mode_letter, long number, long nproducts, long nsellers,
                       seed_product *p)
{
    seed_rng rng = seed_rng_for(seed, (uint64_t)mode_letter, (uint64_t)number);
    snprintf(p->id, sizeof p->id, "prod_%c%07ld", mode_letter, number);
    p->seller = 1 + (long)seed_below(&rng, (uint32_t)nsellers);
    /* The handle alone: the rest of the seller would be formatted for nothing, three
     * times per product in a seed. */
    seller_handle(p->seller, p->seller_handle, sizeof p->seller_handle);
    const category *cat = &PICK(&rng, categories);
    p->category = cat->slug;
    make_text(&rng, p, cat);

    uint32_t money = seed_below(&rng, 100);
    p->currency = money < 80 ? "USD" : money < 95 ? "EUR" : "JPY";
    p->exponent = money < 95 ? 2 : 0;
    uint32_t status = seed_below(&rng, 100);
    p->status = status < 90 ? "published" : status < 96 ? "draft" : "archived";
    p->created = creation_time(&rng, number, nproducts);
    long edited = (long)seed_below(&rng, 60 * 86400);
    p->updated = p->created + edited < SEED_ANCHOR ? p->created + edited : SEED_ANCHOR;
    p->ntiers = 1 + (int)seed_below(&rng, SEED_MAX_TIERS);
    make_prices(&rng, p);

    char slug[sizeof p->title];
    slugify(p->title, slug, sizeof slug);
    snprintf(p->filename, sizeof p->filename, "%s.zip", slug);
    p->size_bytes = 2048 + (long)seed_below(&rng, 6144);
}

static bool purchasable(const seed_product *p, const char *currency)
{
    return strcmp(p->status, "published") == 0 &&
           (currency == NULL || strcmp(p->currency, currency) == 0);
}

/* A random published product (of the currency, when given); 0 if draws keep failing. */
static long draw_product(seed_rng *rng, uint64_t seed, char mode_letter, long nproducts,
                         long nsellers, const char *currency, seed_product *p)
{
    for (int attempt = 0; attempt < 16; attempt++) {
        long number = 1 + (long)(seed_next(rng) % (uint64_t)nproducts);
        seed_make_product(seed, mode_letter, number, nproducts, nsellers, p);
        if (purchasable(p, currency))
            return number;
    }
    return 0;
}

void seed_make_order(uint64_t seed, char mode_letter, long number, long nproducts, long nsellers,
                     long nbuyers, seed_order *o)
{
    /* Stream kind 256 + mode letter keeps order streams apart from product streams. */
    seed_rng rng = seed_rng_for(seed, 256u + (uint64_t)mode_letter, (uint64_t)number);
    snprintf(o->id, sizeof o->id, "ord_%c%07ld", mode_letter, number);
    o->buyer = 1 + (long)seed_below(&rng, (uint32_t)nbuyers);
    o->refunded = seed_below(&rng, 100) < 8;
    o->nitems = 0;
    o->currency = NULL;
    long newest = SEED_ANCHOR - SEED_SPAN;
    int wanted = 1 + (int)seed_below(&rng, SEED_MAX_ITEMS);
    seed_product p;
    for (int i = 0; i < wanted; i++) {
        long product = draw_product(&rng, seed, mode_letter, nproducts, nsellers, o->currency, &p);
        if (product == 0 || (i > 0 && product == o->items[0].product))
            continue;
        o->items[o->nitems].product = product;
        o->items[o->nitems].tier = (int)seed_below(&rng, (uint32_t)p.ntiers);
        o->nitems++;
        o->currency = p.currency;
        if (p.created > newest)
            newest = p.created;
    }
    /* Bought after the newest of its products was listed, before the anchor. */
    o->created = newest + (long)(seed_next(&rng) % (uint64_t)(SEED_ANCHOR - newest));
}

void seed_file_content(const seed_product *p, buf *out)
{
    buf_clear(out);
    buf_printf(out, "%s\nby %s\nproduct %s, category %s\n\n%s\n\n", p->title, p->seller_handle,
               p->id, p->category, p->description);
    for (long line = 1; (long)out->len < p->size_bytes; line++)
        buf_printf(out, "Sample content line %ld of %s.\n", line, p->id);
    out->len = (size_t)p->size_bytes; /* exactly the size recorded in files.size_bytes */
    out->data[out->len] = '\0';
}
