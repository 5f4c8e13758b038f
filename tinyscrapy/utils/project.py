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

import importlib
import os

from tinyscrapy.exceptions import UsageError
from tinyscrapy.settings import Settings
from tinyscrapy.utils.conf import ENV_NAME, find_config, settings_module_name


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
