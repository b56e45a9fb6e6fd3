// simdbloom-compare: the documents' comparison (issue 6, docs/COMPARISON.md). For one URL
// workload, every way of answering "seen this URL before?" that the documents discuss, side by
// side in one run: memory per URL, time per URL to build and to query, and the false-positive
// rate each achieves.
//
//   simdbloom-compare [--url-file PATH] [--generated N] [--fpp P] [--reps R]
//
// The workload is the real URL sample (default: data/urls_sample.txt.xz) or N generated URLs;
// its first half is inserted, the second half (less any URL also in the first) is the absent set.
// Queries alternate present and absent URLs. Strings are hashed inside every timed loop: each
// structure is handed URLs, as a crawler would hand them. Times are the best of R passes, one
// thread. Filters are planned for the inserted count at rate P (default 0.01): the blocked
// layouts and the counting filter by their own sizing, the classic filter by the classic formula
// with its best k; the bitmap gets the block512-k8 filter's memory, and the multi-dimensional
// filter (S = 4, k = 4, the paper's experiments) the classic filter's bits. Memory is the
// structure's own bytes: filter sizes exactly; for the hash sets, the heap growth that glibc's
// mallinfo2() reports while they are built (table, slots and the strings they own).
#include <absl/container/flat_hash_set.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bench.h"
#include "mdbf.h"
#include "workloads.h"

namespace
{

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

size_t heap_in_use()
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

struct workload {
    bench_strings *s = nullptr;
    std::vector<const void *> in_keys, probe_keys;
    std::vector<size_t> in_lens, probe_lens;
    std::vector<uint8_t> probe_absent; // 1 where the probe is a truly absent URL
    size_t absent = 0;
};

// One structure under test: build() inserts every URL of the first half into an empty
// structure; query() answers every probe into `out` (1 = present); bytes() its memory after the
// last build.
struct candidate {
    std::string name;
    std::function<void()> build;
    std::function<void(uint8_t *out)> query;
    std::function<double()> bytes;
};

struct result {
    double build_ns = 1e30, query_ns = 1e30, bytes_per_url = 0, fpp = 0;
};

result measure(const candidate &c, const workload &w, int reps)
{
    result r;
    std::vector<uint8_t> out(w.probe_keys.size());
    for (int rep = 0; rep < reps; rep++) {
        double t0 = now();
        c.build();
        double t1 = now();
        c.query(out.data());
        double t2 = now();
        r.build_ns = std::fmin(r.build_ns, (t1 - t0) * 1e9 / (double)w.in_keys.size());
        r.query_ns = std::fmin(r.query_ns, (t2 - t1) * 1e9 / (double)out.size());
    }
    size_t positives = 0, misses = 0;
    for (size_t i = 0; i < out.size(); i++) {
        if (w.probe_absent[i])
            positives += out[i];
        else
            misses += !out[i];
    }
    if (misses) {
        std::fprintf(stderr, "simdbloom-compare: %s missed %zu present URLs\n", c.name.c_str(),
                     misses);
        std::exit(1);
    }
    r.bytes_per_url = c.bytes() / (double)w.in_keys.size();
    r.fpp = w.absent ? (double)positives / (double)w.absent : 0.0;
    return r;
}

uint64_t xxh3(const void *key, size_t len)
{
    return XXH3_64bits(key, len);
}

// ---- the candidates ----

candidate exact_set(const workload &w)
{
    auto set = std::make_shared<absl::flat_hash_set<std::string>>();
    auto heap = std::make_shared<double>(0);
    return {"exact hash set of URLs (absl::flat_hash_set<std::string>)",
            [&w, set, heap] {
                *set = absl::flat_hash_set<std::string>();
                size_t before = heap_in_use();
                for (size_t i = 0; i < w.in_keys.size(); i++)
                    set->emplace((const char *)w.in_keys[i], w.in_lens[i]);
                *heap = (double)(heap_in_use() - before);
            },
            [&w, set](uint8_t *out) {
                for (size_t i = 0; i < w.probe_keys.size(); i++)
                    out[i] = set->contains(
                        absl::string_view((const char *)w.probe_keys[i], w.probe_lens[i]));
            },
            [heap] { return *heap; }};
}

candidate digest_set(const workload &w)
{
    auto set = std::make_shared<absl::flat_hash_set<uint64_t>>();
    auto heap = std::make_shared<double>(0);
    return {"hash set of 64-bit digests (XXH3-64, absl::flat_hash_set<uint64_t>)",
            [&w, set, heap] {
                *set = absl::flat_hash_set<uint64_t>();
                size_t before = heap_in_use();
                for (size_t i = 0; i < w.in_keys.size(); i++)
                    set->insert(xxh3(w.in_keys[i], w.in_lens[i]));
                *heap = (double)(heap_in_use() - before);
            },
            [&w, set](uint8_t *out) {
                for (size_t i = 0; i < w.probe_keys.size(); i++)
                    out[i] = set->contains(xxh3(w.probe_keys[i], w.probe_lens[i]));
            },
            [heap] { return *heap; }};
}

// The classic filter with k hash functions, or the single-hash bitmap with k = 1.
candidate classic(const workload &w, const std::string &name, uint64_t bytes, uint32_t k)
{
    auto f = std::make_shared<classic_filter>();
    if (!classic_init(f.get(), bytes, k)) {
        std::fprintf(stderr, "simdbloom-compare: out of memory\n");
        std::exit(1);
    }
    return {name,
            [&w, f] {
                std::memset(f->words, 0, (size_t)(f->nbits + 63) / 64 * 8);
                for (size_t i = 0; i < w.in_keys.size(); i++)
                    classic_add(f.get(), xxh3(w.in_keys[i], w.in_lens[i]));
            },
            [&w, f](uint8_t *out) {
                for (size_t i = 0; i < w.probe_keys.size(); i++)
                    out[i] =
                        (uint8_t)classic_contains(f.get(), xxh3(w.probe_keys[i], w.probe_lens[i]));
            },
            [f] { return (double)((f->nbits + 63) / 64 * 8); }};
}

candidate blocked(const workload &w, sbloom_layout layout, double p)
{
    sbloom_t *raw = nullptr;
    if (sbloom_create_for_layout(&raw, w.in_keys.size(), p, layout) != SBLOOM_OK) {
        std::fprintf(stderr, "simdbloom-compare: cannot create the filter\n");
        std::exit(1);
    }
    std::shared_ptr<sbloom_t> f(raw, sbloom_free);
    std::string name = std::string("simdbloom ") + sbloom_layout_name(layout) + " (" +
                       sbloom_filter_isa(raw) + ")";
    return {name,
            [&w, f] {
                sbloom_clear(f.get());
                sbloom_add_keys(f.get(), w.in_keys.data(), w.in_lens.data(), w.in_keys.size());
            },
            [&w, f](uint8_t *out) {
                sbloom_contains_keys(f.get(), w.probe_keys.data(), w.probe_lens.data(),
                                     w.probe_keys.size(), out);
            },
            [f] { return (double)sbloom_bytes(f.get()); }};
}

candidate counting(const workload &w, double p)
{
    sbloom_t *raw = nullptr;
    if (sbloom_create_for_layout(&raw, w.in_keys.size(), p, SBLOOM_LAYOUT_COUNTING512) !=
        SBLOOM_OK) {
        std::fprintf(stderr, "simdbloom-compare: cannot create the counting filter\n");
        std::exit(1);
    }
    std::shared_ptr<sbloom_t> f(raw, sbloom_free);
    return {std::string("simdbloom counting512, 4-bit counters (") + sbloom_filter_isa(raw) + ")",
            [&w, f] {
                sbloom_clear(f.get());
                sbloom_add_if_new_keys(f.get(), w.in_keys.data(), w.in_lens.data(),
                                       w.in_keys.size(), nullptr);
            },
            [&w, f](uint8_t *out) {
                sbloom_contains_keys(f.get(), w.probe_keys.data(), w.probe_lens.data(),
                                     w.probe_keys.size(), out);
            },
            [f] { return (double)sbloom_bytes(f.get()); }};
}

candidate multidim(const workload &w, uint64_t total_bits, int every_group)
{
    mdbf_params p{};
    p.groups = 4;
    p.k = 4;
    p.bits = (uint32_t)((double)total_bits / (p.groups * (1.0 + 1.0 / p.k)));
    p.every_group = every_group;
    auto f = std::make_shared<mdbf *>(nullptr);
    std::string name = std::string("multi-dimensional, S = 4, k = 4, ") +
                       (every_group ? "every group must agree" : "the paper's any group");
    return {name,
            [&w, f, p] {
                mdbf_free(*f);
                *f = mdbf_new(&p);
                if (!*f) {
                    std::fprintf(stderr, "simdbloom-compare: cannot create the MD filter\n");
                    std::exit(1);
                }
                for (size_t i = 0; i < w.in_keys.size(); i++)
                    mdbf_add(*f, w.in_keys[i], w.in_lens[i]);
            },
            [&w, f](uint8_t *out) {
                for (size_t i = 0; i < w.probe_keys.size(); i++)
                    out[i] = (uint8_t)mdbf_contains(*f, w.probe_keys[i], w.probe_lens[i]);
            },
            [f] { return (double)mdbf_total_bits(*f) / 8.0; }};
}

// First half in; probes alternate a first-half URL and a second-half URL. A second-half URL that
// also occurs in the first half is present, not absent (the exact set decides).
bool load(workload &w, bench_spec &spec)
{
    char err[256] = "";
    w.s = bench_strings_load(&spec, err, sizeof err);
    if (!w.s) {
        std::fprintf(stderr, "simdbloom-compare: %s\n", err);
        return false;
    }
    bench_strings *s = w.s;
    absl::flat_hash_set<absl::string_view> first;
    for (size_t i = 0; i < s->inserted; i++) {
        w.in_keys.push_back(s->keys[i]);
        w.in_lens.push_back(s->lens[i]);
        first.insert(absl::string_view((const char *)s->keys[i], s->lens[i]));
    }
    size_t absent_count = s->count - s->inserted;
    for (size_t i = 0; i < 2 * std::max(s->inserted, absent_count); i++) {
        size_t at = (i % 2) ? s->inserted + (i / 2) % absent_count : (i / 2) % s->inserted;
        absl::string_view key((const char *)s->keys[at], s->lens[at]);
        w.probe_keys.push_back(s->keys[at]);
        w.probe_lens.push_back(s->lens[at]);
        uint8_t absent = (i % 2) && !first.contains(key);
        w.probe_absent.push_back(absent);
        w.absent += absent;
    }
    return true;
}

std::string with_commas(uint64_t v)
{
    std::string digits = std::to_string(v), out;
    for (size_t i = 0; i < digits.size(); i++) {
        if (i && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

} // namespace

int main(int argc, char **argv)
{
    bench_spec spec{};
    spec.workload = WL_URLS;
    spec.url_file = SIMDBLOOM_SOURCE_DIR "/data/urls_sample.txt.xz";
    double p = 0.01;
    int reps = 3;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--url-file") && i + 1 < argc) {
            spec.url_file = argv[++i];
            spec.workload = WL_URLS;
        } else if (!std::strcmp(argv[i], "--generated") && i + 1 < argc) {
            spec.generated = std::strtoull(argv[++i], nullptr, 10);
            spec.workload = WL_GENERATED;
        } else if (!std::strcmp(argv[i], "--fpp") && i + 1 < argc) {
            p = std::atof(argv[++i]);
        } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: simdbloom-compare [--url-file PATH] [--generated N] "
                                 "[--fpp P] [--reps R]\n");
            return 2;
        }
    }
    if (!(p > 0 && p < 1) || reps < 1 || (spec.workload == WL_GENERATED && spec.generated < 2)) {
        std::fprintf(stderr,
                     "simdbloom-compare: --fpp wants (0,1), --reps >= 1, --generated >= 2\n");
        return 2;
    }
    workload w;
    if (!load(w, spec))
        return 1;
    uint64_t n = w.in_keys.size();

    sbloom_plan k8 = sbloom_plan_init();
    sbloom_plan_for_layout(n, p, SBLOOM_LAYOUT_BLOCK512_K8, &k8);
    double classic_bits = sbloom_classic_bits_per_key(p) * (double)n;
    uint32_t classic_k = sbloom_classic_best_k(sbloom_classic_bits_per_key(p));

    std::vector<candidate> all;
    all.push_back(exact_set(w));
    all.push_back(digest_set(w));
    all.push_back(classic(w, "single-hash bitmap, block512-k8's memory", k8.bytes, 1));
    all.push_back(classic(w, "classic Bloom, k = " + std::to_string(classic_k),
                          (uint64_t)std::ceil(classic_bits / 8), classic_k));
    for (int l = 1; l <= SBLOOM_LAYOUT_COUNTING512; l++) /* the fixed-size layouts */
        all.push_back(blocked(w, (sbloom_layout)l, p));
    all.push_back(counting(w, p));
    all.push_back(multidim(w, (uint64_t)classic_bits, 0));
    all.push_back(multidim(w, (uint64_t)classic_bits, 1));

    std::printf("%s: %s URLs inserted, %s absent URLs probed, target rate %g; best of %d.\n\n",
                spec.workload == WL_URLS ? spec.url_file : "generated URLs", with_commas(n).c_str(),
                with_commas(w.absent).c_str(), p, reps);
    std::printf("| structure | bytes per URL | build ns per URL | query ns per URL | "
                "false-positive rate |\n|---|---|---|---|---|\n");
    for (const candidate &c : all) {
        result r = measure(c, w, reps);
        std::printf("| %s | %.2f | %.1f | %.1f | %.3g |\n", c.name.c_str(), r.bytes_per_url,
                    r.build_ns, r.query_ns, r.fpp);
        std::fflush(stdout);
    }
    bench_strings_free(w.s);
    return 0;
}
