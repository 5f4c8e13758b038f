"""C{settings}: every setting and its default, as a Markdown table."""

HELP = "every setting and its default (Markdown)"


def add_arguments(parser):
    pass


def run(command):
    from tinyscrapy.settings import defaults_table
    print(defaults_table())
    return 0
