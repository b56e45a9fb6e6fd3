"""The simdbloom module against its promises: every answer checked against an exact Python set."""
import os
import threading

import pytest

import simdbloom


def keys(n, prefix="https://example.org/page/"):
    return [f"{prefix}{i}" for i in range(n)]


def test_one_key_and_len():
    f = simdbloom.Filter(1000, 1e-4)
    assert f.add("https://a.example/") is True
    assert f.add("https://a.example/") is False
    assert "https://a.example/" in f
    assert b"https://a.example/" in f  # str is its UTF-8 bytes
    assert "https://b.example/" not in f
    assert len(f) == 1 and f.items == 1
    assert f.add_if_new(b"\x00\xff") is True and f.add_if_new(b"\x00\xff") is False
    assert f.add("") is True and "" in f  # the empty key is a key


def test_batches_agree_with_one_key_calls_and_a_set():
    f = simdbloom.Filter(100_000, 1e-6)
    first = keys(50_000)
    new = f.add_if_new_many(first + first[:100])
    assert isinstance(new, bytes) and len(new) == 50_100
    assert new.count(1) == 50_000 and new[50_000:] == bytes(100)  # repeats: new once only
    present = f.contains_many(first)
    assert present == b"\x01" * 50_000
    absent = f.contains_many(keys(20_000, "https://other.example/"))
    assert absent.count(1) <= 2  # 1e-6 planned: 20,000 unseen keys give about 0.02
    g = simdbloom.Filter(100_000, 1e-6)
    assert g.add_many(first) == 50_000
    assert all(k in g for k in first[:1000])


def test_u64_buffers_without_a_copy():
    np = pytest.importorskip("numpy")
    f = simdbloom.Filter(100_000, 1e-6)
    ids = np.arange(1, 40_001, dtype=np.uint64)
    assert f.add_many(ids) == 40_000
    answers = np.frombuffer(f.contains_many(ids), dtype=bool)
    assert answers.all()
    again = np.frombuffer(f.add_if_new_many(np.ascontiguousarray(ids[::2])), dtype=bool)
    assert not again.any()
    with pytest.raises(ValueError):  # a strided view: no hidden copy, the caller chooses
        f.contains_many(ids[::2])
    with pytest.raises(TypeError):
        f.add_many(np.arange(10, dtype=np.float64))


def test_errors_are_exceptions(tmp_path):
    with pytest.raises(ValueError):
        simdbloom.Filter(1000, 1.5)
    with pytest.raises(ValueError):
        simdbloom.Filter(1000, 1e-3, layout="nope")
    with pytest.raises(TypeError):
        simdbloom.Filter(10, 1e-3).add(42)
    with pytest.raises(TypeError):
        simdbloom.Filter(10, 1e-3).add_many("not a list")
    with pytest.raises(OSError) as missing:
        simdbloom.Filter.load(tmp_path / "absent.sbloom")
    assert missing.value.errno == 2
    bad = tmp_path / "bad.sbloom"
    bad.write_bytes(b"not a filter" * 100)
    with pytest.raises(ValueError):
        simdbloom.Filter.load(bad)


def test_save_load_map(tmp_path):
    path = tmp_path / "f.sbloom"
    f = simdbloom.Filter(10_000, 1e-5)
    f.add_many(keys(5000))
    f.save(path)
    back = simdbloom.Filter.load(path)
    assert back.contains_many(keys(5000)) == b"\x01" * 5000 and len(back) == 5000
    ro = simdbloom.Filter.map(path)
    assert "https://example.org/page/7" in ro
    with pytest.raises(ValueError):
        ro.add("x")  # read-only mapping
    rw = simdbloom.Filter.map(path, write=True)
    assert rw.add("https://new.example/") is True
    rw.sync()
    del rw
    assert "https://new.example/" in simdbloom.Filter.load(path)


def test_stats_copy_union_clear():
    a = simdbloom.Filter(10_000, 1e-4, layout="block512-k8")
    b = simdbloom.Filter(10_000, 1e-4, layout="block512-k8")
    a.add_many(keys(1000))
    b.add_many(keys(1000, "https://b.example/"))
    st = a.stats()
    assert 0 < st["fill"] < 1 and st["items"] == 1000 and st["bytes"] == a.bytes
    assert abs(a.estimate()["estimated_items"] - 1000) < 100
    c = a.copy()
    c |= b
    assert c.contains_many(keys(1000, "https://b.example/")) == b"\x01" * 1000
    assert "https://b.example/1" not in a or a.stats()["fpp_now"] > 0  # a unchanged
    d = a | b
    assert "https://b.example/5" in d and "https://example.org/page/5" in d
    a.clear()
    assert len(a) == 0 and a.contains_many(keys(100)).count(1) == 0
    with pytest.raises(ValueError):
        a.union(simdbloom.Filter(999_999, 1e-4))  # another size


def test_counting_remove():
    f = simdbloom.Filter(10_000, 1e-3, layout="counting512")
    f.add_many(keys(100))
    f.remove("https://example.org/page/3")
    assert "https://example.org/page/3" not in f
    with pytest.raises(KeyError):
        f.remove("never added at all, not even close")
    removed = f.remove_many(keys(10))
    assert removed[3] == 0 and removed.count(1) == 9


def test_scalable_keeps_its_rate():
    f = simdbloom.Filter(fpp=1e-4)  # no expected: grows
    assert f.layout == "scalable"
    f.add_many(keys(30_000))
    assert f.contains_many(keys(30_000)) == b"\x01" * 30_000


def test_windowed_forgets():
    f = simdbloom.Filter.windowed(10_000, 1e-4, 4, 10, now=0)  # a window of 40 time units
    f.add("old")
    f.advance(35)
    assert "old" in f  # inside the window
    f.add("recent")
    f.advance(60)  # at least 40 after "old", within 50 (a period more)
    assert "old" not in f and "recent" in f
    w = f.window()
    assert w["periods"] == 4 and w["period"] == 10 and len(w["generations"]) == 5


def test_windowed_fingerprints_by_default_bloom_on_request():
    ages = simdbloom.Filter.windowed(100_000, 1e-6, 3, 10, now=0)  # a fingerprint window
    ring = simdbloom.Filter.windowed(100_000, 1e-6, 3, 10, now=0, layout="bloom")
    assert ages.bytes < ring.bytes * 0.7
    w = ages.window()
    assert w["periods"] * w["period"] == 30 and len(w["generations"]) == w["periods"] + 1
    assert ages.add_many(keys(20_000)) == ring.add_many(keys(20_000)) == 20_000
    ages.advance(29)
    assert ages.contains_many(keys(20_000)) == b"\x01" * 20_000
    ages.advance(40)  # 10 after the window: forgotten
    assert ages.contains_many(keys(20_000)).count(1) <= 2
    back = simdbloom.Filter.from_bytes(ages.to_bytes())
    assert back.window() == ages.window() and back.bytes == ages.bytes
    with pytest.raises(ValueError):
        simdbloom.Filter.windowed(100, 1e-6, 3, 10, layout="fp512-r19")
    ages.set_concurrent(True)  # threads: each key under its line's lock
    assert ages.concurrent and ages.add(b"new") and not ages.add(b"new")
    ring.set_concurrent(True)
    assert ring.concurrent


def test_windowed_grows_without_expected():
    f = simdbloom.Filter.windowed(None, 1e-4, 3, 10, now=0)
    assert f.layout == "windowed"
    start = f.bytes
    f.add_many(keys(400_000))  # a first window of 1M keys takes a third a period: it grows
    assert f.bytes > start
    assert f.contains_many(keys(400_000)) == b"\x01" * 400_000
    f.advance(50)  # past the window and a period: every key forgotten, the older window freed
    assert len(f) == 0 and f.contains_many(keys(10_000)).count(1) <= 10


def test_concurrent_threads_each_key_new_once():
    f = simdbloom.Filter(200_000, 1e-6, layout="bloom")  # (the concurrent mode: Bloom layouts)
    f.set_concurrent(True)
    assert f.concurrent
    shared = keys(40_000)
    orders = (1, -1, 1, -1)
    results = [None] * len(orders)

    def work(t):  # thread t's answers, in its own order (threads end in any order)
        results[t] = f.add_if_new_many(shared[:: orders[t]])

    threads = [threading.Thread(target=work, args=(t,)) for t in range(len(orders))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = [0] * 40_000
    for order, r in zip(orders, results):
        for i, v in enumerate(r):
            total[i if order == 1 else 39_999 - i] += v
    assert max(total) == 1 and sum(total) >= 39_999
    assert len(f) == sum(total)


def test_gil_released_for_lookups_only_where_safe():
    f = simdbloom.Filter(fpp=1e-3)  # scalable: adds keep the GIL, no crash under threads
    errors = []

    def add(prefix):
        try:
            for i in range(20):
                f.add_many(keys(2000, f"{prefix}{i}/"))
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=add, args=(p,)) for p in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(f) >= 79_000
