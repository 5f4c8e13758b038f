"""
C{run [SPIDER ...]}: run spiders by name (in a project, or from ./spiders/) or by dotted
class path, together in one process. With none named: every spider of the project inside
a project, else every spider of ./spiders/, else the demo spiders the package ships
(L{tinyscrapy.demo.spiders}); the ones that crawl the demo site get it served in the same
reactor.
"""

import os
import sys

HELP = "run spiders by name or dotted class path (default: the demo spiders)"
DESCRIPTION = """\
Run spiders, named by their name (inside a project, or in ./spiders/: run books) or by
dotted class path (spiders.books.BooksSpider), together in one process. With none named:
every spider of the project, else of ./spiders/, else the two demo spiders the package
ships; spiders of the demo site get it served in the same process. Exit 0 when the crawls
ran to their end, 1 when one could not go on or fetched nothing at all, 2 for a usage
error."""

DEMO_SPIDERS = ("tinyscrapy.demo.spiders.books.BooksSpider",
                "tinyscrapy.demo.spiders.quotes.QuotesSpider")


def add_arguments(parser):
    parser.add_argument("spiders", nargs="*", metavar="SPIDER",
                        help="a spider's name (in a project, or in ./spiders/), or a dotted "
                             "class path such as spiders.books.BooksSpider")
    parser.add_common_options()


def run(command):
    from tinyscrapy.exceptions import UsageError
    from tinyscrapy.spiderloader import project_loader, resolve_spider
    loader = project_loader(command.settings)  # the project's, ./spiders/, else the demo's
    if not command.args.spiders:
        names = loader.list()
        if not names:
            raise UsageError("no spiders found here to run (`list` shows them; name a "
                             "spider class by its dotted path: run package.module.Class)")
        return command.crawl([loader.load(name) for name in names])
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    return command.crawl([resolve_spider(name, loader) for name in command.args.spiders])
