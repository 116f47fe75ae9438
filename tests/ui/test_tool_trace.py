"""ToolTrace: rows for a loaded path, live rows from tool events, the detail panel."""

from __future__ import annotations

import json
from typing import Any

from rich.syntax import Syntax
from textual.app import App, ComposeResult
from textual.widgets import Static

from pi_tui.agent.events import (
    MessageEnd,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from pi_tui.ui.tool_trace import (
    ToolTrace,
    format_duration,
    format_size,
    main_argument,
)
from tests.factories import tool_call, tool_result

Message = dict[str, Any]

DIFF = "--- a.py\n+++ a.py\n@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n"


def assistant(*calls: Message) -> Message:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": "working"}, *calls],
        "provider": "p",
        "model": "m",
        "usage": {},
        "stopReason": "toolUse",
        "timestamp": 2,
    }


PATH: list[Message] = [
    {"role": "user", "content": [{"type": "text", "text": "go"}], "timestamp": 1},
    assistant(
        tool_call("read", "c1", path="pkg/app.py"),
        tool_call("bash", "c2", command="pytest -q"),
    ),
    tool_result("c1", "read", "import os\n\nprint(os.getcwd())\n"),
    tool_result("c2", "bash", "command failed: exit 1", is_error=True),
    assistant(tool_call("edit", "c3", path="a.py", oldText="x = 1", newText="x = 2")),
    tool_result("c3", "edit", "Successfully replaced text in a.py.", details={"diff": DIFF}),
    assistant(tool_call("grep", "c4", pattern="TODO", path="src")),
]


class TraceApp(App[None]):
    """A host for one ToolTrace that records what it posts."""

    def __init__(self) -> None:
        super().__init__()
        self.selected: list[str] = []

    def compose(self) -> ComposeResult:
        yield ToolTrace()

    def on_tool_trace_call_selected(self, message: ToolTrace.CallSelected) -> None:
        self.selected.append(message.tool_call_id)


def test_row_helpers() -> None:
    assert main_argument("read", {"path": "a.py", "offset": 3}) == "a.py"
    assert main_argument("bash", {"command": "ls  -la\n| wc"}) == "ls -la | wc"
    assert main_argument("grep", {"pattern": "x+", "path": "src"}) == "x+ in src"
    assert main_argument("find", {"pattern": "*.py"}) == "*.py"
    assert main_argument("custom", {"query": "hello"}) == "hello"
    assert format_duration(None) == ""
    assert format_duration(42) == "42ms"
    assert format_duration(300) == "0.3s"
    assert format_duration(125_000) == "2m05s"
    assert format_size("") == ""
    assert format_size("a\nb\nc\n") == "3 lines"
    assert format_size("x" * 10) == "10B"
    assert format_size("x" * 1229) == "1.2KB"


async def test_rows_for_a_loaded_path() -> None:
    app = TraceApp()
    async with app.run_test(size=(100, 30)) as pilot:
        trace = app.query_one(ToolTrace)
        trace.load(PATH)
        await pilot.pause()
        records = trace.records
        assert [r.call_id for r in records] == ["c1", "c2", "c3", "c4"]
        assert [r.status for r in records] == ["ok", "error", "ok", "missing"]
        assert all(r.duration_ms is None for r in records)

        rows = [trace.row_text(index) for index in range(4)]
        assert rows[0].startswith("✓ read  pkg/app.py")
        assert rows[0].rstrip().endswith("3 lines")
        assert "s " not in rows[0][-20:]  # no duration for history
        assert rows[1].startswith("✗ bash  pytest -q")
        assert rows[1].rstrip().endswith("22B")
        assert rows[2].startswith("✓ edit  a.py")
        assert rows[3].startswith("· grep  TODO in src")
        assert trace.option_list.option_count == 4
        assert trace.expanded_call_id is None


async def test_live_rows_go_from_running_to_done() -> None:
    app = TraceApp()
    async with app.run_test(size=(100, 30)) as pilot:
        trace = app.query_one(ToolTrace)
        trace.load(PATH[:3])
        trace.handle_event(ToolExecutionStart("c7", "bash", {"command": "make test"}))
        trace.handle_event(ToolExecutionStart("c8", "read", {"path": "missing.txt"}))
        await pilot.pause()
        assert trace.option_list.option_count == 4
        assert trace.row_text(1).startswith("· bash  pytest -q")  # its result is not in PATH[:3]
        assert trace.row_text(2).startswith("… bash  make test")
        assert trace.row_text(3).startswith("… read  missing.txt")

        trace.handle_event(ToolExecutionUpdate("c7", "bash", "ok 1\n"))
        trace.handle_event(ToolExecutionUpdate("c7", "bash", "ok 2\n"))
        record = trace.record("c7")
        assert record is not None
        assert record.output == "ok 1\nok 2\n"

        bash_result = tool_result("c7", "bash", "ok 1\nok 2\n")
        trace.handle_event(ToolExecutionEnd("c7", "bash", bash_result, False, 1530))
        failure = tool_result("c8", "read", "ENOENT: missing.txt", is_error=True)
        trace.handle_event(ToolExecutionEnd("c8", "read", failure, True, 4))
        trace.handle_event(MessageEnd(bash_result))  # not a tool event: ignored
        await pilot.pause()

        bash_row = trace.row_text(2).rstrip()
        assert bash_row.startswith("✓ bash  make test")
        assert bash_row.endswith("1.5s    2 lines")
        read_row = trace.row_text(3).rstrip()
        assert read_row.startswith("✗ read  missing.txt")
        assert "4ms" in read_row
        assert read_row.endswith("19B")


async def test_enter_toggles_details() -> None:
    app = TraceApp()
    async with app.run_test(size=(100, 30)) as pilot:
        trace = app.query_one(ToolTrace)
        trace.load(PATH)
        await pilot.pause()
        trace.option_list.focus()
        trace.option_list.highlighted = 0
        await pilot.press("enter")
        await pilot.pause()
        assert app.selected == ["c1"]
        assert trace.expanded_call_id == "c1"
        assert trace.detail.display
        detail = trace.detail
        assert json.loads(detail.arguments_text) == {"path": "pkg/app.py"}
        assert detail.result_text == "import os\n\nprint(os.getcwd())\n"
        assert detail.result_lexer == "python"
        arguments = detail.query_one("#detail-arguments", Static).content
        assert isinstance(arguments, Syntax)
        assert '"path": "pkg/app.py"' in arguments.code
        body = detail.query_one("#detail-result", Static).content
        assert isinstance(body, Syntax)
        assert "print(os.getcwd())" in body.code

        await pilot.press("enter")
        await pilot.pause()
        assert trace.expanded_call_id is None
        assert not trace.detail.display

        await pilot.press("down", "enter")
        await pilot.pause()
        assert trace.expanded_call_id == "c2"
        result_static = detail.query_one("#detail-result", Static)
        assert result_static.has_class("-error")
        assert str(result_static.content) == "command failed: exit 1"

        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.selected == ["c1", "c1", "c2", "c3"]
        assert trace.expanded_call_id == "c3"
        assert detail.result_lexer == "diff"
        assert detail.result_text == DIFF
        diff = detail.query_one("#detail-result", Static).content
        assert isinstance(diff, Syntax)
        assert "+x = 2" in diff.code
        assert json.loads(detail.arguments_text)["newText"] == "x = 2"


async def test_click_selects_and_live_detail_updates() -> None:
    app = TraceApp()
    async with app.run_test(size=(100, 30)) as pilot:
        trace = app.query_one(ToolTrace)
        trace.load([])
        trace.handle_event(ToolExecutionStart("c1", "bash", {"command": "sleep 1"}))
        await pilot.pause()
        await pilot.click(trace.option_list, offset=(5, 0))
        await pilot.pause()
        assert app.selected == ["c1"]
        assert trace.expanded_call_id == "c1"
        result_static = trace.detail.query_one("#detail-result", Static)
        assert "running" in str(result_static.content)

        trace.handle_event(ToolExecutionUpdate("c1", "bash", "tick\n"))
        assert str(result_static.content) == "tick\n"
        done = tool_result("c1", "bash", "tick\ndone\n")
        trace.handle_event(ToolExecutionEnd("c1", "bash", done, False, 1000))
        assert trace.detail.result_text == "tick\ndone\n"
        assert "1.0s" in str(trace.detail.query_one("#detail-title", Static).content)


async def test_reused_call_ids_get_their_own_rows() -> None:
    app = TraceApp()
    async with app.run_test(size=(100, 30)) as pilot:
        trace = app.query_one(ToolTrace)
        path = [
            assistant(tool_call("read", "call_0", path="one.txt")),
            tool_result("call_0", "read", "first"),
            assistant(tool_call("read", "call_0", path="two.txt")),
            tool_result("call_0", "read", "second", is_error=True),
        ]
        trace.load(path)
        await pilot.pause()
        assert [r.result_text for r in trace.records] == ["first", "second"]
        assert [r.status for r in trace.records] == ["ok", "error"]
        assert trace.option_list.option_count == 2
