"""Private files and folders: everything the service keeps on disk is for its own user only.

The data folder, the artifact folders and the installation secret are created ``0700`` /
``0600`` whatever the process umask; an existing folder or file with wider permissions (an
installation made before this rule) is tightened when the service opens it, if the service's user
owns it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
from pathlib import Path

from regua.errors import StorageError

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_log = logging.getLogger(__name__)


def tighten(path: Path, mode: int) -> None:
    """Narrow ``path``'s permissions to ``mode`` when they are wider and we own it."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return
    if stat.S_IMODE(st.st_mode) & ~mode == 0:
        return
    if st.st_uid != os.geteuid():
        _log.warning("%s is %o and owned by uid %d: cannot tighten it", path, st.st_mode, st.st_uid)
        return
    os.chmod(path, mode)


def private_dir(path: Path) -> Path:
    """Create ``path`` and its missing parents as ``0700`` (tightening ``path`` itself)."""
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another thread or process made it
            folder.mkdir(mode=PRIVATE_DIR)  # the umask can only narrow it
    tighten(path, PRIVATE_DIR)
    return path


def private_file(path: Path) -> Path:
    """Make sure the file ``path`` exists (empty when new) with mode ``0600``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE)
    os.close(fd)
    tighten(path, PRIVATE_FILE)
    return path


def write_private(path: Path, data: bytes, *, exclusive: bool = False) -> bool:
    """Write ``data`` to ``path`` as a ``0600`` file, atomically (temp file, then rename).

    With ``exclusive`` an existing file is kept (returns False): two processes starting at once
    both end up reading the one file that was written first. Returns True when written.
    """
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # mkstemp creates 0600
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if exclusive:
            try:
                os.link(tmp, path)  # fails when the file exists: never overwrites
            except FileExistsError:
                return False
        else:
            os.replace(tmp, path)
        return True
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc}") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
