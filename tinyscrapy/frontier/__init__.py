"""
Frontier backends: which L{tinyscrapy.core.scheduler.Scheduler} a crawl uses.

    - in memory (the default): L{tinyscrapy.core.scheduler.Scheduler};
    - on disk (C{--jobdir DIR}, the C{JOBDIR} setting): L{tinyscrapy.frontier.disk};
    - shared (C{--scheduler redis://host:port/db}, or C{rediss://} over TLS;
      C{SCHEDULER_URL}):
      L{tinyscrapy.frontier.redis}.

A C{SCHEDULER} setting the user changed always wins.
"""

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
