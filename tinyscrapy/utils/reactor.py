"""C{scrapy.utils.reactor}: choosing the reactor (L{tinyscrapy.runner.reactors}).

This module only re-exports."""

from tinyscrapy.runner.reactors import (
    install_reactor,
    is_asyncio_reactor_installed,
    is_reactor_installed,
)

__all__ = ["install_reactor", "is_asyncio_reactor_installed", "is_reactor_installed"]
