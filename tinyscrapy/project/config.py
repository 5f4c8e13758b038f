"""
Finding the project a command runs in, and its settings.

A project is the directory holding C{tinyscrapy.cfg} (the format of Scrapy's
C{scrapy.cfg})::

    [settings]
    default = myproject.settings

found in the current directory or one of its parents; a Scrapy project ported by its
imports alone still has C{scrapy.cfg}, which is read when no C{tinyscrapy.cfg} stands
beside it. The environment variable
C{TINYSCRAPY_SETTINGS_MODULE} names the settings module instead, as
C{SCRAPY_SETTINGS_MODULE} does for Scrapy. The settings module's upper-case names are the
C{project} layer of the settings (above the defaults, below a spider's C{custom_settings}
and C{-s}).
"""

import configparser
import importlib
import os
import sys

from tinyscrapy.errors import UsageError
from tinyscrapy.settings import Settings

CONFIG_NAME = "tinyscrapy.cfg"
SCRAPY_CONFIG_NAME = "scrapy.cfg"
ENV_NAME = "TINYSCRAPY_SETTINGS_MODULE"


def find_config(start=None):
    """
    The C{tinyscrapy.cfg} (or, in the same folder, failing it, the C{scrapy.cfg}) of the
    project C{start} (default: the current directory) is in.

    @return: its absolute path, or None outside a project.
    """
    folder = os.path.abspath(start or os.getcwd())
    while True:
        for name in (CONFIG_NAME, SCRAPY_CONFIG_NAME):
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate):
                return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def settings_module_name(start=None):
    """
    The dotted name of the project's settings module, and put the project's directory
    on C{sys.path} so it imports.

    @return: the name, or None outside a project.
    @raise UsageError: a C{tinyscrapy.cfg} that cannot be read or names no module.
    """
    if os.environ.get(ENV_NAME):
        return os.environ[ENV_NAME]
    path = find_config(start)
    if path is None:
        return None
    parser = configparser.ConfigParser()
    try:
        parser.read(path, encoding="utf-8")
        name = parser.get("settings", "default").strip()
    except (configparser.Error, UnicodeDecodeError) as e:
        reason = str(e).splitlines()[0]
        raise UsageError(f"{path}: cannot read the settings module's name ([settings] "
                         f"default = NAME.settings): {reason}") from None
    if not name:
        raise UsageError(f"{path}: [settings] default is empty (it names the project's "
                         "settings module, e.g. NAME.settings)")
    root = os.path.dirname(path)
    if root not in sys.path:
        sys.path.insert(0, root)
    return name


def inside_project(start=None):
    """True when a command run here has a project (a C{tinyscrapy.cfg} or the variable)."""
    return bool(os.environ.get(ENV_NAME)) or find_config(start) is not None


def project_values(start=None):
    """
    The upper-case names of the project's settings module, as a dict.

    @return: an empty dict outside a project.
    @raise UsageError: the module does not import.
    """
    name = settings_module_name(start)
    if name is None:
        return {}
    try:
        module = importlib.import_module(name)
    except Exception as e:
        source = ENV_NAME if os.environ.get(ENV_NAME) else find_config(start)
        raise UsageError(f"cannot import the project's settings module {name!r} (named by "
                         f"{source}): {type(e).__name__}: {e}") from None
    return {key: getattr(module, key) for key in dir(module) if key.isupper()}


def get_project_settings():
    """
    The settings of the project the current directory is in, as Scrapy's
    C{scrapy.utils.project.get_project_settings}: the defaults, with the project's
    settings module as the C{project} layer (only the defaults outside a project).

    @return: an unfrozen L{Settings}.
    """
    return Settings(project_values(), "project")
