"""Compaction and branch-summary planning: which entries to summarize, which to keep.

Everything here is pure: token estimates, the cut point of a compaction, the entries a branch
summary covers, and the files the summarized work touched. The model call that writes the
summaries lives in :mod:`pi_tui.agent.summarize`.

The rules are pi's (chars/4 estimates, never cutting between a tool call and its results,
split-turn summaries, file lists carried over from earlier pi-made summaries), with three
deliberate differences:

- A repeated compaction starts its window at the previous compaction's first kept entry, not
  just after the compaction entry, so the messages that compaction kept are summarized by the
  next one instead of silently vanishing from the context (pi issue #2608, fixed upstream).
- A cut is a split turn only when the kept part really begins inside a turn; a cut that was
  moved back onto settings entries in front of a user message keeps whole turns.
- A compaction with nothing to summarize is refused instead of asking the model to summarize
  an empty conversation (pi issue #4811).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..session.context import compaction_summary_of, message_of
from ..session.errors import EntryNotFound
from ..session.manager import SessionManager
from ..session.records import Entry, Record
from ..session.tree import SessionIndex

IMAGE_CHARS = 4800
"""What one image counts for in an estimate (pi's figure: about 1200 tokens)."""

SKIPPED_STOP_REASONS = frozenset({"error", "aborted"})

CUT_POINT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
"""Message roles a kept part may start with; a toolResult never can."""

TURN_START_ROLES = frozenset({"user", "bashExecution"})
USER_LIKE_ENTRY_TYPES = frozenset({"branch_summary", "custom_message"})
"""Entry types the model sees as user text: they are cut points and start turns."""

SUMMARY_ENTRY_TYPES = frozenset({"compaction", "branch_summary"})
FILE_TOOLS = frozenset({"read", "write", "edit"})

ALREADY_COMPACTED = "Already compacted: the last entry is a compaction."
NOTHING_TO_COMPACT = "Nothing to compact: the session is too small."

BRANCH_SQUEEZE_SHARE = 0.9
"""A summary entry still joins a full branch budget while the total is below this share."""


# --- settings -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """When to compact and how much recent context a compaction keeps verbatim."""

    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000


@dataclass(frozen=True, slots=True)
class BranchSummarySettings:
    """Room kept free for a branch summary request, and whether ``/tree`` asks first."""

    reserve_tokens: int = 16384
    skip_prompt: bool = False


# --- token estimates ------------------------------------------------------------------------


def _chars(text: str) -> int:
    """Length as JavaScript counts it (UTF-16 units), so estimates match pi's."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def _text_chars(content: Any, *, images: bool) -> int:
    if isinstance(content, str):
        return _chars(content)
    if not isinstance(content, list):
        return 0
    total = 0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            total += _chars(block["text"])
        elif kind == "image" and images:
            total += IMAGE_CHARS
    return total


def _assistant_chars(content: Any) -> int:
    total = 0
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            total += _chars(str(block.get("text") or ""))
        elif kind == "thinking":
            total += _chars(str(block.get("thinking") or ""))
        elif kind == "toolCall":
            arguments = orjson.dumps(block.get("arguments") or {}).decode()
            total += _chars(str(block.get("name") or "")) + _chars(arguments)
    return total


def estimate_tokens(message: Mapping[str, Any]) -> int:
    """pi's rough token count of one App message: characters / 4, rounded up.

    User text counts (images do not); assistant text, thinking, tool names and JSON arguments
    count; tool results and custom messages count their text plus 4800 characters per image;
    shell runs count command and output; summaries count their summary. Other roles count 0.
    """
    role = message.get("role")
    if role == "user":
        return _tokens(_text_chars(message.get("content"), images=False))
    if role == "assistant":
        return _tokens(_assistant_chars(message.get("content")))
    if role in ("toolResult", "custom"):
        return _tokens(_text_chars(message.get("content"), images=True))
    if role == "bashExecution":
        command = str(message.get("command") or "")
        output = str(message.get("output") or "")
        return _tokens(_chars(command) + _chars(output))
    if role in ("branchSummary", "compactionSummary"):
        return _tokens(_chars(str(message.get("summary") or "")))
    return 0


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_tokens(usage: Mapping[str, Any] | None) -> int:
    """The context size a usage record reports: ``totalTokens``, else the four counters."""
    if not isinstance(usage, Mapping):
        return 0
    total = _count(usage.get("totalTokens"))
    if total > 0:
        return total
    return sum(_count(usage.get(key)) for key in ("input", "output", "cacheRead", "cacheWrite"))


def _usage_of(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The usage of an assistant turn that completed (errors and aborts report none)."""
    if message.get("role") != "assistant" or message.get("stopReason") in SKIPPED_STOP_REASONS:
        return None
    usage = message.get("usage")
    return usage if isinstance(usage, Mapping) else None


def last_assistant_usage(messages: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """Usage of the last assistant message that neither failed nor was aborted."""
    for message in reversed(messages):
        usage = _usage_of(message)
        if usage is not None:
            return usage
    return None


def estimate_context_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """Context size: the last good reported usage plus estimates of what came after it.

    Without any reported usage the whole list is estimated.
    """
    for position in range(len(messages) - 1, -1, -1):
        usage = _usage_of(messages[position])
        if usage is not None:
            later = messages[position + 1 :]
            return usage_tokens(usage) + sum(estimate_tokens(m) for m in later)
    return sum(estimate_tokens(m) for m in messages)


def should_compact(context_tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    """True when the context has grown into the reserved room (strictly past it)."""
    if not settings.enabled:
        return False
    return context_tokens > context_window - settings.reserve_tokens


# --- file operations ------------------------------------------------------------------------


@dataclass(slots=True)
class FileOperations:
    """Files the summarized work read, wrote or edited, by path as the tools were given it."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add_message(self, message: Mapping[str, Any]) -> None:
        """Record the ``read``/``write``/``edit`` calls of an assistant message."""
        if message.get("role") != "assistant":
            return
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "toolCall":
                continue
            arguments = block.get("arguments")
            path = arguments.get("path") if isinstance(arguments, dict) else None
            if not isinstance(path, str) or not path:
                continue
            name = block.get("name")
            if name == "read":
                self.read.add(path)
            elif name == "write":
                self.written.add(path)
            elif name == "edit":
                self.edited.add(path)

    def add_messages(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """Record the file calls of every assistant message."""
        for message in messages:
            self.add_message(message)

    def add_summary_details(self, entry: Entry) -> None:
        """Carry over the file lists of an earlier pi-made compaction or branch summary.

        Summaries supplied by an extension (``fromHook``) may store anything in ``details``,
        so they are not trusted.
        """
        raw = entry.raw
        details = raw.get("details")
        if entry.type not in SUMMARY_ENTRY_TYPES or raw.get("fromHook") is True:
            return
        if not isinstance(details, dict):
            return
        read = details.get("readFiles")
        modified = details.get("modifiedFiles")
        if isinstance(read, list):
            self.read.update(path for path in read if isinstance(path, str))
        if isinstance(modified, list):
            self.edited.update(path for path in modified if isinstance(path, str))

    def modified_files(self) -> list[str]:
        """Written or edited files, sorted."""
        return sorted(self.written | self.edited)

    def read_files(self) -> list[str]:
        """Files only read (never modified), sorted."""
        return sorted(self.read - self.written - self.edited)

    def details(self) -> dict[str, list[str]]:
        """The ``details`` a pi compaction or branch summary entry stores."""
        return {"readFiles": self.read_files(), "modifiedFiles": self.modified_files()}

    def format_file_lists(self) -> str:
        """The file-list sections appended to a summary (with their leading blank line).

        Empty when no file was touched; a section without files is left out.
        """
        sections = []
        read = self.read_files()
        modified = self.modified_files()
        if read:
            sections.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
        if modified:
            sections.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
        return "\n\n" + "\n\n".join(sections) if sections else ""


# --- compaction -----------------------------------------------------------------------------


class CompactionRefused(Exception):
    """Compaction is not possible now; the message says why, for the user."""


@dataclass(frozen=True, slots=True)
class CutPoint:
    """Where a compaction cuts a path.

    ``first_kept_index`` is the first entry kept verbatim. When the kept part begins in the
    middle of a turn, ``turn_start_index`` is the entry that started that turn and
    ``is_split_turn`` is true.
    """

    first_kept_index: int
    turn_start_index: int | None = None
    is_split_turn: bool = False


def _is_cut_point(entry: Entry) -> bool:
    if entry.type in USER_LIKE_ENTRY_TYPES:
        return True
    return entry.type == "message" and entry.role in CUT_POINT_ROLES


def find_turn_start(entries: Sequence[Entry], index: int, start: int) -> int | None:
    """The entry at or before ``index`` (not before ``start``) that began its turn."""
    for position in range(index, start - 1, -1):
        entry = entries[position]
        if entry.type in USER_LIKE_ENTRY_TYPES:
            return position
        if entry.type == "message" and entry.role in TURN_START_ROLES:
            return position
    return None


def find_cut_point(
    entries: Sequence[Entry], start: int, end: int, keep_recent_tokens: int
) -> CutPoint:
    """Choose the first kept entry of ``entries[start:end]`` so about ``keep_recent_tokens``
    of the newest messages stay verbatim.

    Message entries are summed newest first; once the sum reaches the budget the cut goes to
    the first valid cut point at or after that entry (a toolResult never starts the kept part,
    so a call and its results stay together). Without a valid cut point the window start is
    returned; when the budget is never reached everything from the first cut point is kept.
    The cut then moves back over the non-message entries just before it (settings, labels,
    custom entries), stopping at a message or a compaction.
    """
    cut_points = [i for i in range(start, end) if _is_cut_point(entries[i])]
    if not cut_points:
        return CutPoint(start)
    budget_cut = cut_points[0]
    total = 0
    for position in range(end - 1, start - 1, -1):
        entry = entries[position]
        message = entry.message
        if message is None:
            continue
        total += estimate_tokens(message)
        if total >= keep_recent_tokens:
            budget_cut = next((c for c in cut_points if c >= position), budget_cut)
            break
    cut = budget_cut
    while cut > start and entries[cut - 1].type not in ("message", "compaction"):
        cut -= 1
    # Whether a turn is split is decided at the entry the budget chose: settings entries that
    # the cut moved back over do not make a user message the middle of a turn.
    anchor = entries[budget_cut]
    if anchor.type == "message" and anchor.role == "user":
        return CutPoint(cut)
    turn_start = find_turn_start(entries, budget_cut, start)
    if turn_start is None or turn_start >= cut:
        return CutPoint(cut)
    return CutPoint(cut, turn_start, True)


@dataclass(slots=True)
class CompactionPreparation:
    """Everything a compaction needs, computed without the model."""

    first_kept_entry_id: str
    messages_to_summarize: list[Record]
    """Whole turns before the kept part (or before the split turn), oldest first."""
    turn_prefix_messages: list[Record]
    """The start of a split turn, summarized separately; empty unless ``is_split_turn``."""
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOperations
    settings: CompactionSettings


def _messages(entries: Iterable[Entry]) -> list[Record]:
    result = []
    for entry in entries:
        message = message_of(entry)
        if message is not None:
            result.append(message)
    return result


def prepare_compaction(
    path_entries: Sequence[Entry], settings: CompactionSettings
) -> CompactionPreparation:
    """Plan a compaction of the path root → leaf (``SessionManager.path()``).

    Raises :class:`CompactionRefused` when the path already ends in a compaction, or when
    there is nothing to summarize (fewer than two messages since the last compaction's kept
    part, or everything fits in ``keep_recent_tokens``).
    """
    if path_entries and path_entries[-1].type == "compaction":
        raise CompactionRefused(ALREADY_COMPACTED)
    previous_at = next(
        (i for i in range(len(path_entries) - 1, -1, -1) if path_entries[i].type == "compaction"),
        -1,
    )
    start = 0
    previous_summary: str | None = None
    file_ops = FileOperations()
    # tokens_before covers what the model saw last: the latest summary and everything after.
    context = _messages(path_entries)
    if previous_at >= 0:
        previous = path_entries[previous_at]
        kept_id = previous.raw.get("firstKeptEntryId")
        start = next(
            (i for i in range(previous_at) if path_entries[i].id == kept_id), previous_at + 1
        )
        summary = previous.raw.get("summary")
        previous_summary = summary if isinstance(summary, str) else None
        file_ops.add_summary_details(previous)
        context = [compaction_summary_of(previous), *_messages(path_entries[previous_at + 1 :])]
    end = len(path_entries)
    if sum(1 for entry in path_entries[start:end] if entry.type == "message") < 2:
        raise CompactionRefused(NOTHING_TO_COMPACT)

    cut = find_cut_point(path_entries, start, end, settings.keep_recent_tokens)
    history_end = cut.turn_start_index if cut.turn_start_index is not None else cut.first_kept_index
    to_summarize = _messages(path_entries[start:history_end])
    prefix = (
        _messages(path_entries[history_end : cut.first_kept_index]) if cut.is_split_turn else []
    )
    if not to_summarize and not prefix:
        raise CompactionRefused(NOTHING_TO_COMPACT)
    file_ops.add_messages(to_summarize)
    file_ops.add_messages(prefix)
    return CompactionPreparation(
        first_kept_entry_id=path_entries[cut.first_kept_index].id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=estimate_context_tokens(context),
        previous_summary=previous_summary,
        file_ops=file_ops,
        settings=settings,
    )


# --- branch summaries -----------------------------------------------------------------------


def branch_entries(
    session: SessionManager | SessionIndex, old_leaf_id: str | None, target_id: str
) -> tuple[list[Entry], str | None]:
    """The entries a branch summary covers when the leaf moves from ``old_leaf_id`` to
    ``target_id``, oldest first, and the deepest common ancestor of the two (None if none).

    The entries run from the old leaf up to, not including, that ancestor; compactions and
    earlier branch summaries on the way are included. The list is empty when there is no old
    leaf (None or unknown) and when the old leaf is the target or one of its ancestors.
    Raises :class:`EntryNotFound` for an unknown target.
    """
    index = session.index if isinstance(session, SessionManager) else session
    if target_id not in index:
        raise EntryNotFound(target_id)
    if old_leaf_id is None or old_leaf_id not in index:
        return [], None
    on_target_path = {entry.id for entry in index.ancestors(target_id)}
    covered: list[Entry] = []
    common: str | None = None
    # Walking up from the old leaf, the first entry that is also above the target is the
    # deepest ancestor the two paths share.
    for entry in index.ancestors(old_leaf_id):
        if entry.id in on_target_path:
            common = entry.id
            break
        covered.append(entry)
    covered.reverse()
    return covered, common


@dataclass(slots=True)
class BranchSummaryPreparation:
    """The messages a branch summary is written from (oldest first) and the files touched."""

    messages: list[Record]
    file_ops: FileOperations
    total_tokens: int


def branch_summary_budget(context_window: int, settings: BranchSummarySettings) -> int:
    """Token budget for the messages of a branch summary request."""
    return max(0, context_window - settings.reserve_tokens)


def _branch_message(entry: Entry) -> Record | None:
    """What an abandoned-branch entry contributes: tool results are left to their calls."""
    if entry.type == "compaction":
        return compaction_summary_of(entry)
    if entry.type == "message" and entry.role == "toolResult":
        return None
    return message_of(entry)


def prepare_branch_summary(
    entries: Sequence[Entry], token_budget: int = 0
) -> BranchSummaryPreparation:
    """Collect the newest messages of a branch that fit ``token_budget`` (0: no limit).

    File lists of earlier pi-made branch summaries are carried over for all entries, even
    those that do not fit. Messages are taken newest first until the next one would exceed
    the budget; a compaction or branch summary is still squeezed in while the total is below
    90 % of the budget, as it condenses everything older.
    """
    file_ops = FileOperations()
    for entry in entries:
        if entry.type == "branch_summary":
            file_ops.add_summary_details(entry)
    newest_first: list[Record] = []
    total = 0
    for entry in reversed(entries):
        message = _branch_message(entry)
        if message is None:
            continue
        file_ops.add_message(message)
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            if entry.type in SUMMARY_ENTRY_TYPES and total < token_budget * BRANCH_SQUEEZE_SHARE:
                newest_first.append(message)
                total += tokens
            break
        newest_first.append(message)
        total += tokens
    newest_first.reverse()
    return BranchSummaryPreparation(newest_first, file_ops, total)
