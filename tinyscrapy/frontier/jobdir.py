"""
The layout of a C{--jobdir DIR}, apart from the SQLite frontier itself
(L{tinyscrapy.frontier.disk}):

    - C{DIR/<spider name>/}: one spider's frontier, whether it runs alone or with others;
    - C{DIR/<spider name>/lock}: held with C{flock} by the process that crawls with it,
      which writes its pid in it;
    - C{DIR/demo_port}: the port the embedded demo site listened on, so that a resumed
      C{run} serves it where the saved requests point.

Every directory of it is private to the user (C{0700}) and every file too (C{0600}).
"""

import os

from tinyscrapy.exceptions import UsageError
from tinyscrapy.utils.misc import names_one_entry

try:
    import fcntl
except ImportError:  # not POSIX: no lock, one crawl per directory is up to the user
    fcntl = None

FRONTIER = "frontier.sqlite"
LOCK = "lock"
DEMO_PORT = "demo_port"


def make_private_dir(directory, parent_too=False):
    """
    Make C{directory} if missing, readable by the user only (C{0700}); with C{parent_too},
    its parent as well (the C{--jobdir} above a spider's directory).

    @raise UsageError: it cannot be made or is not a directory.
    """
    try:
        missing = []  # the folders made here, outermost first: each private (makedirs
        each = os.path.abspath(directory)  # would give the ones above the last the umask's)
        while each and not os.path.exists(each) and len(missing) < 64:  # bounded
            missing.insert(0, each)
            each = os.path.dirname(each)
        for each in missing:
            os.makedirs(each, mode=0o700, exist_ok=True)
            os.chmod(each, 0o700)
        parent = os.path.dirname(directory.rstrip(os.sep)) if parent_too else None
        for each in (parent, directory):
            if each and os.path.isdir(each) and os.stat(each).st_mode & 0o077:
                os.chmod(each, 0o700)
    except OSError as e:
        raise UsageError(f"--jobdir {directory}: cannot use it ({e.strerror or e})") from None


def check_free_space(directory, minimum):
    """@raise UsageError: the filesystem of C{directory} has less than C{minimum} bytes
    free."""
    try:
        info = os.statvfs(directory)
    except (OSError, AttributeError):  # not POSIX: the first write will tell
        return
    free = info.f_bavail * info.f_frsize
    if free < minimum:
        raise UsageError(f"--jobdir {directory}: its filesystem is full ({free} bytes "
                         "free): free some space or give a directory elsewhere")


def make_private_file(path):
    """Create C{path} if missing, or restrict it, to C{0600}.
    @raise UsageError: it cannot be."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o600)
    except OSError as e:
        raise UsageError(f"--jobdir {os.path.dirname(path)}: cannot use it "
                         f"({e.strerror or e})") from None


def spider_jobdir(jobdir, spider_name):
    """
    @return: the directory of the spider C{spider_name} under C{--jobdir jobdir}.
    @raise UsageError: C{jobdir} is a file, holds a frontier directly (the layout before
        per-spider directories), or the name cannot be a directory name.
    """
    if not names_one_entry(spider_name):
        raise UsageError(f"--jobdir {jobdir}: spider name {spider_name!r} cannot name "
                         "a directory")
    if os.path.exists(jobdir) and not os.path.isdir(jobdir):
        raise UsageError(f"--jobdir {jobdir}: cannot use it (a file, not a directory)")
    if os.path.isfile(os.path.join(jobdir, FRONTIER)):
        raise UsageError(f"--jobdir {jobdir} holds a frontier directly in it (an older "
                         f"layout): move its files into {os.path.join(jobdir, '<spider>')}")
    return os.path.join(jobdir, spider_name)


class JobdirLock:
    """An exclusive C{flock} on C{DIR/lock}; L{release} (or the process ending) frees it."""

    def __init__(self, fd):
        self._fd = fd

    def release(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def lock_jobdir(directory):
    """
    Take C{directory/lock} without waiting, and write this process's pid in it.

    @return: the L{JobdirLock}.
    @raise UsageError: another crawl holds it (the message names its pid), or the file
        cannot be opened.
    """
    if fcntl is None:
        return JobdirLock(None)
    try:
        fd = os.open(os.path.join(directory, LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        raise UsageError(f"--jobdir {directory}: cannot use it ({e})") from None
    if os.fstat(fd).st_mode & 0o077:
        os.fchmod(fd, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        os.close(fd)
        raise UsageError(f"another crawl is using --jobdir {directory}"
                         + (f" (pid {pid})" if pid.isdigit() else "")) from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    except OSError as e:  # a full filesystem
        os.close(fd)
        raise UsageError(f"--jobdir {directory}: cannot use it ({e.strerror or e})") from None
    return JobdirLock(fd)


def saved_demo_port(jobdir):
    """@return: the demo site's port saved in C{jobdir}, or 0 (none saved, or unreadable)."""
    try:
        with open(os.path.join(jobdir, DEMO_PORT)) as f:
            port = int(f.read().strip())
    except (OSError, ValueError):
        return 0
    return port if 0 < port < 65536 else 0


def save_demo_port(jobdir, port):
    """Remember the demo site's C{port} in C{jobdir} (created if missing).
    @raise UsageError: it cannot be written."""
    make_private_dir(jobdir)
    try:
        fd = os.open(os.path.join(jobdir, DEMO_PORT), os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                     0o600)
        with open(fd, "w") as f:
            f.write(f"{port}\n")
    except OSError as e:
        raise UsageError(f"--jobdir {jobdir}: cannot use it ({e})") from None
