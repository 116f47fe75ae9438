"""The read tool: a text file page by page, or an image as an image block."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from pydantic import Field

from .base import Tool, ToolArgs, ToolError, ToolResult, UpdateCallback
from .truncate import MAX_BYTES, MAX_LINES, format_size, split_lines, truncate_head

BINARY_SNIFF_BYTES = 8192


def looks_binary(data: bytes) -> bool:
    """Whether ``data`` has a NUL byte in its first 8 KB (how git and grep spot binaries)."""
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


def image_mime_type(data: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP image, judged by its magic bytes."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    return None


class ReadArgs(ToolArgs):
    """Arguments of the read tool."""

    path: str = Field(description="Path of the file to read (relative to the working directory)")
    offset: int | None = Field(
        default=None, ge=1, description="Line number to start reading from (1-based)"
    )
    limit: int | None = Field(default=None, ge=1, description="Maximum number of lines to read")


class ReadTool(Tool):
    """Reads text files (head-truncated, with paging notices) and images."""

    name = "read"
    description = (
        "Read a file. Text is returned without line numbers, at most "
        f"{MAX_LINES} lines or {format_size(MAX_BYTES)} per call; use offset and limit to page "
        "through longer files. PNG, JPEG, GIF and WebP images are returned as images."
    )
    Args = ReadArgs

    async def execute(self, args: ReadArgs, on_update: UpdateCallback | None = None) -> ToolResult:
        """Read ``args.path``."""
        file = self.resolve(args.path)
        if not file.exists():
            raise ToolError(f"File not found: {args.path}")
        if file.is_dir():
            raise ToolError(f"{args.path} is a directory; use ls to list it.")
        try:
            data = await asyncio.to_thread(file.read_bytes)
        except OSError as exc:
            raise ToolError(f"Cannot read {args.path}: {exc.strerror or exc}") from None
        mime_type = image_mime_type(data)
        if mime_type:
            encoded = base64.b64encode(data).decode("ascii")
            return ToolResult(
                [
                    {"type": "text", "text": f"Read image file [{mime_type}]"},
                    {"type": "image", "data": encoded, "mimeType": mime_type},
                ]
            )
        if looks_binary(data):
            raise ToolError(f"{args.path} is a binary file and cannot be read as text.")
        return _page(data.decode("utf-8", "replace"), args)


def _page(text: str, args: ReadArgs) -> ToolResult:
    """The requested lines of ``text`` with a notice when more remain."""
    lines = split_lines(text)
    if not lines:
        return ToolResult.text("(empty file)")
    start = (args.offset or 1) - 1
    if start >= len(lines):
        raise ToolError(
            f"Offset {args.offset} is beyond the end of {args.path} ({len(lines)} lines total)."
        )
    end = min(start + args.limit, len(lines)) if args.limit else len(lines)
    body, truncation = truncate_head("\n".join(lines[start:end]))
    details: dict[str, Any] | None = None
    notice = ""
    if truncation.truncated:
        details = {"truncation": truncation.as_details()}
        shown_end = start + truncation.output_lines
        more = f" Use offset={shown_end + 1} to continue." if shown_end < len(lines) else ""
        if truncation.partial_line:
            size = format_size(len(lines[start].encode("utf-8")))
            notice = (
                f"[Line {start + 1} is {size}; only its first {format_size(MAX_BYTES)} are shown."
                f" Use bash (e.g. cut or head -c) to see the rest.{more}]"
            )
        else:
            limit_note = (
                f" ({format_size(MAX_BYTES)} limit)" if truncation.truncated_by == "bytes" else ""
            )
            notice = f"[Showing lines {start + 1}-{shown_end} of {len(lines)}{limit_note}.{more}]"
    elif end < len(lines):
        notice = f"[{len(lines) - end} more lines in file. Use offset={end + 1} to continue.]"
    return ToolResult.text(f"{body}\n\n{notice}" if notice else body, details)
