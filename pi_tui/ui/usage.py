"""Token and cost totals along the active path, for the status bar.

Totals are remembered at recent leaves, so after a new message only the new entries are
visited, and moving back to a recent leaf costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..session import SessionManager


@dataclass(frozen=True, slots=True)
class PathTotals:
    """Usage summed from the root to one entry."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    context_tokens: int | None = None
    """The latest successful reply's total tokens; None when there is none, or when a
    compaction came after it (its count no longer describes the context)."""

    def plus(self, entry_type: str, message: dict[str, object] | None) -> PathTotals:
        """These totals followed by one more entry."""
        if entry_type == "compaction":
            return PathTotals(self.tokens_in, self.tokens_out, self.cost, None)
        if message is None or message.get("role") != "assistant":
            return self
        usage = message.get("usage")
        if not isinstance(usage, dict):
            return self
        cost = usage.get("cost")
        context = self.context_tokens
        if message.get("stopReason") not in ("error", "aborted"):
            context = int(usage.get("totalTokens", 0) or 0)
        return PathTotals(
            self.tokens_in + int(usage.get("input", 0) or 0) + int(usage.get("cacheRead", 0) or 0),
            self.tokens_out + int(usage.get("output", 0) or 0),
            self.cost + float((cost.get("total", 0) if isinstance(cost, dict) else 0) or 0),
            context,
        )


class UsageTotals:
    """Remembers :class:`PathTotals` at the leaves it was asked about, for one session.

    A new leaf below a remembered one (the usual case: messages were appended) costs only the
    entries in between; any other leaf costs one walk of its path.
    """

    REMEMBERED = 64

    def __init__(self) -> None:
        self._by_id: dict[str, PathTotals] = {}

    def at_leaf(self, manager: SessionManager) -> PathTotals:
        """Totals from the root to the session's current leaf."""
        unseen = []
        seen: set[str] = set()
        entry = manager.leaf
        while entry is not None and entry.id not in self._by_id and entry.id not in seen:
            unseen.append(entry)
            seen.add(entry.id)
            entry = manager.get_entry(entry.parent_id) if entry.parent_id else None
        totals = self._by_id.get(entry.id, PathTotals()) if entry is not None else PathTotals()
        for entry in reversed(unseen):
            totals = totals.plus(entry.type, entry.message)
        if unseen:
            if len(self._by_id) >= self.REMEMBERED:
                self._by_id.pop(next(iter(self._by_id)))
            self._by_id[unseen[0].id] = totals
        return totals
