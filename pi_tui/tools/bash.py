"""The bash tool: run a command in its own process group and capture its merged output.

Output streams to ``on_update`` as it arrives. The result keeps the last 2000 lines or 50 KB;
when more was printed, the whole output is saved to a temporary file named in the notice.
A timeout or a cancellation kills the whole process group, so children die with the shell.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import dataclasses
import os
import re
import signal
import subprocess
import tempfile
from typing import IO, Any

from pydantic import Field

from .base import Tool, ToolArgs, ToolError, ToolResult, UpdateCallback
from .truncate import MAX_BYTES, MAX_LINES, Truncation, format_size, truncate_tail

READ_CHUNK = 64 * 1024
KEPT_TAIL_BYTES = 2 * MAX_BYTES
DRAIN_GRACE_SECONDS = 0.25
"""How long to keep reading after the shell exits (background children may hold the pipe)."""

ANSI_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor movement
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # other two-character escapes
)


def clean_output(text: str) -> str:
    """``text`` without ANSI escape sequences and carriage returns."""
    return ANSI_ESCAPE.sub("", text).replace("\r", "")


class OutputCapture:
    """A command's output: all of it while small; then a rolling tail plus a temporary file."""

    def __init__(self) -> None:
        self.tail = bytearray()
        self.total_bytes = 0
        self.newlines = 0
        self.ends_with_newline = False
        self.trimmed = False
        self.spill: IO[bytes] | None = None

    def feed(self, chunk: bytes) -> None:
        """Record the next chunk of output."""
        self.total_bytes += len(chunk)
        self.newlines += chunk.count(b"\n")
        self.ends_with_newline = chunk.endswith(b"\n")
        self.tail.extend(chunk)
        if self.spill is not None:
            self.spill.write(chunk)
        elif self.total_bytes > MAX_BYTES or self.newlines >= MAX_LINES:
            self.spill = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in report()
                prefix="pi-tui-bash-", suffix=".log", delete=False
            )
            self.spill.write(self.tail)
        if len(self.tail) > KEPT_TAIL_BYTES:
            del self.tail[:-KEPT_TAIL_BYTES]
            self.trimmed = True

    @property
    def total_lines(self) -> int:
        """Lines in the whole output (a final newline ends a line, it starts none)."""
        return self.newlines + (0 if self.ends_with_newline or not self.total_bytes else 1)

    def report(self) -> tuple[str, dict[str, Any]]:
        """The cleaned, tail-truncated text with its notice, and the result details.

        Closes the temporary file, and deletes it when the text shows everything.
        """
        text = self.tail.decode("utf-8", "replace")
        if self.trimmed:
            text = text.partition("\n")[2]
        kept, truncation = truncate_tail(clean_output(text).rstrip("\n"))
        if self.trimmed:
            truncation = dataclasses.replace(
                truncation,
                truncated=True,
                truncated_by=truncation.truncated_by or "bytes",
                total_lines=self.total_lines,
                total_bytes=self.total_bytes,
            )
        if not truncation.truncated:
            self.discard()
            return kept or "(no output)", {}
        path = self.close()
        details = {"truncation": truncation.as_details(), "fullOutputPath": path}
        return f"{kept}\n\n{_notice(truncation, path)}", details

    def close(self) -> str | None:
        """Close the temporary file, if any, and return its path."""
        if self.spill is None:
            return None
        self.spill.close()
        return self.spill.name

    def discard(self) -> None:
        """Close and delete the temporary file, if any."""
        path = self.close()
        if path:
            with contextlib.suppress(OSError):
                os.unlink(path)


def _notice(truncation: Truncation, path: str | None) -> str:
    last = truncation.total_lines
    if truncation.partial_line:
        shown = f"the last {format_size(truncation.output_bytes)} of line {last}"
    else:
        shown = f"lines {last - truncation.output_lines + 1}-{last} of {last}"
    return f"[Showing {shown}. Full output: {path}]"


class BashArgs(ToolArgs):
    """Arguments of the bash tool."""

    command: str = Field(description="Bash command to run")
    timeout: float | None = Field(
        default=None, gt=0, description="Timeout in seconds (optional; no timeout by default)"
    )


class BashTool(Tool):
    """Runs a bash command in the working directory and returns its output."""

    name = "bash"
    description = (
        "Run a bash command in the working directory. Returns stdout and stderr combined; "
        f"only the last {MAX_LINES} lines or {format_size(MAX_BYTES)} are shown, and longer "
        "output is saved to a file named in the result. Use timeout for commands that may hang."
    )
    Args = BashArgs

    async def execute(self, args: BashArgs, on_update: UpdateCallback | None = None) -> ToolResult:
        """Run ``args.command`` and wait for it (and its output) to finish."""
        # The pipe's read end is connected before the shell starts, so no await can be
        # cancelled between starting the shell and being ready to kill it.
        read_fd, write_fd = os.pipe()
        try:
            reader, transport = await _open_reader(read_fd)
            try:
                process = await asyncio.create_subprocess_exec(
                    "bash",
                    "-c",
                    args.command,
                    cwd=self.context.cwd,
                    env={**os.environ, **(self.context.env or {})},
                    stdin=subprocess.DEVNULL,
                    stdout=write_fd,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as exc:
                transport.close()
                raise ToolError(f"Cannot run bash in {self.context.cwd}: {exc}") from None
        finally:
            os.close(write_fd)
        capture = OutputCapture()
        try:
            async with asyncio.timeout(args.timeout):
                exit_code = await _run(process, reader, capture, on_update)
        except TimeoutError:
            await _kill_group(process)
            text, _ = capture.report()
            raise ToolError(f"{text}\n\nCommand timed out after {args.timeout:g} seconds") from None
        except asyncio.CancelledError:
            await _kill_group(process)
            capture.discard()
            raise
        finally:
            transport.close()
        text, details = capture.report()
        if exit_code != 0:
            raise ToolError(f"{text}\n\nCommand exited with code {exit_code}")
        return ToolResult.text(text, {"exitCode": exit_code, **details})


async def _open_reader(read_fd: int) -> tuple[asyncio.StreamReader, asyncio.ReadTransport]:
    """A stream reading from ``read_fd``, and the transport that owns (and closes) the fd."""
    reader = asyncio.StreamReader()
    transport, _ = await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", 0)
    )
    return reader, transport


async def _run(
    process: asyncio.subprocess.Process,
    reader: asyncio.StreamReader,
    capture: OutputCapture,
    on_update: UpdateCallback | None,
) -> int:
    """Wait for the shell to exit while its output is read; returns the exit code."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")

    async def pump() -> None:
        while chunk := await reader.read(READ_CHUNK):
            capture.feed(chunk)
            text = decoder.decode(chunk)
            if text and on_update is not None:
                on_update(text)

    pumping = asyncio.ensure_future(pump())
    try:
        exit_code = await process.wait()
        await asyncio.wait({pumping}, timeout=DRAIN_GRACE_SECONDS)
    finally:
        pumping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pumping
    return exit_code


async def _kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the command's whole process group and reap the shell."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()
