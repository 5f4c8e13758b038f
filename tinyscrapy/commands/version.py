"""C{version}: print tinyscrapy's version."""

import tinyscrapy

HELP = "print the version"
DESCRIPTION = """\
Print tinyscrapy's version."""


def add_arguments(parser):
    pass


def run(command):
    print(f"tinyscrapy {tinyscrapy.__version__}")
    return 0
