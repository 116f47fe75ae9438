"""The edit tool: replace one exact, unique piece of text in a file."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from .base import Tool, ToolArgs, ToolError, ToolResult, UpdateCallback
from .write import write_atomic

BOM = "\ufeff"


class EditArgs(ToolArgs):
    """Arguments of the edit tool (camelCase keys, as the model sends them)."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True)

    path: str = Field(description="Path of the file to edit (relative to the working directory)")
    old_text: str = Field(
        alias="oldText",
        min_length=1,
        description="Exact text to replace, including whitespace; must occur exactly once",
    )
    new_text: str = Field(alias="newText", description="Text to put in its place")


class EditTool(Tool):
    """Replaces a unique exact match in a file, keeping its line endings and BOM."""

    name = "edit"
    description = (
        "Edit a file by replacing exact text. oldText must match exactly once, including "
        "whitespace and indentation; add surrounding lines to make it unique. "
        "Use write to replace a whole file."
    )
    Args = EditArgs

    async def execute(self, args: EditArgs, on_update: UpdateCallback | None = None) -> ToolResult:
        """Apply the replacement to ``args.path``."""
        file = self.resolve(args.path)
        try:
            raw = file.read_bytes()
        except FileNotFoundError:
            raise ToolError(f"File not found: {args.path}") from None
        except OSError as exc:
            raise ToolError(f"Cannot read {args.path}: {exc.strerror or exc}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"Cannot edit {args.path}: it is not UTF-8 text.") from None
        bom = text.startswith(BOM)
        text = text.removeprefix(BOM)
        crlf = _uses_crlf(text)
        before = text.replace("\r\n", "\n")
        old = args.old_text.replace("\r\n", "\n")
        new = args.new_text.replace("\r\n", "\n")
        count = _occurrences(before, old)
        if count == 0:
            raise ToolError(
                f"Could not find the exact text in {args.path}. The old text must match "
                "exactly, including whitespace and newlines."
            )
        if count > 1:
            raise ToolError(
                f"Found {count} occurrences of the text in {args.path}. The text must be "
                "unique; add more surrounding context."
            )
        after = before.replace(old, new, 1)
        if after == before:
            raise ToolError(f"No changes made to {args.path}: newText is identical to oldText.")
        stored = after.replace("\n", "\r\n") if crlf else after
        try:
            write_atomic(file, ((BOM if bom else "") + stored).encode("utf-8"))
        except OSError as exc:
            raise ToolError(f"Cannot write {args.path}: {exc.strerror or exc}") from None
        details: dict[str, Any] = {
            "diff": unified_diff(before, after, self._display_name(file)),
            "firstChangedLine": first_changed_line(before, after),
        }
        return ToolResult.text(f"Successfully replaced text in {args.path}.", details)

    def _display_name(self, file: Path) -> str:
        try:
            return file.relative_to(self.context.cwd).as_posix()
        except ValueError:
            return file.as_posix().lstrip("/")


def _uses_crlf(text: str) -> bool:
    """Whether the first line ending of ``text`` is CRLF."""
    newline = text.find("\n")
    return newline > 0 and text[newline - 1] == "\r"


def _occurrences(text: str, needle: str) -> int:
    """How many times ``needle`` occurs in ``text``, overlapping matches included."""
    count = 0
    index = text.find(needle)
    while index != -1:
        count += 1
        index = text.find(needle, index + 1)
    return count


def first_changed_line(before: str, after: str) -> int:
    """The 1-based number of the first line that differs between two texts."""
    old_lines = before.split("\n")
    new_lines = after.split("\n")
    for number, (old, new) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if old != new:
            return number
    return min(len(old_lines), len(new_lines)) + 1


def unified_diff(before: str, after: str, name: str) -> str:
    """A git-style unified diff with 3 lines of context."""
    lines = difflib.unified_diff(
        _lines_with_ends(before),
        _lines_with_ends(after),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
        n=3,
    )
    return "".join(
        line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n" for line in lines
    )


def _lines_with_ends(text: str) -> list[str]:
    """``text`` split after each newline (only ``\n`` counts, unlike ``str.splitlines``)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
