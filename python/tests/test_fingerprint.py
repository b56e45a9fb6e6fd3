"""The fingerprint filters from Python: what Filter() picks, remove, a table past its plan, the
layouts it refuses to combine, and the integer batches."""
import pickle

import pytest

import simdbloom


def keys(n, prefix="https://example.org/page/"):
    return [f"{prefix}{i}" for i in range(n)]


def test_the_smallest_layout_by_rate():
    assert simdbloom.Filter(1_000_000, 1e-6).layout == "fp512-r19"
    assert simdbloom.Filter(1_000_000, 1e-4).layout == "fp512-r13"
    assert simdbloom.Filter(1_000_000, 1e-2).layout == "block512-k8"
    assert simdbloom.Filter(1_000_000, 1e-6, layout="bloom").layout == "block512-k16"
    assert simdbloom.Filter(1_000_000, 1e-6, layout="fp512-r27").layout == "fp512-r27"
    fp, bloom = simdbloom.Filter(1_000_000, 1e-6), simdbloom.Filter(1_000_000, 1e-6, layout="bloom")
    assert fp.bytes < 0.7 * bloom.bytes


def test_remove_takes_out_exactly_what_was_added():
    f = simdbloom.Filter(20_000, 1e-6)
    added, other = keys(10_000), keys(1000, "https://other.example/")
    assert f.add_if_new_many(added) == b"\x01" * 10_000
    for k in added[:5000]:
        f.remove(k)
    assert f.contains_many(added[:5000]) == b"\x00" * 5000
    assert f.contains_many(added[5000:]) == b"\x01" * 5000
    assert len(f) == 5000
    with pytest.raises(KeyError):
        f.remove(other[0])
    assert f.remove_many(added[5000:]) == b"\x01" * 5000
    assert len(f) == 0


def test_integer_batches_remove_too():
    np = pytest.importorskip("numpy")
    f = simdbloom.Filter(100_000, 1e-6)
    values = np.arange(50_000, dtype=np.uint64)
    assert f.add_many(values) == 50_000
    assert f.remove_many(values[:20_000]) == b"\x01" * 20_000  # (answered 0 before: its count)
    assert f.contains_many(values[:20_000]) == b"\x00" * 20_000
    assert len(f) == 30_000


def test_past_its_plan_a_table_says_so_and_keeps_what_it_took():
    f = simdbloom.Filter(10_000, 1e-6)
    batch = keys(40_000)
    with pytest.raises(ValueError, match="fingerprint filter full"):
        f.add_many(batch)
    held = f.contains_many(batch)
    assert 10_000 < held.count(1) < 40_000  # its plan and a little more
    assert held.count(1) == len(f)
    assert simdbloom.Filter(10_000, 1e-6, layout="bloom").add_many(batch) > 30_000  # a Bloom one


def test_a_table_without_a_count_grows_by_fingerprint_stages():
    grown, bloom = simdbloom.Filter(), simdbloom.Filter(layout="bloom")
    assert grown.layout == bloom.layout == "scalable"
    added = keys(1_500_000)  # past the first stage's 1M: a second stage
    stored = grown.add_if_new_many(added).count(1)
    assert stored >= len(added) - 5  # (false positives against earlier keys: about 0.8)
    bloom.update(added)
    assert grown.contains_many(added) == b"\x01" * len(added)
    assert grown.bytes < 0.8 * bloom.bytes
    assert grown.remove_many(added[:1000]) == b"\x01" * 1000
    assert grown.contains_many(added[:1000]) == b"\x00" * 1000 and len(grown) == stored - 1000
    with pytest.raises(ValueError, match="remove needs .*this filter is scalable"):
        bloom.remove(added[0])
    again = simdbloom.Filter.from_bytes(grown.to_bytes())
    assert again.layout == "scalable" and again.contains_many(added[1000:]) == grown.contains_many(
        added[1000:]
    )


def test_threads_share_a_fingerprint_table():
    """set_concurrent(True) on a fingerprint filter: four threads test-and-add overlapping URLs,
    and each URL is reported new exactly once."""
    import threading

    f = simdbloom.Filter(200_000, 1e-6)
    assert f.layout.startswith("fp512-")
    f.set_concurrent(True)
    urls = keys(40_000)
    answers = [None] * 4

    def work(t):
        mine = urls[t * 10_000:] + urls[: t * 10_000]  # every URL, from another start
        answers[t] = b"".join(f.add_if_new_many(mine[at:at + 500]) for at in range(0, 40_000, 500))
        answers[t] = answers[t][40_000 - t * 10_000:] + answers[t][: 40_000 - t * 10_000]

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    times = [sum(a[i] for a in answers) for i in range(40_000)]
    assert max(times) == 1 and times.count(1) >= 40_000 - 2 and len(f) == times.count(1)
    assert f.contains_many(urls) == b"\x01" * 40_000


def test_files_bytes_and_pickle_keep_it():
    f = simdbloom.Filter(5000, 1e-8)
    f.update(keys(5000))
    for g in (pickle.loads(pickle.dumps(f)), simdbloom.Filter.from_bytes(f.to_bytes())):
        assert g.layout == "fp512-r27" and len(g) == 5000
        assert g.contains_many(keys(5000)) == b"\x01" * 5000


def test_a_concurrent_mapping_made_here_is_a_bloom_one(tmp_path):
    path = tmp_path / "shared.sbloom"
    with simdbloom.Filter.map(path, concurrent=True, expected=10_000, fpp=1e-6) as m:
        assert m.layout == "block512-k16" and m.concurrent
