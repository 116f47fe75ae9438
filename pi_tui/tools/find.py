"""The find tool: list files and directories whose paths match a glob, honouring ``.gitignore``."""

from __future__ import annotations

import asyncio
import sys

from pydantic import Field

from .base import Tool, ToolArgs, ToolError, ToolResult, UpdateCallback
from .ignore import compile_glob, walk
from .truncate import MAX_BYTES, format_size, truncate_head

ENTRIES_PER_YIELD = 512
"""Entries visited between yields to the event loop, so cancellation stays prompt."""


class FindArgs(ToolArgs):
    """Arguments of the find tool."""

    pattern: str = Field(
        description="Glob to match, e.g. '*.py' (file name at any depth) or 'src/**/*.ts' "
        "(path relative to the searched directory)"
    )
    path: str = Field(default=".", description="Directory to search")
    limit: int = Field(default=1000, ge=1, description="Maximum number of results")


class FindTool(Tool):
    """Finds files and directories by glob below a directory."""

    name = "find"
    description = (
        "Find files by glob pattern. A pattern without '/' matches file names at any depth; "
        "one with '/' matches the path relative to the searched directory ('**' spans "
        "folders). Skips .gitignore'd files. Returns sorted relative paths; folders end in '/'."
    )
    Args = FindArgs

    async def execute(self, args: FindArgs, on_update: UpdateCallback | None = None) -> ToolResult:
        """List the matches below ``args.path``."""
        root = self.resolve(args.path)
        if not root.exists():
            raise ToolError(f"Path not found: {args.path}")
        if not root.is_dir():
            raise ToolError(f"Not a directory: {args.path}")
        regex = compile_glob(args.pattern)
        found: list[str] = []
        for count, entry in enumerate(walk(root), start=1):
            if regex.fullmatch(entry.relative):
                found.append(entry.relative + "/" if entry.is_dir else entry.relative)
                if len(found) > args.limit:
                    break
            if count % ENTRIES_PER_YIELD == 0:
                await asyncio.sleep(0)
        if not found:
            return ToolResult.text("No files found matching pattern")
        limit_reached = len(found) > args.limit
        text, truncation = truncate_head(
            "\n".join(sorted(found)[: args.limit]), max_lines=sys.maxsize
        )
        notices: list[str] = []
        details: dict[str, object] = {}
        if limit_reached:
            details["resultLimitReached"] = args.limit
            notices.append(
                f"[{args.limit} results limit reached. Use limit={2 * args.limit} for more, "
                "or refine pattern]"
            )
        if truncation.truncated:
            details["truncation"] = truncation.as_details()
            notices.append(f"[{format_size(MAX_BYTES)} output limit reached. Refine pattern]")
        body = "\n\n".join([text, *notices])
        return ToolResult.text(body, details or None)
