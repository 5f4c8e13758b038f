"""C{runspider FILE.py}: run the spider defined in a file."""

from tinyscrapy.commands import BaseRunSpiderCommand
from tinyscrapy.exceptions import UsageError


class Command(BaseRunSpiderCommand):
    """Scrapy's C{runspider}."""

    def syntax(self):
        return "[options] <spider_file>"

    def short_desc(self):
        return "Run the spider defined in a Python file"

    def long_desc(self):
        return ("Run the Spider subclass defined in a Python file, without a project. Exit "
                "statuses as for run.")

    def run(self, args, opts):
        if len(args) != 1:
            raise UsageError()
        from tinyscrapy.spiderloader import spider_class_from_file
        self.exitcode = self.crawl([spider_class_from_file(args[0])], opts.spargs)
