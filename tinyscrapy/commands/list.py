"""C{list}: the spiders C{run} finds: by name in a project, else the classes in
./spiders/ by dotted path."""

HELP = "list the spiders `run` can find"
DESCRIPTION = """\
Inside a project (tinyscrapy.cfg), print the name of every spider of SPIDER_MODULES;
elsewhere, the dotted path of every spider class in ./spiders/. `run` takes either."""


def add_arguments(parser):
    pass


def run(command):
    from tinyscrapy.spiderloader import SpiderLoader, find_spiders
    from tinyscrapy.utils.project import inside_project
    if inside_project():
        for name in SpiderLoader.from_settings(command.settings).list():
            print(name)
        return 0
    for path in find_spiders():
        print(path)
    return 0
