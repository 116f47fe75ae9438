"""The bash tool: merged output, streaming, exit codes, truncation, timeout and cancellation."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from pi_tui.tools.base import ToolContext, ToolError
from pi_tui.tools.bash import BashArgs, BashTool

from .conftest import RunTool, text_of


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state != "Z"


async def wait_until_dead(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not is_running(pid):
            return True
        await asyncio.sleep(0.02)
    return False


async def wait_for_file(path: Path, within: float = 3.0) -> str:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never appeared")


async def test_stdout_and_stderr_merge_in_order(run: RunTool) -> None:
    result = await run("bash", command="echo out; echo err >&2; echo out2")
    assert text_of(result) == "out\nerr\nout2"
    assert result.details == {"exitCode": 0}


async def test_runs_in_the_cwd_with_the_context_env(tmp_path: Path) -> None:
    tool = BashTool(ToolContext(tmp_path, env={"PI_TUI_PROBE": "seen"}))
    result = await tool.execute(BashArgs(command='pwd; echo "$PI_TUI_PROBE"'))
    assert text_of(result) == f"{tmp_path}\nseen"


async def test_no_output(run: RunTool) -> None:
    assert text_of(await run("bash", command="true")) == "(no output)"


async def test_nonzero_exit_is_an_error_with_the_output(run: RunTool) -> None:
    with pytest.raises(ToolError) as error:
        await run("bash", command="echo oops; exit 3")
    assert str(error.value) == "oops\n\nCommand exited with code 3"


async def test_ansi_escapes_and_carriage_returns_are_removed(run: RunTool) -> None:
    command = r"printf '\033[1;31mred\033[0m\r\n\033]0;title\007plain\r\n'"
    assert text_of(await run("bash", command=command)) == "red\nplain"


async def test_output_streams_through_on_update(run: RunTool) -> None:
    updates: list[tuple[float, str]] = []
    began = time.monotonic()
    await run(
        "bash",
        on_update=lambda text: updates.append((time.monotonic() - began, text)),
        command="echo first; sleep 0.3; echo second",
    )
    assert "".join(text for _, text in updates) == "first\nsecond\n"
    assert updates[0][1] == "first\n"
    assert updates[-1][0] - updates[0][0] >= 0.2  # "first" arrived before "second" was printed


async def test_long_output_keeps_the_tail_and_saves_the_rest(run: RunTool) -> None:
    result = await run("bash", command="seq 1 3000")
    text = text_of(result)
    assert result.details is not None
    path = Path(result.details["fullOutputPath"])
    try:
        assert path.name.startswith("pi-tui-bash-")
        assert text.startswith("1001\n")
        assert text.endswith(f"3000\n\n[Showing lines 1001-3000 of 3000. Full output: {path}]")
        assert path.read_text() == "".join(f"{n}\n" for n in range(1, 3001))
        assert result.details["truncation"]["truncatedBy"] == "lines"
        assert result.details["exitCode"] == 0
    finally:
        path.unlink()


async def test_huge_output_is_byte_truncated_with_real_totals(run: RunTool) -> None:
    result = await run("bash", command="yes 0123456789 | head -n 100000")
    assert result.details is not None
    path = Path(result.details["fullOutputPath"])
    try:
        truncation = result.details["truncation"]
        assert truncation["totalLines"] == 100_000
        assert truncation["totalBytes"] == 1_100_000
        assert truncation["outputBytes"] <= 51_200
        shown = truncation["outputLines"]
        assert text_of(result).endswith(
            f"[Showing lines {100_001 - shown}-100000 of 100000. Full output: {path}]"
        )
        assert path.stat().st_size == 1_100_000
    finally:
        path.unlink()


async def test_a_background_child_holding_the_pipe_does_not_block(run: RunTool) -> None:
    began = time.monotonic()
    result = await run("bash", command="sleep 5 & echo $!")
    pid = int(text_of(result))
    os.kill(pid, signal.SIGKILL)
    assert time.monotonic() - began < 2


async def test_timeout_kills_the_process_group(tmp_path: Path, run: RunTool) -> None:
    command = "echo started; sleep 30 & echo $! > child.pid; wait"
    with pytest.raises(ToolError) as error:
        await run("bash", command=command, timeout=0.5)
    assert str(error.value) == "started\n\nCommand timed out after 0.5 seconds"
    child = int((tmp_path / "child.pid").read_text())
    assert await wait_until_dead(child)


async def test_cancellation_kills_the_process_group_and_propagates(
    tmp_path: Path, run: RunTool
) -> None:
    task = asyncio.create_task(
        run("bash", command="sleep 30 & echo $! > child.pid; echo $$ > shell.pid; wait")
    )
    child = int(await wait_for_file(tmp_path / "child.pid"))
    shell = int(await wait_for_file(tmp_path / "shell.pid"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not is_running(shell)  # reaped before the cancellation propagated
    assert await wait_until_dead(child)


async def test_missing_working_directory_is_a_tool_error(tmp_path: Path) -> None:
    tool = BashTool(ToolContext(tmp_path / "gone"))
    with pytest.raises(ToolError, match=r"^Cannot run bash in .*gone"):
        await tool.execute(BashArgs(command="true"))
