"""C{list}: the spiders C{run} finds: by name in a project, else the classes in
./spiders/ by dotted path, else the demo spiders the package ships."""

HELP = "list the spiders `run` can find"
DESCRIPTION = """\
Inside a project (tinyscrapy.cfg), print the name of every spider of SPIDER_MODULES;
elsewhere, the dotted path of every spider class in ./spiders/, or, with no such folder,
of the demo spiders the package ships. `run` takes either."""


def add_arguments(parser):
    pass


def run(command):
    from tinyscrapy.commands.run import DEMO_SPIDERS
    from tinyscrapy.spiderloader import find_spiders, get_spider_loader, has_spiders_folder
    from tinyscrapy.utils.project import inside_project
    if inside_project():
        for name in get_spider_loader(command.settings).list():
            print(name)
        return 0
    for path in find_spiders() if has_spiders_folder() else DEMO_SPIDERS:
        print(path)
    return 0
