"""
Frontier backends: which L{tinyscrapy.core.scheduler.Scheduler} a crawl uses.

    - in memory (the default): L{tinyscrapy.core.scheduler.Scheduler};
    - on disk (C{--jobdir DIR}, the C{JOBDIR} setting): L{tinyscrapy.frontier.disk};
    - shared (C{--scheduler redis://host:port/db}, or C{rediss://} over TLS;
      C{SCHEDULER_URL}):
      L{tinyscrapy.frontier.redis}.

A C{SCHEDULER} setting the user changed always wins.

With C{--workers N} (C{WORKERS}, L{workers_wanted}) the crawl's frontier is the parent
process's, which leases it to N worker processes: L{tinyscrapy.frontier.service} (the
parent), L{tinyscrapy.frontier.processes} (the parent's end of each worker process) and
L{tinyscrapy.frontier.worker} (each worker's scheduler).
"""

import os

from tinyscrapy.exceptions import UsageError
from tinyscrapy.utils.misc import load_object

BACKENDS = {
    "redis": "tinyscrapy.frontier.redis.RedisScheduler",
    "rediss": "tinyscrapy.frontier.redis.RedisScheduler",  # over TLS
}
DISK = "tinyscrapy.frontier.disk.DiskScheduler"


def scheduler_class(settings):
    """The scheduler class the settings ask for. @raise UsageError: they ask for two."""
    jobdir, url = settings.get("JOBDIR"), settings.get("SCHEDULER_URL")
    if "SCHEDULER" in settings.overridden():
        return load_object(settings.get("SCHEDULER"))
    if jobdir and url:
        raise UsageError("--jobdir and --scheduler both name a frontier: give one")
    if url:
        scheme = url.partition("://")[0].lower()
        if scheme not in BACKENDS:
            raise UsageError(f"--scheduler {url}: unknown frontier (known: "
                             f"{', '.join(s + '://' for s in BACKENDS)})")
        return load_object(BACKENDS[scheme])
    if jobdir:
        return load_object(DISK)
    return load_object(settings.get("SCHEDULER"))


def workers_wanted(settings):
    """
    How many worker processes C{WORKERS} asks for: a whole number, or C{"auto"} (the
    cores this process may run on). 1 means none: the crawl runs in this process.

    @raise UsageError: neither a whole number of at least 1 nor C{"auto"}.
    """
    value = settings.get("WORKERS", 1)
    text = value.strip().lower() if isinstance(value, str) else None
    if text == "auto":
        return cores()
    if text is not None and text.isdigit() and int(text) >= 1:
        return int(text)
    if type(value) is int and value >= 1:
        return value
    raise UsageError(f"--workers {value}: expected a whole number of at least 1, or "
                     f"\"auto\" (one per core)")


def cores():
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def is_shared(settings):
    """Whether the workers share a frontier of their own (C{SCHEDULER_URL}, and no
    C{SCHEDULER} the user set): then the parent holds none."""
    return bool(settings.get("SCHEDULER_URL")) and "SCHEDULER" not in settings.overridden()


def disconnect_spider_receivers(crawler, signals):
    """
    Disconnect from each of C{signals} the receivers the spider's C{from_crawler}
    connected: with C{--workers}, a spider's receiver of a signal runs in one process
    only (the parent, or the worker where the event happened), once per event.
    """
    bus = crawler.signals
    spider_receivers = crawler._spider_receivers
    for signal in signals:
        for receiver in spider_receivers.get(signal, ()):
            bus.disconnect(receiver, signal)
