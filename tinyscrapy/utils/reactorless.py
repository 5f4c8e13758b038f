"""
Scrapy's C{scrapy.utils.reactorless}: running with no Twisted reactor, only an asyncio loop
(Scrapy's C{TWISTED_REACTOR_ENABLED = False}). tinyscrapy's engine always runs on a reactor,
so L{is_reactorless} is True only for code run inside an asyncio loop of its own with no
reactor installed; L{install_reactor_import_hook} keeps C{twisted.internet.reactor} from
being imported (and so installed) by accident, as in Scrapy.
"""

import importlib.abc
import sys

from tinyscrapy.utils.reactor import is_reactor_installed


def is_reactorless():
    """Whether asyncio code runs here with no reactor installed."""
    import asyncio
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return not is_reactor_installed()


class ReactorImportHook(importlib.abc.MetaPathFinder):
    """A C{sys.meta_path} finder that refuses C{twisted.internet.reactor}."""

    def find_spec(self, fullname, path, target=None):
        if fullname == "twisted.internet.reactor":
            raise ImportError(f"Import of {fullname} is forbidden when running without a "
                              f"Twisted reactor, as importing it installs the reactor, "
                              f"which can lead to unexpected behavior.")
        return None


def install_reactor_import_hook():
    """Refuse C{import twisted.internet.reactor} from now on. @return: the hook, for
    L{uninstall_reactor_import_hook}."""
    hook = ReactorImportHook()
    sys.meta_path.insert(0, hook)
    return hook


def uninstall_reactor_import_hook(hook):
    """Take C{hook} off C{sys.meta_path} (nothing when it is not there)."""
    if hook in sys.meta_path:
        sys.meta_path.remove(hook)
