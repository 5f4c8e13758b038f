"""
Which reactor runs the crawl (C{TWISTED_REACTOR}), and the boundary between the user's
coroutines and the engine's Deferreds.

Twisted's reactor is chosen once per process, by the first import of
C{twisted.internet.reactor}: L{install_reactor} must run before anything imports it.
L{tinyscrapy.crawler.CrawlerProcess} and L{tinyscrapy.crawler.Crawler} call
L{apply_reactor_setting} first thing, so C{TWISTED_REACTOR} in the settings (or a
spider's C{custom_settings}) takes effect as in Scrapy.

Under the asyncio reactor, a callback's coroutine (or C{async def start()}) runs as an
asyncio Task (L{deferred_from_coro}), so it can await asyncio code (C{asyncio.sleep},
aiohttp, ...); a Deferred is awaited there through L{maybe_deferred_to_future}, as in
Scrapy. Under the default reactor, coroutines run with Twisted's C{ensureDeferred}: they
await Deferreds directly, and awaiting asyncio code fails with L{AsyncioReactorNeeded},
which names the setting.
"""

import logging
import sys

from tinyscrapy.exceptions import UsageError

logger = logging.getLogger(__name__)

ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
_asyncio_reactor_path = ASYNCIO_REACTOR  # Scrapy's private name: its command tests import it

# what asyncio raises when it is awaited with no asyncio loop running the coroutine
_NO_ASYNCIO_LOOP = ("no running event loop", "await wasn't used with future")


class AsyncioReactorNeeded(RuntimeError):
    """A coroutine awaited asyncio code under a reactor that is not asyncio's."""


def verify_installed_reactor(reactor_path):
    """@raise RuntimeError: no reactor is installed, or not one of the class
    C{reactor_path} names (Scrapy's check)."""
    from tinyscrapy.utils.misc import load_object
    installed = _installed()
    if installed is None:
        raise RuntimeError("verify_installed_reactor() called without an installed reactor.")
    if type(installed) is not load_object(reactor_path):
        installed_path = f"{type(installed).__module__}.{type(installed).__qualname__}"
        raise RuntimeError(f"The installed reactor ({installed_path}) does not "
                           f"match the requested one ({reactor_path})")


def verify_installed_asyncio_event_loop(loop_path):
    """@raise RuntimeError: no reactor is installed, or its asyncio loop is not of the
    class C{loop_path} names (Scrapy's check)."""
    from tinyscrapy.utils.misc import load_object
    installed = _installed()
    if installed is None:
        raise RuntimeError("verify_installed_asyncio_event_loop() called without an "
                           "installed reactor.")
    loop = getattr(installed, "_asyncioEventloop", None)
    if not isinstance(loop, load_object(loop_path)):
        raise RuntimeError(f"Scrapy found an asyncio Twisted reactor already installed, and "
                           f"its event loop class ({type(loop).__module__}."
                           f"{type(loop).__qualname__}) does not match the one specified in "
                           f"the ASYNCIO_EVENT_LOOP setting ({loop_path})")


def set_asyncio_event_loop_policy():
    """Make asyncio's policy one whose loops the asyncio reactor can use (Scrapy's helper:
    on Windows the selector policy; elsewhere there is nothing to do)."""
    if sys.platform != "win32":
        return
    import asyncio
    if not isinstance(asyncio.get_event_loop_policy(), asyncio.WindowsSelectorEventLoopPolicy):
        asyncio.set_event_loop_policy(asyncio.WindowsSelectorEventLoopPolicy())


def set_asyncio_event_loop(event_loop_path):
    """
    The asyncio loop to run, made the current one (Scrapy's helper): a loop of the class
    C{event_loop_path} names (the current one if it is of that class already), or with
    None the current loop, made when there is none.

    @return: the loop.
    """
    import asyncio
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        try:  # the current loop, not running yet
            loop = asyncio.get_event_loop_policy().get_event_loop()
        except RuntimeError:  # none (a thread without one)
            loop = None
    if event_loop_path is not None:
        from tinyscrapy.utils.misc import load_object
        if not isinstance(loop, load_object(event_loop_path)):
            loop = _new_event_loop(event_loop_path)
        return loop
    if loop is None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    return loop


def _new_event_loop(event_loop_path):
    """A new asyncio loop (of C{event_loop_path}'s class, or asyncio's default), made the
    current one."""
    import asyncio

    from tinyscrapy.utils.misc import load_object
    loop = load_object(event_loop_path)() if event_loop_path else asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    return loop


def listen_tcp(portrange, host, factory, reactor=None):
    """
    Listen on the first free port of C{portrange} (Scrapy's helper, as the telnet console
    listens): C{[]} any free port, C{[port]} that one, C{[first, last]} the first of those
    that is free.

    @return: the C{IListeningPort}.
    @raise ValueError: the range has more than two numbers, or they are in the wrong order.
    @raise twisted.internet.error.CannotListenError: no port of the range is free (the
        last one's error).
    """
    from twisted.internet.error import CannotListenError
    if reactor is None:
        from twisted.internet import reactor
    if len(portrange) > 2 or len(portrange) == 2 and portrange[0] > portrange[1]:
        raise ValueError(f"invalid portrange: {portrange}")
    if not portrange:
        return reactor.listenTCP(0, factory, interface=host)
    for number in range(portrange[0], portrange[-1]):
        try:
            return reactor.listenTCP(number, factory, interface=host)
        except CannotListenError:
            continue
    return reactor.listenTCP(portrange[-1], factory, interface=host)  # its error is ours


def _installed():
    """The installed reactor, or None (installing one puts it in C{sys.modules})."""
    return sys.modules.get("twisted.internet.reactor")


def is_reactor_installed():
    """True when a reactor is installed (Scrapy's C{scrapy.utils.reactor} name)."""
    return _installed() is not None


def reactor_path(reactor):
    """The dotted path of C{reactor}'s class, as C{TWISTED_REACTOR} spells it."""
    cls = type(reactor)
    return f"{cls.__module__}.{cls.__qualname__}"


def is_asyncio_reactor_installed():
    """True when the installed reactor is Twisted's asyncio reactor."""
    return type(_installed()).__module__ == "twisted.internet.asyncioreactor"


def install_reactor(path, event_loop_path=None):
    """
    Install the reactor class C{path} names (its module's C{install()}), unless a
    reactor is installed already.

    @param event_loop_path: for the asyncio reactor, the dotted path of an event loop class
        (C{ASYNCIO_EVENT_LOOP}); None: asyncio's default loop.
    @return: True if this call installed it.
    @raise UsageError: C{path} does not name a reactor that can be installed.
    """
    if _installed() is not None:
        return False
    from tinyscrapy.utils.misc import load_object
    if path == ASYNCIO_REACTOR:

        from twisted.internet import asyncioreactor
        asyncioreactor.install(eventloop=_new_event_loop(event_loop_path))
        return True
    module = path.rpartition(".")[0]
    try:
        installer = load_object(f"{module}.install") if module else None
    except UsageError:
        installer = None
    if not callable(installer):
        raise UsageError(f"setting TWISTED_REACTOR={path!r}: not a reactor that can be "
                         f"installed (its module has no install())")
    installer()
    return True


def apply_reactor_setting(settings, spidercls=None):
    """
    Install the reactor the crawl asks for if none is yet (L{wanted_reactor}); if one is,
    check that it is the one C{TWISTED_REACTOR} names.

    @param spidercls: the spider class, whose module may ask for the asyncio reactor.
    @return: the reactor.
    @raise UsageError: C{TWISTED_REACTOR} names another reactor than the installed one.
    """
    path = settings.get("TWISTED_REACTOR")
    if _installed() is None:
        wanted = wanted_reactor(settings, spidercls)
        if wanted:
            install_reactor(wanted, settings.get("ASYNCIO_EVENT_LOOP"))
    from twisted.internet import reactor
    if path and reactor_path(reactor) != path:
        raise UsageError(
            f"setting TWISTED_REACTOR={path!r}, but the reactor {reactor_path(reactor)} "
            f"is already installed (something imported twisted.internet.reactor first)")
    return reactor


def install_for(settings, spider_classes):
    """
    Install the reactor the crawl of C{spider_classes} asks for (L{wanted_reactor}, the
    first spider's C{custom_settings} included), before a command imports the reactor for
    anything else (the demo site).
    """
    if _installed() is not None or not spider_classes:
        return
    merged = settings.copy()
    update_settings = getattr(spider_classes[0], "update_settings", None)
    if update_settings is not None:
        update_settings(merged)
    wanted = wanted_reactor(merged, spider_classes[0])
    if wanted:
        install_reactor(wanted, merged.get("ASYNCIO_EVENT_LOOP"))


# modules whose use says a spider awaits asyncio code (their top-level package names)
ASYNCIO_LIBRARIES = frozenset({"asyncio", "aiohttp", "aiofiles", "aiosqlite", "asyncpg",
                               "motor"})


def wanted_reactor(settings, spidercls=None):
    """
    The reactor a crawl asks for: C{TWISTED_REACTOR}; when it is not set, the asyncio
    reactor if the spider's module (or a base class's) imports asyncio or an asyncio
    library (a spider written for Scrapy, whose default reactor is asyncio's, that awaits
    asyncio code), else None (Twisted's default reactor).
    """
    path = settings.get("TWISTED_REACTOR")
    if path:
        return path
    if spidercls is not None and uses_asyncio(spidercls):
        logger.info("%s uses asyncio: running on the asyncio reactor (set TWISTED_REACTOR "
                    "to choose)", getattr(spidercls, "__name__", spidercls))
        return ASYNCIO_REACTOR
    return None


def uses_asyncio(spidercls):
    """True when the module of C{spidercls} or of one of its bases holds asyncio (or an
    asyncio library, or something taken from one) among its names."""
    import inspect
    for cls in getattr(spidercls, "__mro__", ()):
        module = sys.modules.get(cls.__module__)
        if module is None or module.__name__ == "builtins" \
                or module.__name__.startswith("tinyscrapy."):
            continue
        for value in vars(module).values():
            name = value.__name__ if inspect.ismodule(value) else \
                getattr(value, "__module__", None)
            if isinstance(name, str) and name.partition(".")[0] in ASYNCIO_LIBRARIES:
                return True
    return False


def asyncio_needed(crawler):
    """
    The line to end a crawl with when it scraped nothing while its coroutines failed for
    want of the asyncio reactor (L{AsyncioReactorNeeded}, counted by the kind of error:
    C{spider_exceptions/AsyncioReactorNeeded}, ...); else None. The command exits 1 then:
    a crawl that could not run its code did not run to its end.
    """
    stats = crawler.stats.get_stats()
    if stats.get("item_scraped_count"):
        return None
    failed = sum(value for key, value in stats.items()
                 if key.endswith("/AsyncioReactorNeeded") and isinstance(value, int))
    if not failed:
        return None
    name = getattr(crawler.spidercls, "name", None) or crawler.spidercls.__name__
    return (f"{name}: nothing was scraped: {failed} coroutine(s) awaited asyncio code, "
            f"which needs the asyncio reactor: set TWISTED_REACTOR = {ASYNCIO_REACTOR!r}")
