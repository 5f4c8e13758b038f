"""
Scrapy's C{scrapy.middleware}: what every chain of components shares.

    - L{MiddlewareManager}, Scrapy's base of the managers that hold one crawl's components
      of one kind (the downloader and spider middlewares, the item pipelines, the
      extensions): C{middlewares}, C{methods}, C{from_crawler};
    - building the components an ordered setting enables (C{DOWNLOADER_MIDDLEWARES},
      C{SPIDER_MIDDLEWARES}, C{ITEM_PIPELINES}, C{EXTENSIONS}): Scrapy's
      C{{"dotted.path": order}} dictionaries merged over their C{_BASE}, C{None} switching
      one off (L{ordered_paths}, L{build_ordered});
    - reading a hook's signature once, when the chain is built (L{takes_spider}): since
      Scrapy 2.13 a hook may leave the C{spider} argument out;
    - calling a hook and waiting for what it returns (L{_call}): a Deferred, a coroutine
      (run as an asyncio Task under the asyncio reactor), or a plain value; a value the
      hook's contract does not allow is a L{MiddlewareError} naming the middleware and the
      hook;
    - Scrapy's own component paths (C{scrapy.downloadermiddlewares.retry.RetryMiddleware})
      in a project's settings: with C{scrapy} served by tinyscrapy they are tinyscrapy's
      paths; L{SCRAPY_PATHS} says what the few built-ins tinyscrapy lacks become.

The chains themselves are the kernel's: L{tinyscrapy.core.downloader.middleware} (around
every download) and L{tinyscrapy.core.spidermw} (around every callback's output).
"""

import inspect
import logging
import warnings
from collections import defaultdict, deque
from dataclasses import dataclass

from twisted.internet.defer import Deferred

from tinyscrapy.exceptions import (
    ScrapyDeprecationWarning,
    StartError,
    UsageError,
    _InvalidOutput,
)
from tinyscrapy.http.request import Request
from tinyscrapy.http.response import Response
from tinyscrapy.utils.defer import deferred_from_coro
from tinyscrapy.utils.misc import build, load_object

logger = logging.getLogger(__name__)


def ordered_paths(settings, name):
    """
    Merge C{NAME_BASE} and C{NAME}, as Scrapy does: a path set to None is disabled. A path
    of Scrapy's own (C{scrapy....}) stands for tinyscrapy's equivalent (L{scrapy_path}).

    @return: the enabled dotted paths (or objects), lowest order first.
    @raise UsageError: an order is not a number, or a Scrapy path has no equivalent.
    """
    merged = {_key(path): (path, order) for path, order in
              settings.getdict(name + "_BASE").items()}
    for path, order in settings.getdict(name).items():
        if isinstance(path, str) and path.startswith("scrapy."):
            path = scrapy_path(name, path, order)
            if path is None:
                continue
        key = _key(path)
        if order is None and key in merged:  # switched off, as given: path or class
            path = merged[key][0]
        merged[key] = (path, order)
    enabled = []
    for path, order in merged.values():
        if order is None:
            continue
        if isinstance(order, bool) or not isinstance(order, (int, float)):
            raise UsageError(f"setting {name}: order of {path!r} must be a number, not {order!r}")
        enabled.append((order, path))
    enabled.sort(key=lambda pair: pair[0])
    return [path for _, path in enabled]


def _key(path):
    """What identifies a component in an ordered setting: its dotted path, also when it is
    given as the class itself (C{{CoreStats: None}} switches the built-in off)."""
    if isinstance(path, str):
        return path
    qualname = getattr(path, "__qualname__", None)
    if not qualname or "<locals>" in qualname:  # no path names it: only itself
        return path
    return f"{path.__module__}.{qualname}"


_told = set()  # the Scrapy paths already logged: once per process


def scrapy_path(setting, path, order):
    """
    The tinyscrapy component that Scrapy's C{path} names in C{setting}: the same path
    under C{tinyscrapy.}, or what L{SCRAPY_PATHS} says of it (logged once).

    @return: a dotted path, or None when there is nothing to build or switch off here.
    @raise UsageError: C{path} is not a component tinyscrapy has at that path, or one it
        does not have while C{order} asks for it.
    """
    target = SCRAPY_PATHS.get(path)
    if target is None:
        ours = "tinyscrapy" + path[len("scrapy"):]
        try:
            load_object(ours)
        except UsageError:
            raise UsageError(f"setting {setting}: {path!r} is not one of Scrapy's built-in "
                             f"components that tinyscrapy has (docs/spiders.md)") from None
        return ours
    if isinstance(target, Absent) and order is not None:
        raise UsageError(f"setting {setting}: {path!r} has no equivalent in tinyscrapy "
                         f"({target.note})")
    key = (setting, path, order is None)
    if key not in _told:
        _told.add(key)
        if isinstance(target, str):
            logger.info("setting %s: Scrapy's %s is tinyscrapy's %s", setting, path, target)
        elif isinstance(target, BuiltIn) and order is None:
            logger.warning("setting %s: Scrapy's %s is built into tinyscrapy and is not "
                           "switched off this way (%s)", setting, path, target.note)
        elif isinstance(target, BuiltIn):
            logger.info("setting %s: Scrapy's %s is built into tinyscrapy (%s); its order "
                        "is ignored", setting, path, target.note)
        else:
            logger.info("setting %s: Scrapy's %s: tinyscrapy has none, nothing to switch "
                        "off", setting, path)
    return target if isinstance(target, str) else None


class MiddlewareManager:
    """
    The components of one kind that one crawl runs, in their order: Scrapy's base of the
    managers (L{tinyscrapy.core.downloader.middleware.DownloaderMiddlewareManager},
    L{tinyscrapy.core.spidermw.SpiderMiddlewareManager},
    L{tinyscrapy.pipelines.ItemPipelineManager}, L{tinyscrapy.extension.ExtensionManager}).

    A subclass names its ordered setting (C{setting}) and may collect the hooks it calls in
    C{_add_middleware}; C{from_crawler} builds what the setting enables.

    @cvar component_name: what one component is called, in messages.
    @cvar setting: the ordered setting the components come from (C{EXTENSIONS}).
    @ivar crawler: the crawler they were built for, or None.
    @ivar middlewares: the components (instances), lowest order first: Scrapy's attribute.
    @ivar paths: the dotted path (or name) each was enabled by, in the same order.
    @ivar methods: hook name -> the components' bound methods, in calling order: Scrapy's
        attribute, filled by C{_add_middleware}.
    """

    component_name = "component"
    setting = None

    def __init__(self, *middlewares, crawler=None, paths=None):
        if crawler is None:
            warnings.warn(f"MiddlewareManager.__init__() was called without the crawler "
                          f"argument when creating {type(self).__module__}."
                          f"{type(self).__qualname__}. This is deprecated and the argument "
                          f"will be required in future Scrapy versions.",
                          ScrapyDeprecationWarning, stacklevel=3)
        self.crawler = crawler
        self.middlewares = middlewares
        self.paths = tuple(paths) if paths is not None else tuple(
            _name_of(type(mw)) for mw in middlewares)
        if len(self.paths) != len(middlewares):
            raise ValueError(f"{type(self).__name__}: {len(middlewares)} components, "
                             f"{len(self.paths)} paths")
        self.methods = defaultdict(deque)
        for mw in middlewares:
            self._add_middleware(mw)

    def path_of(self, mw):
        """The path that enabled C{mw}, or its class's name for one added since."""
        for path, component in zip(self.paths, self.middlewares, strict=True):
            if component is mw:
                return path
        return _name_of(type(mw))

    @property
    def components(self):
        """C{(path, component)} of each component, in order."""
        return list(zip(self.paths, self.middlewares, strict=True))

    @classmethod
    def _get_mwlist_from_settings(cls, settings):
        """The enabled paths of C{cls.setting}, lowest order first (L{ordered_paths})."""
        return ordered_paths(settings, cls.setting)

    @classmethod
    def from_crawler(cls, crawler):
        """
        The components C{crawler}'s settings enable, built for it; one that raises
        C{NotConfigured} is left out.

        @raise StartError: a component's C{from_crawler} (or constructor) raised.
        @raise UsageError: a path, an order or what C{from_crawler} returned is wrong.
        """
        built = build_components(crawler, cls.setting,
                                 cls._get_mwlist_from_settings(crawler.settings))
        return cls(*(component for _, component in built), crawler=crawler,
                   paths=[path for path, _ in built])

    def _add_middleware(self, mw):
        """Collect C{mw}'s hooks into C{methods} (a subclass's part; none here)."""

    def open_spider(self, spider):
        """Not a manager's part (as in Scrapy 2.19): the crawl opens its components."""
        raise NotImplementedError(f"{type(self).__name__}.open_spider() is not implemented")

    def close_spider(self, spider):
        """Not a manager's part (as in Scrapy 2.19): the crawl closes its components."""
        raise NotImplementedError(f"{type(self).__name__}.close_spider() is not implemented")


def build_ordered(crawler, name):
    """
    Build every enabled component of the ordered setting C{name}.

    @return: a list of C{(path, component)} pairs, in order; switched-off ones left out.
    @raise StartError: a component's C{from_crawler} (or constructor) raised: named in one
        line, and the crawl does not start (exit status 1).
    @raise UsageError: one returned what is not a component (L{_check_component}).
    """
    return build_components(crawler, name, ordered_paths(crawler.settings, name))


def build_components(crawler, name, paths):
    """
    Build the components at C{paths} (dotted paths or objects) for the setting C{name}, as
    L{build_ordered} does.

    @return: a list of C{(path, component)} pairs, in order.
    """
    built = []
    for path in paths:
        objcls = load_object(path)
        label = path if isinstance(path, str) else _name_of(path)
        try:
            component = build(objcls, crawler)
        except (UsageError, StartError):
            raise
        except Exception as e:
            maker = "from_crawler" if hasattr(objcls, "from_crawler") else "__init__"
            raise StartError(f"{name}: {label}.{maker} raised {type(e).__name__}: {e}") from e
        if component is not None:
            _check_component(name, label, component)
            built.append((label, component))
    return built


# what from_crawler may not return: a component is an object, made now
_NOT_COMPONENTS = (bool, int, float, complex, str, bytes, type(None), list, tuple, dict)


def _check_component(setting, label, component):
    """
    @raise UsageError: C{component}, what C{from_crawler} made, is a Deferred, a coroutine
        or another awaitable (it must be made synchronously), or a plain value (a number, a
        string, ...), not a component.
    """
    if isinstance(component, Deferred) or inspect.isawaitable(component):
        if inspect.iscoroutine(component):
            component.close()  # never awaited: no "was never awaited" warning on top
        elif isinstance(component, Deferred):
            component.addErrback(_refused)  # its own failure is not logged on top
        what = f"a {type(component).__name__}, which is not awaited"
    elif isinstance(component, _NOT_COMPONENTS):
        what = f"{component!r}"
    else:
        return
    raise UsageError(f"setting {setting}: {label}.from_crawler returned {what}: it must "
                     f"return the component itself")


def _refused(_failure):
    return None


def _name_of(obj):
    """A readable name for a component given as an object rather than a dotted path."""
    qualname = getattr(obj, "__qualname__", None)
    return f"{obj.__module__}.{qualname}" if qualname else repr(obj)


def takes_spider(method, n_args):
    """
    Whether a component's hook is called with the spider after its C{n_args} arguments.

    Scrapy 2.13+ calls C{process_item(item)}, C{open_spider()}, C{process_request(request)}
    ... without the spider unless the method requires it; older components take it. Read
    once from the signature, when the component is enabled: True when the method has a
    C{spider} parameter without a default, or requires more positional arguments than
    C{n_args} (an old hook whose last parameter has another name). A signature that cannot
    be read keeps the old contract (True).
    """
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return True
    spider = parameters.get("spider")
    if spider is not None and spider.kind is not spider.VAR_KEYWORD:
        return spider.default is spider.empty
    required = [p for p in parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                and p.default is p.empty]
    return len(required) > n_args

# what a hook returns that is never awaited (checked first: the common case)
_READY = (Response, Request)


class MiddlewareError(_InvalidOutput):
    """
    A middleware hook returned something its contract does not allow.

    @ivar label: the hook, C{"path.method"}.
    @ivar result: what it returned (a Deferred in it is the catcher's to handle:
        L{tinyscrapy.utils.defer.ignore_result}).
    """

    def __init__(self, message, label=None, result=None):
        super().__init__(message)
        self.label = label
        self.result = result


async def _waited(result):
    """
    What a hook's result stands for once it is ready: a coroutine is run (as an asyncio
    Task under the asyncio reactor, so that it may await asyncio code) and waited for, a
    Deferred or another awaitable waited for; anything else is returned as it is.
    """
    if inspect.iscoroutine(result):
        result = deferred_from_coro(result)
    if isinstance(result, Deferred) or inspect.isawaitable(result):
        result = await result
    return result


async def _call(hook, with_spider, spider, *args):
    """Call a hook (with the spider last if it takes it) and wait for its result."""
    result = hook(*args, spider) if with_spider else hook(*args)
    if result is None or isinstance(result, _READY):  # most hooks: nothing to wait for
        return result
    return await _waited(result)


async def _gather(agen):
    """An async generator's output as a list."""
    return [each async for each in agen]


def _add_hook(hooks, path, mw, name, n_args, first=False):
    """
    Add C{(label, bound method, whether it takes the spider)} of C{mw}'s hook C{name}
    (whose arguments before the spider are C{n_args}) to C{hooks}, last or C{first}. A
    component's C{unchained_hooks} (functions) are Scrapy's API for callers who call them
    directly, which the chain does not call: their work was done before (a subclass that
    overrides one is called).

    @return: the bound method, or None when C{mw} has no such hook.
    """
    method = getattr(mw, name, None)
    if method is None or getattr(method, "__func__", None) in getattr(mw, "unchained_hooks", ()):
        return None
    hook = (f"{path}.{name}", method, takes_spider(method, n_args))
    if first:
        hooks.insert(0, hook)
    else:
        hooks.append(hook)
    return method


def _expect(label, value):
    if not isinstance(value, _READY):
        raise MiddlewareError(f"{label} must return HttpResponse or Request, got "
                              f"{type(value).__name__}", label, value)


def _expect_iterable(label, value):
    # a dict, a string or a single Request is iterable, but never what the hook meant; a
    # Deferred is iterable too (Twisted's "yield from"), and iterating one that has not
    # fired gives itself back, for ever
    if not hasattr(value, "__iter__") or isinstance(value, (dict, str, bytes, Request,
                                                            Deferred)):
        raise MiddlewareError(f"{label} must return an iterable, got {type(value).__name__}",
                              label, value)


# Scrapy's built-in component paths that are not tinyscrapy's paths too (a project names
# built-ins in its settings, most often to switch one off): each maps to tinyscrapy's
# component, to BuiltIn (done inside tinyscrapy: nothing to move or switch off this way),
# or to Absent (tinyscrapy has none: switching it off is nothing to do, asking for it a
# usage error). Every other Scrapy path is tinyscrapy's at the same place.

@dataclass(frozen=True)
class BuiltIn:
    """Done inside tinyscrapy, always on; C{note} says where and how to switch it off."""

    note: str


@dataclass(frozen=True)
class Absent:
    """tinyscrapy has no such part; C{note} says what to use instead, if anything."""

    note: str


_DMW = "scrapy.downloadermiddlewares."
_SMW = "scrapy.spidermiddlewares."
_EXT = "scrapy.extensions."

SCRAPY_PATHS = {
    # Scrapy's spider-side offsite middleware is gone from Scrapy 2.19: the downloader's
    _SMW + "offsite.OffsiteMiddleware": Absent(
        "offsite requests are dropped by the downloader middleware "
        "scrapy.downloadermiddlewares.offsite.OffsiteMiddleware: switch that one off in "
        "DOWNLOADER_MIDDLEWARES"),
    _SMW + "start.StartSpiderMiddleware": BuiltIn("start requests are handled by the engine"),
    _DMW + "ajaxcrawl.AjaxCrawlMiddleware": Absent("no AJAX crawlable pages support"),
    _EXT + "remote_control.RemoteControl": Absent("no remote control (it needs aiohttp); "
                                                  "the telnet console, TELNETCONSOLE_ENABLED, "
                                                  "runs code in the crawl"),
}
