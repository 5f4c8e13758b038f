"""C{startproject NAME [DIR]}: write a new project: C{tinyscrapy.cfg}, a settings module,
a spiders package, and items, pipelines and middlewares modules with examples."""

import os

HELP = "create a project: tinyscrapy.cfg, settings, spiders/, pipelines, middlewares"
DESCRIPTION = """\
Write a new project into DIR (default: ./NAME): tinyscrapy.cfg (the format of Scrapy's
scrapy.cfg, naming NAME.settings), the settings module, a spiders package, and items,
pipelines and middlewares modules with examples. Then cd DIR and genspider."""


def add_arguments(parser):
    parser.add_argument("name", metavar="NAME", help="the project's package name (a "
                        "Python identifier)")
    parser.add_argument("dir", nargs="?", metavar="DIR",
                        help="where to write it (default: ./NAME)")


def run(command):
    from tinyscrapy.utils import template as templates
    from tinyscrapy.utils.conf import CONFIG_NAME
    name, folder = command.args.name, command.args.dir or command.args.name
    _check_name(name)
    if os.path.exists(os.path.join(folder, CONFIG_NAME)):
        from tinyscrapy.exceptions import UsageError
        raise UsageError(f"{os.path.join(folder, CONFIG_NAME)} already exists: a project "
                         "is there already")
    values = {"project": name, "classname": _camel(name)}
    files = {
        CONFIG_NAME: templates.CONFIG,
        os.path.join(name, "__init__.py"): "",
        os.path.join(name, "settings.py"): templates.SETTINGS,
        os.path.join(name, "items.py"): templates.ITEMS,
        os.path.join(name, "pipelines.py"): templates.PIPELINES,
        os.path.join(name, "middlewares.py"): templates.MIDDLEWARES,
        os.path.join(name, "spiders", "__init__.py"): templates.SPIDERS_INIT,
    }
    for relative, text in files.items():
        write_new_file(os.path.join(folder, relative), text.format(**values))
    print(f"New tinyscrapy project {name!r} created in:\n    {os.path.abspath(folder)}\n\n"
          f"You can start your first spider with:\n    cd {folder}\n"
          f"    python -m tinyscrapy genspider example example.com")
    return 0


def write_new_file(path, text):
    """Write C{text} to a new file C{path}, making its folders.
    @raise UsageError: the file exists, or cannot be written."""
    from tinyscrapy.exceptions import UsageError
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "x", encoding="utf-8") as f:
            f.write(text)
    except FileExistsError:
        raise UsageError(f"{path} already exists") from None
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None


def _check_name(name):
    import importlib.util

    from tinyscrapy.exceptions import UsageError
    if not name.isidentifier() or name.startswith("_"):
        raise UsageError(f"project name {name!r} must be a Python identifier: letters, "
                         "digits and underscores, not starting with a digit or _")
    if importlib.util.find_spec(name) is not None:
        raise UsageError(f"a module named {name!r} already exists: choose another "
                         "project name")


def _camel(name):
    return "".join(part.capitalize() for part in name.split("_")) or name
