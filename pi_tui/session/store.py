"""The only code that writes session files: locked, append-only, repaired before appending.

Rules it keeps:
- one writer per file, through an advisory ``flock`` on a ``NAME.jsonl.lock`` sidecar that
  records who holds it, so a second writer is refused with a message naming the first;
- every batch is one ``write()`` on an ``O_APPEND`` descriptor of complete lines; a failed
  write is cut back to the previous end, so no half line stays behind;
- a torn last line is moved to ``NAME.jsonl.torn`` before the first append; a complete last
  line missing its newline gets one;
- a v1/v2 file is rewritten only when it must be appended to, atomically (temp file, fsync,
  rename), with the original kept as ``NAME.jsonl.v1.bak`` / ``.v2.bak``.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path

import orjson

from .errors import SessionLocked
from .ids import now_iso
from .records import Record, dump_line

FILE_MODE = 0o600
DIR_MODE = 0o700
TAIL_CHUNK = 64 * 1024


class FsyncPolicy(StrEnum):
    """When appended entries are forced to stable storage."""

    ENTRY = "entry"
    """After every entry."""
    ASSISTANT = "assistant"
    """After each batch holding an assistant message, and on close (the default)."""
    CLOSE = "close"
    """Only when the session is closed."""


def ensure_session_dir(directory: Path) -> None:
    """Create the sessions folder (0700) if it is missing."""
    if not directory.is_dir():
        directory.mkdir(parents=True, exist_ok=True)
        directory.chmod(DIR_MODE)


def sidecar(path: Path, suffix: str) -> Path:
    """A file beside ``path`` named ``path.name + suffix``."""
    return path.with_name(path.name + suffix)


class WriteLock:
    """An exclusive advisory lock for one session file, held until :meth:`release`."""

    def __init__(self, session_path: Path) -> None:
        self.path = sidecar(session_path, ".lock")
        self._session_path = session_path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise SessionLocked naming the holder."""
        if self._fd is not None:
            return
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 512).decode("utf-8", "replace").strip()
                os.close(fd)
                raise SessionLocked(self._session_path, holder or "unknown process") from None
            # The previous holder may have unlinked the lock file between our open and flock;
            # then we hold a lock nobody else can see, so start over on the new file.
            try:
                current = os.stat(self.path)
            except FileNotFoundError:
                os.close(fd)
                continue
            mine = os.fstat(fd)
            if (current.st_dev, current.st_ino) != (mine.st_dev, mine.st_ino):
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
            os.write(fd, f"pid {os.getpid()} ({program}) since {now_iso()}\n".encode())
            self._fd = fd
            return

    def release(self) -> None:
        """Drop the lock and remove the sidecar."""
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)
            self._fd = None


def _find_last_line_start(fd: int, size: int) -> int:
    """Offset just past the last newline before ``size`` (0 when there is none)."""
    end = size
    while end > 0:
        start = max(0, end - TAIL_CHUNK)
        chunk = os.pread(fd, end - start, start)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        end = start
    return 0


def _is_json(data: bytes) -> bool:
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return True


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SessionWriter:
    """Appends complete lines to one session file."""

    def __init__(self, path: Path, fsync: FsyncPolicy = FsyncPolicy.ASSISTANT) -> None:
        self.path = path
        self.fsync = fsync
        self.lock = WriteLock(path)
        self._fd: int | None = None
        self._prepared = False

    def acquire(self) -> None:
        """Take the write lock (the file itself may not exist yet)."""
        ensure_session_dir(self.path.parent)
        self.lock.acquire()

    def prepare(self, rewrite: Iterable[Record] | None = None, old_version: int = 0) -> None:
        """Make the file safe to append to; runs once, before the first append.

        ``rewrite`` holds the full migrated record list when the file on disk is an older
        version; the file is then replaced atomically and the original kept as a backup.
        """
        if self._prepared:
            return
        self.acquire()
        if rewrite is not None and self.path.exists():
            self._rewrite(rewrite, old_version)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)
        self._fd = fd
        self._repair_tail(fd)
        self._prepared = True

    def _rewrite(self, records: Iterable[Record], old_version: int) -> None:
        backup = sidecar(self.path, f".v{old_version}.bak")
        if not backup.exists():
            shutil.copy2(self.path, backup)
        temporary = sidecar(self.path, f".tmp-{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        try:
            os.write(fd, b"".join(dump_line(record) for record in records))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, self.path)
        _fsync_dir(self.path.parent)

    def _repair_tail(self, fd: int) -> None:
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return
        start = _find_last_line_start(fd, size)
        fragment = os.pread(fd, size - start, start)
        if _is_json(fragment):
            os.write(fd, b"\n")
            return
        torn = sidecar(self.path, ".torn")
        keep = os.open(torn, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            os.write(keep, fragment + b"\n")
            os.fsync(keep)
        finally:
            os.close(keep)
        os.ftruncate(fd, start)
        os.fsync(fd)

    def append(self, payload: bytes, *, holds_assistant: bool) -> None:
        """Write complete lines in one call; on failure the file is cut back to its old end."""
        if self._fd is None:
            self.prepare()
        fd = self._fd
        assert fd is not None
        before = os.fstat(fd).st_size
        try:
            written = os.write(fd, payload)
            while written < len(payload):
                written += os.write(fd, payload[written:])
        except BaseException:
            os.ftruncate(fd, before)
            raise
        if self.fsync is FsyncPolicy.ENTRY or (
            self.fsync is FsyncPolicy.ASSISTANT and holds_assistant
        ):
            os.fsync(fd)

    def close(self) -> None:
        """fsync, close the file and release the lock."""
        try:
            if self._fd is not None:
                os.fsync(self._fd)
                os.close(self._fd)
        finally:
            self._fd = None
            self._prepared = False
            self.lock.release()
