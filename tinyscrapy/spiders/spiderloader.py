"""
Finding spider classes for the command line: by dotted path (C{run pkg.module.Class}),
in a file (C{runspider FILE.py}), or in the C{spiders/} package of the current directory
(C{run} with no argument, C{list}).

Every failure is a L{UsageError}: one line, exit status 2, no traceback.
"""

import importlib
import importlib.util
import inspect
import os
import sys

from tinyscrapy.components import load_object
from tinyscrapy.errors import UsageError
from tinyscrapy.spider import Spider


def load_spider_class(path):
    """Import a Spider subclass from its dotted path. @raise UsageError: it is not one."""
    obj = load_object(path)
    if not (inspect.isclass(obj) and issubclass(obj, Spider)):
        raise UsageError(f"{path!r} is not a Spider subclass")
    return obj


def spider_class_from_file(filename):
    """
    The Spider subclass defined in a Python file (the last one, as in Scrapy).

    @raise UsageError: the file is missing, does not import, or defines no spider.
    """
    if not os.path.isfile(filename):
        raise UsageError(f"no such file: {filename}")
    name = "_tinyscrapy_runspider_" + os.path.splitext(os.path.basename(filename))[0]
    spec = importlib.util.spec_from_file_location(name, filename)
    if spec is None:
        raise UsageError(f"cannot load {filename}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(filename)))
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise UsageError(f"cannot import {filename}: {type(e).__name__}: {e}") from None
    classes = spider_classes(module)
    if not classes:
        raise UsageError(f"no Spider subclass defined in {filename}")
    return classes[-1]


def require_spiders_folder():
    """Put the current directory on C{sys.path}, which must hold a C{spiders/} package.
    @raise UsageError: it does not."""
    folder = os.path.join(os.getcwd(), "spiders")
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        raise UsageError(f"no spiders/ package in {os.getcwd()}: run from the repository "
                         "root, or name spider classes (run package.module.Class)")
    sys.path.insert(0, os.getcwd())


def find_spiders():
    """Dotted paths of the Spider classes in ./spiders/*.py."""
    require_spiders_folder()
    found = []
    for filename in sorted(os.listdir("spiders")):
        if filename.endswith(".py") and not filename.startswith("_"):
            module = importlib.import_module("spiders." + filename[:-3])
            found += [f"{module.__name__}.{cls.__name__}" for cls in spider_classes(module)]
    return found


def spider_classes(module):
    """Spider subclasses defined in C{module} itself, in definition order."""
    return [obj for obj in vars(module).values()
            if inspect.isclass(obj) and issubclass(obj, Spider) and obj is not Spider
            and obj.__module__ == module.__name__]
