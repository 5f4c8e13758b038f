"""
Settings: one value per name, each remembering which layer set it.

Layers flow one way, as in Scrapy: C{default} < C{project} < C{spider}
(C{Spider.custom_settings}) < C{cmdline} (C{-s NAME=VALUE}). A lower layer never overwrites
a higher one. L{Settings.freeze} is called before the engine starts; after that, setting
anything raises.

Typed getters (L{Settings.getint}, ...) raise L{UsageError} naming the setting, so a word
where a number belongs stops the start with one clear line; L{Settings.validate} checks
every overridden setting against the kind of its default before the crawl starts, so a bad
value stops the start even when the part that reads it comes later.

A name that no default declares may be the user's own (read by their pipeline) or a typo:
the settings remember which names were read, and the crawler warns at start about the
unknown names that nothing has read (L{Settings.unread_unknown}).
"""

import copy
import json

from tinyscrapy.exceptions import UsageError
from tinyscrapy.settings.default_settings import DEFAULTS, KINDS, PATH, PATHS

PRIORITIES = {"default": 0, "project": 10, "spider": 20, "cmdline": 30}


def kind_of(name):
    """The type a setting's value should have (C{int}, C{float}, C{bool}, C{str}, C{dict},
    C{list}, L{PATH} or L{PATHS}), or None when nothing is known about C{name}."""
    if name in KINDS:
        return KINDS[name]
    if name not in DEFAULTS or DEFAULTS[name] is None:
        return None
    return type(DEFAULTS[name])


class Settings:
    """
    A mapping of setting names to values with per-name priorities.

    @ivar frozen: True once L{freeze} was called; then L{set} raises.
    """

    def __init__(self, values=None, priority="project"):
        self._values = {}
        self._priorities = {}
        self._read = set()
        self.frozen = False
        # a copy, so a component that changes a dict it read never changes the defaults
        self.update(copy.deepcopy(DEFAULTS), "default")
        if values:
            self.update(values, priority)

    def set(self, name, value, priority="project"):
        """Set C{name} unless a higher layer already set it."""
        if self.frozen:
            raise TypeError("settings are frozen once the crawl has started")
        rank = PRIORITIES[priority]
        if rank >= self._priorities.get(name, -1):
            self._values[name] = value
            self._priorities[name] = rank

    def update(self, values, priority="project"):
        """Set each name of the mapping C{values} at C{priority}."""
        for name, value in dict(values).items():
            self.set(name, value, priority)

    def setdict(self, values, priority="project"):
        """Scrapy's name for L{update} (an C{update_settings} override may call it)."""
        self.update(values, priority)

    def __setitem__(self, name, value):
        """C{settings["NAME"] = value}: L{set} at the C{project} priority, as in Scrapy."""
        self.set(name, value)

    def freeze(self):
        """Refuse further changes."""
        self.frozen = True

    def copy(self):
        """An unfrozen copy with the same values and priorities."""
        new = Settings.__new__(Settings)
        new._values = {name: _copy_container(value) for name, value in self._values.items()}
        new._priorities = dict(self._priorities)
        new._read = set()
        new.frozen = False
        return new

    def priority(self, name):
        """The name of the layer that set C{name}, or None."""
        rank = self._priorities.get(name)
        return next((k for k, v in PRIORITIES.items() if v == rank), None)

    def overridden(self):
        """The names set above the defaults, with their values, sorted."""
        return {k: self._values[k] for k in sorted(self._values) if self._priorities[k] > 0}

    def unknown(self):
        """Names set by a user that no default declares (maybe a typo, maybe their own)."""
        return sorted(k for k in self._values if k not in DEFAULTS)

    def unread_unknown(self):
        """
        The unknown names that nothing has read so far, each with a guess.

        @return: a sorted list of C{(name, closest known name or None)}.
        """
        return [(name, _closest(name)) for name in self.unknown() if name not in self._read]

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
            if kind is PATH:
                if isinstance(value, str):
                    from tinyscrapy.utils.misc import load_object
                    load_object(value)
            elif kind is PATHS:
                from tinyscrapy.utils.misc import load_object
                for entry in self.getlist(name):
                    try:
                        load_object(entry)
                    except UsageError as e:
                        raise UsageError(f"setting {name}: {e}") from None
            elif kind is str:
                if not isinstance(value, str):
                    raise UsageError(f"setting {name}={value!r}: expected a string")
            else:
                getters[kind](name)

    def __contains__(self, name):
        return name in self._values

    def __getitem__(self, name):
        return self.get(name)

    def get(self, name, default=None):
        self._read.add(name)
        return self._values.get(name, default)

    def getint(self, name, default=0):
        value = self.get(name, default)
        if isinstance(value, float) and not value.is_integer():
            raise UsageError(f"setting {name}={value!r}: expected a whole number")
        return self._typed(name, default, int)

    def getfloat(self, name, default=0.0):
        return self._typed(name, default, float)

    def getbool(self, name, default=False):
        value = self.get(name, default)
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off", ""):
                return False
            raise UsageError(f"setting {name}={value!r}: expected a boolean")
        if value is None:
            return bool(default)
        if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
            return bool(value)
        raise UsageError(f"setting {name}={value!r}: expected a boolean")

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
            raise UsageError(f"setting {name}={value!r}: expected a list")
        return list(value)

    def getdict(self, name, default=None):
        value = self.get(name, default)
        if value is None:
            return {}
        if isinstance(value, str):
            value = parse_value(value)
        if not isinstance(value, dict):
            raise UsageError(f"setting {name}={value!r}: expected a dict")
        return dict(value)

    def _typed(self, name, default, kind):
        value = self.get(name, default)
        if value is None:
            return default
        try:
            if isinstance(value, bool):
                raise ValueError
            return kind(value)
        except (TypeError, ValueError):
            raise UsageError(f"setting {name}={value!r}: expected {kind.__name__}") from None


def _copy_container(value):
    """A shallow copy of a dict or list value, so two crawlers never share one."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value


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
