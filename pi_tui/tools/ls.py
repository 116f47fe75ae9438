"""The ls tool: the entries of one directory."""

from __future__ import annotations

import os
import sys
from typing import Any

from pydantic import Field

from .base import Tool, ToolArgs, ToolError, ToolResult, UpdateCallback
from .truncate import MAX_BYTES, format_size, truncate_head


class LsArgs(ToolArgs):
    """Arguments of the ls tool."""

    path: str = Field(default=".", description="Directory to list")
    limit: int = Field(default=500, ge=1, description="Maximum number of entries")


class LsTool(Tool):
    """Lists a directory, dotfiles included, folders marked with '/'."""

    name = "ls"
    description = (
        "List a directory's entries, sorted alphabetically (case-insensitive), including "
        "dotfiles; folders end in '/'."
    )
    Args = LsArgs

    async def execute(self, args: LsArgs, on_update: UpdateCallback | None = None) -> ToolResult:
        """List ``args.path``."""
        directory = self.resolve(args.path)
        if not directory.exists():
            raise ToolError(f"Path not found: {args.path}")
        if not directory.is_dir():
            raise ToolError(f"Not a directory: {args.path}")
        try:
            with os.scandir(directory) as scan:
                entries = sorted(
                    (entry.name + "/" if entry.is_dir() else entry.name for entry in scan),
                    key=lambda name: (name.lower(), name),
                )
        except OSError as exc:
            raise ToolError(f"Cannot list {args.path}: {exc.strerror or exc}") from None
        if not entries:
            return ToolResult.text("(empty directory)")
        text, truncation = truncate_head("\n".join(entries[: args.limit]), max_lines=sys.maxsize)
        notices: list[str] = []
        details: dict[str, Any] = {}
        if len(entries) > args.limit:
            details["entryLimitReached"] = args.limit
            notices.append(
                f"[{args.limit} entries limit reached. Use limit={2 * args.limit} for more]"
            )
        if truncation.truncated:
            details["truncation"] = truncation.as_details()
            notices.append(f"[{format_size(MAX_BYTES)} output limit reached]")
        return ToolResult.text("\n\n".join([text, *notices]), details or None)
