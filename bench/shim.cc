// simdbloom-bench: registers the C benchmark bodies (bench/*.c) with Google Benchmark. The only
// C++ in the project's own targets: it also holds the hash-set baselines, which use Abseil.
//
//   simdbloom-bench [--sizes=32K,1M,16M,256M] [--big] [--layouts=block512-k8|all] [--neon]
//                   [--urls=1M] [--url-file=PATH] [--crawl=N] [--tsv=FILE] [Google Benchmark flags]
//
// Every result is reported in ns per key, keys per second, filter bytes per key and measured
// false-positive rate, and at the end as a ratio to its physical limit measured in the same run:
// random cache-line reads of an array of the filter's size (pre-hashed keys), or XXH3-64 alone
// over the same strings (string keys).
#include <benchmark/benchmark.h>

#include <absl/container/flat_hash_set.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <absl/strings/string_view.h>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bench.h"

namespace
{

struct options {
    std::vector<uint64_t> sizes{32ull << 10, 1ull << 20, 16ull << 20, 256ull << 20};
    std::vector<sbloom_layout> layouts{SBLOOM_LAYOUT_BLOCK512_K8};
    bool neon = false;
    bool big = false;
    uint64_t urls = 1000000;
    uint64_t crawl = 0;
    std::string url_file = SIMDBLOOM_SOURCE_DIR "/data/urls_sample.txt.xz";
    std::string tsv;
};

uint64_t parse_size(const char *s)
{
    char *end;
    double v = std::strtod(s, &end);
    switch (*end) {
    case 'K':
    case 'k': v *= 1024; break;
    case 'M':
    case 'm': v *= 1024 * 1024; break;
    case 'G':
    case 'g': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (uint64_t)v;
}

// Counts like 10M are decimal (keys), sizes like 16M binary (bytes).
uint64_t parse_count(const char *s)
{
    char *end;
    double v = std::strtod(s, &end);
    switch (*end) {
    case 'K':
    case 'k': v *= 1e3; break;
    case 'M':
    case 'm': v *= 1e6; break;
    case 'G':
    case 'g': v *= 1e9; break;
    default: break;
    }
    return (uint64_t)v;
}

std::string size_name(uint64_t bytes)
{
    char buf[32];
    if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
        std::snprintf(buf, sizeof buf, "%lluG", (unsigned long long)(bytes >> 30));
    else if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
        std::snprintf(buf, sizeof buf, "%lluM", (unsigned long long)(bytes >> 20));
    else if (bytes >= 1024 && bytes % 1024 == 0)
        std::snprintf(buf, sizeof buf, "%lluK", (unsigned long long)(bytes >> 10));
    else
        std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)bytes);
    return buf;
}

const char *op_name(bench_op op)
{
    switch (op) {
    case OP_ADD: return "add";
    case OP_CONTAINS_HIT: return "contains_hit";
    case OP_CONTAINS_MISS: return "contains_miss";
    case OP_CONTAINS_MIX: return "contains_mix";
    case OP_ADD_IF_NEW: return "add_if_new";
    case OP_SINGLE_ADD: return "single_add";
    case OP_SINGLE_CONTAINS: return "single_contains";
    }
    return "?";
}

const char *workload_name(bench_workload w)
{
    return w == WL_HASHES ? "hashes" : w == WL_URLS ? "urls" : "genurls";
}

// One case alive at a time: Google Benchmark calls a benchmark function several times (growing
// iteration counts), so the case is built on the first call and kept until another starts.
struct live_case {
    std::string name;
    bench_case *c = nullptr;
    ~live_case()
    {
        bench_case_free(c);
    }
};
live_case current;

bench_case *case_for(const std::string &name, const bench_spec &spec, std::string &error)
{
    if (current.name == name && current.c)
        return current.c;
    bench_case_free(current.c);
    current.c = nullptr;
    current.name = name;
    char err[256] = "";
    current.c = bench_case_new(&spec, err, sizeof err);
    if (!current.c)
        error = err;
    return current.c;
}

void run_case(benchmark::State &state, const std::string &name, const bench_spec &spec)
{
    std::string error;
    bench_case *c = case_for(name, spec, error);
    if (!c) {
        state.SkipWithError(error.c_str());
        return;
    }
    bool prepare = spec.op == OP_ADD || spec.op == OP_SINGLE_ADD || spec.op == OP_ADD_IF_NEW;
    for (auto _ : state) {
        if (prepare) {
            state.PauseTiming();
            bench_case_prepare(c);
            state.ResumeTiming();
        }
        benchmark::DoNotOptimize(bench_case_run(c));
    }
    double keys = (double)bench_case_keys_per_pass(c);
    state.counters["keys/s"] =
        benchmark::Counter(keys, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["bytes/key"] = bench_case_bytes_per_key(c);
    double fpp = bench_case_measured_fpp(c);
    if (!std::isnan(fpp))
        state.counters["fpp"] = fpp;
}

// ---- hash-set baselines (Abseil) ----

struct string_set_case {
    bench_strings *strings = nullptr;
    ~string_set_case()
    {
        bench_strings_free(strings);
    }
};

// Heap bytes a std::string of this length owns beyond its object (libstdc++: 15 inline chars).
size_t string_heap_bytes(size_t len)
{
    return len > 15 ? ((len + 1 + 15) & ~size_t(15)) : 0;
}

void run_hash_set(benchmark::State &state, const bench_spec &spec, bool fingerprints)
{
    char err[256] = "";
    std::unique_ptr<string_set_case> sc(new string_set_case);
    sc->strings = bench_strings_load(&spec, err, sizeof err);
    if (!sc->strings) {
        state.SkipWithError(err);
        return;
    }
    bench_strings *s = sc->strings;
    absl::flat_hash_set<std::string> urls;
    absl::flat_hash_set<uint64_t> digests;
    size_t heap = 0;
    for (size_t i = 0; i < s->inserted; i++) {
        absl::string_view key((const char *)s->keys[i], s->lens[i]);
        if (fingerprints) {
            digests.insert(XXH3_64bits(key.data(), key.size()));
        } else {
            urls.emplace(key);
            heap += string_heap_bytes(key.size());
        }
    }
    // Probe half present, half absent, alternating, laid out contiguously in probe order as a
    // stream's keys are (as the filter cases do).
    std::vector<size_t> order(s->count);
    for (size_t i = 0; i < s->count; i++)
        order[i] = (i % 2) ? i / 2 : s->inserted + (i / 2) % (s->count - s->inserted);
    std::string stream;
    std::vector<absl::string_view> probes;
    for (size_t i : order)
        stream.append((const char *)s->keys[i], s->lens[i]);
    for (size_t i = 0, at = 0; i < order.size(); at += s->lens[order[i]], i++)
        probes.emplace_back(stream.data() + at, s->lens[order[i]]);
    for (auto _ : state) {
        size_t found = 0;
        for (absl::string_view key : probes) {
            if (fingerprints)
                found += digests.contains(XXH3_64bits(key.data(), key.size()));
            else
                found += urls.contains(key);
        }
        benchmark::DoNotOptimize(found);
    }
    double bytes = fingerprints
                       ? (double)digests.capacity() * (sizeof(uint64_t) + 1)
                       : (double)urls.capacity() * (sizeof(std::string) + 1) + (double)heap;
    state.counters["keys/s"] =
        benchmark::Counter((double)order.size(), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["bytes/key"] = bytes / (double)s->inserted;
    // A fingerprint set errs only on a 64-bit collision; an exact set never.
    size_t absent = s->count - s->inserted, positives = 0;
    for (size_t i = s->inserted; i < s->count; i++) {
        absl::string_view key((const char *)s->keys[i], s->lens[i]);
        positives += fingerprints ? digests.contains(XXH3_64bits(key.data(), key.size()))
                                  : urls.contains(key);
    }
    state.counters["fpp"] = absent ? (double)positives / (double)absent : 0.0;
}

// ---- registration ----

void register_case(const std::string &name, const bench_spec &spec)
{
    benchmark::RegisterBenchmark(name.c_str(),
                                 [name, spec](benchmark::State &st) { run_case(st, name, spec); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

std::vector<std::string> usable_isas(bool with_neon_on_x86)
{
    const char *names[8];
    size_t n = sbloom_isa_list(names, 8);
    std::vector<std::string> out;
    for (size_t i = 0; i < n && i < 8; i++) {
#if defined(__x86_64__) || defined(__i386__)
        if (!with_neon_on_x86 && std::strcmp(names[i], "neon") == 0)
            continue; // SIMDe emulation: checked by the tests, not worth timing
#else
        (void)with_neon_on_x86;
#endif
        out.push_back(names[i]);
    }
    return out;
}

void register_all(const options &o)
{
    const bench_op hash_ops[] = {OP_ADD,        OP_CONTAINS_HIT, OP_CONTAINS_MISS,  OP_CONTAINS_MIX,
                                 OP_ADD_IF_NEW, OP_SINGLE_ADD,   OP_SINGLE_CONTAINS};
    std::vector<std::string> isas = usable_isas(o.neon);
    const size_t probes = 4000000;

    // (a) Pre-hashed keys at 10 bits per key, every size, layout, ISA and operation, then the
    // baselines and the cache-line limit at the same size.
    for (uint64_t bytes : o.sizes) {
        std::string sz = size_name(bytes);
        for (sbloom_layout layout : o.layouts) {
            for (const std::string &isa : isas) {
                for (bench_op op : hash_ops) {
                    bench_spec s{};
                    s.impl = IMPL_SIMDBLOOM;
                    s.op = op;
                    s.workload = WL_HASHES;
                    s.isa = strdup(isa.c_str());
                    s.layout = layout;
                    s.filter_bytes = bytes;
                    s.bits_per_key = 10;
                    s.probes = probes;
                    register_case("hashes/" + sz + "/" + sbloom_layout_name(layout) + "/" + isa +
                                      "/" + op_name(op),
                                  s);
                }
            }
        }
        bench_spec limit{};
        limit.impl = IMPL_LINE_READS;
        limit.op = OP_CONTAINS_MIX;
        limit.workload = WL_HASHES;
        limit.filter_bytes = bytes;
        limit.bits_per_key = 10;
        limit.probes = probes;
        register_case("hashes/" + sz + "/limit/line_reads", limit);
        // The unblocked baselines touch k random lines per key: at DRAM sizes their fill alone
        // takes minutes, so they run up to 16 MiB unless --big.
        if (bytes <= (16ull << 20) || o.big) {
            bench_spec classic = limit;
            classic.impl = IMPL_CLASSIC;
            register_case("hashes/" + sz + "/baseline/classic_bloom/contains_mix", classic);
            bench_spec bitmap = limit;
            bitmap.impl = IMPL_BITMAP;
            register_case("hashes/" + sz + "/baseline/bitmap/contains_mix", bitmap);
        }
    }

    // (b), (c) String keys: the real sample, then generated URLs; the filter planned at 10 bits
    // per inserted key (the sample's 50,000 keys: 61 KiB, L2-sized).
    struct string_workload {
        bench_workload w;
        uint64_t count;
    } workloads[] = {{WL_URLS, 0}, {WL_GENERATED, o.urls}};
    for (const string_workload &sw : workloads) {
        if (sw.w == WL_GENERATED && sw.count == 0)
            continue;
        std::string prefix = std::string(workload_name(sw.w)) + "/";
        bench_spec base{};
        base.workload = sw.w;
        base.url_file = strdup(o.url_file.c_str());
        base.generated = sw.count;
        base.bits_per_key = 10;
        base.probes = 0;
        for (const std::string &isa : isas) {
            for (bench_op op : {OP_CONTAINS_MIX, OP_ADD_IF_NEW, OP_SINGLE_CONTAINS}) {
                bench_spec s = base;
                s.impl = IMPL_SIMDBLOOM;
                s.op = op;
                s.isa = strdup(isa.c_str());
                s.layout = SBLOOM_LAYOUT_BLOCK512_K8;
                register_case(prefix + "block512-k8/" + isa + "/" + op_name(op), s);
            }
        }
        bench_spec x = base;
        x.impl = IMPL_XXH3;
        x.op = OP_CONTAINS_MIX;
        register_case(prefix + "limit/xxh3", x);
        bench_spec classic = base;
        classic.impl = IMPL_CLASSIC;
        classic.op = OP_CONTAINS_MIX;
        register_case(prefix + "baseline/classic_bloom/contains_mix", classic);
        bench_spec bitmap = classic;
        bitmap.impl = IMPL_BITMAP;
        register_case(prefix + "baseline/bitmap/contains_mix", bitmap);
        for (bool fingerprints : {false, true}) {
            std::string name = prefix + (fingerprints ? "baseline/absl_set_xxh3_64/contains_mix"
                                                      : "baseline/absl_set_strings/contains_mix");
            benchmark::RegisterBenchmark(name.c_str(),
                                         [base, fingerprints](benchmark::State &st) {
                                             run_hash_set(st, base, fingerprints);
                                         })
                ->UseRealTime()
                ->Unit(benchmark::kMillisecond);
        }
    }

    if (o.crawl) {
        uint64_t n = o.crawl;
        benchmark::RegisterBenchmark("crawl/seed000/add_if_new",
                                     [n](benchmark::State &st) {
                                         bench_crawl_result r{};
                                         for (auto _ : st) {
                                             if (bench_crawl(n, 32.0, &r) != SBLOOM_OK) {
                                                 st.SkipWithError("cannot create the crawl filter");
                                                 return;
                                             }
                                             st.SetIterationTime(r.seconds);
                                         }
                                         st.counters["keys/s"] = (double)n / r.seconds;
                                         st.counters["seconds"] = r.seconds;
                                         st.counters["bytes/key"] = (double)r.bytes / (double)n;
                                         st.counters["fpp"] = r.fpp_after;
                                         st.counters["fpp_during"] = r.fpp_during;
                                     })
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kSecond);
    }
}

// ---- reporting: Google Benchmark's table, then ns per key and ratios to the limits ----

struct row {
    std::string name;
    double ns_per_key, bytes_per_key, fpp;
};

class per_key_reporter : public benchmark::ConsoleReporter
{
  public:
    explicit per_key_reporter(std::string tsv) : tsv_(std::move(tsv))
    {
    }

    void ReportRuns(const std::vector<Run> &runs) override
    {
        ConsoleReporter::ReportRuns(runs);
        for (const Run &r : runs) {
            if (r.error_occurred || r.run_type != Run::RT_Iteration)
                continue;
            auto get = [&](const char *k) {
                auto it = r.counters.find(k);
                return it == r.counters.end() ? NAN : (double)it->second;
            };
            double rate = get("keys/s");
            rows_.push_back(
                {r.benchmark_name(), rate > 0 ? 1e9 / rate : NAN, get("bytes/key"), get("fpp")});
        }
    }

    void Finalize() override
    {
        ConsoleReporter::Finalize();
        std::map<std::string, double> limits; // "hashes/1M" or "urls" -> ns per key
        for (const row &r : rows_) {
            size_t at = r.name.find("/limit/");
            if (at != std::string::npos)
                limits[r.name.substr(0, at)] = r.ns_per_key;
        }
        std::printf("\n%-58s %9s %10s %9s %11s %9s\n", "benchmark", "ns/key", "Mkeys/s",
                    "bytes/key", "fpp", "x limit");
        FILE *out = tsv_.empty() ? nullptr : std::fopen(tsv_.c_str(), "w");
        if (out)
            std::fprintf(out, "name\tns_per_key\tbytes_per_key\tfpp\tlimit_ratio\n");
        for (const row &r : rows_) {
            std::string group = r.name.substr(0, r.name.find('/', r.name.find('/') + 1));
            if (r.name.compare(0, 7, "hashes/") != 0)
                group = r.name.substr(0, r.name.find('/'));
            auto lim = limits.find(group);
            double ratio = lim != limits.end() ? r.ns_per_key / lim->second : NAN;
            std::printf("%-58s %9.2f %10.1f %9.2f %11.3g %9.2f\n", r.name.c_str(), r.ns_per_key,
                        1e3 / r.ns_per_key, r.bytes_per_key, r.fpp, ratio);
            if (out)
                std::fprintf(out, "%s\t%.4f\t%.4f\t%.6g\t%.4f\n", r.name.c_str(), r.ns_per_key,
                             r.bytes_per_key, r.fpp, ratio);
        }
        if (out)
            std::fclose(out);
        std::printf("(instruction set picked by default here: %s; x limit: time per key over "
                    "the physical limit's, same size or same strings)\n",
                    sbloom_isa());
    }

  private:
    std::string tsv_;
    std::vector<row> rows_;
};

} // namespace

int main(int argc, char **argv)
{
    options o;
    std::vector<char *> rest{argv[0]};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&](const char *flag) {
            return a.compare(0, std::strlen(flag), flag) == 0 ? a.c_str() + std::strlen(flag)
                                                              : nullptr;
        };
        if (const char *v = value("--sizes=")) {
            o.sizes.clear();
            std::string list = v;
            for (size_t p = 0; p <= list.size();) {
                size_t q = list.find(',', p);
                if (q == std::string::npos)
                    q = list.size();
                if (q > p)
                    o.sizes.push_back(parse_size(list.substr(p, q - p).c_str()));
                p = q + 1;
            }
        } else if (a == "--big") {
            o.big = true;
            o.sizes.push_back(1ull << 30);
        } else if (const char *v = value("--layouts=")) {
            o.layouts.clear();
            if (std::strcmp(v, "all") == 0)
                o.layouts = {SBLOOM_LAYOUT_PARQUET, SBLOOM_LAYOUT_BLOCK512_K8,
                             SBLOOM_LAYOUT_BLOCK512_K16};
            else if (sbloom_layout_from_name(v) > 0)
                o.layouts.push_back((sbloom_layout)sbloom_layout_from_name(v));
            else {
                std::fprintf(stderr, "simdbloom-bench: unknown layout '%s'\n", v);
                return 2;
            }
        } else if (a == "--neon") {
            o.neon = true;
        } else if (const char *v = value("--urls=")) {
            o.urls = parse_count(v);
        } else if (const char *v = value("--url-file=")) {
            o.url_file = v;
        } else if (const char *v = value("--crawl=")) {
            o.crawl = parse_count(v);
        } else if (const char *v = value("--tsv=")) {
            o.tsv = v;
        } else {
            rest.push_back(argv[i]);
        }
    }
    int rest_argc = (int)rest.size();
    benchmark::Initialize(&rest_argc, rest.data());
    if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data()))
        return 2;
    register_all(o);
    benchmark::AddCustomContext("simdbloom_isa", sbloom_isa());
    benchmark::AddCustomContext("simdbloom_version", SIMDBLOOM_VERSION_STRING);
    // --benchmark_format=json (or csv) keeps Google Benchmark's own reporter for tooling.
    bool own_format = false;
    for (int i = 1; i < argc; i++)
        own_format |= std::strncmp(argv[i], "--benchmark_format=", 19) == 0 &&
                      std::strcmp(argv[i], "--benchmark_format=console") != 0;
    per_key_reporter reporter(o.tsv);
    if (own_format)
        benchmark::RunSpecifiedBenchmarks();
    else
        benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    bench_release_cached_filters();
    return 0;
}
