/*
 * A deterministic stream of realistic URLs for runs larger than the bundled sample (used by
 * 'simdbloom gen-urls' and by the benchmarks). URL i is a pure function of (seed, i), so a repeat
 * of URL j is made by generating j again, and the same arguments give the same bytes on every
 * machine.
 *
 * Shape, after the bundled real sample: hosts drawn with a heavy skew from a large pool (a crawl
 * finds many URLs per site), https mostly, paths of words, slugs, dates and numeric ids, query
 * strings on about a third, a long tracking or token parameter on a few (the long tail: median
 * about 60 bytes, p99 about 250). Each URL carries a number unique to its index in one of several
 * shapes that cannot be confused with each other, so distinct indexes give distinct URLs.
 */
#include <stdio.h>
#include <string.h>

#include "urlgen.h"

uint64_t url_splitmix(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint32_t below(uint64_t *state, uint32_t bound)
{
    return (uint32_t)(((url_splitmix(state) >> 32) * bound) >> 32);
}

static const char *const words[] = {
    "about",    "account",  "api",       "archive", "article",   "articles", "blog",
    "book",     "category", "changelog", "code",    "community", "contact",  "content",
    "data",     "debian",   "detail",    "dev",     "docs",      "download", "downloads",
    "en",       "event",    "events",    "faq",     "feed",      "files",    "forum",
    "guide",    "help",     "home",      "images",  "index",     "info",     "issues",
    "items",    "latest",   "learn",     "library", "list",      "main",     "manual",
    "media",    "news",     "node",      "npm",     "package",   "packages", "page",
    "pages",    "pool",     "post",      "posts",   "product",   "products", "project",
    "projects", "pub",      "reference", "release", "releases",  "repo",     "research",
    "search",   "security", "shop",      "source",  "static",    "stories",  "support",
    "tag",      "tags",     "team",      "tools",   "topic",     "topics",   "tutorial",
    "user",     "users",    "video",     "view",    "wiki",      "world",    "www"};
#define NWORDS (sizeof words / sizeof words[0])

static const char *const tlds[] = {"com",   "com", "com", "com", "org", "org",  "net", "de", "io",
                                   "co.uk", "cn",  "jp",  "fr",  "ru",  "info", "edu", "nl", "dev"};
static const char *const subdomains[] = {"www",  "www",  "www",    "",     "",  "",
                                         "docs", "blog", "api",    "cdn",  "m", "news",
                                         "shop", "wiki", "static", "lists"};
static const char *const extensions[] = {".html", ".html", ".htm", ".php",  ".pdf",    ".jpg",
                                         ".png",  ".txt",  ".xml", ".json", ".tar.gz", ".deb"};
static const char *const params[] = {"q",       "page",  "lang", "sort",       "ref",
                                     "id",      "v",     "tab",  "utm_source", "utm_medium",
                                     "session", "token", "s",    "p"};

static void put(url_buffer *u, const char *s)
{
    size_t n = strlen(s);
    if (u->len + n < sizeof u->text - 1) {
        memcpy(u->text + u->len, s, n);
        u->len += n;
    }
}

static void put_number(url_buffer *u, uint64_t value)
{
    char digits[24];
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)value);
    put(u, digits);
}

static void put_word(url_buffer *u, uint64_t *rng)
{
    put(u, words[below(rng, NWORDS)]);
}

static void put_token(url_buffer *u, uint64_t *rng, uint32_t len)
{
    static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    char piece[2] = {0, 0};
    for (uint32_t i = 0; i < len; i++) {
        piece[0] = alphabet[below(rng, sizeof alphabet - 1)];
        put(u, piece);
    }
}

/* A host from a pool of about a million, drawn with a heavy skew towards the first ones. */
static void put_host(url_buffer *u, uint64_t *rng, uint64_t seed)
{
    uint32_t rank = below(rng, 1000000);
    rank = (uint32_t)((uint64_t)rank * rank / 1000000 * rank / 1000000); /* skew: cube */
    uint64_t host_rng = seed * UINT64_C(0x9e3779b97f4a7c15) + rank;
    const char *sub = subdomains[below(&host_rng, sizeof subdomains / sizeof subdomains[0])];
    if (*sub) {
        put(u, sub);
        put(u, ".");
    }
    put_word(u, &host_rng);
    switch (below(&host_rng, 3)) {
    case 0:
        put(u, "-");
        put_word(u, &host_rng);
        break;
    case 1: put_number(u, rank % 1000); break;
    default: break;
    }
    put(u, ".");
    put(u, tlds[below(&host_rng, sizeof tlds / sizeof tlds[0])]);
}

/* The index, spread over 10 digits by an odd multiplier (a bijection on 40 bits). */
static uint64_t unique_number(uint64_t index)
{
    return (index * UINT64_C(0x5deece66d)) & ((UINT64_C(1) << 40) - 1);
}

void url_make(uint64_t seed, uint64_t index, url_buffer *u)
{
    uint64_t rng = seed ^ (index * UINT64_C(0xd1b54a32d192ed03));
    url_splitmix(&rng);
    u->len = 0;
    put(u, below(&rng, 100) < 85 ? "https://" : "http://");
    put_host(u, &rng, seed);

    uint32_t segments = below(&rng, 4);
    for (uint32_t i = 0; i < segments; i++) {
        put(u, "/");
        if (below(&rng, 8) == 0) {
            put_number(u, 2000 + below(&rng, 27));
            put(u, "/");
            put_number(u, 1 + below(&rng, 12));
        } else {
            put_word(u, &rng);
        }
    }
    /* The unique part, in one of four shapes: /123, /slug-words-123, /slug-123.ext, ?id=123. */
    uint64_t unique = unique_number(index);
    uint32_t shape = below(&rng, 4);
    int has_query = 0;
    if (shape == 0) {
        put(u, "/");
        put_number(u, unique);
    } else if (shape == 3) {
        put(u, "/");
        put_word(u, &rng);
        put(u, "?id=");
        put_number(u, unique);
        has_query = 1;
    } else {
        put(u, "/");
        for (uint32_t w = 0, n = 1 + below(&rng, 4); w < n; w++) {
            put_word(u, &rng);
            put(u, "-");
        }
        put_number(u, unique);
        if (shape == 2)
            put(u, extensions[below(&rng, sizeof extensions / sizeof extensions[0])]);
    }
    if (below(&rng, 100) < 30) {
        uint32_t count = 1 + below(&rng, 3);
        for (uint32_t i = 0; i < count; i++) {
            put(u, has_query ? "&" : "?");
            has_query = 1;
            put(u, params[below(&rng, sizeof params / sizeof params[0])]);
            put(u, "=");
            if (below(&rng, 2))
                put_word(u, &rng);
            else
                put_number(u, below(&rng, 100000));
        }
    }
    if (below(&rng, 100) < 4) { /* the long tail: tracking ids, signed tokens */
        put(u, has_query ? "&" : "?");
        put(u, "token=");
        put_token(u, &rng, 40 + below(&rng, 300));
    }
    if (below(&rng, 100) < 3) {
        put(u, "#");
        put_word(u, &rng);
    }
    u->text[u->len++] = '\n';
}
