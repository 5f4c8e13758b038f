"""
One module per command of C{python -m tinyscrapy}, as Scrapy's C{scrapy/commands/}.

Each module has C{HELP} (one line for C{--help}), C{add_arguments(parser)} and
C{run(command)}, which gets the L{tinyscrapy.command.Command} (its parsed C{args}, its
C{settings}, and the shared C{crawl()}) and returns the exit status. L{NAMES} lists them
in the order C{--help} shows them.
"""

NAMES = ("run", "runspider", "crawl", "demo", "fetch", "view", "shell", "bench", "list",
         "settings", "version")
