"""What the next model call sees: pi's ``buildSessionContext`` rules, exactly.

The path root → leaf is scanned once for settings (thinking level, model, latest compaction);
messages are then emitted per entry, with compaction and branch summaries and custom messages
synthesized as App messages. The messages are the stored dicts themselves (not copies), so
callers must not mutate them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from .ids import ms_from_iso
from .records import Entry, Record
from .tree import SessionIndex

DEFAULT_THINKING_LEVEL = "off"


class _LastEntry:
    """Sentinel: resolve the leaf to the last entry in file order."""


LAST_ENTRY: Final = _LastEntry()


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A provider and model id, as ``model_change`` entries store them."""

    provider: str
    model_id: str

    def to_json(self) -> dict[str, str]:
        """pi's JSON shape."""
        return {"provider": self.provider, "modelId": self.model_id}


@dataclass(slots=True)
class SessionContext:
    """The App messages of a path plus the call settings in force at its leaf."""

    messages: list[Record] = field(default_factory=list)
    thinking_level: str = DEFAULT_THINKING_LEVEL
    model: ModelRef | None = None

    def to_json(self) -> dict[str, Any]:
        """pi's JSON shape (``messages``, ``thinkingLevel``, ``model``)."""
        return {
            "messages": self.messages,
            "thinkingLevel": self.thinking_level,
            "model": self.model.to_json() if self.model else None,
        }


def resolve_leaf(index: SessionIndex, leaf: str | _LastEntry | None) -> Entry | None:
    """pi's leaf resolution: None is empty; a known id is used; anything else is the last entry."""
    if leaf is None:
        return None
    if isinstance(leaf, str):
        found = index.get(leaf)
        if found is not None:
            return found
    return index.last_entry


def message_of(entry: Entry) -> Record | None:
    """The App message an entry contributes to a context, or None."""
    kind = entry.type
    raw = entry.raw
    if kind == "message":
        return entry.message
    if kind == "custom_message":
        message: Record = {
            "role": "custom",
            "customType": raw.get("customType"),
            "content": raw.get("content"),
            "display": raw.get("display"),
        }
        if "details" in raw:
            message["details"] = raw["details"]
        message["timestamp"] = ms_from_iso(entry.timestamp)
        return message
    if kind == "branch_summary" and raw.get("summary"):
        return {
            "role": "branchSummary",
            "summary": raw["summary"],
            "fromId": raw.get("fromId"),
            "timestamp": ms_from_iso(entry.timestamp),
        }
    return None


def compaction_summary_of(entry: Entry) -> Record:
    """The synthesized message that stands for everything a compaction replaced."""
    return {
        "role": "compactionSummary",
        "summary": entry.raw.get("summary"),
        "tokensBefore": entry.raw.get("tokensBefore"),
        "timestamp": ms_from_iso(entry.timestamp),
    }


def build_context(
    index: SessionIndex, leaf: str | _LastEntry | None = LAST_ENTRY
) -> SessionContext:
    """Build the context for ``leaf`` (default: the last entry, as after loading)."""
    leaf_entry = resolve_leaf(index, leaf)
    if leaf_entry is None:
        return SessionContext()
    path = index.path(leaf_entry.id)

    context = SessionContext()
    compaction_at: int | None = None
    for position, entry in enumerate(path):
        kind = entry.type
        if kind == "thinking_level_change":
            level = entry.raw.get("thinkingLevel")
            if isinstance(level, str):
                context.thinking_level = level
        elif kind == "model_change":
            context.model = ModelRef(str(entry.raw.get("provider")), str(entry.raw.get("modelId")))
        elif kind == "message":
            message = entry.message
            if message is not None and message.get("role") == "assistant":
                context.model = ModelRef(str(message.get("provider")), str(message.get("model")))
        elif kind == "compaction":
            compaction_at = position

    messages = context.messages
    if compaction_at is None:
        for entry in path:
            message = message_of(entry)
            if message is not None:
                messages.append(message)
        return context

    compaction = path[compaction_at]
    messages.append(compaction_summary_of(compaction))
    first_kept = compaction.raw.get("firstKeptEntryId")
    keeping = False
    for entry in path[:compaction_at]:
        if entry.id == first_kept:
            keeping = True
        if keeping:
            message = message_of(entry)
            if message is not None:
                messages.append(message)
    for entry in path[compaction_at + 1 :]:
        message = message_of(entry)
        if message is not None:
            messages.append(message)
    return context
