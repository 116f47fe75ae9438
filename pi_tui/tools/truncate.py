"""The shared output limits: at most 2000 lines or 50 KB per tool result.

``truncate_head`` keeps the beginning of a text (read, grep, find, ls); ``truncate_tail`` keeps
the end (bash). Both report what was cut in a :class:`Truncation`, so a tool can tell the model
how to see the rest. A single line longer than the byte limit is cut on a UTF-8 boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

MAX_LINES = 2000
MAX_BYTES = 50 * 1024


@dataclass(frozen=True, slots=True)
class Truncation:
    """What a truncation kept of a text, counted in lines and UTF-8 bytes."""

    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    partial_line: bool = False
    """True when the kept text is a piece of one line longer than the byte limit."""

    def as_details(self) -> dict[str, Any]:
        """The camelCase form stored in a result's ``details``."""
        return {
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "partialLine": self.partial_line,
        }


def split_lines(text: str) -> list[str]:
    """The lines of ``text``; a final newline ends the last line rather than starting one."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def format_size(size: int) -> str:
    """A byte count for people: ``512 B``, ``50 KB``, ``1.5 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}".removesuffix(".0") + " KB"
    return f"{size / (1024 * 1024):.1f}".removesuffix(".0") + " MB"


def _byte_length(text: str) -> int:
    return len(text.encode("utf-8"))


def _whole(text: str, lines: list[str]) -> Truncation:
    size = _byte_length(text)
    return Truncation(False, None, len(lines), size, len(lines), size)


def truncate_head(
    text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES
) -> tuple[str, Truncation]:
    """Keep whole lines from the start of ``text`` within both limits."""
    lines = split_lines(text)
    total_bytes = _byte_length(text)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return text, _whole(text, lines)
    kept, by = _fit(lines[:max_lines], max_bytes)
    partial = not kept
    if partial:
        kept = [lines[0].encode("utf-8")[:max_bytes].decode("utf-8", "ignore")]
    elif len(kept) == len(lines):
        return text, _whole(text, lines)
    return _result(kept, lines, total_bytes, by, partial)


def truncate_tail(
    text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES
) -> tuple[str, Truncation]:
    """Keep whole lines from the end of ``text`` within both limits."""
    lines = split_lines(text)
    total_bytes = _byte_length(text)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return text, _whole(text, lines)
    kept, by = _fit(lines[::-1][:max_lines], max_bytes)
    kept.reverse()
    partial = not kept
    if partial:
        kept = [lines[-1].encode("utf-8")[-max_bytes:].decode("utf-8", "ignore")]
    elif len(kept) == len(lines):
        return text, _whole(text, lines)
    return _result(kept, lines, total_bytes, by, partial)


def _fit(lines: list[str], max_bytes: int) -> tuple[list[str], Literal["lines", "bytes"]]:
    """The leading ``lines`` whose newline-joined size stays within ``max_bytes``."""
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = _byte_length(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            return kept, "bytes"
        kept.append(line)
        used += cost
    return kept, "lines"


def _result(
    kept: list[str],
    lines: list[str],
    total_bytes: int,
    by: Literal["lines", "bytes"],
    partial: bool,
) -> tuple[str, Truncation]:
    output = "\n".join(kept)
    truncation = Truncation(
        True,
        "bytes" if partial else by,
        len(lines),
        total_bytes,
        len(kept),
        _byte_length(output),
        partial,
    )
    return output, truncation
