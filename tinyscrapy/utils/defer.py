"""C{scrapy.utils.defer}: Deferreds and coroutines at the asyncio boundary
(L{tinyscrapy.runner.reactors}).

This module only re-exports."""

from tinyscrapy.runner.reactors import (
    deferred_from_coro,
    deferred_to_future,
    maybe_deferred_to_future,
)

__all__ = ["deferred_from_coro", "deferred_to_future", "maybe_deferred_to_future"]
