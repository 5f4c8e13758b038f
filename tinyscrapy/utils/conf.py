"""
Scrapy's C{scrapy.utils.conf}: the project's configuration file. A project is the directory
holding C{tinyscrapy.cfg} (or Scrapy's C{scrapy.cfg}), in the format of Scrapy's::

    [settings]
    default = myproject.settings

found in the current directory or one of its parents (L{find_config}); the settings
module it names is L{settings_module_name} (C{TINYSCRAPY_SETTINGS_MODULE} in the
environment wins).
"""

import configparser
import os
import sys

from tinyscrapy.exceptions import UsageError

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
