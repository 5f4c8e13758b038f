"""C{settings [--get NAME]}: every setting and its default, or the value of one."""

HELP = "every setting and its default, or one value (--get NAME)"
DESCRIPTION = """\
Without options, print every setting and its default as a Markdown table (the README's).
With --get NAME, print the value of one setting (after -s): a string as it is, anything
else as JSON. An unknown name is a usage error (exit 2)."""


def add_arguments(parser):
    parser.add_argument("--get", metavar="NAME", help="print the value of setting NAME")
    parser.add_argument("-s", dest="settings", action="append", default=[],
                        metavar="NAME=VALUE", help="set a setting first (repeatable)")


def run(command):
    from tinyscrapy.settings import DEFAULTS, defaults_table
    if command.args.get is None:
        print(defaults_table())
        return 0
    import json

    from tinyscrapy.command import setting_pairs
    from tinyscrapy.errors import UsageError
    from tinyscrapy.settings import _closest, parse_value
    settings = command.settings
    for name, value in setting_pairs(command.args.settings, "-s"):
        settings.set(name, parse_value(value, name), "cmdline")
    name = command.args.get
    if name not in DEFAULTS and name not in settings:
        guess = _closest(name)
        raise UsageError(f"settings --get: unknown setting {name!r}"
                         + (f" (did you mean {guess}?)" if guess else ""))
    value = settings.get(name)
    print(value if isinstance(value, str) else json.dumps(value, default=str))
    return 0
