"""
Scrapy's C{scrapy.utils.signal}: sending a signal and catching what its receivers raise.

Scrapy keeps every receiver in PyDispatcher's process-wide registry, by sender; tinyscrapy
keeps each crawler's in its L{tinyscrapy.signalmanager.SignalBus}. So these helpers send to
the receivers of C{sender}'s own signals when C{sender} has them (a crawler:
C{crawler.signals}), and otherwise to one process-wide L{SignalBus} (L{ANONYMOUS}, whose
C{connect} receivers connect to). A receiver that raises is logged and its exception is
its result, as in Scrapy.
"""

from tinyscrapy.signalmanager import SignalBus

ANONYMOUS = SignalBus()  # the receivers of signals sent with no sender of their own


def _bus(sender):
    bus = getattr(sender, "signals", None)
    return bus if isinstance(bus, SignalBus) else ANONYMOUS


def send_catch_log(signal=None, sender=None, *arguments, **named):
    """
    Call each receiver of C{signal} with the keywords it accepts.

    @return: a list of C{(receiver, result)}, the exception as the result of a receiver
        that raised (and was logged).
    """
    return _bus(sender).send(signal, **named)


def send_catch_log_deferred(signal=None, sender=None, *arguments, **named):
    """
    L{send_catch_log}, waiting for the receivers that return a Deferred or a coroutine.

    @return: a Deferred that fires with the list of C{(receiver, result)} once every
        receiver has finished; it never errbacks (a failure is logged, and is the result).
    """
    return _bus(sender).send_deferred(signal, **named)


async def send_catch_log_async(signal=None, sender=None, *arguments, **named):
    """L{send_catch_log_deferred} as a coroutine. @return: (a coroutine of) its list."""
    from tinyscrapy.utils.defer import maybe_deferred_to_future
    return await maybe_deferred_to_future(send_catch_log_deferred(signal, sender, **named))


def disconnect_all(signal=None, sender=None):
    """Disconnect every receiver of C{signal} (of C{sender}'s signals, or the
    process-wide ones)."""
    _bus(sender).disconnect_all(signal)
