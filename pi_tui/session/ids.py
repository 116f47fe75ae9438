"""Identifiers and timestamps in the exact shapes pi writes them."""

from __future__ import annotations

import secrets
import time
from collections.abc import Container
from datetime import UTC, datetime

ENTRY_ID_ATTEMPTS = 100


def new_session_id() -> str:
    """A time-ordered UUIDv7, so session files sort by creation."""
    # uuid6 pulls in importlib.metadata (~30 ms); read-only commands never need it.
    import uuid6

    return str(uuid6.uuid7())


def new_entry_id(taken: Container[str]) -> str:
    """Eight lowercase hex characters that no entry in ``taken`` uses yet."""
    for _ in range(ENTRY_ID_ATTEMPTS):
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate
    # pi falls back to a full UUID when the short space is crowded; so do we.
    return new_session_id()


def now_ms() -> int:
    """Unix time in integer milliseconds, the unit pi uses inside messages."""
    return time.time_ns() // 1_000_000


def iso_from_ms(ms: int) -> str:
    """ISO-8601 with milliseconds and ``Z``, as JavaScript's ``toISOString``."""
    moment = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def now_iso() -> str:
    """The current time as an entry timestamp."""
    return iso_from_ms(now_ms())


def ms_from_iso(stamp: str) -> int:
    """Milliseconds since the epoch for an ISO timestamp; 0 when unreadable."""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def file_stamp(iso: str) -> str:
    """The file-name form of a timestamp: ``:`` and ``.`` become ``-``."""
    return iso.replace(":", "-").replace(".", "-")
