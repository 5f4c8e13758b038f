"""
L{MemoryUsage}: the process's memory, watched while the crawl runs, as Scrapy's extension.

On unless C{MEMUSAGE_ENABLED} is off (or the platform has no C{resource} module). From
C{engine_started}, every C{MEMUSAGE_CHECK_INTERVAL_SECONDS} (a C{LoopingCall} on the
crawler's reactor; nothing per page), it reads the peak resident memory of the process
(C{getrusage}'s C{ru_maxrss}) into the stats:

    - C{memusage/startup} when the engine starts, C{memusage/max} the largest seen;
    - C{MEMUSAGE_WARNING_MB}: once it is passed, C{memusage/warning_reached} is 1, one
      WARNING C{Memory usage reached <N>MiB} is logged and C{memusage_warning_reached} is
      sent (once a crawl);
    - C{MEMUSAGE_LIMIT_MB}: once it is passed, C{memusage/limit_reached} is 1, one ERROR
      C{Memory usage exceeded <N>MiB. Shutting down Scrapy...} is logged, and the crawl
      closes with the finish reason C{memusage_exceeded} (the downloads in flight finish,
      as for any close); below it, each check logs C{Peak memory usage is <N>MiB} at INFO;
    - C{MEMUSAGE_NOTIFY_MAIL}: the addresses a report is mailed to when the warning or the
      limit is reached (L{tinyscrapy.mail.MailSender}, with the C{MAIL_*} settings;
      C{memusage/warning_notified}, C{memusage/limit_notified}); the crawl's close
      waits for the mails (bounded by the sender's timeouts).
"""

import logging
import socket
import sys
from importlib import import_module
from pprint import pformat

from twisted.internet.defer import DeferredList
from twisted.internet.task import LoopingCall

from tinyscrapy import signals
from tinyscrapy.exceptions import NotConfigured

logger = logging.getLogger(__name__)

MB = 1024 * 1024

# Scrapy's name for what makes the checks' loops (its tests replace it)
create_looping_call = LoopingCall


class MemoryUsage:
    """
    Watches the memory of the process for one crawl (see the module docstring).

    @ivar limit: C{MEMUSAGE_LIMIT_MB} in bytes (0: none).
    @ivar warning: C{MEMUSAGE_WARNING_MB} in bytes (0: none).
    @ivar warned: whether the warning was given.
    @ivar tasks: the running loops.
    """

    def __init__(self, crawler):
        """@raise NotConfigured: C{MEMUSAGE_ENABLED} is off, or there is no C{resource}."""
        settings = crawler.settings
        if not settings.getbool("MEMUSAGE_ENABLED"):
            raise NotConfigured
        try:
            self.resource = import_module("resource")  # POSIX only
        except ImportError as e:
            raise NotConfigured from e
        self.crawler = crawler
        self._stats = crawler.stats
        self.warned = False
        self.notify_mails = settings.getlist("MEMUSAGE_NOTIFY_MAIL")
        if self.notify_mails:
            from tinyscrapy.mail import MailSender
            self.mail = MailSender.from_crawler(crawler)
        self.limit = settings.getint("MEMUSAGE_LIMIT_MB") * MB
        self.warning = settings.getint("MEMUSAGE_WARNING_MB") * MB
        self.check_interval = settings.getfloat("MEMUSAGE_CHECK_INTERVAL_SECONDS")
        self.tasks = []
        self._mails = []
        crawler.signals.connect(self.engine_started, signal=signals.engine_started)
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def get_virtual_size(self):
        """@return: the peak resident memory of the process so far, in bytes."""
        size = self.resource.getrusage(self.resource.RUSAGE_SELF).ru_maxrss
        if sys.platform != "darwin":  # kilobytes, except on macOS
            size *= 1024
        return size

    def engine_started(self):
        """Note the memory now, and start the checks (each runs once at once)."""
        self._stats.set_value("memusage/startup", self.get_virtual_size())
        checks = [self.update]
        if self.limit:
            checks.append(self._check_limit)
        if self.warning:
            checks.append(self._check_warning)
        for check in checks:
            task = create_looping_call(check)
            task.clock = self.crawler.reactor
            self.tasks.append(task)
            task.start(self.check_interval, now=True)

    def engine_stopped(self):
        """
        Stop the checks.

        @return: None, or a Deferred firing once the report mails still on their way are
            sent or given up (the close waits for them; it never errbacks).
        """
        for task in self.tasks:
            if getattr(task, "running", False):
                task.stop()
        self.tasks = []
        mails, self._mails = self._mails, []
        if mails:
            return DeferredList(mails, consumeErrors=True)
        return None

    def update(self):
        self._stats.max_value("memusage/max", self.get_virtual_size())

    def _check_limit(self):
        peak = self.get_virtual_size()
        if peak <= self.limit:
            logger.info("Peak memory usage is %(virtualsize)dMiB", {"virtualsize": peak / MB})
            return
        self._stats.set_value("memusage/limit_reached", 1)
        mem = self.limit / MB
        logger.error("Memory usage exceeded %(memusage)dMiB. Shutting down Scrapy...",
                     {"memusage": mem}, extra={"crawler": self.crawler})
        if self.notify_mails:
            subject = (f"{self.crawler.settings['BOT_NAME']} terminated: memory usage "
                       f"exceeded {mem}MiB at {socket.gethostname()}")
            self._send_report(self.notify_mails, subject)
            self._stats.set_value("memusage/limit_notified", 1)
        for task in self.tasks:  # closing: one error is enough
            if getattr(task, "f", None) == self._check_limit and task.running:
                task.stop()
        engine = self.crawler.engine
        if engine is not None and engine.spider is not None:
            engine.close_spider("memusage_exceeded")
        else:
            self.crawler.stop("memusage_exceeded")

    def _check_warning(self):
        if self.warned:  # once
            return
        if self.get_virtual_size() <= self.warning:
            return
        self._stats.set_value("memusage/warning_reached", 1)
        self.crawler.signals.send(signals.memusage_warning_reached)
        mem = self.warning / MB
        logger.warning("Memory usage reached %(memusage)dMiB", {"memusage": mem},
                       extra={"crawler": self.crawler})
        if self.notify_mails:
            subject = (f"{self.crawler.settings['BOT_NAME']} warning: memory usage reached "
                       f"{mem}MiB at {socket.gethostname()}")
            self._send_report(self.notify_mails, subject)
            self._stats.set_value("memusage/warning_notified", 1)
        self.warned = True

    def _send_report(self, recipients, subject):
        """Mail the memory figures and the engine's status (a failure is logged once, by
        the sender)."""
        from tinyscrapy.extensions.debug import engine_status
        from tinyscrapy.mail import failure_logged
        body = (f"Memory usage at engine startup : "
                f"{self._stats.get_value('memusage/startup', 0) / MB}M\r\n"
                f"Maximum memory usage          : "
                f"{self._stats.get_value('memusage/max', 0) / MB}M\r\n"
                f"Current memory usage          : {self.get_virtual_size() / MB}M\r\n"
                "ENGINE STATUS ------------------------------------------------------- \r\n"
                "\r\n"
                f"{pformat(engine_status(self.crawler.engine))}\r\n")
        d = self.mail.send(recipients, subject, body)
        if d is not None:
            d.addErrback(failure_logged)
            self._mails.append(d)
