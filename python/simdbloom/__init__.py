"""simdbloom: blocked Bloom filters with SIMD kernels, from Python.

    import simdbloom
    seen = simdbloom.Filter(10_000_000, 1e-6)     # 10M keys, one false positive per million
    if seen.add("https://a.example/"):            # True: the key was new
        ...
    new = seen.add_if_new_many(urls)             # bytes: 1 for each URL not seen before

The whole API is in python/README.md; the Scrapy duplicate filter is simdbloom.scrapy.DupeFilter.
"""
from ._simdbloom import Filter, __version__, isa

__all__ = ["Filter", "__version__", "isa"]
try:  # built where hiredis is (libhiredis-dev)
    from ._simdbloom import RedisFilter

    __all__.append("RedisFilter")
except ImportError:
    pass
