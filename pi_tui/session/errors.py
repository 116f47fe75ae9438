"""Errors raised by the session layer, each with a message a user can act on."""

from __future__ import annotations

from pathlib import Path


class SessionError(Exception):
    """Base class for every error the session layer raises on purpose."""


class EntryNotFound(SessionError, KeyError):
    """An operation named an entry id that the session does not hold."""

    def __init__(self, entry_id: str) -> None:
        super().__init__(f"Entry {entry_id} not found")
        self.entry_id = entry_id

    def __str__(self) -> str:
        return str(self.args[0])


class NotASessionFile(SessionError):
    """A file exists but its first record is not a session header."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path} is not a pi session file: {reason}")
        self.path = path


class SessionNotFound(SessionError):
    """A session argument matched no file."""


class SessionLocked(SessionError):
    """Another process holds the write lock of a session file."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(
            f"{path} is open for writing in another process ({holder}). "
            "Close it there, open it read-only (tree/context), or fork it."
        )
        self.path = path
        self.holder = holder
