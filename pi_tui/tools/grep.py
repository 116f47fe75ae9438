"""The grep tool: search file contents with a Python regex, honouring ``.gitignore``."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from .base import Tool, ToolArgs, ToolError, ToolResult, UpdateCallback
from .ignore import Entry, compile_glob, walk
from .read import looks_binary
from .truncate import MAX_BYTES, format_size, split_lines, truncate_head

MAX_LINE_CHARS = 500
FILES_PER_YIELD = 64
"""Files searched between yields to the event loop, so cancellation stays prompt."""


class GrepArgs(ToolArgs):
    """Arguments of the grep tool (camelCase keys, as the model sends them)."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True)

    pattern: str = Field(description="Regular expression (Python syntax) or literal text")
    path: str = Field(default=".", description="Directory or file to search")
    glob: str | None = Field(
        default=None, description="Only search files matching this glob, e.g. '*.py'"
    )
    ignore_case: bool = Field(
        default=False, alias="ignoreCase", description="Match case-insensitively"
    )
    literal: bool = Field(default=False, description="Treat pattern as literal text")
    context: int = Field(default=0, ge=0, description="Lines of context around each match")
    limit: int = Field(default=100, ge=1, description="Maximum number of matches")


class GrepTool(Tool):
    """Searches the lines of text files below a path for a pattern."""

    name = "grep"
    description = (
        "Search file contents for a regular expression (Python syntax) or literal text. "
        "Skips .gitignore'd and binary files. Prints 'path:line: text' for matches and "
        "'path-line- text' for context lines, paths relative to the searched path."
    )
    Args = GrepArgs

    async def execute(self, args: GrepArgs, on_update: UpdateCallback | None = None) -> ToolResult:
        """Search below ``args.path``."""
        try:
            regex = re.compile(
                re.escape(args.pattern) if args.literal else args.pattern,
                re.IGNORECASE if args.ignore_case else 0,
            )
        except re.error as exc:
            raise ToolError(f"Invalid regular expression {args.pattern!r}: {exc}") from None
        root = self.resolve(args.path)
        if not root.exists():
            raise ToolError(f"Path not found: {args.path}")
        wanted = compile_glob(args.glob) if args.glob else None
        search = _Search(regex, args.context, args.limit)
        for count, entry in enumerate(_files(root), start=1):
            if wanted is None or wanted.fullmatch(entry.relative):
                search.file(entry)
            if search.done:
                break
            if count % FILES_PER_YIELD == 0:
                await asyncio.sleep(0)
        return search.result()


def _files(root: Path) -> Iterable[Entry]:
    """The files to search: ``root`` itself, or the visible files below it."""
    if root.is_file():
        return [Entry(root.name, root, False)]
    return (entry for entry in walk(root) if not entry.is_dir)


class _Search:
    """Collects matching lines, with context, up to a match limit."""

    def __init__(self, regex: re.Pattern[str], context: int, limit: int) -> None:
        self.regex = regex
        self.context = context
        self.limit = limit
        self.matches = 0
        self.limit_reached = False
        """Set when a match beyond the limit was found (and left out)."""
        self.lines: list[str] = []
        self.size = 0
        self.long_lines = False

    @property
    def done(self) -> bool:
        """Whether searching further cannot change the result."""
        return self.limit_reached or self.size > MAX_BYTES

    def file(self, entry: Entry) -> None:
        """Search one file (unreadable and binary files are skipped)."""
        try:
            data = entry.path.read_bytes()
        except OSError:
            return
        if looks_binary(data):
            return
        lines = [line.removesuffix("\r") for line in split_lines(data.decode("utf-8", "replace"))]
        matched: list[int] = []
        for index, line in enumerate(lines):
            if not self.regex.search(line):
                continue
            if self.matches == self.limit:
                self.limit_reached = True
                break
            self.matches += 1
            matched.append(index)
        hits = set(matched)
        shown = {
            number
            for index in matched
            for number in range(max(0, index - self.context), index + self.context + 1)
            if number < len(lines)
        }
        for number in sorted(shown):
            mark = ":" if number in hits else "-"
            text = self._cut(lines[number])
            output = f"{entry.relative}{mark}{number + 1}{mark} {text}"
            self.lines.append(output)
            self.size += len(output.encode("utf-8")) + 1

    def _cut(self, line: str) -> str:
        if len(line) <= MAX_LINE_CHARS:
            return line
        self.long_lines = True
        return line[:MAX_LINE_CHARS] + "... [truncated]"

    def result(self) -> ToolResult:
        """The collected lines with their notices."""
        if not self.lines:
            return ToolResult.text("No matches found")
        text, truncation = truncate_head("\n".join(self.lines), max_lines=sys.maxsize)
        details: dict[str, Any] = {}
        notices: list[str] = []
        if self.limit_reached:
            details["matchLimitReached"] = self.limit
            notices.append(
                f"[{self.limit} matches limit reached. Use limit={2 * self.limit} for more, "
                "or refine pattern]"
            )
        if truncation.truncated:
            details["truncation"] = truncation.as_details()
            notices.append(
                f"[{format_size(MAX_BYTES)} output limit reached. Refine pattern or path]"
            )
        if self.long_lines:
            details["linesTruncated"] = True
            notices.append(f"[Some lines were cut to {MAX_LINE_CHARS} characters]")
        body = "\n\n".join([text, *notices]) if notices else text
        return ToolResult.text(body, details or None)
