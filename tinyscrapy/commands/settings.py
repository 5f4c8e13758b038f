"""C{settings [--get NAME]}: every setting and its default, or the value of one."""

from tinyscrapy.commands import ScrapyCommand


class Command(ScrapyCommand):
    """Scrapy's C{settings}, which without options prints the table of every default."""

    requires_crawler_process = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self):
        return "[options]"

    def short_desc(self):
        return "Every setting and its default, or one value (--get NAME)"

    def long_desc(self):
        return ("Without options, print every setting and its default as a Markdown table "
                "(the README's). With --get NAME, print the value of one setting (after -s) "
                "as Python prints it, as Scrapy's settings --get does (False, None, a list); "
                "--getbool, --getint, --getfloat and --getlist read it as that kind. An "
                "unknown name is a usage error (exit 2).")

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("--get", metavar="NAME", help="print the value of setting NAME")
        for kind in ("bool", "int", "float", "list"):
            parser.add_argument(f"--get{kind}", metavar="NAME",
                                help=f"print setting NAME read as a {kind}")

    def run(self, args, opts):
        from tinyscrapy.settings import DEFAULTS, defaults_table
        wanted = [(kind, getattr(opts, "get" + kind))
                  for kind in ("", "bool", "int", "float", "list")
                  if getattr(opts, "get" + kind) is not None]
        if not wanted:
            print(defaults_table())
            return
        from tinyscrapy.exceptions import UsageError
        from tinyscrapy.settings import _closest
        for kind, name in wanted:
            if name not in DEFAULTS and name not in self.settings:
                guess = _closest(name)
                raise UsageError(f"settings --get{kind}: unknown setting {name!r}"
                                 + (f" (did you mean {guess}?)" if guess else ""))
            value = getattr(self.settings, "get" + kind)(name)
            print(_printable(value))


def _printable(value):
    """A setting's value as C{settings --get} prints it: JSON for a dict or a mapping of
    settings (as Scrapy prints one), else as Python prints it."""
    from tinyscrapy.settings import BaseSettings
    if isinstance(value, BaseSettings):
        value = value.copy_to_dict()
    if isinstance(value, dict):
        import json
        import os
        value = {os.fspath(key) if isinstance(key, os.PathLike) else key: item
                 for key, item in value.items()}
        try:
            return json.dumps(value)
        except TypeError:  # a class as a key or a value: as Python prints it
            return str(value)
    return value
