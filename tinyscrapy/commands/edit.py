"""C{edit SPIDER}: open a spider's module in the editor, as Scrapy's C{edit}."""

import os
import shlex
import subprocess
import sys

from tinyscrapy.commands import ScrapyCommand
from tinyscrapy.exceptions import UsageError


def edit_file(editor, path):
    """
    Open C{path} with C{editor} (C{EDITOR}; it may carry arguments, C{"code -w"}: split as
    a shell would, but run without one) and wait for it.

    @return: the editor's exit status.
    @raise UsageError: the editor cannot be started.
    """
    try:
        return subprocess.call([*shlex.split(editor), os.fspath(path)])  # noqa: S603
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot start the editor {editor!r} (EDITOR): {e}") from None


class Command(ScrapyCommand):
    """Scrapy's C{edit}, which also finds the spiders C{run} finds outside a project."""

    requires_crawler_process = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self):
        return "<spider>"

    def short_desc(self):
        return "Edit a spider"

    def long_desc(self):
        return ("Open the module of a spider (by its name) in the editor the EDITOR "
                "environment variable names, else the EDITOR setting; exit with the "
                "editor's status.")

    def run(self, args, opts):
        if len(args) != 1:
            raise UsageError()
        from tinyscrapy.spiderloader import project_loader
        loader = project_loader(self.settings)
        try:
            spidercls = loader.load(args[0])
        except KeyError:
            raise UsageError(f"Spider not found: {args[0]} (spiders found: "
                             f"{', '.join(loader.list()) or 'none'})") from None
        self.exitcode = edit_file(self.settings["EDITOR"],
                                  sys.modules[spidercls.__module__].__file__)
