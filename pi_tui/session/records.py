"""Raw records as they sit in a file, with the few fields the index needs lifted out.

Entries are kept as the dicts orjson parsed, so writing one back reproduces every key in
its original order; the typed pydantic view is built only when asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from .entries import SessionEntry, parse_entry

Record = dict[str, Any]


def dump_line(record: Record) -> bytes:
    """One JSONL line: compact JSON, non-ASCII kept as UTF-8 (as JSON.stringify does)."""
    return orjson.dumps(record) + b"\n"


@dataclass(slots=True, eq=False)
class Entry:
    """One tree entry: its raw record plus the lifted fields the tree works on."""

    raw: Record
    id: str
    parent_id: str | None
    type: str
    timestamp: str
    line: int = 0
    """1-based line number in the file it came from; 0 when not loaded from a file."""
    _model: SessionEntry | None = field(default=None, repr=False)

    @classmethod
    def from_record(cls, raw: Record, line: int = 0) -> Entry:
        """Wrap a record whose ``id`` is known to be a string."""
        parent = raw.get("parentId")
        stamp = raw.get("timestamp")
        return cls(
            raw,
            raw["id"],
            parent if isinstance(parent, str) else None,
            str(raw.get("type")),
            stamp if isinstance(stamp, str) else "",
            line,
        )

    @property
    def message(self) -> Record | None:
        """The message object of a ``message`` entry."""
        if self.type != "message":
            return None
        message = self.raw.get("message")
        return message if isinstance(message, dict) else None

    @property
    def role(self) -> str | None:
        """The message role of a ``message`` entry, else None."""
        message = self.message
        role = message.get("role") if message is not None else None
        return role if isinstance(role, str) else None

    def model(self) -> SessionEntry:
        """The typed, validated view of this entry (cached)."""
        if self._model is None:
            self._model = parse_entry(self.raw)
        return self._model
