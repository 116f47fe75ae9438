"""ChatView: loading a path as blocks, streaming a run from agent events, the widget bound."""

from __future__ import annotations

import time
from typing import Any

from textual.app import App, ComposeResult

from pi_tui.agent.events import (
    AgentEnd,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnEnd,
    TurnStart,
)
from pi_tui.ui.chat import (
    AssistantBlock,
    BashBlock,
    ChatView,
    CustomBlock,
    EarlierMarker,
    ErrorBlock,
    NoteBlock,
    StaticMarkdown,
    SummaryBlock,
    ThinkingSection,
    UserBlock,
)
from tests.factories import tool_call, tool_result

Message = dict[str, Any]


def user(text: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(
    text: str = "",
    *,
    thinking: str = "",
    calls: list[Message] | None = None,
    stop_reason: str = "stop",
    error: str | None = None,
) -> Message:
    content: list[Message] = []
    if thinking:
        content.append({"type": "thinking", "thinking": thinking})
    if text:
        content.append({"type": "text", "text": text})
    content.extend(calls or [])
    message: Message = {
        "role": "assistant",
        "content": content,
        "provider": "p",
        "model": "m",
        "usage": {"input": 1, "output": 1, "totalTokens": 2},
        "stopReason": stop_reason,
        "timestamp": 2,
    }
    if error is not None:
        message["errorMessage"] = error
    return message


class ChatApp(App[None]):
    """A host for one ChatView."""

    def __init__(self, max_messages: int = 200) -> None:
        super().__init__()
        self.max_messages = max_messages

    def compose(self) -> ComposeResult:
        yield ChatView(max_messages=self.max_messages)


PATH: list[Message] = [
    {"role": "compactionSummary", "summary": "Earlier we set things up.", "tokensBefore": 51234},
    user("read a.py please"),
    assistant(
        "Reading it.",
        thinking="The user wants a.py.",
        calls=[tool_call("read", "c1", path="a.py"), tool_call("bash", "c2", command="false")],
        stop_reason="toolUse",
    ),
    tool_result("c1", "read", "print('hi')\n"),
    tool_result("c2", "bash", "exit 1", is_error=True),
    assistant("It prints **hi**."),
    {"role": "branchSummary", "summary": "Tried another approach.", "fromId": "abc"},
    {"role": "bashExecution", "command": "ls", "output": "a.py\nb.py\n", "exitCode": 0},
    {"role": "custom", "customType": "note", "content": "shown", "display": True},
    {"role": "custom", "customType": "hidden", "content": "not shown", "display": False},
    user("again"),
    assistant("", stop_reason="error", error="rate limit exceeded"),
    user("and again"),
    assistant("partial answ", stop_reason="aborted", error="Operation aborted"),
]


async def test_load_renders_blocks_in_order() -> None:
    app = ChatApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        await chat.load(PATH)
        await pilot.pause()
        kinds = [type(block) for block in chat.blocks()]
        assert kinds == [
            SummaryBlock,
            UserBlock,
            AssistantBlock,
            AssistantBlock,
            SummaryBlock,
            BashBlock,
            CustomBlock,
            UserBlock,
            ErrorBlock,
            UserBlock,
            AssistantBlock,
            NoteBlock,
        ]
        blocks = chat.blocks()
        compaction, first_user, first_reply = blocks[0], blocks[1], blocks[2]
        assert isinstance(compaction, SummaryBlock)
        assert compaction.collapsed
        assert compaction.summary_title == "Compacted context (51,234 tokens before)"
        assert isinstance(blocks[4], SummaryBlock)
        assert blocks[4].summary_title == "Branch summary"
        assert isinstance(first_user, UserBlock)
        assert first_user.text == "read a.py please"

        assert isinstance(first_reply, AssistantBlock)
        assert first_reply.markdown.source == "Reading it."
        thinking = first_reply.query_one(ThinkingSection)
        assert thinking.collapsed
        assert thinking.title == "Thinking"
        assert thinking.text == "The user wants a.py."
        lines = first_reply.calls.plain.splitlines()
        assert lines == ["▸ [read: a.py] ✓", "▸ [bash: false] ✗"]

        error = blocks[8]
        assert isinstance(error, ErrorBlock)
        assert "rate limit exceeded" in str(error.content)
        assert error.has_class("block")

        aborted_reply, note = blocks[10], blocks[11]
        assert isinstance(aborted_reply, AssistantBlock)
        assert aborted_reply.markdown.source == "partial answ"
        assert isinstance(note, NoteBlock)
        assert note.note == "Aborted"

        assert chat.last_assistant_text() == "partial answ"
        assert not app.query_one(EarlierMarker).display


async def test_summary_expands() -> None:
    app = ChatApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        await chat.load(PATH[:2])
        await pilot.pause()
        summary = chat.blocks()[0]
        assert isinstance(summary, SummaryBlock)
        await pilot.click(summary.query_one("CollapsibleTitle"))
        await pilot.pause()
        assert not summary.collapsed
        body = summary.query_one(StaticMarkdown)
        assert body.source == "Earlier we set things up."
        assert body.region.height > 0


async def test_streaming_a_run() -> None:
    app = ChatApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        await chat.load([user("earlier"), assistant("earlier answer")])

        prompt = user("explain a.py")
        pieces = ["# Title\n\n", "Some **bold", "** text.\n\n", "```python\n", "x = 1\n", "```\n"]
        streamed = "".join(pieces)
        reply = assistant(streamed, calls=[tool_call("read", "c9", path="a.py")])
        reply["stopReason"] = "toolUse"
        partial = assistant("")

        events = [AgentStart(), TurnStart(), MessageStart(prompt), MessageEnd(prompt)]
        events.append(MessageStart(partial))
        events.append(MessageUpdate(partial, "thinking", 0, "Let me "))
        events.append(MessageUpdate(partial, "thinking", 0, "think."))
        events.extend(MessageUpdate(partial, "text", 1, piece) for piece in pieces)
        events.append(MessageUpdate(partial, "toolcall", 2, '{"path":'))
        for event in events:
            await chat.handle_event(event)

        block = chat.current
        assert isinstance(block, AssistantBlock)
        assert block.streaming
        await chat.handle_event(MessageEnd(reply))
        assert chat.current is None
        assert not block.streaming
        await pilot.pause()
        assert block.markdown.source == streamed
        assert block.query_one(ThinkingSection).text == "Let me think."
        assert block.calls.plain == "▸ [read: a.py] …"

        await chat.handle_event(ToolExecutionStart("c9", "read", {"path": "a.py"}))
        assert block.calls.plain == "▸ [read: a.py] …"
        read_result = tool_result("c9", "read", "x = 1\n")
        await chat.handle_event(ToolExecutionEnd("c9", "read", read_result, False, 12))
        assert block.calls.plain == "▸ [read: a.py] ✓"
        await chat.handle_event(MessageStart(read_result))
        await chat.handle_event(MessageEnd(read_result))
        await chat.handle_event(TurnEnd(reply, [read_result]))
        await chat.handle_event(AgentEnd([prompt, reply, read_result]))
        await pilot.pause()

        kinds = [type(b) for b in chat.blocks()]
        assert kinds == [UserBlock, AssistantBlock, UserBlock, AssistantBlock]
        assert chat.last_assistant_text() == streamed


async def test_streamed_error_and_abort() -> None:
    app = ChatApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        await chat.load([])
        failed = assistant("", stop_reason="error", error="boom: provider down")
        await chat.handle_event(MessageStart(assistant("")))
        await chat.handle_event(MessageEnd(failed))

        partial = assistant("")
        await chat.handle_event(MessageStart(partial))
        await chat.handle_event(MessageUpdate(partial, "text", 0, "half a "))
        await chat.handle_event(MessageUpdate(partial, "text", 0, "sentence"))
        aborted = assistant("half a sentence", stop_reason="aborted", error="Operation aborted")
        await chat.handle_event(MessageEnd(aborted))
        await pilot.pause()

        blocks = chat.blocks()
        assert [type(b) for b in blocks] == [ErrorBlock, AssistantBlock, NoteBlock]
        error = blocks[0]
        assert isinstance(error, ErrorBlock)
        assert error.error_message == "boom: provider down"
        reply = blocks[1]
        assert isinstance(reply, AssistantBlock)
        assert reply.markdown.source == "half a sentence"


async def test_user_scrolled_up_is_not_pulled_down() -> None:
    app = ChatApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        history: list[Message] = []
        for index in range(30):
            history += [user(f"question {index}"), assistant(f"answer {index}")]
        await chat.load(history)
        await pilot.pause()
        assert chat.is_vertical_scroll_end
        chat.focus()
        await pilot.press("home")
        await pilot.pause()
        assert chat.scroll_y == 0

        partial = assistant("")
        await chat.handle_event(MessageStart(partial))
        for _ in range(10):
            await chat.handle_event(MessageUpdate(partial, "text", 0, "more text\n\n"))
        await chat.handle_event(MessageEnd(assistant("more text\n\n" * 10)))
        await pilot.pause()
        assert chat.scroll_y == 0

        await chat.handle_event(MessageStart(user("next")))
        await pilot.pause()
        assert chat.is_vertical_scroll_end


async def test_two_thousand_messages_are_bounded() -> None:
    app = ChatApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        history: list[Message] = []
        for index in range(1000):
            history += [user(f"question {index}"), assistant(f"answer {index}")]
        started = time.perf_counter()
        await chat.load(history)
        await pilot.pause()
        elapsed = time.perf_counter() - started
        assert len(chat.blocks()) == 200
        assert chat.hidden_count == 1800
        marker = app.query_one(EarlierMarker)
        assert marker.display
        assert "1,800 earlier messages" in str(marker.content)
        assert elapsed < 30  # generous: the bound, not the clock, is what this checks
        assert chat.last_assistant_text() == "answer 999"

        chat.focus()
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert len(chat.blocks()) == 400
        assert chat.hidden_count == 1600
        first = chat.blocks()[0]
        assert isinstance(first, UserBlock)
        assert first.text == "question 800"


async def test_live_messages_are_trimmed_to_the_bound() -> None:
    app = ChatApp(max_messages=20)
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        await chat.load([user("first"), assistant("one")])
        for index in range(30):
            prompt = user(f"live {index}")
            await chat.handle_event(MessageStart(prompt))
            await chat.handle_event(MessageEnd(prompt))
            reply = assistant(f"reply {index}")
            await chat.handle_event(MessageStart(assistant("")))
            await chat.handle_event(MessageUpdate(reply, "text", 0, f"reply {index}"))
            await chat.handle_event(MessageEnd(reply))
        await pilot.pause()
        assert len(chat.messages) == 62
        assert len(chat.blocks()) <= 20 + 10
        assert chat.hidden_count + len(chat.blocks()) == 62
        last = chat.blocks()[-1]
        assert isinstance(last, AssistantBlock)
        assert last.markdown.source == "reply 29"


def test_rendered_once_replays_the_same_lines_per_width() -> None:
    from rich.console import Console
    from rich.markdown import Markdown as RichMarkdown

    from pi_tui.ui.chat import RenderedOnce

    class Counting(RichMarkdown):
        draws = 0

        def __rich_console__(self, console: Any, options: Any) -> Any:
            Counting.draws += 1
            yield from super().__rich_console__(console, options)

    source = "# Title\n\nSome *text* and code:\n\n```python\nprint('hi')\n```\n"
    console = Console(width=60, record=True, color_system=None)
    wrapped = RenderedOnce(Counting(source))
    first = console.render_lines(wrapped, console.options.update_width(40))
    again = console.render_lines(wrapped, console.options.update_width(40))
    assert Counting.draws == 1
    assert (
        first
        == again
        == console.render_lines(RichMarkdown(source), console.options.update_width(40))
    )
    console.render_lines(wrapped, console.options.update_width(30))
    assert Counting.draws == 2
