"""
Scrapy's C{scrapy.utils.misc}: the helpers components are made with, and a few more.

    - L{load_object} (a dotted path to its object), L{build} and L{build_from_crawler}
      (a component from its class), L{walk_modules} (a package and every module below);
    - L{arg_to_iter}, L{rel_has_nofollow}, L{set_environ};
    - L{is_generator_with_return_value} and L{warn_on_generator_with_return_value}: a
      callback that is a generator and also C{return}s a value, whose value is lost;
    - L{check_output_path}: a file the crawl writes only at its end (C{--trace},
      C{STATS_FILE}) is checked at the start, so that a path that cannot be written, or a
      full filesystem, stops the command with one line (exit status 2) instead of losing
      the file after the crawl.
"""

import ast
import importlib
import inspect
import logging
import os
import pkgutil
import re
import sys
import textwrap
import warnings
from contextlib import contextmanager
from functools import partial

from tinyscrapy.exceptions import NotConfigured, UsageError

logger = logging.getLogger(__name__)


class NotAnObjectPath(UsageError, ValueError):
    """L{load_object}: not a dotted path (a C{ValueError}, as in Scrapy)."""


class ObjectNotImported(UsageError, ImportError):
    """L{load_object}: the module does not import (an C{ImportError}, as in Scrapy)."""


class ObjectNotDefined(UsageError, NameError):
    """L{load_object}: the module has no such name (a C{NameError}, as in Scrapy)."""


class NotAnObject(UsageError, TypeError):
    """L{load_object}: neither a dotted path nor a callable (a C{TypeError})."""


def load_object(path):
    """
    Import the object a dotted path names, as Scrapy's C{load_object}.

    Each error is both Scrapy's exception and a L{UsageError}, so that the command line
    says it in one line. A path under Scrapy's package (C{"scrapy.dupefilters.RFPDupeFilter"},
    in a project's settings) names tinyscrapy's module at the same place
    (C{tinyscrapy.dupefilters}).

    @param path: C{"package.module.Name"}, or a callable (a class, a function), which is
        returned as it is.
    @raise NotAnObjectPath: the path has no dot (a C{ValueError}).
    @raise ObjectNotImported: its module does not import (an C{ImportError}).
    @raise ObjectNotDefined: its module has no such name (a C{NameError}).
    @raise NotAnObject: C{path} is neither a string nor callable (a C{TypeError}).
    """
    if not isinstance(path, str):
        if callable(path):
            return path
        raise NotAnObject(f"Unexpected argument type, expected string or object, got: "
                          f"{type(path)}")
    if path.startswith("scrapy."):
        path = "tinyscrapy" + path[len("scrapy"):]
    module_name, _, name = path.rpartition(".")
    if not module_name:
        raise NotAnObjectPath(f"{path!r} is not a dotted path (expected package.module.Name)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ObjectNotImported(f"cannot import {path!r}: {e}", name=module_name) from None
    except Exception as e:  # a module that breaks while importing
        raise ObjectNotImported(f"cannot import {path!r}: {type(e).__name__}: {e}",
                                name=module_name) from None
    try:
        return getattr(module, name)
    except AttributeError:
        raise ObjectNotDefined(f"cannot import {path!r}: module {module_name!r} has no "
                               f"{name!r}") from None


def arg_to_iter(arg):
    """
    C{arg} as something to iterate over: C{()} for None, C{arg} itself when it is
    iterable, else C{[arg]}. A dict, a C{str}, C{bytes} and any item itemadapter knows
    (an L{tinyscrapy.item.Item}, a pydantic model: iterable, yet one item) are one value
    each.
    """
    if arg is None:
        return ()
    if not hasattr(arg, "__iter__") or isinstance(arg, (dict, str, bytes)):
        return [arg]
    if isinstance(arg, (list, tuple)) or inspect.isgenerator(arg):
        return arg
    return [arg] if _is_item(arg) else arg


def _is_item(value):
    item = sys.modules.get("tinyscrapy.item")  # no Item without it
    if item is not None and isinstance(value, item.Item):
        return True
    from itemadapter import is_item  # imported once something else is iterable
    return is_item(value)


def walk_modules_iter(path):
    """
    The module C{path} and, for a package, every module below it, imported one after
    another as the iterator is read.

    @raise ImportError: one of them does not import (when the iterator reaches it).
    """
    module = importlib.import_module(path)
    yield module
    for _, name, is_package in pkgutil.iter_modules(getattr(module, "__path__", ())):
        if is_package:
            yield from walk_modules_iter(f"{path}.{name}")
        else:
            yield importlib.import_module(f"{path}.{name}")


def walk_modules(path):
    """L{walk_modules_iter} as a list (deprecated, as in Scrapy: it warns)."""
    from tinyscrapy.exceptions import ScrapyDeprecationWarning
    warnings.warn("The scrapy.utils.misc.walk_modules function is deprecated and will be "
                  "removed in a future version of Scrapy. Use "
                  "scrapy.utils.misc.walk_modules_iter instead.", ScrapyDeprecationWarning,
                  stacklevel=2)
    return list(walk_modules_iter(path))


def rel_has_nofollow(rel):
    """Whether a link's C{rel} attribute (None when it has none) holds C{nofollow}."""
    return rel is not None and "nofollow" in rel.lower().replace(",", " ").split()


def build(objcls, crawler):
    """
    Make one component: C{objcls.from_crawler(crawler)} when it exists, else C{objcls()}.

    @return: the component, or None when it raised L{NotConfigured}.
    @raise UsageError: a L{NotConfigured} that is also a L{UsageError} (a bad value,
        refused the way Scrapy refuses it), or C{from_crawler} returned None (a missing
        C{return}).
    """
    try:
        if hasattr(objcls, "from_crawler"):
            component = objcls.from_crawler(crawler)
        else:
            component = objcls()
    except NotConfigured as e:
        if isinstance(e, UsageError):
            raise
        reason = f": {e}" if str(e) else ""
        logger.debug("%s is not configured%s", getattr(objcls, "__name__", objcls), reason)
        return None
    if component is None:
        raise ReturnedNone(_returned_none(objcls))
    return component


class ReturnedNone(UsageError, TypeError):
    """A component's C{from_crawler} returned None (a missing C{return}): a C{TypeError},
    as in Scrapy, and a usage error the command line says in one line."""


def _returned_none(objcls):
    return (f"{getattr(objcls, '__qualname__', objcls)}.from_crawler returned None: it must "
            f"return the component (or raise NotConfigured)")


def build_from_crawler(objcls, crawler, /, *args, **kwargs):
    """
    Scrapy's C{build_from_crawler}: C{objcls.from_crawler(crawler, *args, **kwargs)} when it
    exists, else C{objcls(*args, **kwargs)}. Unlike L{build}, a L{NotConfigured} it raises
    reaches the caller (a test checks that a component switches itself off).

    @raise ReturnedNone: C{from_crawler} returned None (a C{TypeError}).
    """
    if hasattr(objcls, "from_crawler"):
        instance = objcls.from_crawler(crawler, *args, **kwargs)
    else:
        instance = objcls(*args, **kwargs)
    if instance is None:
        raise ReturnedNone(_returned_none(objcls))
    return instance


MIN_FREE_BYTES = 64 * 1024  # less free space than this: refused


def check_output_path(path, what):
    """
    Make sure C{path} can be written now: its folder exists or can be made, the path is
    not a directory, the file can be opened for writing, and its filesystem has room.
    A file that did not exist is not left behind.

    @param what: how the user named it (C{--trace}, C{STATS_FILE}), for the message.
    @raise UsageError: it cannot be written (the message says why).
    """
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UsageError(f"{what} {path}: cannot write it ({folder} is a file)")
    try:
        os.makedirs(folder, exist_ok=True)
        if os.path.isdir(path):
            raise UsageError(f"{what} {path}: is a directory, not a file")
        existed = os.path.exists(path)
        with open(path, "ab"):
            pass
        if not existed:
            os.unlink(path)
    except OSError as e:
        raise UsageError(f"{what} {path}: cannot write it ({e.strerror or e})") from None
    try:
        info = os.statvfs(folder)
    except (OSError, AttributeError):  # not POSIX: found out at the end
        return
    free = info.f_bavail * info.f_frsize
    if free < MIN_FREE_BYTES:
        raise UsageError(f"{what} {path}: its filesystem is full ({free} bytes free)")


def names_one_entry(name):
    """Whether C{name} can name one entry of a directory: not empty, C{.} or C{..}, and
    without a path separator or a NUL (a spider's name under C{--jobdir}, the HTTP
    cache's folder)."""
    return name not in ("", ".", "..") and "\0" not in name and "/" not in name \
        and os.sep not in name and not (os.altsep and os.altsep in name)


@contextmanager
def set_environ(**variables):
    """Set environment variables for the length of a C{with} block; each is put back
    as it was (or removed) after it."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def walk_callable(node):
    """
    The nodes of an C{ast} tree, as C{ast.walk} gives them, but without going into a
    function defined inside the first one.
    """
    pending = [node]
    in_function = False
    while pending:
        node = pending.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if in_function:
                continue
            in_function = True
        pending.extend(ast.iter_child_nodes(node))
        yield node


_RETURNS_VALUE = {}  # callable -> bool, for the last callbacks asked about


def is_generator_with_return_value(callable):  # noqa: A002 (Scrapy's name)
    """
    Whether C{callable} is a generator function with a C{return VALUE} (a value other
    than None) in its own body, which a caller iterating it never sees.

    @raise IndentationError: its source cannot be parsed on its own.
    """
    known = _RETURNS_VALUE.get(callable)
    if known is not None:
        return known
    found = False
    if inspect.isgeneratorfunction(callable):
        function = callable
        while isinstance(function, partial):
            function = function.func
        tree = ast.parse(textwrap.dedent(_source(function)))
        found = any(isinstance(node, ast.Return) and not _returns_none(node)
                    for node in walk_callable(tree))
    if len(_RETURNS_VALUE) >= 128:
        _RETURNS_VALUE.clear()
    _RETURNS_VALUE[callable] = found
    return found


def _source(function):
    """The source of C{function}, its lines' common indentation dropped (a method's)."""
    source = inspect.getsource(function)
    indent = re.match(r"[\t ]*", source).group(0)
    if indent:
        source = "\n".join(line[len(indent):] if line.startswith(indent) else line
                           for line in source.split("\n"))
    return source


def _returns_none(node):
    return node.value is None or (isinstance(node.value, ast.Constant)
                                  and node.value.value is None)


def warn_on_generator_with_return_value(spider, callable):  # noqa: A002 (Scrapy's name)
    """
    Warn when C{callable} (a callback of C{spider}) is a generator that also returns a
    value (L{is_generator_with_return_value}), unless the spider's
    C{WARN_ON_GENERATOR_RETURN_VALUE} setting is off.
    """
    settings = getattr(spider, "settings", None)
    if settings is not None and not settings.getbool("WARN_ON_GENERATOR_RETURN_VALUE", True):
        return
    name = f"{type(spider).__name__}.{getattr(callable, '__name__', callable)}"
    try:
        returns = is_generator_with_return_value(callable)
    except IndentationError:
        warnings.warn(f'Unable to determine whether or not "{name}" is a generator with a '
                      f"return value. This will not prevent your code from working, but it "
                      f"prevents Scrapy from detecting potential issues in your "
                      f'implementation of "{name}".', stacklevel=2)
        return
    if returns:
        warnings.warn(f'The "{name}" method is a generator and includes a "return" '
                      f"statement with a value different than None. This could lead to "
                      f"unexpected behaviour. Please see https://docs.python.org/3/"
                      f"reference/simple_stmts.html#the-return-statement for details about "
                      f'the semantics of the "return" statement within generators',
                      stacklevel=2)
