"""
Scrapy's C{scrapy.utils.decorators}: L{deprecated} (a function that warns when it is
called), L{inthread} (a function run in a thread, its result as a Deferred) and the
deprecated L{defers}.
"""

import warnings
from functools import wraps

from twisted.internet.defer import maybeDeferred

from tinyscrapy.exceptions import ScrapyDeprecationWarning


def deprecated(use_instead=None):
    """
    Mark a function as deprecated: each call warns (C{ScrapyDeprecationWarning}),
    naming C{use_instead} when given. Used bare (C{@deprecated}) or with the name of the
    replacement (C{@deprecated("new_function")}).
    """
    def decorate(func):
        @wraps(func)
        def warned(*args, **kwargs):
            message = f"Call to deprecated function {func.__name__}."
            if use_instead:
                message += f" Use {use_instead} instead."
            warnings.warn(message, ScrapyDeprecationWarning, stacklevel=2)
            return func(*args, **kwargs)
        return warned

    if callable(use_instead):
        func, use_instead = use_instead, None
        return decorate(func)
    return decorate


def defers(func):
    """A function that always returns a Deferred (C{maybeDeferred}); deprecated, as in
    Scrapy: decorating warns."""
    warnings.warn("@defers is deprecated, you can use maybeDeferred() directly if needed.",
                  ScrapyDeprecationWarning, stacklevel=2)

    @wraps(func)
    def deferred(*args, **kwargs):
        return maybeDeferred(func, *args, **kwargs)

    return deferred


def inthread(func):
    """
    A function that runs C{func} in a thread (L{tinyscrapy.utils.asyncio.run_in_thread})
    and returns a Deferred that fires with its result, or errbacks with what it raised.
    """
    from tinyscrapy.utils.asyncio import run_in_thread
    from tinyscrapy.utils.defer import deferred_from_coro

    @wraps(func)
    def in_thread(*args, **kwargs):
        return deferred_from_coro(run_in_thread(func, *args, **kwargs))

    return in_thread
