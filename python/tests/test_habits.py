"""What users of sets, rbloom and pybloomfiltermmap3 expect, the threads that once crashed the
module, and arguments refused by name (issue: Python as its users expect it)."""
import pickle
import threading
import time

import pytest

import simdbloom


def keys(n, prefix="https://example.org/page/"):
    return [f"{prefix}{i}" for i in range(n)]


# ---- threads: calls that need the filter alone wait for the batches running without the GIL

def _hammer(f, stop, errors):
    """Batch adds without the GIL (concurrent mode) until stop is set; errors collected."""
    i = 0
    try:
        while not stop.is_set():
            f.add_many(keys(20_000, f"https://t{threading.get_ident()}.example/{i}/"))
            i += 1
    except Exception as e:  # noqa: BLE001 (any: the test reports it)
        errors.append(e)


def test_mode_changes_wait_for_running_batches():
    """set_concurrent(False) while other threads run GIL-free batch adds: no crash (it crashed 4 of
    5 runs before), every call answers, and the filter holds every key each thread added."""
    for _ in range(3):
        f = simdbloom.Filter(2_000_000, 1e-4, layout="bloom")
        f.set_concurrent(True)
        stop, errors = threading.Event(), []
        workers = [threading.Thread(target=_hammer, args=(f, stop, errors)) for _ in range(3)]
        for w in workers:
            w.start()
        for _ in range(100):
            time.sleep(0.0002)  # (the workers take the GIL, and release it in their batches)
            f.set_concurrent(False)  # waits for the batches in flight, then leaves the mode
            f.set_concurrent(True)
            f.set_threads(2)
        stop.set()
        for w in workers:
            w.join(timeout=30)
        assert not errors and not any(w.is_alive() for w in workers)


def test_checkpoints_while_adding_load(tmp_path):
    """save() while other threads add in concurrent mode: every checkpoint loads (19 of 20 were
    refused as damaged before), and holds every key added before the save began."""
    f = simdbloom.Filter(2_000_000, 1e-4, layout="bloom")
    f.set_concurrent(True)
    stop, errors = threading.Event(), []
    workers = [threading.Thread(target=_hammer, args=(f, stop, errors)) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        for k in range(20):
            before = keys(1000, f"https://before{k}.example/")
            f.add_many(before)
            path = tmp_path / f"checkpoint{k}.sbloom"
            f.save(path)
            back = simdbloom.Filter.load(path)  # raised ValueError (damaged) before
            assert back.contains_many(before) == b"\x01" * 1000
            copy = f.copy()
            assert copy.contains_many(before) == b"\x01" * 1000
            assert simdbloom.Filter.from_bytes(f.to_bytes()).contains_many(before) == b"\x01" * 1000
    finally:
        stop.set()
        for w in workers:
            w.join(timeout=30)
    assert not errors


def test_close_waits_and_later_calls_raise():
    f = simdbloom.Filter(2_000_000, 1e-4, layout="bloom")
    f.set_concurrent(True)
    stop, errors = threading.Event(), []
    workers = [threading.Thread(target=_hammer, args=(f, stop, errors)) for _ in range(2)]
    for w in workers:
        w.start()
    time.sleep(0.01)
    f.close()
    stop.set()
    for w in workers:
        w.join(timeout=30)
    assert all(isinstance(e, ValueError) and "closed" in str(e) for e in errors)
    assert f.closed
    for call in (lambda: f.add("x"), lambda: "x" in f, lambda: len(f), lambda: f.items,
                 lambda: f.save("/nonexistent"), lambda: f.add_many(["x"])):
        with pytest.raises(ValueError, match="closed"):
            call()
    f.close()  # twice: nothing
    assert repr(f) == "<simdbloom.Filter closed>"


# ---- the habits of sets and rbloom

def test_update_and_set_habits():
    f = simdbloom.Filter(10_000, 1e-6)
    assert f.update(keys(100), [b"raw"], keys(10, "https://b.example/")) is None
    assert len(f) == 111 and "https://b.example/3" in f and b"raw" in f
    f.update()  # nothing, as set().update()


def test_pickle_and_bytes():
    f = simdbloom.Filter(10_000, 1e-6)
    f.add_many(keys(1000))
    for g in (pickle.loads(pickle.dumps(f)), simdbloom.Filter.from_bytes(f.to_bytes())):
        assert g.contains_many(keys(1000)) == b"\x01" * 1000 and len(g) == 1000
        assert g.layout == f.layout and g.bytes == f.bytes
    w = simdbloom.Filter.windowed(1000, 1e-4, 3, 10, now=100)
    w.add("k")
    back = pickle.loads(pickle.dumps(w))
    assert back.window() == w.window() and "k" in back
    with pytest.raises(ValueError):
        simdbloom.Filter.from_bytes(b"nonsense" * 20)


def test_pickled_to_a_worker_process():
    multiprocessing = pytest.importorskip("multiprocessing")
    f = simdbloom.Filter(10_000, 1e-6)
    f.add_many(keys(500))
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_count_present, (f, keys(1000))) == 500


def _count_present(f, ks):
    return f.contains_many(ks).count(1)


def test_numpy_int64_and_integer_like_arguments():
    np = pytest.importorskip("numpy")
    f = simdbloom.Filter(np.int64(10_000), 1e-6)
    g = simdbloom.Filter(1e4, 1e-6)  # a float with no fraction
    assert f.planned_items == g.planned_items == 10_000
    signed = np.arange(-5000, 5000, dtype=np.int64)  # numpy's default integer
    assert f.add_many(signed) == 10_000
    assert f.contains_many(signed.view(np.uint64)) == b"\x01" * 10_000  # the same bits, one key
    w = simdbloom.Filter.windowed(np.int64(1000), 1e-3, np.int32(3), np.uint64(10))
    assert w.window()["periods"] * w.window()["period"] == 30  # (a fingerprint window: 6 of 5)


def test_map_creates_the_file(tmp_path):
    path = tmp_path / "made.sbloom"
    with simdbloom.Filter.map(path, expected=10_000, fpp=1e-5) as m:  # absent: made, writable
        assert m.add("x") and m.planned_items == 10_000
    with simdbloom.Filter.map(path, expected=99) as again:  # present: the file's plan
        assert "x" in again and again.planned_items == 10_000
    assert simdbloom.Filter.load(path).items == 1
    with pytest.raises(ValueError, match="fixed size"):
        simdbloom.Filter.map(tmp_path / "other.sbloom", expected=None)
    with pytest.raises(ValueError, match="write=True"):
        simdbloom.Filter.map(path, concurrent=True)


# ---- arguments refused, naming themselves

@pytest.mark.parametrize("call, names", [
    (lambda: simdbloom.Filter(0, 1e-3), "expected must be 1 to"),
    (lambda: simdbloom.Filter(-5, 1e-3), "expected must be 1 to"),
    (lambda: simdbloom.Filter(1.5, 1e-3), "expected must be a whole number"),
    (lambda: simdbloom.Filter(10, 0), "fpp is the false-positive rate"),
    (lambda: simdbloom.Filter(10, 1e-30), "1e-15 at least"),
    (lambda: simdbloom.Filter(10, 1.0), "fpp is the false-positive rate"),
    (lambda: simdbloom.Filter.windowed(100, 1e-3, 0, 10), "periods must be 1 to 15"),
    (lambda: simdbloom.Filter.windowed(100, 1e-3, 16, 10), "periods must be 1 to 15"),
    (lambda: simdbloom.Filter.windowed(100, 1e-3, 3, -1), "period must be 1 to"),
    (lambda: simdbloom.Filter.windowed(100, 1e-3, 3, 0), "period must be 1 to"),
    (lambda: simdbloom.Filter.windowed(100, 1e-3, 3, 10, -1), "now must be 0 to"),
    (lambda: simdbloom.Filter(10, 1e-3).set_threads(2 ** 32), "threads must be 0 to 1024"),
    (lambda: simdbloom.Filter(10, 1e-2).remove("x"), "remove needs a counting filter"),
    (lambda: simdbloom.Filter(10, 1e-2).remove_many(["x"]), "remove_many: remove needs a counting"),
    (lambda: simdbloom.Filter(10, 1e-3, layout="fp512-r10").union(
        simdbloom.Filter(10, 1e-3, layout="fp512-r10")), "union takes Bloom filters"),
    (lambda: simdbloom.Filter(10, 1e-3, layout="fp512-r99"), "layout is None"),
    (lambda: simdbloom.Filter(10, 1e-3).advance(5), "advance needs a windowed filter"),
    (lambda: simdbloom.Filter(10, 1e-3).window(), "window() needs a windowed filter"),
    (lambda: simdbloom.Filter(10, 1e-2).union(simdbloom.Filter(10_000, 1e-2)),
     "same layout and size"),
    (lambda: simdbloom.Filter(10, 1e-3, layout="counting512").set_concurrent(True),
     "concurrent mode takes a Bloom or fingerprint filter"),
    (lambda: simdbloom.Filter(10, 1e-3, layout="windowed"), "Filter.windowed"),
])
def test_errors_name_their_argument(call, names):
    with pytest.raises((ValueError, TypeError)) as e:
        call()
    assert names in str(e.value)


def test_len_past_what_len_can_say(tmp_path):
    """A concurrent mapping's count is the header's plus a live delta in FILTER.lock (at byte
    256): one of 2^63 or more raises OverflowError from len() (SystemError before), and the
    items property says it."""
    import struct
    path = tmp_path / "big.sbloom"
    simdbloom.Filter(1000, 1e-2).save(path)  # (a Bloom filter: its count may be forged high)
    with simdbloom.Filter.map(path, write=True, concurrent=True) as m:
        m.add("x")
        with open(f"{path}.lock", "r+b") as lock:
            lock.seek(256)
            lock.write(struct.pack("<Q", 2 ** 63 + 5))
        with pytest.raises(OverflowError, match="items"):
            len(m)
        assert m.items >= 2 ** 63
