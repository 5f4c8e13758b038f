"""C{startproject NAME [DIR]}: write a new project from the templates of C{TEMPLATES_DIR}
(by default the package's C{templates/project/}): C{tinyscrapy.cfg}, a settings module, a
spiders package, and items, pipelines and middlewares modules with examples."""

import re
import shutil
import stat
from pathlib import Path

from tinyscrapy.commands import ScrapyCommand
from tinyscrapy.exceptions import UsageError

IGNORE = shutil.ignore_patterns("*.pyc", "__pycache__", ".svn")
CONFIG_FILES = ("tinyscrapy.cfg", "scrapy.cfg")


class Command(ScrapyCommand):
    """Scrapy's C{startproject}."""

    requires_crawler_process = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self):
        return "<project_name> [project_dir]"

    def short_desc(self):
        return "Create a project: tinyscrapy.cfg, settings, spiders/, pipelines, middlewares"

    def long_desc(self):
        return ("Write a new project into project_dir (default: ./project_name) from the "
                "templates of TEMPLATES_DIR (by default the package's): tinyscrapy.cfg (the "
                "format of Scrapy's scrapy.cfg, naming project_name.settings), the settings "
                "module, a spiders package, and items, pipelines and middlewares modules "
                "with examples. Then cd project_dir and genspider.")

    def run(self, args, opts):
        from tinyscrapy.utils.template import string_camelcase, templates_dir
        if len(args) not in (1, 2):
            raise UsageError()
        name, folder = args[0], Path(args[-1])
        for config in CONFIG_FILES:
            if (folder / config).exists():
                raise UsageError(f"{config} already exists in {folder.resolve()}: a project "
                                 "is there already")
        _check_name(name)
        source = templates_dir(self.settings, "project")
        if not source.is_dir():
            raise UsageError(f"no project templates in {source} (TEMPLATES_DIR)")
        copy_tree(source, folder.resolve())
        shutil.move(folder / "module", folder / name)
        values = {"project_name": name, "ProjectName": string_camelcase(name)}
        _render(folder, name, values)
        print(f"New tinyscrapy project {name!r}, using template directory {str(source)!r}, "
              f"created in:\n    {folder.resolve()}\n\nYou can start your first spider "
              f"with:\n    cd {folder}\n    python -m tinyscrapy genspider example "
              f"example.com")


def _render(folder, name, values):
    """Fill the configuration file and every C{.tmpl} file of the new project."""
    from tinyscrapy.utils.template import render_templatefile
    for config in CONFIG_FILES:
        if (folder / config).exists():
            render_templatefile(folder / config, **values)
    for template in sorted((folder / name).rglob("*.tmpl")):
        render_templatefile(template, **values)


def copy_tree(source, target):
    """
    Copy the template tree C{source} into C{target} (which may exist: what is in it
    stays), keeping the templates' permissions but writable by their owner (a read-only
    installation must not give read-only projects).

    @raise UsageError: a file cannot be written.
    """
    names = [entry.name for entry in source.iterdir()]
    ignored = IGNORE(str(source), names)
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name in names:
            if name in ignored:
                continue
            if (source / name).is_dir():
                copy_tree(source / name, target / name)
            else:
                shutil.copy2(source / name, target / name)
                _make_writable(target / name)
        shutil.copystat(source, target)
        _make_writable(target)
    except OSError as e:
        raise UsageError(f"cannot write {e.filename or target}: {e.strerror}") from None


def _make_writable(path):
    path.chmod(path.stat().st_mode | stat.S_IWUSR)


def _check_name(name):
    """@raise UsageError: C{name} is not a Python identifier, or names a module that
    exists (Scrapy's messages)."""
    import importlib.util
    if not re.fullmatch(r"[_a-zA-Z]\w*", name):
        raise UsageError(f"Project names must begin with a letter and contain only letters, "
                         f"numbers and underscores: {name!r}")
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.loader is not None:
        raise UsageError(f"Module {name!r} already exists: choose another project name")

