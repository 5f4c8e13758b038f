"""C{python -m tinyscrapy}: the command line (see L{tinyscrapy.cmdline})."""

from tinyscrapy.cmdline import main

if __name__ == "__main__":
    main()
