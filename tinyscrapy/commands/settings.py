"""C{settings [--get NAME]}: every setting and its default, or the value of one."""

HELP = "every setting and its default, or one value (--get NAME)"
DESCRIPTION = """\
Without options, print every setting and its default as a Markdown table (the README's).
With --get NAME, print the value of one setting (after -s) as Python prints it, as Scrapy's
settings --get does (False, None, a list); --getbool, --getint, --getfloat and --getlist
read it as that kind. An unknown name is a usage error (exit 2)."""


def add_arguments(parser):
    parser.add_argument("--get", metavar="NAME", help="print the value of setting NAME")
    for kind in ("bool", "int", "float", "list"):
        parser.add_argument(f"--get{kind}", metavar="NAME",
                            help=f"print setting NAME read as a {kind}")
    parser.add_argument("-s", dest="settings", action="append", default=[],
                        metavar="NAME=VALUE", help="set a setting first (repeatable)")


def run(command):
    from tinyscrapy.settings import DEFAULTS, defaults_table
    args = command.args
    wanted = [(kind, getattr(args, "get" + kind)) for kind in ("", "bool", "int", "float", "list")
              if getattr(args, "get" + kind) is not None]
    if not wanted:
        print(defaults_table())
        return 0
    from tinyscrapy.cmdline import setting_pairs
    from tinyscrapy.exceptions import UsageError
    from tinyscrapy.settings import _closest, parse_value
    settings = command.settings
    for name, value in setting_pairs(command.args.settings, "-s"):
        settings.set(name, parse_value(value, name), "cmdline")
    for kind, name in wanted:
        if name not in DEFAULTS and name not in settings:
            guess = _closest(name)
            raise UsageError(f"settings --get{kind}: unknown setting {name!r}"
                             + (f" (did you mean {guess}?)" if guess else ""))
        print(getattr(settings, "get" + kind)(name))
    return 0
