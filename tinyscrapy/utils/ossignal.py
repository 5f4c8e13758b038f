"""
Scrapy's C{scrapy.utils.ossignal}: L{install_shutdown_handlers} and L{signal_names}. (The
crawl's own Ctrl-C handling is the reactor's "before shutdown" trigger, in
L{tinyscrapy.crawler}.)
"""

import signal

signal_names = {member.value: member.name for member in signal.Signals}


def install_shutdown_handlers(function, override_sigint=True):
    """
    Make C{function} the handler of SIGTERM, SIGINT (unless C{override_sigint} is False
    and a handler other than Python's default is in place, a debugger's) and, on
    Windows, SIGBREAK.
    """
    signal.signal(signal.SIGTERM, function)
    if override_sigint or signal.getsignal(signal.SIGINT) == signal.default_int_handler:
        signal.signal(signal.SIGINT, function)
    if hasattr(signal, "SIGBREAK"):
        signal.signal(signal.SIGBREAK, function)
