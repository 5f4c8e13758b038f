"""
Settings, as Scrapy's C{scrapy.settings}: L{BaseSettings}, a mutable mapping of names to
values in which each name remembers the priority it was set with, and L{Settings}, which
starts from every default (L{tinyscrapy.settings.default_settings}).

Priorities flow one way, as in Scrapy (L{SETTINGS_PRIORITIES}): C{default} < C{command} <
C{addon} < C{project} < C{spider} (C{Spider.custom_settings}) < C{cmdline} (C{-s
NAME=VALUE}). A lower priority never overwrites a higher one. L{BaseSettings.freeze} is
called before the engine starts; after that, setting anything raises C{TypeError}.

Typed getters (L{BaseSettings.getint}, ...) raise L{SettingValueError} (a C{ValueError}, as
Scrapy's getters raise, and a L{UsageError}) naming the setting, so a word where a number
belongs stops the start with one clear line; L{Settings.validate} checks every overridden
setting against the kind of its default before the crawl starts, so a bad value stops the
start even when the part that reads it comes later.

A name that no default declares may be the user's own (read by their pipeline), one of
Scrapy's settings tinyscrapy does not act on (L{unsupported}: warned about by name, with
the reason), or a typo: the settings remember which names were read, and the crawler
warns at start about the unknown names that nothing has read (L{Settings.unread_unknown}).
"""

import copy
import json
import logging
from collections.abc import MutableMapping

from tinyscrapy.exceptions import UsageError
from tinyscrapy.settings.default_settings import (
    DEFAULTS,
    KINDS,
    OBSOLETE,
    PATH,
    PATHS,
    UNSUPPORTED,
)

logger = logging.getLogger(__name__)

SETTINGS_PRIORITIES = {"default": 0, "command": 10, "addon": 15, "project": 20, "spider": 30,
                       "cmdline": 40}
PRIORITIES = SETTINGS_PRIORITIES  # tinyscrapy's older name


# the words Settings.getbool reads, as Scrapy's does (not "yes", "on" or "TRUE")
BOOLEAN_WORDS = {"True": True, "true": True, "False": False, "false": False}


class SettingValueError(UsageError, ValueError):
    """A setting holds a value of the wrong kind (a word where a number belongs)."""


def get_settings_priority(priority):
    """The number of C{priority}: a name of L{SETTINGS_PRIORITIES}, or a number itself."""
    if isinstance(priority, str):
        return SETTINGS_PRIORITIES[priority]
    return priority


def kind_of(name):
    """The type a setting's value should have (C{int}, C{float}, C{bool}, C{str}, C{dict},
    C{list}, L{PATH} or L{PATHS}), or None when nothing is known about C{name}."""
    if name in KINDS:
        return KINDS[name]
    if name not in DEFAULTS or DEFAULTS[name] is None:
        return None
    return type(DEFAULTS[name])


def unsupported(name):
    """The reason tinyscrapy does not act on Scrapy's setting C{name}, or None."""
    return UNSUPPORTED.get(name)


class SettingsAttribute:
    """
    One setting's value and the priority it was set with (Scrapy's class; tinyscrapy's
    settings keep the two in two dicts, and L{BaseSettings.attributes} shows them as
    these).
    """

    def __init__(self, value, priority):
        self.value = value
        self.priority = (max(value.maxpriority(), priority) if isinstance(value, BaseSettings)
                         else priority)

    def set(self, value, priority):
        """Take C{value} when C{priority} is at least the current one."""
        if priority >= self.priority:
            if isinstance(self.value, BaseSettings):
                value = BaseSettings(value, priority=priority)
            self.value = value
            self.priority = priority

    def __repr__(self):
        return f"<SettingsAttribute value={self.value!r} priority={self.priority}>"


class BaseSettings(MutableMapping):
    """
    A mapping of setting names to values with per-name priorities, as Scrapy's: it can be
    iterated, copied with C{dict(settings)}, and frozen.

    @ivar frozen: True once L{freeze} was called; then changes raise C{TypeError}.
    """

    def __init__(self, values=None, priority="project"):
        self._values = {}
        self._priorities = {}
        self._read = set()
        self.frozen = False
        if values:
            self.update(values, priority)

    @property
    def attributes(self):
        """C{{name: SettingsAttribute}}: each value with its priority, as Scrapy's
        settings hold them (a view made now: changing it changes no setting)."""
        return {name: SettingsAttribute(value, self._priorities.get(name, 0))
                for name, value in self._values.items()}

    # changing

    def set(self, name, value, priority="project"):
        """Set C{name} unless it was set with a higher priority."""
        self._assert_mutability()
        rank = get_settings_priority(priority)
        if rank >= self._priorities.get(name, -1):
            if isinstance(value, BaseSettings):
                value = value.copy_to_dict()
            self._values[name] = value
            self._priorities[name] = rank

    def setdefault(self, name, default=None, priority="project"):
        """Set C{name} to C{default} unless it is set. @return: its value."""
        if name not in self:
            self.set(name, default, priority)
            return default
        return self[name]

    def update(self, values, priority="project"):
        """
        Set each name of C{values} (a mapping, a L{BaseSettings} -- whose own priorities
        are kept --, or a JSON object as text) at C{priority}.
        """
        if isinstance(values, str):
            values = json.loads(values)
        if isinstance(values, BaseSettings):
            for name in values:
                self.set(name, values[name], values.getpriority(name))
            return
        for name, value in dict(values).items():
            self.set(name, value, priority)

    def setdict(self, values, priority="project"):
        """Scrapy's name for L{update} (an C{update_settings} override may call it)."""
        self.update(values, priority)

    def setmodule(self, module, priority="project"):
        """Set the upper-case names of C{module} (a module or its dotted path)."""
        if isinstance(module, str):
            import importlib
            module = importlib.import_module(module)
        for name in dir(module):
            if name.isupper():
                self.set(name, getattr(module, name), priority)

    def __setitem__(self, name, value):
        """C{settings["NAME"] = value}: L{set} at the C{project} priority, as in Scrapy."""
        self.set(name, value)

    def delete(self, name, priority="project"):
        """Remove C{name} unless it was set with a higher priority."""
        self._assert_mutability()
        if get_settings_priority(priority) >= self._priorities.get(name, -1):
            self._values.pop(name, None)
            self._priorities.pop(name, None)

    def __delitem__(self, name):
        self._assert_mutability()
        del self._values[name]
        del self._priorities[name]

    def add_to_list(self, name, item):
        """Append C{item} to the list setting C{name} (kept at its priority), if absent."""
        value = self.getlist(name)
        if item not in value:
            self.set(name, [*value, item], self.getpriority(name) or 0)

    def remove_from_list(self, name, item):
        """Remove C{item} from the list setting C{name}.
        @raise ValueError: it is not in it."""
        value = self.getlist(name)
        if item not in value:
            raise ValueError(f"{item!r} not found in the {name} setting ({value!r}).")
        self.set(name, [each for each in value if each != item], self.getpriority(name) or 0)

    def _assert_mutability(self):
        if self.frozen:
            raise TypeError("Trying to modify an immutable Settings object (settings are "
                            "frozen once the crawl has started)")

    def freeze(self):
        """Refuse further changes."""
        self.frozen = True

    def copy(self):
        """An unfrozen copy with the same values and priorities (each container value
        copied, so two crawlers never share one)."""
        new = type(self).__new__(type(self))
        new._values = {name: copy.deepcopy(value) if isinstance(value, (dict, list))
                       else value for name, value in self._values.items()}
        new._priorities = dict(self._priorities)
        new._read = set()
        new.frozen = False
        return new

    def frozencopy(self):
        """A frozen L{copy}."""
        new = self.copy()
        new.freeze()
        return new

    # reading

    def __contains__(self, name):
        return name in self._values

    def __getitem__(self, name):
        """The value of C{name}, or None when it is not set (as Scrapy's)."""
        return self.get(name)

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def copy_to_dict(self):
        """A plain dict of every name and value."""
        return {name: copy.deepcopy(value) for name, value in self._values.items()}

    def getpriority(self, name):
        """The priority (a number) C{name} was set with, or None."""
        return self._priorities.get(name)

    def maxpriority(self):
        """The highest priority any name was set with (C{default}'s when none)."""
        return max(self._priorities.values(), default=SETTINGS_PRIORITIES["default"])

    def priority(self, name):
        """The name of the priority C{name} was set with, or None."""
        rank = self._priorities.get(name)
        return next((k for k, v in SETTINGS_PRIORITIES.items() if v == rank), None)

    def get(self, name, default=None):
        """The value of C{name}, or C{default} when it is not set or None."""
        self._read.add(name)
        value = self._values.get(name)
        return default if value is None else value

    def getint(self, name, default=0):
        value = self.get(name, default)
        if isinstance(value, float) and not value.is_integer():
            raise SettingValueError(f"setting {name}={value!r}: expected a whole number")
        return self._typed(name, default, int)

    def getfloat(self, name, default=0.0):
        return self._typed(name, default, float)

    def getbool(self, name, default=False):
        """
        A boolean, read as Scrapy's: C{True}, C{1}, C{"1"}, C{"True"} and C{"true"} are
        true; C{False}, C{0}, C{"0"}, C{"False"}, C{"false"} and None are false (None: the
        default).

        @raise SettingValueError: anything else (a C{ValueError} with Scrapy's words; a
            number other than 0 and 1 too, which Scrapy reads as true).
        """
        value = self.get(name, default)
        if value is None:
            return bool(default)
        if isinstance(value, str):
            if value in BOOLEAN_WORDS:
                return BOOLEAN_WORDS[value]
            try:
                value = int(value)
            except ValueError:
                pass
        if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
            return bool(value)
        raise SettingValueError(f"setting {name}={value!r}: expected a boolean (Supported "
                                f"values for boolean settings are 0/1, True/False, '0'/'1', "
                                f"'True'/'False' and 'true'/'false')")

    def getlist(self, name, default=None):
        """A list; a string is split on commas (or parsed, when it is a JSON list)."""
        value = self.get(name, default)
        if value is None:
            return []
        if isinstance(value, str):
            if value.strip().startswith("["):
                value = parse_value(value)
            else:
                return [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, (dict, int, float)):
            raise SettingValueError(f"setting {name}={value!r}: expected a list")
        return list(value)

    def getdict(self, name, default=None):
        """A dict (a copy); a string is parsed as a JSON object."""
        value = self.get(name, default)
        if value is None:
            return {}
        if isinstance(value, str):
            value = parse_value(value)
        if isinstance(value, BaseSettings):
            value = value.copy_to_dict()
        if not isinstance(value, dict):
            raise SettingValueError(f"setting {name}={value!r}: expected a dict")
        return dict(value)

    def getdictorlist(self, name, default=None):
        """
        A dict or a list (a copy): a string is parsed as JSON, else split on commas.

        @raise ValueError: the value is neither.
        """
        value = self.get(name, default)
        if value is None:
            return {}
        if isinstance(value, str):
            try:
                loaded = json.loads(value)
            except ValueError:
                return value.split(",")
            if not isinstance(loaded, (dict, list)):
                raise SettingValueError(f"JSON string for setting {name!r} must evaluate to "
                                        f"a dict or list, got {type(loaded).__name__}")
            return loaded
        if isinstance(value, tuple):
            return list(value)
        if not isinstance(value, (dict, list)):
            raise SettingValueError(f"Setting {name!r} must be a dict, list, tuple, or "
                                    f"string, got {type(value).__name__}: {value!r}")
        return copy.deepcopy(value)

    def getwithbase(self, name):
        """
        C{NAME_BASE} merged with C{NAME}, as a L{BaseSettings} (C{NAME} winning): each
        key keeps the priority of the setting it came from (C{_BASE}'s at C{default}), so
        that L{tinyscrapy.utils.conf.build_component_list} lets a project's entry win over
        a base one that names the same component another way.
        """
        if not isinstance(name, str):
            raise ValueError(f"Base setting key must be a string, got {name}")
        merged = BaseSettings()
        merged.update(self.getdict(name + "_BASE"), "default")
        merged.update(self.getdict(name), self.getpriority(name) or "default")
        return merged

    def get_component_priority_dict_with_base(self, name):
        """
        C{NAME_BASE} merged with C{NAME}, one key per component: keys that name the same
        class (a path and the class, Scrapy's path and tinyscrapy's) are one, the latest
        one's spelling and value kept (a warning names a component given twice in one
        of them).

        @return: a L{BaseSettings}.
        """
        if not isinstance(name, str):
            raise ValueError(f"Base setting key must be a string, got {name}")
        merged = {}  # component's import path -> (key as given, value)
        for part in (name + "_BASE", name):
            seen = set()
            for key, value in self.getdict(part).items():
                identity = _component_identity(key)
                if identity in seen:
                    logger.warning("Setting %s contains multiple keys that refer to the same "
                                   "object: %s. Only the last one will be kept.", name,
                                   identity)
                seen.add(identity)
                merged.pop(identity, None)
                merged[identity] = (key, value)
        result = BaseSettings()
        result.update(dict(merged.values()), self.getpriority(name) or "default")
        return result

    def set_in_component_priority_dict(self, name, cls, priority):
        """Set component C{cls} in the component priority dict C{name} to C{priority},
        replacing any key (a path) that names the same class; the setting keeps its
        priority."""
        components = dict(self.getdict(name))
        for key in tuple(components):
            if isinstance(key, str) and _loaded(key) is cls:
                del components[key]
        components[cls] = priority
        self.set(name, components, self.getpriority(name) or 0)

    def setdefault_in_component_priority_dict(self, name, cls, priority):
        """Set component C{cls} in the component priority dict C{name} to C{priority},
        unless it is there already (as the class or a path to it)."""
        components = dict(self.getdict(name))
        if any(_loaded(key) is cls for key in components):
            return
        components[cls] = priority
        self.set(name, components, self.getpriority(name) or 0)

    def replace_in_component_priority_dict(self, name, old_cls, new_cls, priority=None):
        """
        Replace C{old_cls} with C{new_cls} in the component priority dict C{name}, with
        C{priority} or else C{old_cls}'s.

        @raise KeyError: C{old_cls} is not there, or is switched off (None).
        """
        components = dict(self.getdict(name))
        old_priority = None
        found = False
        for key in tuple(components):
            if _loaded(key) is old_cls:
                found = True
                old_priority = components.pop(key)
        if not found or old_priority is None:
            raise KeyError(f"{old_cls} not found in the {name} setting "
                           f"({self.getdict(name)!r}).")
        components[new_cls] = old_priority if priority is None else priority
        self.set(name, components, self.getpriority(name) or 0)

    def _typed(self, name, default, kind):
        value = self.get(name, default)
        if value is None:
            return default
        try:
            if isinstance(value, bool):
                raise ValueError
            return kind(value)
        except (TypeError, ValueError):
            raise SettingValueError(f"setting {name}={value!r}: expected "
                                    f"{kind.__name__}") from None

    def __repr__(self):
        return f"<{type(self).__name__} {self.copy_to_dict()!r}>"


class Settings(BaseSettings):
    """
    Every default (C{default} priority), then C{values} at C{priority}: the settings of a
    crawl, with tinyscrapy's checks (L{validate}, L{overridden}, L{unread_unknown}).
    """

    def __init__(self, values=None, priority="project"):
        super().__init__()
        # a copy, so a component that changes a dict it read never changes the defaults
        self.update(copy.deepcopy(DEFAULTS), "default")
        if values:
            self.update(values, priority)

    def overridden(self):
        """The names set above the defaults, with their values, sorted."""
        return {k: self._values[k] for k in sorted(self._values) if self._priorities[k] > 0}

    def unknown(self):
        """Names set by a user that no default declares (maybe a typo, maybe their own,
        maybe one of Scrapy's that tinyscrapy does not act on)."""
        return sorted(k for k in self._values if k not in DEFAULTS)

    def unread_unknown(self):
        """
        The unknown names that nothing has read so far, each with a guess. Scrapy's
        settings that tinyscrapy does not act on are left out: L{unsupported_set} names
        them.

        @return: a sorted list of C{(name, closest known name or None)}.
        """
        return [(name, _closest(name)) for name in self.unknown()
                if name not in self._read and name not in UNSUPPORTED
                and name not in OBSOLETE]

    def unsupported_set(self):
        """The settings set here that are Scrapy's and that tinyscrapy does not act on,
        each with the reason: C{[(name, reason)]}, sorted."""
        return [(name, UNSUPPORTED[name]) for name in sorted(self._values)
                if name in UNSUPPORTED and self._priorities[name] > 0]

    def validate(self):
        """
        Check every value set above the defaults against the kind of its default.

        @raise UsageError: naming the first setting whose value has the wrong kind.
        """
        getters = {int: self.getint, float: self.getfloat, bool: self.getbool,
                   dict: self.getdict, list: self.getlist}
        for name in sorted(self.overridden()):
            kind = kind_of(name)
            value = self._values[name]
            if kind is None or value is None:
                continue
            if kind is PATH or kind is PATHS:
                from tinyscrapy.utils.misc import load_object
                entries = [value] if kind is PATH else self.getlist(name)
                for entry in entries:
                    if kind is PATH and not isinstance(entry, str):
                        continue  # the class itself
                    try:
                        load_object(entry)
                    except UsageError as e:  # the same kind of error, naming the setting
                        raise type(e)(f"setting {name}: {e}") from None
            elif kind is str:
                if not isinstance(value, str):
                    raise SettingValueError(f"setting {name}={value!r}: expected a string")
            else:
                getters[kind](name)
            bound = _LEAST.get(name)
            if bound is not None and self.getfloat(name) < bound[0]:
                raise SettingValueError(f"setting {name}={value!r}: {bound[1]}")


# settings whose kind alone does not refuse a value that would stall or break the crawl
_LEAST = {
    "CONCURRENT_REQUESTS": (1, "must be at least 1 (the most requests in flight; Scrapy "
                               "reads 0 as no limit, tinyscrapy wants the number)"),
    "DOWNLOAD_TIMEOUT": (0, "must not be negative (seconds)"),
}


def _closest(name):
    """The declared setting name closest to C{name}, or None."""
    import difflib  # only for a name nothing declares
    matches = difflib.get_close_matches(name, list(DEFAULTS), n=1, cutoff=0.75)
    return matches[0] if matches else None


def parse_value(text, name=None):
    """
    Parse a C{-s NAME=VALUE} value: JSON when it is a list, dict, number or boolean,
    else the string itself. A setting whose kind is a string (C{USER_AGENT},
    C{STATS_FILE}, ...) keeps the text as it is, even when it looks like a number.
    """
    if name is not None and kind_of(name) in (str, PATH):
        return text
    stripped = text.strip()
    if stripped[:1] in ("[", "{") or stripped in ("true", "false", "null"):
        try:
            return json.loads(stripped)
        except ValueError:
            raise UsageError(f"value {text!r} looks like JSON but does not parse") from None
    try:
        return int(stripped)
    except ValueError:
        pass
    try:
        return float(stripped)
    except ValueError:
        return text


def describe_default(value):
    """A setting's default as a short JSON-like text (long lists and dicts summarised)."""
    import json
    text = json.dumps(value, default=str)
    if len(text) > 60 and isinstance(value, (dict, list, tuple)):
        return f"{'{' if isinstance(value, dict) else '['}… {len(value)} entries" \
            f"{'}' if isinstance(value, dict) else ']'}"
    return text


def defaults_table():
    """Every setting and its default as a Markdown table, two settings a row (the README's)."""
    cells = [f"`{name}` | `{describe_default(value)}`" for name, value in DEFAULTS.items()]
    if len(cells) % 2:
        cells.append(" | ")
    half = len(cells) // 2
    lines = ["| setting | default | setting | default |", "|---|---|---|---|"]
    lines += [f"| {left} | {right} |" for left, right in
              zip(cells[:half], cells[half:], strict=True)]
    return "\n".join(lines)


def _loaded(key):
    """The object a component key names (a path is imported); the key itself when it
    cannot be."""
    from tinyscrapy.utils.misc import load_object
    try:
        return load_object(key)
    except (UsageError, NameError, TypeError, ValueError, ImportError):
        return key


def _component_identity(key):
    """One name for a component however it is given: its import path."""
    obj = _loaded(key)
    if isinstance(obj, str):
        return obj
    qualname = getattr(obj, "__qualname__", None)
    return f"{obj.__module__}.{qualname}" if qualname else repr(obj)
