"""
Scrapy's C{scrapy.utils.display}: L{pformat} and L{pprint}, Python's, coloured with pygments
on a terminal that shows colour (plain text elsewhere, or without pygments).
"""

import sys
from pprint import pformat as _pformat


def _colorize(text, colorize=True):
    if not colorize or not sys.stdout.isatty():
        return text
    try:
        from pygments import highlight
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return text
    return highlight(text, PythonLexer(), TerminalFormatter())


def pformat(obj, *args, **kwargs):
    """C{pprint.pformat(obj)}, coloured on a terminal unless C{colorize=False}."""
    return _colorize(_pformat(obj), kwargs.pop("colorize", True))


def pprint(obj, *args, **kwargs):
    """Print L{pformat} of C{obj}."""
    print(pformat(obj, *args, **kwargs))
