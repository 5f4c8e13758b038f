"""C{run [SPIDER ...]}: run spiders by name (in a project, or from ./spiders/) or by
dotted class path; none, outside a project: the demo spiders on the embedded demo site."""

import os
import sys

HELP = "run spiders by name or dotted class path (default: the demo spiders)"
DESCRIPTION = """\
Run spiders, named by their name (inside a project, or in ./spiders/: run books) or by
dotted class path (spiders.books.BooksSpider), together in one process. With none named,
outside a project, serve the embedded demo site in the same process and run the two
example spiders of ./spiders/ against it. Exit 0 when the crawls ran to their end, 1 when
one could not go on or fetched nothing at all, 2 for a usage error."""

DEFAULT_SPIDERS = ("spiders.books.BooksSpider", "spiders.quotes.QuotesSpider")


def add_arguments(parser):
    parser.add_argument("spiders", nargs="*", metavar="SPIDER",
                        help="a spider's name (in a project, or in ./spiders/), or a dotted "
                             "class path such as spiders.books.BooksSpider")
    parser.add_common_options()


def run(command):
    from tinyscrapy.exceptions import UsageError
    from tinyscrapy.spiderloader import (
        load_spider_class,
        project_loader,
        require_spiders_folder,
        resolve_spider,
    )
    from tinyscrapy.utils.project import inside_project
    if not command.args.spiders:
        if inside_project():
            raise UsageError("name the spiders to run: run NAME [NAME ...] (`list` shows "
                             "this project's spiders)")
        require_spiders_folder()
        return command.crawl([load_spider_class(path) for path in DEFAULT_SPIDERS])
    sys.path.insert(0, os.getcwd())
    loader = project_loader(command.settings)
    return command.crawl([resolve_spider(name, loader) for name in command.args.spiders])
