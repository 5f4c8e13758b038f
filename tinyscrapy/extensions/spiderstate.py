"""
L{SpiderState}: C{spider.state}, a dict the spider keeps across a pause and a resume, as
Scrapy's extension, in the job directory.

On only with a job directory (C{JOBDIR}, C{--jobdir}). When the spider opens,
C{spider.state} is what the last run left in C{<jobdir>/<spider name>/spider.state}, or
C{{}}; when it closes, it is written there again (a new file, C{0600}, put in place of
the old one only once it is complete).

The file is JSON written by the job directory's codec (L{tinyscrapy.frontier.plaindata}),
never a pickle: what a state may hold is plain data (None, booleans, numbers, strings,
lists, dicts) and the codec's tagged kinds (bytes, tuples, sets, dates and datetimes,
registered items), and reading it back runs no code. At close, a value the codec cannot
hold is left out with one ERROR line naming its key; the others are kept. A file that
is not one this code wrote (damaged, edited by hand, or Scrapy's pickle) stops the start
with one line, before anything is fetched: nothing in it is loaded.
"""

import json
import logging
import os

from tinyscrapy import signals
from tinyscrapy.exceptions import NotConfigured, UsageError
from tinyscrapy.frontier.jobdir import make_private_dir, spider_jobdir
from tinyscrapy.frontier.plaindata import NotPlain, StoredRequestError, plain, untag

logger = logging.getLogger(__name__)

STATE_FILE = "spider.state"
FORMAT = "tinyscrapy spider state 1"  # the file's "format": bump when the layout changes
_decode_json = json.JSONDecoder(object_hook=untag).decode


class SpiderState:
    """
    Loads C{spider.state} when the spider opens, saves it when it closes.

    @ivar jobdir: the spider's own directory in the job directory, or None (then
        C{spider.state} is a new C{{}} and nothing is saved).
    @ivar crawler: the crawler, when built by L{from_crawler} (a failed save closes it
        with C{jobdir_error}), else None.
    """

    def __init__(self, jobdir=None, crawler=None):
        self.jobdir = jobdir
        self.crawler = crawler
        self._loaded = None

    @classmethod
    def from_crawler(cls, crawler):
        """
        @raise NotConfigured: there is no job directory.
        @raise UsageError: the state file cannot be read, or is not one this code wrote.
        """
        jobdir = crawler.settings.get("JOBDIR")
        if not jobdir:
            raise NotConfigured
        spider = crawler.spider
        name = spider.name if spider is not None else crawler.spidercls.name
        extension = cls(spider_jobdir(jobdir, name or ""), crawler)
        extension._loaded = extension._load()  # a bad file stops the start here
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        return extension

    @property
    def statefn(self):
        """The state file's path."""
        return os.path.join(self.jobdir, STATE_FILE)

    def spider_opened(self, spider):
        """Give the spider its saved state (or C{{}})."""
        if self._loaded is not None:
            spider.state, self._loaded = self._loaded, None
        elif self.jobdir:
            spider.state = self._load()
        else:
            spider.state = {}

    def spider_closed(self, spider):
        """Save C{spider.state} (what the codec can hold of it)."""
        if not self.jobdir:
            return
        state = getattr(spider, "state", {})
        try:
            data = self._encode(state)
            make_private_dir(self.jobdir)
            self._write(data)
        except (OSError, UsageError) as e:
            logger.error("cannot save spider.state of %s in %s: %s", spider.name,
                         self.statefn, getattr(e, "strerror", None) or e)
            self._failed()

    # the file

    def _load(self):
        """
        @return: the state saved in the file, or C{{}} when there is none.
        @raise UsageError: it cannot be read, or is not one this code wrote.
        """
        try:
            with open(self.statefn, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return {}
        except OSError as e:
            raise UsageError(f"--jobdir: cannot read {self.statefn} "
                             f"({e.strerror or e})") from None
        if raw[:1] == b"\x80":
            raise UsageError(f"--jobdir: {self.statefn} is a pickle (Scrapy's spider.state); "
                             "tinyscrapy never loads pickles: remove it to start the state "
                             "afresh")
        try:
            document = _decode_json(raw.decode("utf-8"))
            if not isinstance(document, dict) or document.get("format") != FORMAT \
                    or "state" not in document:
                raise StoredRequestError("not a spider state this code wrote")
        except (ValueError, StoredRequestError) as e:  # JSON, UTF-8 and the codec's tags
            raise UsageError(f"--jobdir: {self.statefn} cannot be loaded ({e}): remove it "
                             "to start the state afresh") from None
        return document["state"]

    def _encode(self, state):
        """
        The file's bytes for C{state}: a value the codec cannot hold is left out, with one
        ERROR line naming its key.
        """
        if isinstance(state, dict):
            kept = {}
            for key, value in state.items():
                try:
                    plain({key: value})
                except NotPlain as e:
                    logger.error("spider.state[%r] cannot be saved in the job directory "
                                 "(%s, not plain data): left out", key, e)
                    continue
                kept[key] = value
            state = kept
        try:
            document = {"format": FORMAT, "state": plain(state)}
        except NotPlain as e:
            logger.error("spider.state cannot be saved in the job directory (%s, not plain "
                         "data): left out", e)
            document = {"format": FORMAT, "state": {}}
        return json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass")

    def _write(self, data):
        """Write C{data} to a new private file, then put it in place of the old one."""
        temporary = self.statefn + ".new"
        if os.path.lexists(temporary):
            os.unlink(temporary)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, self.statefn)
        except OSError:
            if os.path.lexists(temporary):
                os.unlink(temporary)
            raise

    def _failed(self):
        """The state could not be saved: the crawl ends with C{jobdir_error} (exit 1)."""
        crawler = self.crawler
        if crawler is None:
            return
        crawler.stats.set_value("finish_reason", "jobdir_error")
        engine = crawler.engine
        if engine is not None:
            engine.stop_for_error("jobdir_error")
