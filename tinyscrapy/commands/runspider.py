"""C{runspider FILE.py}: run the spider defined in a file."""

HELP = "run the spider defined in a file"
DESCRIPTION = """\
Run the Spider subclass defined in a Python file, without a project. Exit statuses as for
run."""


def add_arguments(parser):
    parser.add_argument("file", metavar="FILE.py", help="a Python file defining a Spider")
    parser.add_common_options()


def run(command):
    from tinyscrapy.spiderloader import spider_class_from_file
    return command.crawl([spider_class_from_file(command.args.file)])
