"""The conversation pane: the active path of a session, root to leaf, as a column of blocks.

`ChatView` renders pi-format App messages (the ``messages`` of a path's context) as block
widgets — a `UserBlock` per prompt, an `AssistantBlock` per reply (Markdown text, reasoning
in a collapsed "Thinking" section, one summary line per tool call), `ErrorBlock` / `NoteBlock`
after replies that failed, were aborted or were cut short, `SummaryBlock` for branch and
compaction summaries, `BashBlock` for ``!command`` runs and `CustomBlock` for displayed
extension messages. Tool results are not shown here (the tool-trace pane owns them); they
only set the ✓/✗ mark of their call.

Two ways in:

* `ChatView.load` replaces everything with a path. Only the last ``max_messages`` messages
  are mounted; a marker on top counts the rest, and ctrl+home (or a click on the marker)
  mounts the next batch, so a 2000-message path costs as much as a 200-message one.
* `ChatView.handle_event` renders a live run from the typed agent events. Assistant text is
  streamed through a `MarkdownStream` (never re-rendered in full per token), and the pane stays
  pinned to the bottom unless the user scrolled away (`Widget.anchor` semantics).

`handle_event` is a coroutine and must be awaited, one event at a time, in emission order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from ..agent.events import (
    AgentEvent,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
)
from ..session.catalog import text_of
from ..session.layout import describe_tool_call

if TYPE_CHECKING:
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownStream

Message = dict[str, Any]
CallStatus = Literal["pending", "running", "ok", "error"]

DEFAULT_MAX_MESSAGES = 200
"""How many messages `ChatView` mounts by default; older ones wait behind the marker."""

BASH_OUTPUT_LINES = 40
"""How many trailing output lines a `BashBlock` shows."""

_MARKS: dict[CallStatus, str] = {
    "pending": "[$text-muted]…[/]",
    "running": "[$text-warning]…[/]",
    "ok": "[$text-success]✓[/]",
    "error": "[$text-error]✗[/]",
}


def assistant_text(message: Message) -> str:
    """The visible text of an assistant message: its text blocks, separated by blank lines."""
    parts = [
        str(block.get("text", ""))
        for block in message.get("content") or ()
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    return "\n\n".join(part for part in parts if part)


def assistant_thinking(message: Message) -> str:
    """The reasoning of an assistant message, its thinking blocks separated by blank lines."""
    parts = [
        str(block.get("thinking", ""))
        for block in message.get("content") or ()
        if isinstance(block, dict) and block.get("type") == "thinking"
    ]
    return "\n\n".join(part for part in parts if part)


def tool_calls_of(message: Message) -> list[dict[str, Any]]:
    """The ``toolCall`` content blocks of an assistant message."""
    return [
        block
        for block in message.get("content") or ()
        if isinstance(block, dict) and block.get("type") == "toolCall"
    ]


def is_displayed(message: Message) -> bool:
    """Whether the chat shows a block for ``message`` (tool results and hidden custom don't)."""
    role = message.get("role")
    if role == "toolResult":
        return False
    if role == "custom":
        return bool(message.get("display"))
    return True


class ChatBlock:
    """Mixin marking the widgets that stand for one message of the conversation.

    ``message_index`` is the position of that message among the displayed messages.
    """

    DEFAULT_CLASSES = "block"
    message_index: int = -1


class UserBlock(ChatBlock, Static):
    """A user prompt: plain text with a `$primary` bar on the left."""

    DEFAULT_CSS = """
    UserBlock {
        border-left: outer $primary;
        background: $primary 10%;
        padding: 0 1;
    }
    """

    def __init__(self, message: Message) -> None:
        self.message = message
        text = text_of(message.get("content"))
        images = sum(
            1
            for block in message.get("content") or ()
            if isinstance(block, dict) and block.get("type") == "image"
        )
        if images:
            text += f"\n[{images} image{'s' if images > 1 else ''}]"
        super().__init__(Content(text))
        self.text = text


class ToolCallLines(Static):
    """The tool calls of one assistant reply, one ``▸ [read: a.py] ✓`` line each."""

    DEFAULT_CSS = """
    ToolCallLines {
        padding: 0 1;
        color: $text-muted;
    }
    """

    def __init__(self) -> None:
        super().__init__("")
        self.calls: list[dict[str, Any]] = []
        self.statuses: dict[str, CallStatus] = {}
        self.display = False

    def set_calls(self, calls: list[dict[str, Any]], statuses: dict[str, CallStatus]) -> None:
        """Show ``calls``; ``statuses`` gives known marks by call id (default: pending)."""
        self.calls = calls
        for call in calls:
            call_id = str(call.get("id"))
            self.statuses.setdefault(call_id, statuses.get(call_id, "pending"))
        self._render_lines()

    def set_status(self, call_id: str, status: CallStatus) -> None:
        """Change the mark of one call."""
        self.statuses[call_id] = status
        self._render_lines()

    def _render_lines(self) -> None:
        lines = [
            Content.assemble(
                "▸ ",
                describe_tool_call(str(call.get("name")), call.get("arguments") or {}),
                " ",
                Content.from_markup(_MARKS[self.statuses.get(str(call.get("id")), "pending")]),
            )
            for call in self.calls
        ]
        self.update(Content("\n").join(lines))
        self.display = bool(lines)

    @property
    def plain(self) -> str:
        """The lines as plain text (what a test or a copy sees)."""
        return str(self.content)


class ThinkingSection(Collapsible):
    """Reasoning, collapsed under a "Thinking" title; expand it to read."""

    DEFAULT_CSS = """
    ThinkingSection {
        background: $surface;
        border-top: none;
        padding: 0 0 0 1;
        margin-bottom: 1;
        color: $text-muted;
        text-style: italic;
    }
    """

    def __init__(self, text: str = "") -> None:
        self.body = Static(Content(text), classes="thinking-body")
        super().__init__(self.body, title="Thinking", collapsed=True)
        self.text = text

    def append(self, delta: str) -> None:
        """Add streamed reasoning."""
        self.text += delta
        self.body.update(Content(self.text))


class StaticMarkdown(Static):
    """Finished Markdown as one widget rendered by Rich.

    Textual's Markdown mounts a widget per paragraph, list and fence; a loaded history of a
    few hundred replies then costs thousands of widgets and seconds of layout (measured: the
    first frame of a 200-message path took 8.6 s). Only the reply being streamed needs it.
    """

    DEFAULT_CSS = """
    StaticMarkdown { height: auto; padding: 0 1; }
    StaticMarkdown.-empty { display: none; }
    """

    def __init__(self, source: str = "", classes: str = "") -> None:
        super().__init__(_rich_markdown(source), classes=classes)
        self.source = source

    async def update_source(self, source: str) -> None:
        """Show new text."""
        self.source = source
        self.update(_rich_markdown(source))


def _rich_markdown(source: str) -> RenderedOnce | str:
    # Imported on first use: Markdown parsing is not needed for the first frame.
    from rich.markdown import Markdown as RichMarkdown

    return RenderedOnce(RichMarkdown(source)) if source else ""


class RenderedOnce:
    """A Rich renderable drawn once per width and then replayed.

    Textual renders a Static's content once to measure its height and again to paint it, and
    Markdown with highlighted code fences is slow to draw: replaying halves the cost of showing
    history (measured with ctrl+home on 40 replies).
    """

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self._drawn: dict[int, list[Segment]] = {}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        segments = self._drawn.get(width)
        if segments is None:
            segments = list(console.render(self.renderable, options.update(height=None)))
            # Two widths cover a resize back and forth; more would only hold memory.
            if len(self._drawn) >= 2:
                self._drawn.pop(next(iter(self._drawn)))
            self._drawn[width] = segments
        yield from segments

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.renderable)


def _streaming_markdown(classes: str) -> Markdown:
    from textual.widgets import Markdown

    return Markdown(None, classes=classes)


class AssistantBlock(ChatBlock, Vertical):
    """An assistant reply: reasoning (collapsed), Markdown text and its tool calls.

    Built whole from a finished message, or empty and then streamed into with
    `append_text` / `append_thinking` and closed with `finish`.
    """

    DEFAULT_CSS = """
    AssistantBlock {
        height: auto;
        & > Markdown {
            padding: 0 1;
            margin: 0;
            &.-empty { display: none; }
            & > MarkdownBlock:last-child { margin-bottom: 0; }
        }
    }
    """

    def __init__(
        self,
        message: Message | None = None,
        *,
        statuses: dict[str, CallStatus] | None = None,
    ) -> None:
        super().__init__()
        self.message: Message | None = message
        self._stream: MarkdownStream | None = None
        self._text_index: int | None = None
        self.text = assistant_text(message) if message else ""
        thinking = assistant_thinking(message) if message else ""
        self.thinking: ThinkingSection | None = ThinkingSection(thinking) if thinking else None
        hidden = "" if self.text else "-empty"
        self.markdown: Markdown | StaticMarkdown = (
            StaticMarkdown(self.text, classes=hidden)
            if message is not None
            else _streaming_markdown(hidden)
        )
        self.calls = ToolCallLines()
        if message:
            self.calls.set_calls(tool_calls_of(message), statuses or {})

    def compose(self) -> ComposeResult:
        if self.thinking is not None:
            yield self.thinking
        yield self.markdown
        if self.calls.calls:
            yield self.calls

    @property
    def streaming(self) -> bool:
        """True while text is being streamed in."""
        return self._stream is not None

    @property
    def is_empty(self) -> bool:
        """No text, no reasoning and no tool calls."""
        return not self.text and self.thinking is None and not self.calls.calls

    async def append_text(self, delta: str, content_index: int = 0) -> None:
        """Stream a piece of text (a new content index starts a new paragraph)."""
        if not delta:
            return
        if self._text_index is not None and content_index != self._text_index and self.text:
            delta = "\n\n" + delta
        self._text_index = content_index
        if self._stream is None:
            markdown = self.markdown
            assert not isinstance(markdown, StaticMarkdown), "finished replies are not streamed"
            markdown.remove_class("-empty")
            self._stream = markdown.get_stream(markdown)
        self.text += delta
        await self._stream.write(delta)

    async def append_thinking(self, delta: str) -> None:
        """Stream a piece of reasoning into the collapsed "Thinking" section."""
        if not delta:
            return
        if self.thinking is None:
            self.thinking = ThinkingSection()
            await self.mount(self.thinking, before=self.markdown)
        self.thinking.append(delta)

    async def stop_stream(self) -> None:
        """Flush and end the text stream, if one is running."""
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.stop()

    async def finish(self, message: Message, statuses: dict[str, CallStatus]) -> None:
        """End streaming and show the final ``message`` (text, reasoning, tool calls)."""
        await self.stop_stream()
        self.message = message
        final_text = assistant_text(message)
        if final_text != self.text:
            self.text = final_text
            self.markdown.set_class(not final_text, "-empty")
            if isinstance(self.markdown, StaticMarkdown):
                await self.markdown.update_source(final_text)
            else:
                await self.markdown.update(final_text)
        thinking = assistant_thinking(message)
        if thinking and (self.thinking is None or self.thinking.text != thinking):
            if self.thinking is None:
                self.thinking = ThinkingSection(thinking)
                await self.mount(self.thinking, before=self.markdown)
            else:
                self.thinking.text = ""
                self.thinking.append(thinking)
        self.calls.set_calls(tool_calls_of(message), statuses)
        if self.calls.calls and self.calls.parent is None:
            await self.mount(self.calls)

    def set_call_status(self, call_id: str, status: CallStatus) -> None:
        """Update the mark of one of this reply's tool calls."""
        self.calls.set_status(call_id, status)


class ErrorBlock(ChatBlock, Static):
    """A reply that ended with an error: the provider's message, in `$error` colours."""

    DEFAULT_CSS = """
    ErrorBlock {
        border-left: outer $error;
        background: $error 15%;
        color: $text-error;
        padding: 0 1;
    }
    """

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message
        super().__init__(Content.assemble(("Error: ", "bold"), error_message))


class NoteBlock(ChatBlock, Static):
    """A short note about how a reply ended ("Aborted", output limit reached)."""

    DEFAULT_CSS = """
    NoteBlock {
        border-left: outer $warning;
        color: $text-warning;
        padding: 0 1;
    }
    """

    def __init__(self, note: str) -> None:
        self.note = note
        super().__init__(Content(note))


class SummaryBlock(ChatBlock, Collapsible):
    """A branch or compaction summary: titled, bordered, body collapsed until expanded."""

    DEFAULT_CSS = """
    SummaryBlock {
        border: round $secondary;
        background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, message: Message) -> None:
        self.message = message
        self.summary = str(message.get("summary") or "")
        if message.get("role") == "compactionSummary":
            tokens = message.get("tokensBefore")
            count = f"{tokens:,}" if isinstance(tokens, int) else "?"
            title = f"Compacted context ({count} tokens before)"
        else:
            title = "Branch summary"
        self.summary_title = title
        super().__init__(StaticMarkdown(self.summary), title=title, collapsed=True)


class BashBlock(ChatBlock, Static):
    """A ``!command`` the user ran: the command, the tail of its output and the exit code."""

    DEFAULT_CSS = """
    BashBlock {
        border-left: outer $accent;
        padding: 0 1;
        color: $text-muted;
    }
    """

    def __init__(self, message: Message) -> None:
        self.message = message
        command = str(message.get("command") or "")
        output = str(message.get("output") or "").rstrip("\n")
        lines = output.splitlines()
        parts: list[Content] = [Content.assemble(("$ ", "bold $accent"), (command, "bold"))]
        if len(lines) > BASH_OUTPUT_LINES:
            hidden = len(lines) - BASH_OUTPUT_LINES
            parts.append(Content.styled(f"… {hidden} earlier lines", "italic"))
            lines = lines[-BASH_OUTPUT_LINES:]
        if lines:
            parts.append(Content("\n".join(lines)))
        exit_code = message.get("exitCode")
        if message.get("cancelled"):
            parts.append(Content.styled("(cancelled)", "$text-warning"))
        elif isinstance(exit_code, int) and exit_code != 0:
            parts.append(Content.styled(f"exit {exit_code}", "$text-error"))
        super().__init__(Content("\n").join(parts))


class CustomBlock(ChatBlock, Static):
    """A displayed extension message: its type as a label, then its text."""

    DEFAULT_CSS = """
    CustomBlock {
        border-left: outer $secondary;
        padding: 0 1;
    }
    """

    def __init__(self, message: Message) -> None:
        self.message = message
        kind = str(message.get("customType") or "custom")
        text = text_of(message.get("content"))
        super().__init__(Content.assemble((f"[{kind}]", "bold $secondary"), "\n", text))


class EarlierMarker(Static):
    """The line on top standing for messages not mounted; click it to show more."""

    DEFAULT_CSS = """
    EarlierMarker {
        color: $text-muted;
        text-style: italic;
        padding: 0 1;
        margin-bottom: 1;
    }
    """

    def __init__(self) -> None:
        super().__init__("")
        self.count = 0
        self.display = False

    def set_count(self, count: int) -> None:
        """Show how many earlier messages are hidden (hidden itself when none)."""
        self.count = count
        noun = "message" if count == 1 else "messages"
        self.update(Content(f"… {count:,} earlier {noun} (press ctrl+home to show more)"))
        self.display = count > 0

    async def on_click(self) -> None:
        chat = self.parent
        if isinstance(chat, ChatView):
            await chat.show_earlier()


class ChatView(VerticalScroll, can_focus=True):
    """The conversation pane: blocks for the active path, live updates from agent events.

    Attributes down: `load`, `handle_event` (await both), `show_earlier`,
    `last_assistant_text`, `blocks`. ``max_messages`` bounds how many messages are mounted.
    """

    DEFAULT_CSS = """
    ChatView {
        height: 1fr;
        padding: 0 1;
        & > .block {
            margin: 0 0 1 0;
            height: auto;
        }
    }
    """

    BINDINGS = [
        Binding("ctrl+home", "show_earlier", "Earlier messages", show=False),
    ]

    def __init__(
        self,
        *,
        max_messages: int = DEFAULT_MAX_MESSAGES,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.max_messages = max(1, max_messages)
        self._limit = self.max_messages
        self._messages: list[Message] = []
        self._shown_from = 0
        self._statuses: dict[str, CallStatus] = {}
        self._owners: dict[str, AssistantBlock] = {}
        self._current: AssistantBlock | None = None
        self._started: Message | None = None
        self._marker = EarlierMarker()

    def compose(self) -> ComposeResult:
        yield self._marker

    # --- queries --------------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """Every displayed message of the path (mounted or not), in order."""
        return list(self._messages)

    @property
    def hidden_count(self) -> int:
        """How many earlier messages are behind the marker."""
        return self._shown_from

    @property
    def current(self) -> AssistantBlock | None:
        """The assistant block being streamed into, if any."""
        return self._current

    def blocks(self) -> list[Widget]:
        """The mounted message blocks, top to bottom (the marker is not one)."""
        return [child for child in self.children if isinstance(child, ChatBlock)]

    def last_assistant_text(self) -> str:
        """The text of the latest assistant reply that has any (for /copy); "" if none."""
        for message in reversed(self._messages):
            if message.get("role") == "assistant":
                text = assistant_text(message)
                if text:
                    return text
        return ""

    # --- loading a path -------------------------------------------------------------------

    async def load(self, messages: list[Message]) -> None:
        """Replace the conversation with ``messages`` (App messages of a path, root first)."""
        if self._current is not None:
            await self._current.stop_stream()
        self._current = None
        self._started = None
        self._owners = {}
        self._statuses = {}
        for message in messages:
            if message.get("role") == "toolResult":
                self._record_result(message)
        self._messages = [message for message in messages if is_displayed(message)]
        self._limit = self.max_messages
        self._shown_from = max(0, len(self._messages) - self._limit)
        widgets: list[Widget] = []
        for index in range(self._shown_from, len(self._messages)):
            widgets.extend(self._blocks_for(self._messages[index], index))
        with self.app.batch_update():
            await self.remove_children(self.blocks())
            self._marker.set_count(self._shown_from)
            if widgets:
                await self.mount_all(widgets)
        self.anchor()

    async def show_earlier(self, count: int | None = None) -> int:
        """Mount up to ``count`` (default ``max_messages``) earlier messages; returns how many."""
        if self._shown_from == 0:
            return 0
        start = max(0, self._shown_from - (count or self.max_messages))
        widgets: list[Widget] = []
        for index in range(start, self._shown_from):
            widgets.extend(self._blocks_for(self._messages[index], index))
        added = self._shown_from - start
        self._limit += added
        self._shown_from = start
        with self.app.batch_update():
            if widgets:
                await self.mount_all(widgets, after=self._marker)
            self._marker.set_count(start)
        return added

    async def action_show_earlier(self) -> None:
        """ctrl+home: show more of the past and go to the top."""
        self.release_anchor()
        await self.show_earlier()
        self.call_after_refresh(self.scroll_home, animate=False)

    def _record_result(self, message: Message) -> None:
        call_id = str(message.get("toolCallId"))
        self._statuses[call_id] = "error" if message.get("isError") else "ok"

    def _blocks_for(self, message: Message, index: int) -> list[Widget]:
        """The block widgets of one finished message."""
        role = message.get("role")
        blocks: list[Widget]
        if role == "user":
            blocks = [UserBlock(message)]
        elif role == "assistant":
            block = AssistantBlock(message, statuses=self._statuses)
            self._own_calls(block, message)
            blocks = [] if block.is_empty else [block]
            blocks.extend(self._ending_blocks(message))
        elif role in ("branchSummary", "compactionSummary"):
            blocks = [SummaryBlock(message)]
        elif role == "bashExecution":
            blocks = [BashBlock(message)]
        elif role == "custom":
            blocks = [CustomBlock(message)]
        else:
            blocks = [NoteBlock(f"[{role}] {text_of(message.get('content'))}")]
        for widget in blocks:
            if isinstance(widget, ChatBlock):
                widget.message_index = index
        return blocks

    @staticmethod
    def _ending_blocks(message: Message) -> list[Widget]:
        """Blocks that say how a reply ended, when it did not end normally."""
        reason = message.get("stopReason")
        if reason == "error":
            return [ErrorBlock(str(message.get("errorMessage") or "unknown error"))]
        if reason == "aborted":
            return [NoteBlock("Aborted")]
        if reason == "length":
            return [NoteBlock("Stopped: the reply reached the output token limit")]
        return []

    def _own_calls(self, block: AssistantBlock, message: Message) -> None:
        for call in tool_calls_of(message):
            self._owners[str(call.get("id"))] = block

    # --- live events ----------------------------------------------------------------------

    async def handle_event(self, event: AgentEvent) -> None:
        """Render one agent event; await each in order. Unknown events are ignored."""
        if isinstance(event, MessageStart):
            await self._message_start(event.message)
        elif isinstance(event, MessageUpdate):
            await self._message_update(event)
        elif isinstance(event, MessageEnd):
            await self._message_end(event.message)
        elif isinstance(event, ToolExecutionStart):
            self._set_status(event.tool_call_id, "running", only_if_unknown=True)
        elif isinstance(event, ToolExecutionEnd):
            self._set_status(event.tool_call_id, "error" if event.is_error else "ok")

    async def _message_start(self, message: Message) -> None:
        role = message.get("role")
        self._started = message
        if role == "assistant":
            if self._current is not None:
                await self._current.stop_stream()
            block = AssistantBlock()
            block.message_index = len(self._messages)
            self._current = block
            await self.mount(block)
        elif is_displayed(message):
            if role == "user":
                self.anchor()
            await self.mount_all(self._blocks_for(message, len(self._messages)))

    async def _message_update(self, event: MessageUpdate) -> None:
        block = self._current
        if block is None:
            await self._message_start(event.message)
            block = self._current
            assert block is not None
        if event.kind == "text":
            await block.append_text(event.delta, event.content_index)
        elif event.kind == "thinking":
            await block.append_thinking(event.delta)

    async def _message_end(self, message: Message) -> None:
        role = message.get("role")
        started, self._started = self._started, None
        if role == "toolResult":
            status: CallStatus = "error" if message.get("isError") else "ok"
            self._set_status(str(message.get("toolCallId")), status)
            return
        if role == "assistant":
            block = self._current
            self._current = None
            index = len(self._messages)
            if block is None:
                await self.mount_all(self._blocks_for(message, index))
            else:
                await block.finish(message, self._statuses)
                self._own_calls(block, message)
                extra = self._ending_blocks(message)
                for widget in extra:
                    if isinstance(widget, ChatBlock):
                        widget.message_index = index
                if block.is_empty:
                    await block.remove()
                if extra:
                    await self.mount_all(extra)
            self._messages.append(message)
        elif is_displayed(message):
            if started is not message:
                await self.mount_all(self._blocks_for(message, len(self._messages)))
            self._messages.append(message)
        await self._trim()

    def _set_status(
        self, call_id: str, status: CallStatus, *, only_if_unknown: bool = False
    ) -> None:
        if only_if_unknown and call_id in self._statuses:
            return
        self._statuses[call_id] = status
        owner = self._owners.get(call_id)
        if owner is not None:
            owner.set_call_status(call_id, status)

    async def _trim(self) -> None:
        """Unmount the oldest blocks once live messages push the count well past the bound."""
        shown = len(self._messages) - self._shown_from
        if shown <= self._limit + max(10, self._limit // 4):
            return
        self._shown_from = len(self._messages) - self._limit
        old = [
            child
            for child in self.blocks()
            if isinstance(child, ChatBlock) and 0 <= child.message_index < self._shown_from
        ]
        stale = {id(block) for block in old}
        self._owners = {
            call_id: owner for call_id, owner in self._owners.items() if id(owner) not in stale
        }
        with self.app.batch_update():
            await self.remove_children(old)
            self._marker.set_count(self._shown_from)
