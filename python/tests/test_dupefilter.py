"""simdbloom.scrapy.DupeFilter without a crawl: the recrawl window in a file (JOBDIR or a shared
file), on a clock the test moves."""
import pytest

scrapy = pytest.importorskip("scrapy")
from scrapy import Request  # noqa: E402

from simdbloom.scrapy import DupeFilter  # noqa: E402


@pytest.fixture
def clock(monkeypatch):
    now = [1_800_000_000]
    monkeypatch.setattr("simdbloom.scrapy.time.time", lambda: now[0])
    return now


def test_a_shared_file_keeps_the_window(tmp_path, clock):
    path = str(tmp_path / "shared.sbloom")
    a = DupeFilter(shared_path=path, forget_after=30, expected=1000)
    b = DupeFilter(shared_path=path, forget_after=30, expected=1000)  # another process's handle
    first = Request("http://example.org/a")
    assert a.filter.layout == "windowed" and b.filter.layout == "windowed"
    assert not a.request_seen(first)
    assert b.request_seen(first)  # one table
    clock[0] += 25
    assert a.request_seen(first)  # inside the window
    later = Request("http://example.org/b")
    assert not b.request_seen(later)
    clock[0] += 25  # 50 s after the first: past 30 s and one period (10 s)
    assert not b.request_seen(first)  # let through again: a recrawl
    assert a.request_seen(first) and a.request_seen(later)  # seen again now; b's within window
    a.close("finished")
    b.close("finished")


def test_a_jobdir_resumes_with_the_window(tmp_path, clock):
    first = Request("http://example.org/a")
    d = DupeFilter(str(tmp_path), forget_after=60, expected=1000)
    assert not d.request_seen(first)
    d.close("shutdown")
    clock[0] += 30
    resumed = DupeFilter(str(tmp_path), forget_after=60, expected=1000)
    assert resumed.request_seen(first)  # the file kept it, and its clock
    resumed.close("shutdown")
    clock[0] += 60
    again = DupeFilter(str(tmp_path), forget_after=60, expected=1000)
    assert not again.request_seen(first)  # forgotten while the crawl was paused
    again.close("finished")


def test_a_file_without_a_window_is_refused(tmp_path, clock):
    path = str(tmp_path / "plain.sbloom")
    DupeFilter(shared_path=path, expected=1000).close("finished")
    with pytest.raises(ValueError, match="without a window"):
        DupeFilter(shared_path=path, forget_after=30, expected=1000)


def test_an_in_memory_window_grows_without_expected(clock):
    d = DupeFilter(forget_after=30)  # no SIMDBLOOM_EXPECTED: a window that grows
    assert d.filter.layout == "windowed"
    start = d.filter.bytes
    d.filter.add_many([f"https://example.org/{i}" for i in range(400_000)])  # a third of 1M: more
    assert d.filter.bytes > start
    first = Request("http://example.org/a")
    assert not d.request_seen(first) and d.request_seen(first)
    clock[0] += 50  # past 30 s and one period
    assert not d.request_seen(first)
    d.close("finished")
