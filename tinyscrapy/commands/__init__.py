"""
One module per command of C{python -m tinyscrapy}, as Scrapy's C{scrapy/commands/}.

Each module has C{HELP} (one line for C{--help}), C{add_arguments(parser)} and
C{run(command)}, which gets the L{tinyscrapy.cmdline.Command} (its parsed C{args}, its
C{settings}, and the shared C{crawl()}) and returns the exit status. L{NAMES} lists them
in the order C{--help} shows them. A module may have C{DESCRIPTION}, the paragraph its own
C{--help} shows (C{HELP} when it has none).
"""

import argparse

NAMES = ("run", "runspider", "crawl", "fetch", "view", "shell", "parse", "list",
         "startproject", "genspider", "demo", "bench", "settings", "version")


def port_number(text):
    """An argparse type: a TCP port, 0 to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is out of range (0 to 65535)")
    return port


def positive_int(text):
    """An argparse type: a whole number of at least 1."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number
