#!/usr/bin/python3
"""Figures for the Python module (a benchmark, not a test): the per-key time and memory of
test-and-add from Python, against a Python set of the fingerprints (what Scrapy's default
duplicate filter keeps) and Debian's python3-flor Bloom filter, on the same keys.

    python/bench.py [N ...]      (default 1000000; run it where simdbloom is installed)

Keys are 20-byte SHA-1 digests, as Scrapy's request fingerprints are. Each figure is the best of
three runs; memory is what each structure holds (the set: its table and its bytes objects; the
filters: their bits). Then numpy batches of integers (1M at 1%, abloom's published setting:
65M adds/s and 31M lookups/s from Python on an Apple M2, abloom not being installable here), and
per-key calls beside a Python set.
"""
import hashlib
import os
import sys
import time

# Run as a script from the checkout, its own folder would come first on the path, and with it the
# source of the package, which has no built extension: the installed module is the one to time.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
import simdbloom  # noqa: E402

try:
    import flor
except ImportError:  # Debian: apt-get install python3-flor
    flor = None

FPP = 1e-6


def best(fn, runs=3):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [1_000_000]
    print(f"simdbloom {simdbloom.__version__}, isa {simdbloom.isa}, rate {FPP:g}")
    print(f"{'keys':>10} {'structure':<34} {'ns/key':>8} {'bytes/key':>10}")
    for n in sizes:
        keys = [hashlib.sha1(i.to_bytes(8, "little")).digest() for i in range(n)]

        def batch():
            simdbloom.Filter(n, FPP).add_if_new_many(keys)

        def one_by_one():
            f = simdbloom.Filter(n, FPP)
            add = f.add
            for k in keys:
                add(k)

        def python_set():
            s = set()
            for k in keys:
                if k not in s:
                    s.add(k)

        f = simdbloom.Filter(n, FPP)
        rows = [("simdbloom add_if_new_many (a list)", best(batch), f.bytes),
                ("simdbloom add, one key a call", best(one_by_one), f.bytes)]
        s = set(keys)
        set_bytes = sys.getsizeof(s) + sum(sys.getsizeof(k) for k in keys)
        rows.append(("Python set of fingerprints", best(python_set), set_bytes))
        if flor:
            def flor_filter():
                b = flor.BloomFilter(n + 1, FPP)  # flor refuses the add that reaches its capacity
                for k in keys:
                    if k not in b:
                        b.add(k)
            b = flor.BloomFilter(n + 1, FPP)
            rows.append(("python3-flor BloomFilter", best(flor_filter), b.m / 8))
        for name, seconds, memory in rows:
            print(f"{n:>10} {name:<34} {seconds / n * 1e9:>8.1f} {memory / n:>10.2f}")


def numpy_batches(n=1_000_000, fpp=0.01):
    """Integers from numpy (abloom's figures: 1M integers at 1%): test-and-add and lookups of the
    whole array in one call, and one key a call beside a Python set."""
    try:
        import numpy as np
    except ImportError:
        return
    ids = np.random.default_rng(7).integers(0, 2**63, n, dtype=np.int64)  # numpy's default int
    print(f"\nnumpy int64 keys, {n} at rate {fpp:g}:")

    def add():
        simdbloom.Filter(n, fpp).add_many(ids)

    f = simdbloom.Filter(n, fpp)
    f.add_many(ids)
    rows = [("add_many (numpy array)", best(add)),
            ("add_if_new_many (numpy array)", best(lambda: simdbloom.Filter(n, fpp).add_if_new_many(ids))),
            ("contains_many (numpy array)", best(lambda: f.contains_many(ids)))]
    listed = ids.tolist()

    def one_by_one():
        g = simdbloom.Filter(n, fpp)
        add_one = g.add
        for k in listed:
            add_one(str(k))

    def python_set():
        s = set()
        for k in listed:
            if k not in s:
                s.add(k)

    rows += [("add, one str key a call", best(one_by_one)), ("Python set of the ints", best(python_set))]
    for name, seconds in rows:
        print(f"  {name:<34} {seconds / n * 1e9:8.1f} ns/key  {n / seconds / 1e6:8.1f} M keys/s")


def scrapy_filters(n=200_000):
    """The duplicate filter's cost in a crawl: request_seen over n requests (a quarter of them
    repeats), Scrapy's RFPDupeFilter against simdbloom.scrapy.DupeFilter, with Scrapy's own
    fingerprinter (whose SHA-1 both pay)."""
    try:
        from scrapy import Request
        from scrapy.dupefilters import RFPDupeFilter
        from scrapy.utils.request import RequestFingerprinter
    except ImportError:
        return
    from simdbloom.scrapy import DupeFilter
    import warnings

    warnings.simplefilter("ignore")  # the fingerprinter's note on its default implementation

    requests = [Request(f"https://example.org/p/{i % (n * 3 // 4)}?q={i % 7}") for i in range(n)]
    print(f"\nrequest_seen over {n} requests (Scrapy {__import__('scrapy').__version__}):")
    for name, make in (("RFPDupeFilter (a set of hex digests)", RFPDupeFilter),
                       ("simdbloom.scrapy.DupeFilter", DupeFilter)):
        def run():
            f = make(fingerprinter=RequestFingerprinter())
            for r in requests:
                f.request_seen(r)
        print(f"  {name:<38} {best(run) / n * 1e9:8.0f} ns/request")


if __name__ == "__main__":
    main()
    numpy_batches()
    scrapy_filters()
