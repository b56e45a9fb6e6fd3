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


# ---- tables that grow, plans that change, overfills said (issue: Python as its users expect it)

def requests(n, prefix="http://example.org/r/"):
    return [Request(f"{prefix}{i}") for i in range(n)]


def test_a_jobdir_table_grows_past_ten_million_and_resumes(tmp_path):
    np = pytest.importorskip("numpy")
    d = DupeFilter(str(tmp_path))  # no SIMDBLOOM_EXPECTED: it grows
    assert d.filter.growing and d.filter.bytes < 8 << 20  # it starts small (a 1M stage)
    ids = np.arange(10_500_000, dtype=np.uint64)
    assert d.filter.add_many(ids) >= 10_500_000 - 20
    first = Request("http://example.org/a")
    assert not d.request_seen(first)
    d.close("shutdown")  # paused: the table is saved
    resumed = DupeFilter(str(tmp_path), expected=50_000_000)  # a growing table takes any plan
    assert resumed.request_seen(first)
    assert resumed.filter.contains_many(ids[::1000].copy()).count(1) == len(ids[::1000])
    fresh = np.arange(20_000_000, 21_000_000, dtype=np.uint64)
    assert resumed.filter.contains_many(fresh).count(1) <= 10  # 1e-6 kept: about 1 expected
    resumed.close("finished")


def test_a_changed_plan_is_refused_on_resume(tmp_path):
    d = DupeFilter(str(tmp_path), expected=1000)
    d.close("shutdown")
    with pytest.raises(ValueError, match="planned for 1000 requests; SIMDBLOOM_EXPECTED asks for"):
        DupeFilter(str(tmp_path), expected=10_000_000)
    DupeFilter(str(tmp_path), expected=1000).close("finished")  # the same plan: taken
    shared = str(tmp_path / "shared.sbloom")
    DupeFilter(shared_path=shared, expected=5000).close("finished")
    with pytest.raises(ValueError, match="planned for 5000"):
        DupeFilter(shared_path=shared, expected=6000)


def test_an_overfilled_table_is_logged(caplog):
    d = DupeFilter(expected=1000)
    d.check_every = 500
    with caplog.at_level("WARNING", logger="simdbloom.scrapy"):
        for r in requests(3000):
            d.request_seen(r)
    assert sum("more than the 1000 planned" in m for m in caplog.messages) == 1  # once
    d.close("finished")


def test_a_burst_in_a_planned_window_is_logged(caplog, clock):
    d = DupeFilter(forget_after=30, expected=300)  # 100 a period
    d.check_every = 50
    with caplog.at_level("WARNING", logger="simdbloom.scrapy"):
        for r in requests(400):
            d.request_seen(r)
    assert any("one period of the window took" in m for m in caplog.messages)
    d.close("finished")


def test_a_jobdir_file_replaced_while_crawling_is_said(tmp_path, caplog):
    d = DupeFilter(str(tmp_path))
    d.request_seen(Request("http://example.org/a"))
    d.close("shutdown")
    d = DupeFilter(str(tmp_path))
    (tmp_path / "requests.sbloom").write_bytes((tmp_path / "requests.sbloom").read_bytes())
    with caplog.at_level("WARNING", logger="simdbloom.scrapy"):
        d.close("finished")  # cp over it meanwhile: said, then saved over it
    assert any("was replaced or removed while the crawl ran" in m for m in caplog.messages)


def test_built_by_scrapy_redis_scheduler_from_spider():
    from scrapy.utils.test import get_crawler
    crawler = get_crawler(settings_dict={"SIMDBLOOM_EXPECTED": 5000, "SIMDBLOOM_FPP": 1e-5})

    class Spider:
        settings = crawler.settings

    Spider.crawler = crawler
    d = DupeFilter.from_spider(Spider())
    assert d.filter.planned_items == 5000 and d.filter.planned_fpp == 1e-5
    assert not d.request_seen(Request("http://example.org/a"))
    d.close("finished")
