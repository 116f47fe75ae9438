"""The write tool, and the atomic file replacement it shares with edit."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from pydantic import Field

from .base import Tool, ToolArgs, ToolError, ToolResult, UpdateCallback


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step, keeping the mode of an existing file.

    Parent folders are created. The bytes go to a temporary file in the same folder, which
    then replaces the target, so readers never see a half-written file. A new file gets the
    usual permissions (0666 less the umask). A symlink is followed, not replaced.
    """
    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


class WriteArgs(ToolArgs):
    """Arguments of the write tool."""

    path: str = Field(description="Path of the file to write (relative to the working directory)")
    content: str = Field(description="The complete new content of the file")


class WriteTool(Tool):
    """Creates or overwrites a file with the given content."""

    name = "write"
    description = (
        "Write content to a file, creating it and its parent folders if needed and replacing "
        "it entirely if it exists. Use edit for changes to part of a file."
    )
    Args = WriteArgs

    async def execute(self, args: WriteArgs, on_update: UpdateCallback | None = None) -> ToolResult:
        """Write ``args.content`` to ``args.path``."""
        data = args.content.encode("utf-8")
        try:
            write_atomic(self.resolve(args.path), data)
        except OSError as exc:
            raise ToolError(f"Cannot write {args.path}: {exc.strerror or exc}") from None
        return ToolResult.text(f"Successfully wrote {len(data)} bytes to {args.path}")
