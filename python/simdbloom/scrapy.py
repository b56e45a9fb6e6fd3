"""A Scrapy duplicate filter over simdbloom.

    # settings.py
    DUPEFILTER_CLASS = "simdbloom.scrapy.DupeFilter"
    SIMDBLOOM_EXPECTED = 10_000_000     # distinct requests to plan for (default: grow as they come)
    SIMDBLOOM_FPP = 1e-6                 # the chance a new request is taken for a seen one

Requests are keyed by Scrapy's own fingerprint (crawler.request_fingerprinter), as the default
RFPDupeFilter keys them. Where the table lives:

- in the process (default): a filter that grows with the crawl (or planned for
  SIMDBLOOM_EXPECTED), about 3.6 bytes a request at 1e-6 instead of a Python set's 100+;
- under JOBDIR (Scrapy's pause and resume): the file JOBDIR/requests.sbloom, mapped and written
  in place, so a crawl killed at any moment resumes without fetching again a page it had
  requested (the file's bits are in the page cache the moment a request is seen; its header is
  brought up to date when the spider closes, and a file left by a killed crawl is still read);
- SIMDBLOOM_SHARED_PATH: one file several Scrapy processes on the host share (mapped, concurrent
  mode): each request is let through by exactly one of them;
- SIMDBLOOM_REDIS_NODES ("host:port,...") and SIMDBLOOM_REDIS_NAME: one table for a fleet of
  Scrapy processes on any hosts, kept in a Redis Cluster (or one Redis server); created from
  SIMDBLOOM_EXPECTED (default 10M) by the first process, found by the others; the password from
  REDISCLI_AUTH. Each request is let through by exactly one process of the fleet;
- SIMDBLOOM_FORGET_AFTER (seconds): a request seen more than that long ago is let through again
  (a recrawl window: 3 periods of a third of it, so forgotten between once and 4/3 of it). In the
  process, or with JOBDIR or SIMDBLOOM_SHARED_PATH in a windowed file that keeps the window (its
  clock is the wall clock; a file made without the window is refused). Not with Redis yet.

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

DEFAULT_MAPPED_EXPECTED = 10_000_000  # a file must have a size: planned when none is given


def _windowed(expected, fpp, forget_after):
    """A windowed filter forgetting after forget_after seconds: 3 periods of a third of it;
    without expected, one that grows as requests come."""
    period = max(1, -(-int(forget_after) // 3))
    return Filter.windowed(expected or None, fpp, 3, period, int(time.time()))


def _mapped(path, expected, fpp, concurrent, forget_after=None):
    """The filter file at path, mapped for writing; made first if absent (windowed with
    forget_after). Processes starting together must all map the one file: it is made under
    another name and linked into place, which fails for all but the first (a rename would
    replace a file another process had already mapped)."""
    if not os.path.exists(path):
        made = f"{path}.new.{os.getpid()}"
        table = _windowed(expected or DEFAULT_MAPPED_EXPECTED, fpp, forget_after) if forget_after else \
            Filter(expected or DEFAULT_MAPPED_EXPECTED, fpp)
        table.save(made)  # whole, or not at all
        try:
            os.link(made, path)
        except FileExistsError:
            pass  # another process made it first: theirs is the table
        finally:
            os.unlink(made)
    return Filter.map(path, write=True, concurrent=concurrent)


class DupeFilter(BaseDupeFilter):
    """Drop-in replacement for scrapy.dupefilters.RFPDupeFilter, backed by simdbloom."""

    def __init__(self, path=None, debug=False, *, fingerprinter=None, expected=None, fpp=1e-6,
                 shared_path=None, forget_after=None, stats=None, redis_nodes=None,
                 redis_name="scrapy"):
        from scrapy.utils.request import RequestFingerprinter

        self.fingerprinter = fingerprinter or RequestFingerprinter()
        self.debug = debug
        self.logdupes = True
        self.stats = stats
        self.forget_after = forget_after
        self.path = None  # a file this process alone writes (JOBDIR): its header synced at close
        if redis_nodes and forget_after:
            raise ValueError("SIMDBLOOM_FORGET_AFTER does not go with SIMDBLOOM_REDIS_NODES yet "
                             "(the fleet's window is `simdbloom dedup --redis --forget-after`)")
        if redis_nodes:
            if not hasattr(_simdbloom, "RedisFilter"):
                raise RuntimeError("this simdbloom was built without Redis support (libhiredis-dev)")
            self.filter = _simdbloom.RedisFilter(redis_nodes, redis_name,
                                                 expected=expected or DEFAULT_MAPPED_EXPECTED,
                                                 fpp=fpp)
        elif shared_path:
            # other processes may still add when this one closes: the header is left as it is
            # (the file stays readable; `simdbloom info` counts from the bits)
            self.filter = _mapped(shared_path, expected, fpp, True, forget_after)
        elif path:
            self.path = os.path.join(path, "requests.sbloom")
            self.filter = _mapped(self.path, expected, fpp, False, forget_after)
        elif forget_after:
            self.filter = _windowed(expected, fpp, forget_after)
        else:
            self.filter = Filter(expected, fpp)
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
                   redis_name=settings.get("SIMDBLOOM_REDIS_NAME", "scrapy"))

    @classmethod
    def from_crawler(cls, crawler):
        return cls.from_settings(crawler.settings, fingerprinter=crawler.request_fingerprinter,
                                 stats=crawler.stats)

    def request_seen(self, request):
        if self.forget_after:
            self.filter.advance(int(time.time()))
        return not self.filter.add(self.fingerprinter.fingerprint(request))

    def close(self, reason):
        if self.path:
            self.filter.sync()  # the header's count and checksum: a valid file again
        if self.stats and isinstance(self.filter, Filter):
            est = self.filter.estimate()
            self.stats.set_value("simdbloom/fill", round(est["fill"], 6))
            self.stats.set_value("simdbloom/fpp_now", est["fpp_now"])

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
