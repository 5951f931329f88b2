"""Files a run writes: their paths checked before the run, their content written atomically.

A run of minutes must not end in an error about its output folder, and a reader (or a
run stopped half-way through a write) must never see half a file: every file is written
to a temporary file in the same folder and renamed over the target (``os.replace`` is
atomic within one file system).
"""

import os
import tempfile

from contact_lcp.exceptions import ContactLCPError


class OutputPathError(ContactLCPError, ValueError):
    """A path a run would write to that cannot be written (the message names it)."""


def check_writable(path, what):
    """Raise :class:`OutputPathError` unless ``path`` can be written.

    Parameters
    ----------
    path : str or os.PathLike
        The file to be written (it need not exist).
    what : str
        What the file is, for the message (e.g. ``"--output"``).
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not path or os.path.basename(path) == "":
        raise OutputPathError(f"{what}: expected a file name, got {path!r}")
    if os.path.isdir(path):
        raise OutputPathError(f"{what}: {path!r} is a folder, expected a file name")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise OutputPathError(f"{what}: {folder!r} in {path!r} is a file, not a folder")
    if not os.path.isdir(folder):
        raise OutputPathError(f"{what}: the folder {folder!r} of {path!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputPathError(f"{what}: the folder {folder!r} of {path!r} is not writable")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        # os.replace would still succeed, but the user marked the file read-only
        raise OutputPathError(f"{what}: {path!r} exists and is not writable")


def write_atomically(path, write, suffix=""):
    """Call ``write(f)`` on a binary file that replaces ``path`` only once it is complete.

    The temporary file (``.<name>-*<suffix>`` in the same folder) gets the permissions
    ``open`` would give a new file; on any error or interrupt it is removed and ``path``
    is left as it was.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}-", suffix=suffix, dir=folder)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
