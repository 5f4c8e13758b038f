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

from tinyscrapy.exceptions import UsageError
from tinyscrapy.spiders import Spider
from tinyscrapy.utils.misc import load_object


def load_spider_class(path):
    """Import a Spider subclass from its dotted path. @raise UsageError: it is not one."""
    obj = load_object(path)
    if not (inspect.isclass(obj) and issubclass(obj, Spider)):
        raise UsageError(f"{path!r} is not a Spider subclass")
    return obj


def spider_class_from_file(filename):
    """
    The Spider subclass defined in a Python file (the last one, as in Scrapy).

    The file is imported as the module named by its stem, with its folder on C{sys.path},
    as Scrapy does: a setting may name C{"stem.Pipeline"} and get the same module (it runs
    once), and C{__name__} is the stem. When that name already belongs to another module
    (imported, or importable from C{sys.path}, e.g. a file called C{json.py}), the file
    is imported under a private name instead, so that it shadows nothing.

    @raise UsageError: the file is missing, does not import, or defines no spider.
    """
    if not os.path.isfile(filename):
        raise UsageError(f"File not found: {filename}")
    path = os.path.abspath(filename)
    folder = os.path.dirname(path)
    name = _module_name(path)
    module = sys.modules.get(name)
    if module is None or not _same_file(getattr(module, "__file__", None), path):
        module = _import_file(name, path, filename)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    classes = spider_classes(module)
    if not classes:
        raise UsageError(f"No spider found in file: {filename} (it defines no Spider subclass)")
    return classes[-1]


def _module_name(path):
    """The stem of C{path} if it names no other module, else a private name."""
    stem = os.path.splitext(os.path.basename(path))[0]
    private = "_tinyscrapy_runspider_" + "".join(c if c.isalnum() else "_" for c in stem)
    if not stem.isidentifier():
        return private
    known = sys.modules.get(stem)
    if known is not None:
        return stem if _same_file(getattr(known, "__file__", None), path) else private
    try:
        spec = importlib.util.find_spec(stem)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and not _same_file(spec.origin, path):
        return private
    return stem


def _same_file(origin, path):
    """Whether C{origin} (a module's file, or None) is the file C{path}."""
    if not origin or not os.path.exists(origin):
        return False
    return os.path.samefile(origin, path)


def _import_file(name, path, filename):
    """Execute the file at C{path} as module C{name}. @raise UsageError: it fails."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise UsageError(f"Unable to load {filename!r}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = os.path.dirname(path)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        sys.modules.pop(name, None)
        from tinyscrapy.scrapyfinder import missing_scrapy_hint
        raise UsageError(f"cannot import {filename}: {type(e).__name__}: {e}"
                         f"{missing_scrapy_hint(e)}") from None
    finally:
        sys.path.remove(folder)
    return module


def has_spiders_folder():
    """Whether the current directory holds a C{spiders/} package."""
    return os.path.isfile(os.path.join(os.getcwd(), "spiders", "__init__.py"))


def require_spiders_folder():
    """Put the current directory on C{sys.path}, which must hold a C{spiders/} package.
    @raise UsageError: it does not."""
    if not has_spiders_folder():
        raise UsageError(f"no spiders/ package in {os.getcwd()}: name spider classes by "
                         "their dotted path (run package.module.Class)")
    if os.getcwd() not in sys.path:
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


class SpiderLoader:
    """
    The spiders of a project by name: every Spider subclass with a C{name} in the modules
    of C{SPIDER_MODULES} and their submodules, as Scrapy's spider loader finds them.

    @ivar spiders: C{{name: class}}.
    @ivar spider_modules: the module names searched.
    @ivar warn_only: C{SPIDER_LOADER_WARN_ONLY}: a module that does not import is warned
        about (a RuntimeWarning) and skipped, instead of stopping the command.
    """

    def __init__(self, settings_or_modules):
        """
        @param settings_or_modules: the settings (Scrapy's argument: C{SPIDER_MODULES} and
            C{SPIDER_LOADER_WARN_ONLY} are read), or a list of module names.
        @raise UsageError: a module does not import (unless C{warn_only}).
        """
        if isinstance(settings_or_modules, (list, tuple)):
            self.spider_modules, self.warn_only = list(settings_or_modules), False
        else:
            self.spider_modules = settings_or_modules.getlist("SPIDER_MODULES")
            self.warn_only = settings_or_modules.getbool("SPIDER_LOADER_WARN_ONLY")
        self.spiders = {}
        self._where = {}
        for module_name in self.spider_modules:
            try:
                modules = _walk_modules(module_name)
            except UsageError as e:
                if not self.warn_only:
                    raise
                import warnings
                warnings.warn(f"{e}. Could not load spiders from module {module_name!r}: "
                              f"none of its spiders is loaded (SPIDER_LOADER_WARN_ONLY)",
                              RuntimeWarning, stacklevel=2)
                continue
            for module in modules:
                for cls in spider_classes(module):
                    self._add(cls)

    @classmethod
    def from_settings(cls, settings):
        return cls(settings)

    def _add(self, cls):
        name = getattr(cls, "name", None)
        if not name:
            return
        where = f"{cls.__module__}.{cls.__qualname__}"
        if name in self.spiders and self._where[name] != where:
            import logging
            logging.getLogger(__name__).warning(
                "there are several spiders named %r (%s and %s): %s runs", name,
                self._where[name], where, where)
        self.spiders[name] = cls
        self._where[name] = where

    def load(self, spider_name):
        """The spider class called C{spider_name}. @raise KeyError: there is none (with
        Scrapy's message)."""
        try:
            return self.spiders[spider_name]
        except KeyError:
            raise KeyError(f"Spider not found: {spider_name}") from None

    def list(self):
        """The spider names, sorted."""
        return sorted(self.spiders)

    def find_by_request(self, request):
        """The names of the spiders that handle C{request}: a spider's own
        C{handles_request(request)} class method decides when it has one, else whether its
        C{allowed_domains} cover the request's host (a spider without C{allowed_domains}
        is never chosen this way)."""
        from urllib.parse import urlsplit
        host = (urlsplit(request.url).hostname or "").lower()
        found = []
        for name, cls in sorted(self.spiders.items()):
            handles_request = getattr(cls, "handles_request", None)
            if handles_request is not None:
                if handles_request(request):
                    found.append(name)
                continue
            domains = getattr(cls, "allowed_domains", None) or []
            if any(host == d.lower() or host.endswith("." + d.lower()) for d in domains):
                found.append(name)
        return found


class DummySpiderLoader:
    """A spider loader that finds no spider (Scrapy's: a script that names its spider
    classes needs none)."""

    @classmethod
    def from_settings(cls, settings):
        return cls()

    def load(self, spider_name):
        """@raise KeyError: always: there are no spiders here."""
        raise KeyError(f"DummySpiderLoader doesn't load any spiders ({spider_name!r})")

    def list(self):
        return []

    def find_by_request(self, request):
        return []


def get_spider_loader(settings):
    """
    The project's spider loader, as Scrapy's C{get_spider_loader}: the class
    C{SPIDER_LOADER_CLASS} names, built with its C{from_settings(settings)}.
    """
    return load_object(settings["SPIDER_LOADER_CLASS"] or SpiderLoader).from_settings(
        settings.frozencopy())


def _walk_modules(name):
    """The module C{name} and, for a package, every module below it.
    @raise UsageError: one of them does not import."""
    import pkgutil
    try:
        module = importlib.import_module(name)
    except Exception as e:
        from tinyscrapy.scrapyfinder import missing_scrapy_hint
        raise UsageError(f"cannot import the spider module {name!r} (SPIDER_MODULES): "
                         f"{type(e).__name__}: {e}{missing_scrapy_hint(e)}") from None
    modules = [module]
    for info in pkgutil.walk_packages(getattr(module, "__path__", []), name + "."):
        try:
            modules.append(importlib.import_module(info.name))
        except Exception as e:
            from tinyscrapy.scrapyfinder import missing_scrapy_hint
            raise UsageError(f"cannot import the spider module {info.name!r} "
                             f"(SPIDER_MODULES): {type(e).__name__}: {e}"
                             f"{missing_scrapy_hint(e)}") from None
    return modules


def project_loader(settings):
    """
    The spider loader that finds spiders by name here: the project's (C{SPIDER_MODULES},
    through C{SPIDER_LOADER_CLASS}) inside a project, else the C{spiders/} package of the
    current directory if there is one (this repository's example spiders), else the demo
    spiders the package ships (L{tinyscrapy.demo.spiders}).
    """
    from tinyscrapy.utils.project import inside_project
    if inside_project():
        return get_spider_loader(settings)
    if has_spiders_folder():
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        return SpiderLoader(["spiders"])
    return SpiderLoader(["tinyscrapy.demo.spiders"])


def resolve_spider(name, loader):
    """
    The spider class C{name} means: a spider name C{loader} knows, else a dotted class
    path.

    @raise UsageError: neither.
    """
    if loader is not None and name in loader.list():
        return loader.load(name)
    if "." in name:
        return load_spider_class(name)
    if loader is None:
        raise UsageError(f"no spider named {name!r}: outside a project (no tinyscrapy.cfg "
                         "here or above) name a spider class by its dotted path "
                         "(package.module.Class), or create a project with startproject")
    import difflib
    close = difflib.get_close_matches(name, loader.list(), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    known = ", ".join(loader.list()) or "none"
    raise UsageError(f"no spider named {name!r} (spiders found: {known}){hint}")
