"""
L{check_output_path}: a file the crawl writes only at its end (C{--trace}, C{STATS_FILE})
is checked at the start, so that a path that cannot be written, or a full filesystem,
stops the command with one line (exit status 2) instead of losing the file after the
crawl.
"""

import os

from tinyscrapy.errors import UsageError

MIN_FREE_BYTES = 64 * 1024  # less free space than this: refused


def check_output_path(path, what):
    """
    Make sure C{path} can be written now: its folder exists or can be made, the path is
    not a directory, the file can be opened for writing, and its filesystem has room.
    A file that did not exist is not left behind.

    @param what: how the user named it (C{--trace}, C{STATS_FILE}), for the message.
    @raise UsageError: it cannot be written (the message says why).
    """
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UsageError(f"{what} {path}: cannot write it ({folder} is a file)")
    try:
        os.makedirs(folder, exist_ok=True)
        if os.path.isdir(path):
            raise UsageError(f"{what} {path}: is a directory, not a file")
        existed = os.path.exists(path)
        with open(path, "ab"):
            pass
        if not existed:
            os.unlink(path)
    except OSError as e:
        raise UsageError(f"{what} {path}: cannot write it ({e.strerror or e})") from None
    try:
        info = os.statvfs(folder)
    except (OSError, AttributeError):  # not POSIX: found out at the end
        return
    free = info.f_bavail * info.f_frsize
    if free < MIN_FREE_BYTES:
        raise UsageError(f"{what} {path}: its filesystem is full ({free} bytes free)")
