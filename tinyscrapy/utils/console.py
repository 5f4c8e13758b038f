"""
Scrapy's C{scrapy.utils.console}: an interactive Python prompt over a namespace, in the
first of the shells one prefers that is installed (ptpython, IPython, bpython, then
Python's own C{code.interact}). (C{python -m tinyscrapy shell} runs its prompt beside the
reactor: L{tinyscrapy.shell}.)
"""

import code
from functools import wraps


def _embed_ipython_shell(namespace=None, banner=""):
    from IPython.terminal.embed import InteractiveShellEmbed
    from IPython.terminal.ipapp import load_default_config

    @wraps(_embed_ipython_shell)
    def embed(namespace=namespace or {}, banner=""):
        InteractiveShellEmbed.clear_instance()
        InteractiveShellEmbed.instance(banner1=banner, user_ns=namespace,
                                       config=load_default_config())()
    return embed


def _embed_bpython_shell(namespace=None, banner=""):
    import bpython

    @wraps(_embed_bpython_shell)
    def embed(namespace=namespace or {}, banner=""):
        bpython.embed(locals_=namespace, banner=banner)
    return embed


def _embed_ptpython_shell(namespace=None, banner=""):
    import ptpython.repl

    @wraps(_embed_ptpython_shell)
    def embed(namespace=namespace or {}, banner=""):
        print(banner)
        ptpython.repl.embed(locals=namespace)
    return embed


def _embed_standard_shell(namespace=None, banner=""):
    try:
        import readline
        import rlcompleter  # noqa: F401 (tab completion, once imported)
    except ImportError:
        pass
    else:
        readline.parse_and_bind("tab:complete")

    @wraps(_embed_standard_shell)
    def embed(namespace=namespace or {}, banner=""):
        code.interact(banner=banner, local=namespace)
    return embed


DEFAULT_PYTHON_SHELLS = {"ptpython": _embed_ptpython_shell, "ipython": _embed_ipython_shell,
                         "bpython": _embed_bpython_shell, "python": _embed_standard_shell}


def get_shell_embed_func(shells=None, known_shells=None):
    """
    The embedding function of the first of C{shells} (names; by default all of
    L{DEFAULT_PYTHON_SHELLS}, in its order) that C{known_shells} knows and that imports.

    @return: a function C{embed(namespace=..., banner=...)}, or None.
    """
    if known_shells is None:
        known_shells = dict(DEFAULT_PYTHON_SHELLS)
    for name in DEFAULT_PYTHON_SHELLS if shells is None else shells:
        if name in known_shells:
            try:
                return known_shells[name]()
            except ImportError:
                continue
    return None


def start_python_console(namespace=None, banner="", shells=None):
    """Start a prompt over C{namespace} (L{get_shell_embed_func}); C{exit()} in it
    returns here."""
    try:
        embed = get_shell_embed_func(shells)
        if embed is not None:
            embed(namespace={} if namespace is None else namespace, banner=banner)
    except SystemExit:
        pass
