"""
Building components named in settings: dotted paths, C{from_crawler}, C{NotConfigured},
and Scrapy's C{{"dotted.path": order}} dictionaries.
"""

import importlib
import inspect
import logging

from tinyscrapy.errors import NotConfigured, UsageError

logger = logging.getLogger(__name__)


def load_object(path):
    """
    Import the object a dotted path names.

    @param path: C{"package.module.Name"}, or an object, which is returned as it is.
    @raise UsageError: the path is malformed or does not import.
    """
    if not isinstance(path, str):
        return path
    module_name, _, name = path.rpartition(".")
    if not module_name:
        raise UsageError(f"{path!r} is not a dotted path (expected package.module.Name)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise UsageError(f"cannot import {path!r}: {e}") from None
    except Exception as e:  # a module that breaks while importing
        raise UsageError(f"cannot import {path!r}: {type(e).__name__}: {e}") from None
    try:
        return getattr(module, name)
    except AttributeError:
        raise UsageError(f"cannot import {path!r}: module {module_name!r} has no {name!r}")


def build(objcls, crawler):
    """
    Make one component: C{objcls.from_crawler(crawler)} when it exists, else C{objcls()}.

    @return: the component, or None when it raised L{NotConfigured}.
    """
    try:
        if hasattr(objcls, "from_crawler"):
            return objcls.from_crawler(crawler)
        return objcls()
    except NotConfigured as e:
        logger.debug("%s is not configured: %s", getattr(objcls, "__name__", objcls), e)
        return None


def build_from_crawler(objcls, crawler, /, *args, **kwargs):
    """
    Scrapy's C{build_from_crawler}: C{objcls.from_crawler(crawler, *args, **kwargs)} when it
    exists, else C{objcls(*args, **kwargs)}. Unlike L{build}, a L{NotConfigured} it raises
    reaches the caller (a test checks that a component switches itself off).

    @raise TypeError: C{from_crawler} returned None.
    """
    if hasattr(objcls, "from_crawler"):
        instance = objcls.from_crawler(crawler, *args, **kwargs)
    else:
        instance = objcls(*args, **kwargs)
    if instance is None:
        raise TypeError(f"{objcls.__qualname__}.from_crawler returned None")
    return instance


def running(crawler, method, cls, components):
    """
    The first of C{components} (C{(path, component)} pairs) that is a C{cls}, or None; the
    lookup behind C{Crawler.get_downloader_middleware()} and its kin.

    @param components: the pairs, or a false value when the engine is not made yet.
    @raise RuntimeError: the engine is not made yet, as Scrapy says it.
    """
    if crawler.engine is None:
        raise RuntimeError(f"Crawler.{method}() can only be called after the crawl engine "
                           f"has been created.")
    for _, component in components or ():
        if isinstance(component, cls):
            return component
    return None


def ordered_paths(settings, name):
    """
    Merge C{NAME_BASE} and C{NAME}, as Scrapy does: a path set to None is disabled. A path
    of Scrapy's own (C{scrapy....}) stands for tinyscrapy's equivalent (L{scrapy_path}).

    @return: the enabled dotted paths (or objects), lowest order first.
    @raise UsageError: an order is not a number, or a Scrapy path has no equivalent.
    """
    merged = dict(settings.getdict(name + "_BASE"))
    for path, order in settings.getdict(name).items():
        if isinstance(path, str) and path.startswith("scrapy."):
            path = scrapy_path(name, path, order)
            if path is None:
                continue
        merged[path] = order
    enabled = []
    for path, order in merged.items():
        if order is None:
            continue
        if isinstance(order, bool) or not isinstance(order, (int, float)):
            raise UsageError(f"setting {name}: order of {path!r} must be a number, not {order!r}")
        enabled.append((order, path))
    enabled.sort(key=lambda pair: pair[0])
    return [path for _, path in enabled]


_told = set()  # the Scrapy paths already logged: once per process


def scrapy_path(setting, path, order):
    """
    The tinyscrapy component that Scrapy's C{path} names in C{setting} (logged once).

    @return: a dotted path, or None when there is nothing to build or switch off here.
    @raise UsageError: C{path} is not a Scrapy built-in tinyscrapy knows, or one it does not
        have while C{order} asks for it.
    """
    from tinyscrapy.middleware.scrapypaths import SCRAPY_PATHS, Absent, BuiltIn
    target = SCRAPY_PATHS.get(path)
    if target is None:
        raise UsageError(f"setting {setting}: {path!r} is not one of Scrapy's built-in "
                         f"components that tinyscrapy knows (docs/spiders.md)")
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


def build_ordered(crawler, name):
    """
    Build every enabled component of the ordered setting C{name}.

    @return: a list of C{(path, component)} pairs, in order; switched-off ones left out.
    """
    built = []
    for path in ordered_paths(crawler.settings, name):
        component = build(load_object(path), crawler)
        if component is not None:
            built.append((path if isinstance(path, str) else _name_of(path), component))
    return built


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
