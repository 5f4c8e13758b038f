"""
Scrapy's C{scrapy.utils.conf}: the project's configuration file. A project is the directory
holding C{tinyscrapy.cfg} (or Scrapy's C{scrapy.cfg}), in the format of Scrapy's::

    [settings]
    default = myproject.settings

found in the current directory or one of its parents (L{find_config}); the settings
module it names is L{settings_module_name} (C{TINYSCRAPY_SETTINGS_MODULE} in the
environment wins, then Scrapy's C{SCRAPY_SETTINGS_MODULE}; C{SCRAPY_PROJECT} picks
another key of C{[settings]} than C{default}).

Also Scrapy's helpers of the same module: L{closest_scrapy_cfg}, L{get_config} and
L{get_sources} (the user's and the system's C{scrapy.cfg} too), L{init_env},
L{build_component_list}, L{arglist_to_dict}, and the two that read feed options,
L{feed_process_params_from_cli} and L{feed_complete_default_values_from_settings}.
"""

import configparser
import numbers
import os
import sys

from tinyscrapy.exceptions import UsageError

CONFIG_NAME = "tinyscrapy.cfg"
SCRAPY_CONFIG_NAME = "scrapy.cfg"
ENV_NAME = "TINYSCRAPY_SETTINGS_MODULE"
SCRAPY_ENV_NAME = "SCRAPY_SETTINGS_MODULE"


def settings_module_from_environment():
    """The settings module the environment names (C{TINYSCRAPY_SETTINGS_MODULE}, else
    C{SCRAPY_SETTINGS_MODULE}), or None."""
    return os.environ.get(ENV_NAME) or os.environ.get(SCRAPY_ENV_NAME) or None


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
    named = settings_module_from_environment()
    if named:
        return named
    path = find_config(start)
    if path is None:
        return None
    parser = configparser.ConfigParser()
    try:
        parser.read(path, encoding="utf-8")
        name = parser.get("settings", os.environ.get("SCRAPY_PROJECT") or "default").strip()
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


def closest_scrapy_cfg(path=".", prevpath=None):
    """The path of the project's configuration file (L{find_config}: C{tinyscrapy.cfg} or
    C{scrapy.cfg}) for C{path} or one of its parents, C{""} when there is none."""
    return find_config(path) or ""


def get_sources(use_closest=True):
    """The configuration files Scrapy reads, in order: the system's, the user's, and (with
    C{use_closest}) the project's."""
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    sources = ["/etc/scrapy.cfg", r"c:\scrapy\scrapy.cfg",
               os.path.join(config_home, "scrapy.cfg"), os.path.expanduser("~/.scrapy.cfg")]
    if use_closest:
        sources.append(closest_scrapy_cfg())
    return sources


def get_config(use_closest=True):
    """The configuration files of L{get_sources} read into one C{ConfigParser} (a later
    file wins)."""
    parser = configparser.ConfigParser()
    parser.read([source for source in get_sources(use_closest) if source], encoding="utf-8")
    return parser


def init_env(project="default", set_syspath=True):
    """
    Set up the environment for a project's code, as Scrapy's command line does: set
    C{SCRAPY_SETTINGS_MODULE} from C{[settings] project} (unless it is set) and, with
    C{set_syspath}, put the project's directory on C{sys.path}.
    """
    config = get_config()
    if SCRAPY_ENV_NAME not in os.environ and config.has_option("settings", project):
        os.environ[SCRAPY_ENV_NAME] = config.get("settings", project)
    closest = closest_scrapy_cfg()
    if closest and set_syspath:
        folder = os.path.dirname(closest)
        if folder not in sys.path:
            sys.path.append(folder)


def build_component_list(compdict, *, convert=None):
    """
    The components of a C{{component: order}} dict, lowest order first, those set to None
    left out: Scrapy's reading of C{ITEM_PIPELINES}, C{DOWNLOADER_MIDDLEWARES}, ...

    @param convert: applied to each key (an old path to its new one: by default
        L{tinyscrapy.utils.deprecate.update_classpath}, then a path of Scrapy's to
        tinyscrapy's at the same place, as L{tinyscrapy.utils.misc.load_object} reads
        it); two keys that convert to the same
        one are an error, unless C{compdict} has priorities (C{getpriority}) and one is
        higher.
    @raise ValueError: an order that is not a number, or two keys for one component.
    """
    if convert is None:
        convert = _current_path
    for name, value in compdict.items():
        if value is not None and (isinstance(value, bool)
                                  or not isinstance(value, numbers.Real)):
            raise ValueError(f"Invalid value {value} for component {name}, please provide "
                             f"a real number or None instead")
    converted = {}
    priorities = {}
    getpriority = getattr(compdict, "getpriority", None)
    for name, value in compdict.items():
        key = convert(name)
        priority = getpriority(name) if getpriority is not None else None
        if key in converted:
            if getpriority is None or priorities[key] == priority:
                raise ValueError(f"Some paths in {list(compdict)!r} convert to the same "
                                 f"object, please update your settings")
            if priorities[key] > priority:
                continue
        converted[key] = value
        priorities[key] = priority
    enabled = [(value, key) for key, value in converted.items() if value is not None]
    return [key for _, key in sorted(enabled, key=_order)]


def _current_path(path):
    from tinyscrapy.utils.deprecate import update_classpath
    path = update_classpath(path)
    if isinstance(path, str) and path.startswith("scrapy."):
        return "tinyscrapy" + path[len("scrapy"):]
    return path


def _order(pair):
    return pair[0]


def arglist_to_dict(arglist):
    """C{["a=1", "b=2"]} as C{{"a": "1", "b": "2"}}."""
    return dict(argument.split("=", 1) for argument in arglist)


def feed_complete_default_values_from_settings(feed, settings, uri=None):
    """
    A copy of the feed options C{feed} with what they leave out taken from the settings
    (C{FEED_EXPORT_ENCODING}, C{FEED_EXPORT_FIELDS}, C{FEED_EXPORT_INDENT},
    C{FEED_STORE_EMPTY}, C{FEED_URI_PARAMS}, C{FEED_EXPORT_BATCH_ITEM_COUNT}, with
    Scrapy's defaults for those tinyscrapy lacks), and the format from C{uri}'s
    extension.
    """
    out = dict(feed)
    if uri is not None:
        out.setdefault("format", os.path.splitext(uri)[1].removeprefix("."))
    out.setdefault("batch_item_count", settings.getint("FEED_EXPORT_BATCH_ITEM_COUNT"))
    out.setdefault("encoding", settings.get("FEED_EXPORT_ENCODING"))
    out.setdefault("fields", settings.get("FEED_EXPORT_FIELDS") or None)
    out.setdefault("store_empty", settings.getbool("FEED_STORE_EMPTY", True))
    out.setdefault("uri_params", settings.get("FEED_URI_PARAMS"))
    out.setdefault("item_export_kwargs", {})
    indent = settings.get("FEED_EXPORT_INDENT")
    out.setdefault("indent", None if indent is None else settings.getint("FEED_EXPORT_INDENT"))
    return out


def feed_process_params_from_cli(settings, output, *, overwrite_output=None):
    """
    The C{FEEDS} setting that C{-o} (C{output}) or C{-O} (C{overwrite_output}) values
    make, C{URI} or C{URI:FORMAT} each (C{-:FORMAT} for stdout), updated with C{FEEDS}.

    @raise UsageError: both kinds are given, or a format is not one tinyscrapy writes.
    """
    exporters = {**settings.getdict("FEED_EXPORTERS_BASE"), **settings.getdict("FEED_EXPORTERS")}
    formats = [name for name, cls in exporters.items() if cls is not None]
    overwrite = False
    if overwrite_output:
        if output:
            raise UsageError("Please use only one of -o/--output and -O/--overwrite-output")
        output, overwrite = overwrite_output, True
    feeds = {}
    for value in output:
        uri, colon, fmt = value.rpartition(":")
        if colon and uri and fmt in formats:
            if uri == "-":
                uri = "stdout:"
        else:
            uri, fmt = value, os.path.splitext(value)[1].removeprefix(".")
        if fmt not in formats:
            raise UsageError(f"Unrecognized output format '{fmt}'. Set a supported one "
                             f"({tuple(formats)}) after a colon at the end of the output "
                             f"URI (i.e. -o/-O <URI>:<FORMAT>) or as a file extension.")
        feeds[uri] = {"format": fmt}
        if overwrite:
            feeds[uri]["overwrite"] = True
    feeds.update(settings.getdict("FEEDS"))
    return feeds
