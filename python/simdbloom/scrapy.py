"""A Scrapy duplicate filter over simdbloom.

    # settings.py
    DUPEFILTER_CLASS = "simdbloom.scrapy.DupeFilter"
    SIMDBLOOM_EXPECTED = 10_000_000     # distinct requests to plan for (default: grow as they come)
    SIMDBLOOM_FPP = 1e-6                 # the chance a new request is taken for a seen one

Requests are keyed by Scrapy's own fingerprint (crawler.request_fingerprinter), as the default
RFPDupeFilter keys them. Where the table lives:

- in the process (default): a filter that grows with the crawl and keeps the rate (or one planned
  for SIMDBLOOM_EXPECTED), about 4.9 bytes a request at 1e-6 instead of a Python set's 80 and more;
- under JOBDIR (Scrapy's pause and resume): the same table, loaded from JOBDIR/requests.sbloom
  when the crawl starts and saved there (crash-safely: a new file renamed over the old) when the
  spider closes and every SIMDBLOOM_CHECKPOINT seconds (default 60). It grows as the crawl does,
  past any plan. A crawl paused (Ctrl-C once, then resumed with the same JOBDIR) fetches no page
  twice; one killed (kill -9) loses Scrapy's own request queue, whatever the filter;
- SIMDBLOOM_SHARED_PATH: one file several Scrapy processes on the host share (mapped, concurrent
  mode): each request is let through by exactly one of them. A mapping has a fixed size: it is
  planned for SIMDBLOOM_EXPECTED requests (default 10,000,000), the first process's plan; a
  process asking for another plan is refused, and an overfilled table is logged. Replace such a
  file only by rename, never in place (cp onto it): the processes mapping it would die of SIGBUS;
- SIMDBLOOM_REDIS_NODES ("host:port,...") and SIMDBLOOM_REDIS_NAME: one table for a fleet of
  Scrapy processes on any hosts, kept in a Redis Cluster (or one Redis server); created from
  SIMDBLOOM_EXPECTED (default 10,000,000) by the first process, found by the others; the
  password from REDISCLI_AUTH; SIMDBLOOM_REDIS_TIMEOUT (seconds a server may take to answer,
  default 2) and SIMDBLOOM_REDIS_RETRY (seconds of retries before giving up, default 5): a stalled
  server raises TimeoutError after that, not a stall of the crawl. Each request is let through by
  exactly one process of the fleet;
- SIMDBLOOM_FORGET_AFTER (seconds): a request seen more than that long ago is let through again
  (a recrawl window: 3 periods of a third of it, so forgotten between once and 4/3 of it). In the
  process or JOBDIR (without SIMDBLOOM_EXPECTED the window grows, so a burst keeps the rate), or
  in a shared file made with the window (its clock is the wall clock; a file made without the
  window is refused). A planned window holds SIMDBLOOM_EXPECTED requests a window, a third of them
  in any one period: more in a period is logged. Not with Redis yet.

Sharing a table is not sharing the work: each process crawls what its own scheduler holds. To
split a site between processes, give each its own start URLs, or use a shared scheduler such as
scrapy-redis's (SCHEDULER = "scrapy_redis.scheduler.Scheduler"), which builds its duplicate filter
from SCHEDULER_DUPEFILTER_CLASS through from_spider: this class has it, so
SCHEDULER_DUPEFILTER_CLASS = "simdbloom.scrapy.DupeFilter" with SIMDBLOOM_REDIS_NODES gives that
scheduler a fleet table of a few bytes a request.

The crawl's stats gain simdbloom/filtered (requests dropped), and at the end simdbloom/fill and
simdbloom/fpp_now (the false-positive rate the table has reached).
"""
import logging
import os
import time

from scrapy.dupefilters import BaseDupeFilter
from scrapy.utils.job import job_dir
from scrapy.utils.request import referer_str

from . import _simdbloom
from ._simdbloom import Filter

logger = logging.getLogger(__name__)

DEFAULT_MAPPED_EXPECTED = 10_000_000  # a shared file or fleet table has a size: its plan if none


def _windowed(expected, fpp, forget_after):
    """A windowed filter forgetting after forget_after seconds: 3 periods of a third of it;
    without expected, one that grows as requests come."""
    period = max(1, -(-int(forget_after) // 3))
    return Filter.windowed(expected or None, fpp, 3, period, int(time.time()), layout="bloom")


def _new_table(expected, fpp, forget_after):
    # A Bloom table: a crawl's table must take every request (a fingerprint table refuses those
    # past its plan), and a shared one needs the concurrent mode
    return (_windowed(expected, fpp, forget_after) if forget_after
            else Filter(expected, fpp, layout="bloom"))


def _plan_matches(table, expected, path):
    """A file planned for other than SIMDBLOOM_EXPECTED: refused, naming both."""
    planned = table.planned_items
    if expected and not table.growing and planned != expected:
        raise ValueError(f"{path} holds a table planned for {planned} requests; "
                         f"SIMDBLOOM_EXPECTED asks for {expected}. Leave SIMDBLOOM_EXPECTED as it "
                         f"was (or out), or start a new table at another path")


class DupeFilter(BaseDupeFilter):
    """Drop-in replacement for scrapy.dupefilters.RFPDupeFilter, backed by simdbloom."""

    check_every = 65_536  # requests between two looks at the table (an estimate: microseconds)

    def __init__(self, path=None, debug=False, *, fingerprinter=None, expected=None, fpp=1e-6,
                 shared_path=None, forget_after=None, stats=None, redis_nodes=None,
                 redis_name="scrapy", redis_timeout=2.0, redis_retry=5.0, checkpoint=60.0):
        from scrapy.utils.request import RequestFingerprinter

        self.fingerprinter = fingerprinter or RequestFingerprinter()
        self.debug = debug
        self.logdupes = True
        self.stats = stats
        self.forget_after = forget_after
        self.path = None  # JOBDIR's file: loaded at the start, saved at checkpoints and the end
        self.checkpoint = checkpoint
        self.saved_at = time.monotonic()
        self.seen_file = None  # (inode, size, mtime) of the file as last loaded or saved
        self.expected = expected
        self.requests = 0
        self.warned = False
        if redis_nodes and forget_after:
            raise ValueError("SIMDBLOOM_FORGET_AFTER does not go with SIMDBLOOM_REDIS_NODES yet "
                             "(the fleet's window is `simdbloom dedup --redis --forget-after`)")
        if redis_nodes:
            if not hasattr(_simdbloom, "RedisFilter"):
                raise RuntimeError("this simdbloom was built without Redis support (libhiredis-dev)")
            self.filter = _simdbloom.RedisFilter(redis_nodes, redis_name,
                                                 expected=expected or DEFAULT_MAPPED_EXPECTED,
                                                 fpp=fpp, timeout=redis_timeout, retry=redis_retry)
        elif shared_path:
            # other processes may still add when this one closes: the header is left as it is
            # (the file stays readable; `simdbloom info` counts from the bits)
            made = _new_table(expected or DEFAULT_MAPPED_EXPECTED, fpp, forget_after) \
                if not os.path.exists(shared_path) else None
            if made is not None:
                made.save(f"{shared_path}.new.{os.getpid()}")
                try:  # processes starting together all map the one file (the first link wins)
                    os.link(f"{shared_path}.new.{os.getpid()}", shared_path)
                except FileExistsError:
                    pass
                finally:
                    os.unlink(f"{shared_path}.new.{os.getpid()}")
            self.filter = Filter.map(shared_path, write=True, concurrent=True)
            _plan_matches(self.filter, expected, shared_path)
        elif path:
            self.path = os.path.join(path, "requests.sbloom")
            if os.path.exists(self.path):
                self.filter = Filter.load(self.path)
                _plan_matches(self.filter, expected, self.path)
                self.seen_file = self._file_state()
            else:
                self.filter = _new_table(expected, fpp, forget_after)
        else:
            self.filter = _new_table(expected, fpp, forget_after)
        if forget_after and self.filter.layout != "windowed":
            raise ValueError(f"{shared_path or self.path} was made without a window: "
                             "SIMDBLOOM_FORGET_AFTER needs a file made with it (or another path)")
        if forget_after:
            self.filter.advance(int(time.time()))  # what fell out of the window meanwhile

    @classmethod
    def from_settings(cls, settings, *, fingerprinter=None, stats=None):
        expected = settings.getint("SIMDBLOOM_EXPECTED") or None
        return cls(job_dir(settings), settings.getbool("DUPEFILTER_DEBUG"),
                   fingerprinter=fingerprinter, expected=expected,
                   fpp=settings.getfloat("SIMDBLOOM_FPP", 1e-6),
                   shared_path=settings.get("SIMDBLOOM_SHARED_PATH"),
                   forget_after=settings.getint("SIMDBLOOM_FORGET_AFTER") or None, stats=stats,
                   redis_nodes=settings.get("SIMDBLOOM_REDIS_NODES"),
                   redis_name=settings.get("SIMDBLOOM_REDIS_NAME", "scrapy"),
                   redis_timeout=settings.getfloat("SIMDBLOOM_REDIS_TIMEOUT", 2.0),
                   redis_retry=settings.getfloat("SIMDBLOOM_REDIS_RETRY", 5.0),
                   checkpoint=settings.getfloat("SIMDBLOOM_CHECKPOINT", 60.0))

    @classmethod
    def from_crawler(cls, crawler):
        return cls.from_settings(crawler.settings, fingerprinter=crawler.request_fingerprinter,
                                 stats=crawler.stats)

    @classmethod
    def from_spider(cls, spider):
        """How scrapy-redis's scheduler builds its duplicate filter (SCHEDULER_DUPEFILTER_CLASS)."""
        crawler = getattr(spider, "crawler", None)
        if crawler is not None:
            return cls.from_crawler(crawler)
        return cls.from_settings(spider.settings)

    def request_seen(self, request):
        if self.forget_after:
            self.filter.advance(int(time.time()))
        seen = not self.filter.add(self.fingerprinter.fingerprint(request))
        self.requests += 1
        if self.requests % self.check_every == 0:
            self._look_at_the_table()
        return seen

    def _file_state(self):
        st = os.stat(self.path)
        return st.st_ino, st.st_size, st.st_mtime_ns

    def _save(self):
        """JOBDIR's table saved crash-safely; a file someone replaced meanwhile is said."""
        try:
            replaced = self.seen_file is not None and self._file_state() != self.seen_file
        except FileNotFoundError:
            replaced = self.seen_file is not None
        if replaced:
            logger.warning("%s was replaced or removed while the crawl ran: this crawl's table "
                           "is saved over it (its contents are not in it)", self.path)
        self.filter.save(self.path)
        self.seen_file = self._file_state()
        self.saved_at = time.monotonic()

    def _look_at_the_table(self, checkpoint=True):
        """Checkpoints (JOBDIR) and the overfill warning (a table of fixed size), once."""
        if checkpoint and self.path and time.monotonic() - self.saved_at >= self.checkpoint:
            self._save()
        if self.warned or not isinstance(self.filter, Filter) or self.filter.growing:
            return
        table = self.filter
        if table.layout == "windowed":
            window = table.window()
            share = -(-table.planned_items // window["periods"])
            most = max(g["items"] for g in window["generations"])
            if most > 1.02 * share:
                self.warned = True
                logger.warning("simdbloom: one period of the window took %d requests, more than "
                               "its share (%d) of the %d planned a window: the false-positive "
                               "rate is now about %.3g (planned %.3g). Plan for more "
                               "(SIMDBLOOM_EXPECTED, a third of it a period), or leave it out: "
                               "the window then grows", most, share, table.planned_items,
                               table.estimate()["fpp_now"], table.planned_fpp)
            return
        est = table.estimate()
        if est["estimated_items"] > 1.02 * table.planned_items:
            self.warned = True
            logger.warning("simdbloom: about %d requests, more than the %d planned: the "
                           "false-positive rate is now about %.3g (planned %.3g). Plan for more "
                           "(SIMDBLOOM_EXPECTED), or leave it out: the table then grows",
                           est["estimated_items"], table.planned_items, est["fpp_now"],
                           table.planned_fpp)

    def close(self, reason):
        if isinstance(self.filter, Filter):
            self._look_at_the_table(checkpoint=False)  # (saved below)
        if self.path:
            self._save()
        if self.stats and isinstance(self.filter, Filter):
            est = self.filter.estimate()
            self.stats.set_value("simdbloom/fill", round(est["fill"], 6))
            self.stats.set_value("simdbloom/fpp_now", est["fpp_now"])
        self.filter.close()

    def log(self, request, spider):
        if self.stats:
            self.stats.inc_value("simdbloom/filtered", spider=spider)
        if self.debug:
            logger.debug("Filtered duplicate request: %(request)s (referer: %(referer)s)",
                         {"request": request, "referer": referer_str(request)},
                         extra={"spider": spider})
        elif self.logdupes:
            logger.debug("Filtered duplicate request: %(request)s - no more duplicates will be "
                         "shown (see DUPEFILTER_DEBUG to show all duplicates)",
                         {"request": request}, extra={"spider": spider})
            self.logdupes = False
        spider.crawler.stats.inc_value("dupefilter/filtered", spider=spider)
