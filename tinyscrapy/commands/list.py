"""C{list}: the spider classes C{run} finds in ./spiders/."""

HELP = "list the spiders `run` can find"
DESCRIPTION = """\
Print the dotted path of every spider class in ./spiders/ (run it from the
project's root); `run` takes those paths."""


def add_arguments(parser):
    pass


def run(command):
    from tinyscrapy.spiders.spiderloader import find_spiders
    for path in find_spiders():
        print(path)
    return 0
