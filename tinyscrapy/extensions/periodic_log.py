"""
L{PeriodicLog}: the stats as JSON in the log every C{LOGSTATS_INTERVAL} seconds (and once
more at the close), as Scrapy's extension. It is not in C{EXTENSIONS_BASE}: enable it in
C{EXTENSIONS} (C{"tinyscrapy.extensions.periodic_log.PeriodicLog": 0}) and say what to log:

    - C{PERIODIC_LOG_STATS}: the stats themselves (C{"stats"}); True for all, or
      C{{"include": [...], "exclude": [...]}} of parts of their names;
    - C{PERIODIC_LOG_DELTA}: how much each number grew since the last line (C{"delta"}),
      the same way;
    - C{PERIODIC_LOG_TIMING_ENABLED}: the times (C{"time"}: C{log_interval},
      C{start_time}, C{utcnow}, C{log_interval_real}, C{elapsed}).

With none of them, or C{LOGSTATS_INTERVAL} 0, it is not built. A name is logged when it
contains none of C{exclude} and, if C{include} is given, one of C{include}.
"""

import json
import logging
import warnings
from datetime import datetime, timezone

from twisted.internet.task import LoopingCall

from tinyscrapy import signals
from tinyscrapy.exceptions import NotConfigured, ScrapyDeprecationWarning, UsageError
from tinyscrapy.statscollectors import _json_value

logger = logging.getLogger(__name__)


class PeriodicLog:
    """
    Logs the chosen parts of the stats periodically (see the module docstring).

    @ivar interval: seconds between two lines.
    @ivar task: the C{LoopingCall} while the spider is open, else None.
    """

    def __init__(self, stats, interval=60.0, ext_stats=None, ext_delta=None,
                 ext_timing_enabled=False, clock=None):
        self.stats = stats
        self.interval = interval
        self._multiplier = 60.0 / interval
        self.task = None
        self.clock = clock
        self.encoder = json.JSONEncoder(sort_keys=True, indent=4, default=_json_value)
        self.ext_stats_enabled = bool(ext_stats)
        self.ext_stats_include = ext_stats.get("include", ()) if ext_stats else ()
        self.ext_stats_exclude = ext_stats.get("exclude", ()) if ext_stats else ()
        self.ext_delta_enabled = bool(ext_delta)
        self.ext_delta_include = ext_delta.get("include", ()) if ext_delta else ()
        self.ext_delta_exclude = ext_delta.get("exclude", ()) if ext_delta else ()
        self.ext_timing_enabled = ext_timing_enabled

    @property
    def multiplier(self):
        warnings.warn("The PeriodicLog.multiplier attribute is deprecated.",
                      ScrapyDeprecationWarning, stacklevel=2)
        return self._multiplier

    @multiplier.setter
    def multiplier(self, value):
        warnings.warn("The PeriodicLog.multiplier attribute is deprecated.",
                      ScrapyDeprecationWarning, stacklevel=2)
        self._multiplier = value

    @classmethod
    def from_crawler(cls, crawler):
        """
        @raise NotConfigured: C{LOGSTATS_INTERVAL} is 0, or nothing is asked for.
        @raise UsageError: C{PERIODIC_LOG_STATS} or C{PERIODIC_LOG_DELTA} is neither a
            dict nor a boolean.
        """
        settings = crawler.settings
        interval = settings.getfloat("LOGSTATS_INTERVAL")
        if not interval:
            raise NotConfigured
        ext_stats = _part(settings, "PERIODIC_LOG_STATS")
        ext_delta = _part(settings, "PERIODIC_LOG_DELTA")
        ext_timing_enabled = settings.getbool("PERIODIC_LOG_TIMING_ENABLED")
        if not (ext_stats or ext_delta or ext_timing_enabled):
            raise NotConfigured
        extension = cls(crawler.stats, interval, ext_stats, ext_delta, ext_timing_enabled,
                        crawler.reactor)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self, spider):
        """Log the first line now, then one every interval."""
        self.time_prev = datetime.now(tz=timezone.utc)
        self.delta_prev = {}
        self.stats_prev = {}
        self.task = LoopingCall(self.log)
        if self.clock is not None:
            self.task.clock = self.clock
        self.task.start(self.interval)

    def log(self):
        data = {}
        if self.ext_timing_enabled:
            data.update(self.log_timing())
        if self.ext_delta_enabled:
            data.update(self.log_delta())
        if self.ext_stats_enabled:
            data.update(self.log_crawler_stats())
        logger.info(self.encoder.encode(data))

    def log_delta(self):
        """@return: C{{"delta": {name: growth since the last call}}} of the numbers."""
        numbers = {key: value for key, value in self.stats.get_stats().items()
                   if isinstance(value, (int, float)) and not isinstance(value, bool)
                   and self.param_allowed(key, self.ext_delta_include,
                                          self.ext_delta_exclude)}
        delta = {key: value - self.delta_prev.get(key, 0) for key, value in numbers.items()}
        self.delta_prev = numbers
        return {"delta": delta}

    def log_timing(self):
        """@return: C{{"time": {...}}}: the interval, the start, now, the real interval
        since the last call and the time since the start, in seconds."""
        now = datetime.now(tz=timezone.utc)
        start_time = self.stats.get_value("start_time") or now
        time = {"log_interval": self.interval,
                "start_time": start_time,
                "utcnow": now,
                "log_interval_real": (now - self.time_prev).total_seconds(),
                "elapsed": (now - start_time).total_seconds()}
        self.time_prev = now
        return {"time": time}

    def log_crawler_stats(self):
        """@return: C{{"stats": {...}}}: the stats whose names are allowed."""
        return {"stats": {key: value for key, value in self.stats.get_stats().items()
                          if self.param_allowed(key, self.ext_stats_include,
                                                self.ext_stats_exclude)}}

    def param_allowed(self, stat_name, include, exclude):
        """Whether C{stat_name} contains none of C{exclude} and, if C{include} is not
        empty, one of C{include}."""
        if not include and not exclude:
            return True
        if any(part in stat_name for part in exclude):
            return False
        if exclude and not include:
            return True
        return any(part in stat_name for part in include)

    def spider_closed(self, spider, reason):
        """One last line, and no more."""
        self.log()
        if self.task is not None and self.task.running:
            self.task.stop()


def _part(settings, name):
    """
    C{PERIODIC_LOG_STATS} or C{PERIODIC_LOG_DELTA}: a dict of C{include}/C{exclude}, or a
    boolean (True: all of it, as C{{"enabled": True}}).

    @return: a dict (empty: off).
    @raise UsageError: neither a dict nor a boolean.
    """
    try:
        return settings.getdict(name)
    except UsageError:
        return {"enabled": True} if settings.getbool(name) else {}
