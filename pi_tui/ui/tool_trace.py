"""The tool-call pane: every tool call of the active path, one row each, with a detail view.

`ToolTrace` is an `OptionList` (a line-API list: cheap at thousands of rows) above a detail
panel. A row reads ``✓ read   pi_tui/app.py   0.3s   12 lines``: status (… running, ✓ ok,
✗ error, · no result recorded), tool name, main argument (path, command or pattern, cut to
fit), duration (live calls only: history does not record it) and result size.

Enter or a click on a row posts `ToolTrace.CallSelected` and toggles the detail panel, which
shows the call's arguments as JSON and its result: syntax-highlighted by the file's extension
for ``read``, the unified diff of an ``edit``, plain text otherwise, and errors in `$error`.

`ToolTrace.load` rebuilds the rows from a path's messages; `ToolTrace.handle_event` applies
live ``tool_execution_*`` events. Both are plain (synchronous) methods.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from rich.console import RenderableType
from rich.syntax import Syntax
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.events import Resize
from textual.message import Message as TextualMessage
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..agent.events import AgentEvent, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate
from ..session.catalog import text_of

Message = dict[str, Any]
ToolStatus = Literal["running", "ok", "error", "missing"]

NAME_WIDTH = 5
DURATION_WIDTH = 6
SIZE_WIDTH = 10
FALLBACK_WIDTH = 60
"""Row width used before the list has been laid out."""

_GLYPHS: dict[ToolStatus, tuple[str, str]] = {
    "running": ("…", "$text-warning"),
    "ok": ("✓", "$text-success"),
    "error": ("✗", "$text-error"),
    "missing": ("·", "$text-muted"),
}


@dataclass(slots=True)
class ToolCallRecord:
    """One tool call and what is known of its outcome."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    status: ToolStatus = "running"
    duration_ms: int | None = None
    result: Message | None = None
    output: str = ""
    """Output streamed so far while the call runs (``tool_execution_update``)."""

    @property
    def result_text(self) -> str:
        """The text of the result (or the streamed output while running)."""
        if self.result is None:
            return self.output
        return text_of(self.result.get("content"))


def main_argument(name: str, arguments: dict[str, Any]) -> str:
    """The one argument a person scans for: the path, the command or the pattern."""
    if name == "bash":
        return " ".join(str(arguments.get("command", "")).split())
    if name in ("grep", "find"):
        pattern = str(arguments.get("pattern", ""))
        path = arguments.get("path")
        return f"{pattern} in {path}" if path else pattern
    path = arguments.get("path")
    if path is not None:
        return str(path)
    for value in arguments.values():
        if isinstance(value, str):
            return " ".join(value.split())
    return json.dumps(arguments, ensure_ascii=False) if arguments else ""


def format_duration(duration_ms: int | None) -> str:
    """``45ms``, ``0.3s``, ``12.0s``, ``2m05s``; "" when unknown."""
    if duration_ms is None:
        return ""
    if duration_ms < 100:
        return f"{duration_ms}ms"
    if duration_ms < 60_000:
        return f"{duration_ms / 1000:.1f}s"
    minutes, seconds = divmod(duration_ms // 1000, 60)
    return f"{minutes}m{seconds:02d}s"


def format_size(text: str) -> str:
    """``12 lines`` for multi-line text, else its size: ``340B``, ``1.2KB``; "" when empty."""
    if not text:
        return ""
    lines = len(text.splitlines())
    if lines > 1:
        return f"{lines} lines"
    size = len(text.encode())
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def _truncate(text: str, width: int) -> str:
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"


def row_prompt(record: ToolCallRecord, width: int) -> Content:
    """The row for ``record`` laid out in ``width`` cells."""
    glyph, style = _GLYPHS[record.status]
    duration = format_duration(record.duration_ms)
    size = format_size(record.result_text) if record.result is not None else ""
    name = record.name.ljust(NAME_WIDTH)
    fixed = 2 + len(name) + 1 + 1 + DURATION_WIDTH + 1 + SIZE_WIDTH
    argument = _truncate(main_argument(record.name, record.arguments), max(8, width - fixed))
    argument = argument.ljust(max(8, width - fixed))
    return Content.assemble(
        (glyph, style),
        " ",
        (name, "bold"),
        " ",
        argument,
        " ",
        (duration.rjust(DURATION_WIDTH), "$text-muted"),
        " ",
        (size.rjust(SIZE_WIDTH), "$text-muted"),
    )


def _guess_lexer(path: str, code: str) -> str:
    try:
        return Syntax.guess_lexer(path, code)
    except Exception:
        return "text"


def result_view(record: ToolCallRecord) -> tuple[str, str]:
    """The text the detail panel shows for a result, and the lexer to highlight it with."""
    result = record.result
    if result is None:
        return record.output, "text"
    text = record.result_text
    if record.status == "error":
        return text, "text"
    details = result.get("details") or {}
    if record.name == "edit" and isinstance(details, dict) and details.get("diff"):
        return str(details["diff"]), "diff"
    if record.name == "read":
        path = str(record.arguments.get("path") or "")
        return text, _guess_lexer(path, text) if path else "text"
    return text, "text"


class ToolDetail(VerticalScroll):
    """The detail panel: one call's arguments (JSON) and result (highlighted)."""

    DEFAULT_CSS = """
    ToolDetail {
        height: 2fr;
        border-top: solid $primary 30%;
        padding: 0 1;
        & > .detail-heading {
            color: $text-muted;
            text-style: bold;
            margin-top: 1;
        }
        & > #detail-title { text-style: bold; }
        & > #detail-result.-error { color: $text-error; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.call_id: str | None = None
        self.arguments_text = ""
        self.result_text = ""
        self.result_lexer = "text"

    def compose(self) -> ComposeResult:
        yield Static(id="detail-title")
        yield Static("Arguments", classes="detail-heading")
        yield Static(id="detail-arguments")
        yield Static("Result", classes="detail-heading")
        yield Static(id="detail-result")

    def _syntax(self, code: str, lexer: str) -> Syntax:
        dark = self.app.current_theme.dark if self.app.current_theme else True
        return Syntax(
            code,
            lexer,
            theme="ansi_dark" if dark else "ansi_light",
            background_color="default",
            word_wrap=True,
        )

    def show(self, record: ToolCallRecord) -> None:
        """Fill the panel with ``record``."""
        self.call_id = record.call_id
        self.arguments_text = json.dumps(record.arguments, indent=2, ensure_ascii=False)
        self.result_text, self.result_lexer = result_view(record)
        glyph, style = _GLYPHS[record.status]
        facts = [
            fact
            for fact in (format_duration(record.duration_ms), format_size(record.result_text))
            if fact
        ]
        title = Content.assemble(
            (glyph, style),
            " ",
            (record.name, "bold"),
            " ",
            main_argument(record.name, record.arguments),
            (f"  {', '.join(facts)}" if facts else "", "$text-muted"),
        )
        self.query_one("#detail-title", Static).update(title)
        self.query_one("#detail-arguments", Static).update(
            self._syntax(self.arguments_text, "json")
        )
        result = self.query_one("#detail-result", Static)
        result.set_class(record.status == "error", "-error")
        body: RenderableType | Content
        if not self.result_text:
            body = Content.styled(
                "running…" if record.status == "running" else "(no output)", "italic"
            )
        elif record.status == "error" or self.result_lexer == "text":
            body = Content(self.result_text)
        else:
            body = self._syntax(self.result_text, self.result_lexer)
        result.update(body)


class ToolTrace(Vertical):
    """The tool-call pane: one row per call of the active path, Enter toggles the details.

    Attributes down: `load`, `handle_event`, `toggle_details`, `records`, `row_text`.
    Messages up: `ToolTrace.CallSelected`.
    """

    DEFAULT_CSS = """
    ToolTrace {
        height: 1fr;
        & > OptionList {
            height: 1fr;
            max-height: 100%;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        & > ToolDetail { display: none; }
        &.-expanded > ToolDetail { display: block; }
    }
    """

    class CallSelected(TextualMessage):
        """A row was chosen (Enter or click)."""

        def __init__(self, trace: ToolTrace, tool_call_id: str) -> None:
            super().__init__()
            self.trace = trace
            self.tool_call_id = tool_call_id

        @property
        def control(self) -> ToolTrace:
            """The trace that sent the message (for ``@on``)."""
            return self.trace

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._records: dict[str, ToolCallRecord] = {}
        """Rows by row key, in row order (a key is the call id, suffixed if reused)."""
        self._latest: dict[str, str] = {}
        """Call id → key of the latest row with that id."""
        self._row_width = 0
        self._expanded_key: str | None = None
        self.option_list = OptionList(id="trace-calls", compact=True, markup=False)
        self.detail = ToolDetail(id="trace-detail")

    def compose(self) -> ComposeResult:
        yield self.option_list
        yield self.detail

    # --- queries --------------------------------------------------------------------------

    @property
    def records(self) -> list[ToolCallRecord]:
        """Every call, in row order."""
        return list(self._records.values())

    def record(self, tool_call_id: str) -> ToolCallRecord | None:
        """The latest call with this id, if any."""
        key = self._latest.get(tool_call_id)
        return None if key is None else self._records[key]

    def row_text(self, index: int) -> str:
        """The plain text of row ``index``."""
        prompt = self.option_list.get_option_at_index(index).prompt
        return prompt.plain if isinstance(prompt, Content) else str(prompt)

    @property
    def expanded_call_id(self) -> str | None:
        """The call whose details are open, or None."""
        key = self._expanded_key
        return None if key is None else self._records[key].call_id

    # --- building rows --------------------------------------------------------------------

    def _width(self) -> int:
        region = self.option_list.content_region.width
        if region <= 0:
            return FALLBACK_WIDTH
        return max(20, region - self.option_list.styles.scrollbar_size_vertical)

    def _new_key(self, call_id: str) -> str:
        key = call_id
        serial = 1
        while key in self._records:
            serial += 1
            key = f"{call_id}#{serial}"
        return key

    def _add_record(self, record: ToolCallRecord) -> str:
        key = self._new_key(record.call_id)
        self._records[key] = record
        self._latest[record.call_id] = key
        return key

    def load(self, messages: list[Message]) -> None:
        """Rebuild the rows from a path's messages (results paired to calls by id)."""
        self._records = {}
        self._latest = {}
        for message in messages:
            role = message.get("role")
            if role == "assistant":
                for block in message.get("content") or ():
                    if isinstance(block, dict) and block.get("type") == "toolCall":
                        self._add_record(
                            ToolCallRecord(
                                call_id=str(block.get("id")),
                                name=str(block.get("name")),
                                arguments=dict(block.get("arguments") or {}),
                                status="missing",
                            )
                        )
            elif role == "toolResult":
                record = self.record(str(message.get("toolCallId")))
                if record is not None and record.result is None:
                    record.result = message
                    record.status = "error" if message.get("isError") else "ok"
        self._row_width = self._width()
        self.option_list.set_options(
            Option(row_prompt(record, self._row_width), id=key)
            for key, record in self._records.items()
        )
        if self._records:
            self.option_list.highlighted = len(self._records) - 1
        self._collapse()

    def _refresh_row(self, key: str) -> None:
        record = self._records[key]
        self.option_list.replace_option_prompt(key, row_prompt(record, self._row_width))
        if self._expanded_key == key:
            self.detail.show(record)

    def handle_event(self, event: AgentEvent) -> None:
        """Apply a live ``tool_execution_*`` event; other events are ignored."""
        if isinstance(event, ToolExecutionStart):
            key = self._add_record(
                ToolCallRecord(event.tool_call_id, event.tool_name, dict(event.args or {}))
            )
            if not self._row_width:
                self._row_width = self._width()
            self.option_list.add_option(
                Option(row_prompt(self._records[key], self._row_width), id=key)
            )
            if self.option_list.highlighted in (None, self.option_list.option_count - 2):
                self.option_list.highlighted = self.option_list.option_count - 1
        elif isinstance(event, ToolExecutionUpdate):
            record = self.record(event.tool_call_id)
            if record is not None and record.result is None:
                record.output += event.partial
                if self._expanded_key == self._latest.get(event.tool_call_id):
                    self.detail.show(record)
        elif isinstance(event, ToolExecutionEnd):
            found = self._latest.get(event.tool_call_id)
            if found is None:
                found = self._add_record(ToolCallRecord(event.tool_call_id, event.tool_name, {}))
                self.option_list.add_option(Option("", id=found))
            key = found
            record = self._records[key]
            record.status = "error" if event.is_error else "ok"
            record.duration_ms = event.duration_ms
            record.result = event.result
            self._refresh_row(key)

    # --- details --------------------------------------------------------------------------

    def _collapse(self) -> None:
        self.remove_class("-expanded")
        self._expanded_key = None
        self.detail.call_id = None

    def _toggle_key(self, key: str) -> bool:
        if self._expanded_key == key:
            self._collapse()
            return False
        self._expanded_key = key
        self.detail.show(self._records[key])
        self.add_class("-expanded")
        self.detail.scroll_home(animate=False)
        return True

    def toggle_details(self, tool_call_id: str | None = None) -> bool:
        """Open the details of a call (default: the highlighted row), or close them if open.

        Returns True when the details are now open.
        """
        if tool_call_id is None:
            option = self.option_list.highlighted_option
            key = None if option is None else option.id
        else:
            key = self._latest.get(tool_call_id)
        if key is None or key not in self._records:
            return False
        return self._toggle_key(key)

    @on(OptionList.OptionSelected, "#trace-calls")
    def _on_row_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        key = event.option_id
        if key is None or key not in self._records:
            return
        self._toggle_key(key)
        self.post_message(self.CallSelected(self, self._records[key].call_id))

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self._relayout_rows)

    def _relayout_rows(self) -> None:
        width = self._width()
        if width == self._row_width or not self._records:
            self._row_width = width
            return
        self._row_width = width
        highlighted = self.option_list.highlighted
        scroll_y = self.option_list.scroll_y
        self.option_list.set_options(
            Option(row_prompt(record, width), id=key) for key, record in self._records.items()
        )
        self.option_list.highlighted = highlighted
        self.option_list.scroll_to(y=scroll_y, animate=False)
