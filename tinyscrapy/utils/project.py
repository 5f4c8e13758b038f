"""
Scrapy's C{scrapy.utils.project}: finding the project a command runs in, its settings, and
its data directory.

A project is the directory holding C{tinyscrapy.cfg} (the format of Scrapy's
C{scrapy.cfg})::

    [settings]
    default = myproject.settings

found in the current directory or one of its parents; a Scrapy project keeps its
C{scrapy.cfg}, which is read when no C{tinyscrapy.cfg} stands beside it. The environment
variable C{TINYSCRAPY_SETTINGS_MODULE}, or Scrapy's C{SCRAPY_SETTINGS_MODULE}
(L{ENVVAR}), names the settings module instead. The settings module's upper-case names
are the C{project} layer of the settings (above the defaults, below a spider's
C{custom_settings} and C{-s}).

The project's data directory (L{project_data_dir}, L{data_path}) is Scrapy's: C{.scrapy/}
beside the configuration file, or the C{[datadir]} the file names; plugins keep their
state there (scrapy-deltafetch's database, spidermon's files).
"""

import importlib
import os
import warnings

from tinyscrapy.exceptions import NotConfigured, UsageError
from tinyscrapy.settings import Settings
from tinyscrapy.utils.conf import (
    SCRAPY_ENV_NAME,
    find_config,
    get_config,
    init_env,
    settings_module_from_environment,
    settings_module_name,
)

ENVVAR = SCRAPY_ENV_NAME
DATADIR_CFG_SECTION = "datadir"
DATA_DIR = ".scrapy"
# the SCRAPY_<NAME> variables that are also settings, as in Scrapy
_ENVIRONMENT_SETTINGS = ("CHECK", "PROJECT", "PYTHON_SHELL", "SETTINGS_MODULE")


def inside_project(start=None):
    """
    Whether a command run here has a project: a settings module named by the environment
    that imports (one that does not is warned about), or a configuration file here or
    above.
    """
    named = settings_module_from_environment()
    if named:
        try:
            importlib.import_module(named)
        except ImportError as e:
            warnings.warn(f"Cannot import scrapy settings module {named}: {e}", stacklevel=2)
        else:
            return True
    return find_config(start) is not None


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
        from tinyscrapy.scrapyfinder import missing_scrapy_hint
        source = next((variable for variable in ("TINYSCRAPY_SETTINGS_MODULE", ENVVAR)
                       if os.environ.get(variable)), None) or find_config(start)
        raise UsageError(f"cannot import the project's settings module {name!r} (named by "
                         f"{source}): {type(e).__name__}: {e}{missing_scrapy_hint(e)}"
                         ) from None
    return {key: getattr(module, key) for key in dir(module) if key.isupper()}


def get_project_settings():
    """
    The settings of the project the current directory is in, as Scrapy's
    C{get_project_settings}: the environment set up as Scrapy's command line sets it
    (L{init_env}: C{SCRAPY_SETTINGS_MODULE}, the project's folder on C{sys.path}), then
    the defaults with the project's settings module as the C{project} layer (only the
    defaults outside a project), and the C{SCRAPY_CHECK}, C{SCRAPY_PROJECT},
    C{SCRAPY_PYTHON_SHELL} and C{SCRAPY_SETTINGS_MODULE} variables as settings.

    @return: an unfrozen L{Settings}.
    @raise UsageError: the settings module does not import.
    """
    init_env(os.environ.get("SCRAPY_PROJECT", "default"))
    settings = Settings(project_values(), "project")
    for name in _ENVIRONMENT_SETTINGS:
        value = os.environ.get("SCRAPY_" + name)
        if value is not None:
            settings.set(name, value, "project")
    return settings


def project_data_dir(project="default"):
    """
    The project's data directory, made if it does not exist: the C{[datadir]} option
    C{project} of the configuration files, else C{.scrapy/} beside the project's
    configuration file.

    @raise NotConfigured: outside a project, or with no configuration file to put it
        beside.
    """
    if not inside_project():
        raise NotConfigured("Not inside a project")
    config = get_config()
    if config.has_option(DATADIR_CFG_SECTION, project):
        path = config.get(DATADIR_CFG_SECTION, project)
    else:
        found = find_config()
        if found is None:
            raise NotConfigured("Unable to find scrapy.cfg file to infer project data dir")
        path = os.path.join(os.path.dirname(os.path.abspath(found)), DATA_DIR)
    os.makedirs(path, exist_ok=True)
    return path


def data_path(path, createdir=False):
    """
    C{path} in the project's data directory (L{project_data_dir}), or in C{.scrapy/} of
    the current directory outside a project; an absolute path as it is.

    @param createdir: make the directory C{path} if it does not exist.
    """
    path = os.fspath(path)
    if not os.path.isabs(path):
        if inside_project():
            path = os.path.join(project_data_dir(), path)
        else:
            path = os.path.join(DATA_DIR, path)
    if createdir:
        os.makedirs(path, exist_ok=True)
    return path


def find_projects(path=".", *, max_depth=None, ignored_dirs=()):
    """
    The root folder of every Scrapy project (a folder with C{scrapy.cfg}) in C{path} or
    below it, as C{pathlib.Path}s; below a project, a hidden folder, a folder named in
    C{ignored_dirs} or a virtual environment (C{pyvenv.cfg}) nothing is searched.

    @param max_depth: how many levels below C{path} to search (0: C{path} itself);
        None: all of them.
    """
    from pathlib import Path
    root = Path(path)
    ignored = frozenset(ignored_dirs)
    for folder, subfolders, files in os.walk(root):
        current = Path(folder)
        if "scrapy.cfg" in files:
            subfolders.clear()
            yield current
            continue
        if "pyvenv.cfg" in files or (max_depth is not None
                                     and len(current.relative_to(root).parts) >= max_depth):
            subfolders.clear()
            continue
        subfolders[:] = sorted(name for name in subfolders
                               if not name.startswith(".") and name not in ignored)
