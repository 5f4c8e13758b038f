"""
C{import scrapy} served by tinyscrapy, as PyMySQL's C{install_as_MySQLdb()} serves
C{import MySQLdb}: an unmodified Scrapy project, and the plugins it installs, run under
tinyscrapy with their imports untouched.

    import tinyscrapy
    tinyscrapy.install_as_scrapy()      # before anything imports scrapy
    import scrapy                       # tinyscrapy
    from scrapy.utils.url import url_is_from_any_domain

L{ScrapyFinder}, first on C{sys.meta_path}, answers every C{scrapy.X.Y} with the very
module object C{tinyscrapy.X.Y}: no file runs twice, C{scrapy.X.Y is tinyscrapy.X.Y}, and
there is one C{Request} class, one C{spider_closed} signal. It only hands the import system
the module tinyscrapy's own import made (L{_ServedModule}); the import system files it under
the C{scrapy} name, as it files every module it imports. C{scrapy} itself is a face of
C{tinyscrapy}'s (L{ScrapyFace}): each name is tinyscrapy's own object, and only
C{__version__} and C{version_info} differ, Scrapy's C{2.19.0}, the release whose behaviour
tinyscrapy keeps and which plugins compare against.

C{sys.modules["scrapy"] = tinyscrapy} alone is not the same: C{import scrapy.signals}
then finds C{signals.py} again and runs it a second time, as a second module, whose
classes and signals are copies.

Import order does not matter: C{scrapy.utils.url} may be imported before C{scrapy}, a
plugin before the spider, and itemadapter first or last (its probe of C{scrapy.item} at
its first import is answered by tinyscrapy's L{tinyscrapy.item.Item}).

The command line turns it on with C{--as-scrapy} or the environment variable
C{TINYSCRAPY_AS_SCRAPY=1}, and by itself inside a Scrapy project (a C{scrapy.cfg}, no
C{tinyscrapy.cfg}) when Scrapy is not installed (L{install_for_command});
C{TINYSCRAPY_AS_SCRAPY=0} keeps it off. Beside a Scrapy that is already imported it
refuses, with one line, rather than mix the two (L{install_as_scrapy}).
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types

from tinyscrapy.exceptions import UsageError

SCRAPY_VERSION = "2.19.0"
ENV_SWITCH = "TINYSCRAPY_AS_SCRAPY"
_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off", "")


class ScrapyFace(types.ModuleType):
    """
    The C{scrapy} module: every attribute is C{tinyscrapy}'s (its names, its submodules),
    but C{__version__} and C{version_info}, which are Scrapy's (L{SCRAPY_VERSION}).
    """

    def __init__(self, tinyscrapy):
        super().__init__("scrapy", tinyscrapy.__doc__)
        self.__version__ = SCRAPY_VERSION
        self.version_info = tuple(int(part) for part in SCRAPY_VERSION.split("."))
        self.__path__ = tinyscrapy.__path__
        self.__file__ = tinyscrapy.__file__
        self.__all__ = sorted({*tinyscrapy.__all__, "version_info"})
        self._tinyscrapy = tinyscrapy

    def __getattr__(self, name):
        if name.startswith("__") or name == "_tinyscrapy":
            raise AttributeError(f"module 'scrapy' has no attribute {name!r}")
        return getattr(self._tinyscrapy, name)

    def __dir__(self):
        return sorted({*super().__dir__(), *dir(self._tinyscrapy)})


class _ServedModule(importlib.abc.Loader):
    """
    The loader of every C{scrapy} module: its C{create_module} imports the tinyscrapy
    module (once, as tinyscrapy's own import does) and returns it, and its
    C{exec_module} runs nothing, but gives the module back its own C{__spec__}, which the
    import system set to the C{scrapy} one.
    """

    def __init__(self):
        self._face = None

    def create_module(self, spec):
        ours = spec.loader_state["tinyscrapy"]
        module = importlib.import_module(ours)
        if ours == "tinyscrapy":
            if self._face is None:
                self._face = ScrapyFace(module)
            return self._face
        spec.loader_state["spec"] = module.__spec__
        return module

    def exec_module(self, module):
        own = module.__spec__.loader_state.get("spec")
        if own is not None:
            module.__spec__ = own

    @staticmethod
    def get_code(fullname):
        """The code of the tinyscrapy module that C{scrapy.X.Y} is, for C{python -m
        scrapy.X.Y} (runpy runs it as C{__main__}: C{python -m scrapy.cmdline} is
        C{python -m tinyscrapy.cmdline})."""
        ours = "tinyscrapy" + fullname[len("scrapy"):]
        return importlib.util.find_spec(ours).loader.get_code(ours)


class ScrapyFinder(importlib.abc.MetaPathFinder):
    """
    A C{sys.meta_path} finder for C{scrapy} and C{scrapy.*}: each is the tinyscrapy module
    at the same path (C{scrapy.utils.url} is C{tinyscrapy.utils.url}). A path tinyscrapy
    lacks is not found (C{ModuleNotFoundError}, as for any missing module; the ones it lacks
    on purpose are in docs/differences.md).
    """

    def __init__(self):
        self._loader = _ServedModule()

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "scrapy" and not fullname.startswith("scrapy."):
            return None
        ours = "tinyscrapy" + fullname[len("scrapy"):]
        try:
            own = importlib.util.find_spec(ours)
        except ImportError:  # a parent that does not exist here
            return None
        if own is None:
            return None
        spec = importlib.machinery.ModuleSpec(
            fullname, self._loader, loader_state={"tinyscrapy": ours},
            is_package=own.submodule_search_locations is not None)
        return spec


_finder = ScrapyFinder()


def is_installed():
    """Whether C{import scrapy} is served by tinyscrapy in this process."""
    return _finder in sys.meta_path


def install_as_scrapy():
    """
    Serve C{import scrapy} (and every C{scrapy.X.Y}) from tinyscrapy in this process, from
    now on. Call it before anything imports Scrapy; calling it again does nothing.

    @raise UsageError: Scrapy itself is already imported here (one line saying from
        where): tinyscrapy will not mix its modules with Scrapy's.
    """
    if is_installed():
        return
    foreign = _foreign_scrapy()
    if foreign is not None:
        raise UsageError(
            f"cannot serve `import scrapy` from tinyscrapy: Scrapy itself is already "
            f"imported in this process ({foreign}); serve it before anything imports "
            f"scrapy, or run the project with Scrapy")
    sys.meta_path.insert(0, _finder)


def _foreign_scrapy():
    """Where the C{scrapy} module already imported, if any, comes from: a description, or
    None when there is none (or it is tinyscrapy's own)."""
    module = sys.modules.get("scrapy")
    if module is None:
        return None
    if isinstance(module, ScrapyFace):
        return None
    if module is sys.modules.get("tinyscrapy"):  # the plain alias: its copies may exist
        return ("as a plain alias of tinyscrapy, sys.modules['scrapy'] = tinyscrapy, "
                "whose submodules are second copies")
    return getattr(module, "__file__", None) or repr(module)


def scrapy_installed():
    """Whether Scrapy itself can be imported here (found on C{sys.path}, not served)."""
    if _foreign_scrapy() is not None:
        return True
    try:
        spec = importlib.machinery.PathFinder.find_spec("scrapy")
    except (ImportError, ValueError):
        return False
    return spec is not None


def switch_from_environment():
    """
    C{TINYSCRAPY_AS_SCRAPY} read as a switch.

    @return: True (C{1}, C{true}, C{yes}, C{on}), False (C{0}, C{false}, C{no},
        C{off}, empty) or None (not set).
    @raise UsageError: another value.
    """
    value = os.environ.get(ENV_SWITCH)
    if value is None:
        return None
    word = value.strip().lower()
    if word in _ON:
        return True
    if word in _OFF:
        return False
    raise UsageError(f"{ENV_SWITCH}={value!r}: expected 1 or 0 (serve `import scrapy` "
                     f"from tinyscrapy, or not)")


def wanted(switch, environment, config_path, installed):
    """
    Whether a command serves C{import scrapy} from tinyscrapy.

    @param switch: True for C{--as-scrapy}, else None.
    @param environment: L{switch_from_environment}'s answer.
    @param config_path: the project's configuration file (L{find_config}), or None.
    @param installed: whether Scrapy itself is installed (L{scrapy_installed}).
    @return: the switch, else the variable, else True inside a Scrapy project (a
        C{scrapy.cfg}, no C{tinyscrapy.cfg}) where Scrapy is not installed.
    """
    if switch is not None:
        return switch
    if environment is not None:
        return environment
    if config_path is None or os.path.basename(config_path) != "scrapy.cfg":
        return False
    return not installed


def install_for_command(switch=None, start=None):
    """
    Serve C{import scrapy} for a command when L{wanted} says so (before the command reads
    the project's settings or imports its spiders).

    @param switch: True for C{--as-scrapy}, else None.
    @param start: where the command runs (the current directory by default).
    @return: True when it is served.
    @raise UsageError: it is wanted, but Scrapy itself is already imported; or the
        variable holds neither 1 nor 0.
    """
    from tinyscrapy.utils.conf import find_config
    environment = switch_from_environment()
    config = find_config(start) if switch is None and environment is None else None
    installed = scrapy_installed() if config is not None else False
    if not wanted(switch, environment, config, installed):
        return False
    install_as_scrapy()
    return True


def missing_scrapy_hint(error):
    """
    What to add to the message of C{error} when it is code asking for Scrapy while
    C{import scrapy} is not served here: C{" (... --as-scrapy ...)"}, else C{""}.
    """
    name = getattr(error, "name", None) or ""
    if not isinstance(error, ModuleNotFoundError) or is_installed() or \
            (name != "scrapy" and not name.startswith("scrapy.")):
        return ""
    return (" (code written for Scrapy: run it with --as-scrapy, or TINYSCRAPY_AS_SCRAPY=1, "
            "to serve `import scrapy` from tinyscrapy)")


def run_script(path, args=()):
    """
    Run the Python script C{path} as C{__main__}, C{import scrapy} served by tinyscrapy
    first: C{python -m tinyscrapy.scrapyfinder main.py [ARG ...]} runs a Scrapy project's
    C{main.py} (C{from scrapy.cmdline import execute}) unchanged.

    @param args: the script's arguments (its C{sys.argv[1:]}).
    @raise UsageError: there is no such file, or Scrapy itself is already imported.
    """
    import runpy
    if not os.path.isfile(path):
        raise UsageError(f"no such script: {path}")
    install_as_scrapy()
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    runpy.run_path(path, run_name="__main__")


def main(argv):
    """C{python -m tinyscrapy.scrapyfinder SCRIPT [ARG ...]}. @return: the exit status of
    a usage error (the script's own ends the process itself)."""
    if not argv:
        print("usage: python -m tinyscrapy.scrapyfinder SCRIPT [ARG ...]: run SCRIPT with "
              "`import scrapy` served by tinyscrapy", file=sys.stderr)
        return 2
    try:
        run_script(argv[0], argv[1:])
    except UsageError as e:
        print(f"tinyscrapy: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # this file run as a script: the module's own copy does the work
    from tinyscrapy.scrapyfinder import main as _main
    sys.exit(_main(sys.argv[1:]))
