"""
L{check_output_path}: a file the crawl writes only at its end (C{--trace}, C{STATS_FILE})
is checked at the start, so that a path that cannot be written, or a full filesystem,
stops the command with one line (exit status 2) instead of losing the file after the
crawl.
"""

import importlib
import logging
import os
from contextlib import contextmanager

from tinyscrapy.exceptions import NotConfigured, UsageError

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
    @raise TypeError: C{from_crawler} returned None (as Scrapy's C{build_from_crawler}).
    """
    try:
        if not hasattr(objcls, "from_crawler"):
            return objcls()
        instance = objcls.from_crawler(crawler)
    except NotConfigured as e:
        logger.debug("%s is not configured: %s", getattr(objcls, "__name__", objcls), e)
        return None
    if instance is None:
        raise TypeError(f"{getattr(objcls, '__qualname__', objcls)}.from_crawler returned None")
    return instance


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
