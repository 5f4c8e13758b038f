"""
Scrapy's C{scrapy.utils.asyncgen}: asynchronous iterables, gathered or made.
"""

from collections.abc import AsyncIterator


async def collect_asyncgen(result):
    """@return: (a coroutine of) the list of what the asynchronous iterator C{result}
    gives."""
    return [value async for value in result]


async def as_async_generator(it):
    """An asynchronous generator of what C{it} gives, an iterable or an asynchronous
    iterator."""
    if isinstance(it, AsyncIterator):
        async for value in it:
            yield value
    else:
        for value in it:
            yield value
