"""C{python -m tinyscrapy}: the command line (see L{tinyscrapy.command})."""

from tinyscrapy.command import main

if __name__ == "__main__":
    main()
