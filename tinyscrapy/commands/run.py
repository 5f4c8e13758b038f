"""C{run [SPIDER ...]}: run spider classes by dotted path; none: the demo spiders."""

import os
import sys

HELP = "run spider classes (default: the demo spiders)"
DESCRIPTION = """\
Run spider classes, named by dotted path (spiders.books.BooksSpider), together in one
process. With none named, serve the embedded demo site in the same process and run the two
example spiders of ./spiders/ against it. Exit 0 when the crawls ran to their end, 1 when
one could not go on or fetched nothing at all, 2 for a usage error."""

DEFAULT_SPIDERS = ("spiders.books.BooksSpider", "spiders.quotes.QuotesSpider")


def add_arguments(parser):
    parser.add_argument("spiders", nargs="*", metavar="SPIDER",
                        help="dotted class path, e.g. spiders.books.BooksSpider")
    parser.add_common_options()


def run(command):
    from tinyscrapy.spiders.spiderloader import load_spider_class, require_spiders_folder
    paths = command.args.spiders or list(DEFAULT_SPIDERS)
    if not command.args.spiders:
        require_spiders_folder()
    else:
        sys.path.insert(0, os.getcwd())
    return command.crawl([load_spider_class(path) for path in paths])
