"""C{list}: the spider classes C{run} finds in ./spiders/."""

HELP = "list the spiders `run` can find"


def add_arguments(parser):
    pass


def run(command):
    from tinyscrapy.spiders.spiderloader import find_spiders
    for path in find_spiders():
        print(path)
    return 0
