"""The pi-tui application: chat, tool trace and tree navigator around one AgentSession.

The UI never writes the session file itself: it calls AgentSession and renders the events
the agent emits. Agent events arrive synchronously from the loop (which runs in a worker on
this app's event loop); they are queued and rendered in order by one consumer task, so a slow
Markdown render never reorders or drops anything.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen

from ..agent.compaction import CompactionRefused
from ..agent.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    CompactionEnd,
    CompactionStart,
    MessageEnd,
    MessageUpdate,
    RetryScheduled,
    ToolExecutionEnd,
    ToolExecutionStart,
)
from ..agent.offline import MODEL_NAME
from ..agent.provider import ModelSpec, litellm_loaded, litellm_module
from ..agent.summarize import SummarizationAborted, SummarizationError
from ..agent_session import AgentSession
from ..config import KEYED_DEFAULTS
from ..session import SessionError, SessionManager, list_sessions
from ..session.catalog import age
from ..session.context import compaction_summary_of, message_of
from ..session.entries import THINKING_LEVELS
from ..session.records import Entry
from ..settings import NavigateChoice
from .chat import ChatView
from .commands import COMMANDS, parse_command
from .key_hints import KeyHints
from .navigator import SessionNavigator
from .prompt import Prompt
from .screens.branch_summary import CUSTOM, SUMMARIZE, BranchSummaryScreen
from .screens.help import HelpScreen
from .screens.pickers import Choice, PickerScreen, TextInputScreen
from .status import StatusBar, StatusInfo
from .tool_trace import ToolTrace
from .usage import UsageTotals

Message = dict[str, Any]
SessionOpener = Callable[[Path], AgentSession]

STREAM_BATCH_SECONDS = 1 / 10
"""How long streamed deltas gather before the chat renders them.

Each render of a growing reply costs a layout of the chat; ten a second look smooth, and the
chat then keeps up with about 350 words/s instead of 135 when every delta is rendered."""

SAVE_TITLE = "\x1b[22;2t"
"""xterm's title stack: keep the terminal's title to give it back on exit."""
RESTORE_TITLE = "\x1b[23;2t"

CHAT_MESSAGES = 40
"""Messages of the path mounted in the chat at once (ctrl+home shows earlier ones)."""


def display_messages(path: Iterable[Entry]) -> list[Message]:
    """What the chat shows for a path: every message, with compactions where they happened."""
    shown: list[Message] = []
    for entry in path:
        if entry.type == "compaction":
            shown.append(compaction_summary_of(entry))
            continue
        message = message_of(entry)
        if message is not None:
            shown.append(message)
    return shown


class PiTuiApp(App[None]):
    """Three panes over one session, a prompt and a status bar."""

    CSS_PATH = "app.tcss"
    TITLE = "pi-tui"
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        Binding("ctrl+t", "focus_tree", "Tree", priority=True),
        Binding("escape", "escape", "Abort / back", show=False),
        Binding("alt+enter", "follow_up", "Follow-up", show=False, priority=True),
        Binding("f1", "help", "Help"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        agent: AgentSession,
        *,
        open_session: SessionOpener | None = None,
        initial_prompt: str | None = None,
        start_with: str | None = None,
        on_navigate: NavigateChoice = "ask",
    ) -> None:
        super().__init__()
        self.agent = agent
        self.on_navigate: NavigateChoice = on_navigate
        """Whether leaving a branch asks for a summary, always writes one, or never does."""
        self._held_inputs: list[str] = []
        """Prompts typed while a summary was being written, sent when it is done."""
        self._prompt_in_flight = False
        self.open_session = open_session
        self.initial_prompt = initial_prompt
        self.start_with = start_with
        self._events: asyncio.Queue[AgentEvent] = asyncio.Queue()
        self._unrendered = 0
        """Events received but not rendered yet (queued, or held while a batch gathers)."""
        self._unsubscribe: Callable[[], None] | None = None
        self._activity = ""
        self.terminal_title = "pi-tui"
        self._usage = UsageTotals()
        """What the terminal's title bar shows (the session name once there is one)."""

    # --- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield ChatView(id="chat", max_messages=CHAT_MESSAGES)
            with Vertical(id="side"):
                yield ToolTrace(id="trace")
                yield SessionNavigator(self.agent.manager, id="navigator", defer_build=True)
        yield Prompt(COMMANDS, id="prompt")
        yield StatusBar(id="status")
        yield KeyHints()

    @property
    def chat(self) -> ChatView:
        """The conversation pane."""
        return self.query_one(ChatView)

    @property
    def trace(self) -> ToolTrace:
        """The tool-call pane."""
        return self.query_one(ToolTrace)

    @property
    def navigator(self) -> SessionNavigator:
        """The tree pane."""
        return self.query_one(SessionNavigator)

    @property
    def prompt(self) -> Prompt:
        """The prompt."""
        return self.query_one(Prompt)

    async def on_mount(self) -> None:
        self._write_terminal(SAVE_TITLE)
        self.chat.border_title = "Chat"
        self.trace.border_title = "Tool calls"
        self.navigator.border_title = "Session tree"
        self._attach(self.agent)
        self._consume_events()
        # The frame, the prompt and the status bar paint first; the tree and the chat's
        # history fill in right after.
        self.update_status()
        self.prompt.focus_input()
        self.call_after_refresh(self.show_path)
        if self.start_with == "resume":
            self.action_resume()
        if self.initial_prompt:
            self.send(self.initial_prompt)

    def on_ready(self) -> None:
        # The first frame is on screen: now pay for LiteLLM's import, off the event loop.
        if not litellm_loaded():
            self._warm_up()

    @work(group="warm-up", exit_on_error=False)
    async def _warm_up(self) -> None:
        await asyncio.to_thread(litellm_module)
        self.update_status()  # the context window is known now: show the context use

    def _attach(self, agent: AgentSession) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self.agent = agent
        self._unsubscribe = agent.subscribe(self._receive)
        self._usage = UsageTotals()
        self.show_session_name()

    def show_session_name(self) -> None:
        """Put the session's name in the header and the terminal's title."""
        name = self.agent.manager.session_name or ""
        self.sub_title = name
        self.terminal_title = f"pi-tui: {name}" if name else "pi-tui"
        printable = "".join(ch for ch in self.terminal_title if ch.isprintable())
        self._write_terminal(f"\x1b]2;{printable}\x07")

    def _write_terminal(self, sequence: str) -> None:
        # Textual has no title API; writing through the driver keeps it in order with frames.
        if self._driver is not None:
            self._driver.write(sequence)

    async def on_unmount(self) -> None:
        self._write_terminal(RESTORE_TITLE)
        self.agent.close()

    # --- rendering the session --------------------------------------------------------------

    async def show_path(self) -> None:
        """Show the active path in chat and trace, the tree, and the status bar."""
        self.navigator.refresh_tree()
        messages = display_messages(self.agent.manager.path())
        await _maybe_await(self.chat.load(messages))
        await _maybe_await(self.trace.load(messages))
        self.update_status()

    def update_status(self) -> None:
        """Recompute the status bar from the active path."""
        manager = self.agent.manager
        totals = self._usage.at_leaf(manager)
        percent = None
        if litellm_loaded():
            from ..agent.provider import model_info

            window = model_info(self.agent.model).context_window
            # No reply since the latest compaction: estimate what the summary and the kept
            # messages weigh rather than show the count from before.
            tokens = totals.context_tokens
            if tokens is None:
                tokens = self.agent.estimated_context_tokens()
            percent = 100 * tokens / window if window else None
        model = self.agent.model
        self.query_one(StatusBar).update_info(
            StatusInfo(
                session_name=manager.session_name or "",
                model=model.name,
                thinking=self.agent.thinking,
                tokens_in=totals.tokens_in,
                tokens_out=totals.tokens_out,
                cost=totals.cost,
                context_percent=percent,
                activity=self._activity,
            )
        )

    def set_activity(self, activity: str) -> None:
        """Show (or clear, with "") what the agent is doing."""
        self._activity = activity
        self.update_status()

    @work(group="events", exclusive=True)
    async def _consume_events(self) -> None:
        while True:
            batch = [await self._events.get()]
            if isinstance(batch[0], MessageUpdate):
                # Let a burst of deltas gather: one bigger append costs one layout, not many.
                await asyncio.sleep(STREAM_BATCH_SECONDS)
            while not self._events.empty():
                batch.append(self._events.get_nowait())
            for event in coalesce_updates(batch):
                await _maybe_await(self.chat.handle_event(event))
                await _maybe_await(self.trace.handle_event(event))
                if isinstance(event, CompactionEnd) and event.entry_id is not None:
                    # Reloaded here, in event order, so a retried turn streams into the new
                    # chat rather than into one about to be replaced.
                    await self.show_path()
                self._after_event(event)
            self._unrendered -= len(batch)

    def _receive(self, event: AgentEvent) -> None:
        self._unrendered += 1
        self._events.put_nowait(event)

    @property
    def idle(self) -> bool:
        """No run in progress and every event of the last one on screen."""
        return not self.agent.is_running and self._unrendered == 0

    async def wait_until_idle(self, timeout: float = 30.0) -> None:
        """Wait for :attr:`idle` (tests, benchmarks and the screenshot script use this)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not self.idle and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)

    def _after_event(self, event: AgentEvent) -> None:
        if isinstance(event, AgentStart):
            self.set_activity("working")
        elif isinstance(event, ToolExecutionStart):
            self.set_activity(f"running {event.tool_name}")
        elif isinstance(event, ToolExecutionEnd):
            self.set_activity("working")
        elif isinstance(event, RetryScheduled):
            self.notify(
                f"{event.error_message}\nretrying in {event.delay_s:.0f}s "
                f"({event.attempt}/{event.max_attempts})",
                severity="warning",
            )
        elif isinstance(event, MessageEnd):
            self.navigator.refresh_tree()
            self.update_status()
        elif isinstance(event, AgentEnd):
            self.set_activity("")
        elif isinstance(event, CompactionStart):
            self.set_activity(f"compacting context ({event.reason}), Esc cancels")
        elif isinstance(event, CompactionEnd):
            self._compaction_ended(event)

    def _compaction_ended(self, event: CompactionEnd) -> None:
        self.set_activity("working" if event.will_retry else "")
        if event.entry_id is not None:
            self.notify(
                f"Context compacted: {event.tokens_before or 0:,} tokens summarized; the "
                "originals stay in the session tree."
            )
        elif event.aborted:
            self.notify("Compaction cancelled.")
        elif event.error_message:
            self.notify(event.error_message, title="Compaction failed", severity="error")
        if not event.will_retry:
            self.call_later(self._send_held_inputs)

    # --- sending ----------------------------------------------------------------------------

    @on(Prompt.Sent)
    def _prompt_sent(self, event: Prompt.Sent) -> None:
        self.send(event.text)

    def send(self, text: str) -> None:
        """Run a slash command, steer the running agent, or start a run."""
        command = parse_command(text)
        if command is not None:
            self.run_command(*command)
            return
        if self.agent.is_running:
            self.agent.steer(text)
            self.notify("Queued: delivered after the current tool calls.")
            return
        if self._prompt_in_flight:
            self.agent.follow_up(text)
            self.notify("Queued: delivered when the agent finishes.")
            return
        if self.agent.is_compacting or self._navigating:
            self._held_inputs.append(text)
            self.notify("Queued: sent when the summary is written.")
            return
        self._run_prompt(text)

    def _send_held_inputs(self) -> None:
        """Send what was typed while a summary was written: the first as a prompt, the rest
        queued after it."""
        held, self._held_inputs = self._held_inputs, []
        if not held or self.agent.is_compacting:
            self._held_inputs = held + self._held_inputs
            return
        if self.agent.is_running or self._prompt_in_flight:
            for text in held:
                self.agent.follow_up(text)
            return
        for text in held[1:]:
            self.agent.follow_up(text)
        self._run_prompt(held[0])

    @work(group="agent", exclusive=True, exit_on_error=False)
    async def _run_prompt(self, text: str) -> None:
        self._prompt_in_flight = True
        try:
            if not litellm_loaded():
                self.set_activity("loading model support…")
                await asyncio.to_thread(litellm_module)
            self.set_activity("working")
            await self.agent.prompt(text)
        finally:
            self._prompt_in_flight = False
            self.set_activity("")

    def action_follow_up(self) -> None:
        """Queue the prompt's text for after the run (or send it now when idle)."""
        text = self.prompt.text.strip()
        if not text:
            return
        self.prompt.set_text("")
        if self.agent.is_running:
            self.agent.follow_up(text)
            self.notify("Queued: delivered when the agent finishes.")
        else:
            self.send(text)

    def action_escape(self) -> None:
        """Abort a run or a summary being written; otherwise go back to the prompt."""
        if self.agent.is_compacting:
            self.agent.abort()
            return
        if self.agent.is_running:
            queued = self.agent.abort()
            if queued and not self.prompt.text.strip():
                self.prompt.set_text("\n\n".join(queued))
            self.notify("Aborted.")
            return
        self.prompt.focus_input()

    # --- the tree ---------------------------------------------------------------------------

    def action_focus_tree(self) -> None:
        """Focus the navigator with its cursor on the current leaf."""
        self.navigator.refresh_tree(keep_cursor=False)
        self.navigator.focus()

    def _refuse_while_busy(self) -> bool:
        if self.agent.is_running or self.agent.is_compacting or self._navigating:
            self.notify("The agent is busy: press Esc to abort it first.", severity="warning")
            return True
        return False

    @on(SessionNavigator.EntrySelected)
    def _entry_selected(self, event: SessionNavigator.EntrySelected) -> None:
        if self._refuse_while_busy():
            return
        if event.entry_id == self.agent.manager.leaf_id:
            self.notify("Already at this point.")
            self.prompt.focus_input()
            return
        self.leave_branch(event.entry_id, edit=False)

    @on(SessionNavigator.EditRequested)
    def _edit_requested(self, event: SessionNavigator.EditRequested) -> None:
        if self._refuse_while_busy():
            return
        entry = self.agent.manager.get_entry(event.entry_id)
        if entry is None or entry.role != "user":
            self.bell()
            return
        self.leave_branch(event.entry_id, edit=True)

    @property
    def _navigating(self) -> bool:
        return any(worker.group == "navigate" for worker in self.workers if worker.is_running)

    async def _summary_wanted(self, abandoned: int) -> tuple[bool, str | None] | None:
        """Ask whether to summarize the branch left behind: (summarize, focus), or None when
        the user cancelled the move."""
        if abandoned == 0 or self.on_navigate == "skip":
            return False, None
        if self.on_navigate == "summarize":
            return True, None
        while True:
            answer = await self.push_screen_wait(BranchSummaryScreen(abandoned))
            if answer is None:
                return None
            if answer != CUSTOM:
                return answer == SUMMARIZE, None
            focus = await self.push_screen_wait(
                TextInputScreen(
                    "What should the summary focus on?", placeholder="e.g. the failing test"
                )
            )
            if focus is not None:
                return True, focus.strip() or None

    @work(group="navigate", exclusive=True, exit_on_error=False)
    async def leave_branch(self, entry_id: str, edit: bool) -> None:
        """Move the leaf to ``entry_id`` (``edit``: to its parent, with its text in the
        prompt), summarizing the branch left behind if the user wants that."""
        wanted = await self._summary_wanted(len(self.agent.abandoned_entries(entry_id)))
        if wanted is None:
            self.navigator.focus()
            return
        summarize, focus = wanted
        if summarize:
            self.set_activity("summarizing the branch left behind, Esc cancels")
            try:
                navigation = await self.agent.navigate_with_summary(entry_id, focus, exact=not edit)
            except SummarizationAborted:
                self.notify("Branch summarization cancelled; nothing changed.")
                self.navigator.focus()
                return
            except SummarizationError as exc:
                self.notify(str(exc), title="Branch summary failed", severity="error")
                self.navigator.focus()
                return
            finally:
                self.set_activity("")
            text = navigation.editor_text
        else:
            text = self.agent.navigate(entry_id, exact=not edit)
        await self.show_path()
        if edit:
            if self.prompt.text.strip():
                self.notify("The prompt is not empty, so the old text was not put there.")
            else:
                self.prompt.set_text(text or "")
        self.prompt.focus_input()
        self.call_later(self._send_held_inputs)

    @on(SessionNavigator.LabelRequested)
    def _label_requested(self, event: SessionNavigator.LabelRequested) -> None:
        current = self.agent.manager.get_label(event.entry_id) or ""

        def save(label: str | None) -> None:
            if label is None:
                return
            self.agent.label(event.entry_id, label or None)
            self.navigator.refresh_tree()

        self.push_screen(
            TextInputScreen(f"Label for {event.entry_id} (empty clears)", current), save
        )

    @on(SessionNavigator.Dismissed)
    def _navigator_dismissed(self) -> None:
        self.prompt.focus_input()

    # --- slash commands ---------------------------------------------------------------------

    def run_command(self, name: str, argument: str) -> None:
        """Act on ``/name argument``."""
        handler = getattr(self, f"command_{name}", None)
        if handler is None:
            self.notify(f"Unknown command /{name}. /help lists them.", severity="error")
            return
        handler(argument)

    def command_tree(self, argument: str) -> None:
        """``/tree``."""
        self.action_focus_tree()

    def command_compact(self, argument: str) -> None:
        """``/compact [FOCUS]``: aborts a running turn, then summarizes older turns."""
        if self.agent.is_compacting:
            self.notify("A summary is already being written.", severity="warning")
            return
        self._compact(argument or None)

    @work(group="compact", exclusive=True, exit_on_error=False)
    async def _compact(self, focus: str | None) -> None:
        if not litellm_loaded():
            self.set_activity("loading model support…")
            await asyncio.to_thread(litellm_module)
        try:
            await self.agent.compact(focus)
        except CompactionRefused as exc:
            self.set_activity("")
            self.notify(str(exc), severity="warning")
            self.call_later(self._send_held_inputs)
        except (SummarizationError, SummarizationAborted):
            pass  # the compaction_end event has told the user

    def command_rename(self, argument: str) -> None:
        """``/rename NAME``."""
        if not argument:
            name = self.agent.manager.session_name
            self.notify(f"Session name: {name}" if name else "Usage: /rename NAME")
            return
        self.agent.rename(argument)
        self.show_session_name()
        self.navigator.refresh_tree()
        self.update_status()
        self.notify(f"Session renamed: {self.sub_title}")

    def command_label(self, argument: str) -> None:
        """``/label TEXT``, ``/label`` (clear), ``/label ID TEXT``."""
        manager = self.agent.manager
        first, _, rest = argument.partition(" ")
        target = manager.leaf_id
        text = argument
        if first and manager.get_entry(first) is not None:
            target, text = first, rest.strip()
        if target is None:
            self.notify("Nothing to label yet.", severity="warning")
            return
        self.agent.label(target, text or None)
        self.navigator.refresh_tree()
        self.notify(f"Label on {target}: {text}" if text else f"Label cleared on {target}")

    def command_model(self, argument: str) -> None:
        """``/model [NAME]``."""
        if argument:
            self._set_model(argument)
            return
        self._pick_model()

    def _set_model(self, name: str) -> None:
        current = self.agent.model
        self.agent.set_model(ModelSpec(name, api_base=current.api_base, api_key=current.api_key))
        self.navigator.refresh_tree()
        self.update_status()
        self.notify(f"Model: {name}")

    @work(group="picker", exclusive=True)
    async def _pick_model(self) -> None:
        names = [self.agent.model.name, MODEL_NAME, *(model for _, model in KEYED_DEFAULTS)]
        if not litellm_loaded():
            self.set_activity("loading model list…")
            await asyncio.to_thread(litellm_module)
            self.set_activity("")
        litellm = litellm_module()
        names += sorted(str(name) for name in litellm.model_cost if name != "sample_spec")
        unique = list(dict.fromkeys(names))
        choices = [Choice(name, name) for name in unique]
        picked = await self.push_screen_wait(
            PickerScreen("Model", choices, selected=self.agent.model.name)
        )
        if picked:
            self._set_model(picked)

    def command_thinking(self, argument: str) -> None:
        """``/thinking [LEVEL]``."""
        if argument:
            try:
                self.agent.set_thinking(argument)
            except ValueError as exc:
                self.notify(str(exc), severity="error")
                return
            self.navigator.refresh_tree()
            self.update_status()
            return

        def chosen(level: str | None) -> None:
            if level:
                self.command_thinking(level)

        choices = [Choice(level, level) for level in THINKING_LEVELS]
        self.push_screen(
            PickerScreen("Thinking level", choices, selected=self.agent.thinking), chosen
        )

    def command_new(self, argument: str) -> None:
        """``/new``."""
        if self._refuse_while_busy():
            return
        self._switch(self.agent.new())
        self.notify("New session.")

    def command_resume(self, argument: str) -> None:
        """``/resume``."""
        self.action_resume()

    def action_resume(self) -> None:
        """Open the session picker."""
        if self._refuse_while_busy():
            return
        manager = self.agent.manager
        folder = manager.session_file.parent if manager.session_file else None
        if folder is None or self.open_session is None:
            self.notify("This session is not stored, so there is nothing to resume.")
            return

        def choices() -> list[Choice]:
            return [
                Choice(
                    str(info.path),
                    f"{' '.join(info.title.split())[:70]:<72} {info.message_count:>4} msgs"
                    f"  {age(info.modified_ms):>4}  {info.id[:8]}",
                    info.id,
                )
                for info in list_sessions(folder)
            ]

        def rename(path: str, name: str) -> list[Choice]:
            if manager.session_file is not None and Path(path) == manager.session_file:
                self.command_rename(name)  # the live session: through its own manager
            else:
                try:
                    with SessionManager.open(Path(path)) as other:
                        other.append_session_info(name)
                except SessionError as exc:
                    self.notify(str(exc), severity="error")
            return choices()

        def delete(path: str) -> list[Choice]:
            if manager.session_file is not None and Path(path) == manager.session_file:
                self.notify("The open session cannot be deleted.", severity="warning")
            else:
                Path(path).unlink(missing_ok=True)
                self.notify("Session deleted.")
            return choices()

        def open_chosen(path: str | None) -> None:
            if path and self.open_session is not None:
                if manager.session_file is not None and Path(path) == manager.session_file:
                    return
                try:
                    agent = self.open_session(Path(path))
                except SessionError as exc:
                    self.notify(str(exc), severity="error")
                    return
                self._switch(agent)
                self.notify("Resumed session.")

        current = str(manager.session_file) if manager.session_file else None
        self.push_screen(
            PickerScreen(
                "Resume a session",
                choices(),
                selected=current,
                hint="Enter open  ·  ctrl+r rename  ·  ctrl+d delete  ·  Esc cancel",
                rename=rename,
                delete=delete,
            ),
            open_chosen,
        )

    def command_fork(self, argument: str) -> None:
        """``/fork``: pick an earlier user message; a new file holds the path before it."""
        if self._refuse_while_busy():
            return
        messages = self.agent.manager.user_messages()
        if not messages:
            self.notify("No messages to fork from.")
            return
        choices = [
            Choice(entry.id, " ".join(text.split())[:100], entry.id) for entry, text in messages
        ]

        def fork_at(entry_id: str | None) -> None:
            if not entry_id:
                return
            forked, text = self.agent.fork(entry_id)
            self._switch(forked)
            if text and not self.prompt.text.strip():
                self.prompt.set_text(text)
            self.notify("Forked to a new session.")

        self.push_screen(
            PickerScreen("Fork from a user message", choices, selected=messages[-1][0].id),
            fork_at,
        )

    def _switch(self, agent: AgentSession) -> None:
        old = self.agent
        self._attach(agent)
        if old is not agent:
            old.close()
        self.navigator.set_manager(agent.manager)
        self.call_later(self.show_path)

    def command_session(self, argument: str) -> None:
        """``/session``."""
        manager = self.agent.manager
        counts: dict[str, int] = {}
        calls = 0
        for entry in manager.entries():
            role = entry.role
            if role:
                counts[role] = counts.get(role, 0) + 1
            if role == "assistant" and entry.message:
                calls += sum(
                    1 for b in entry.message.get("content") or [] if b.get("type") == "toolCall"
                )
        status = self.query_one(StatusBar).info
        lines = [
            f"file: {manager.session_file or '(not stored)'}",
            f"id: {manager.session_id}",
            f"entries: {len(manager.entries())}, on this path: {len(manager.path())}",
            "messages: " + ", ".join(f"{n} {role}" for role, n in sorted(counts.items())),
            f"tool calls: {calls}",
            f"tokens on this path: {status.tokens_in} in, {status.tokens_out} out; "
            f"cost ${status.cost:.4f}",
        ]
        self.notify("\n".join(lines), title="Session", timeout=12)

    def command_copy(self, argument: str) -> None:
        """``/copy``."""
        text = self.chat.last_assistant_text()
        if not text:
            self.notify("No answer to copy yet.")
            return
        self.copy_to_clipboard(text)
        self.notify("Copied the last answer.")

    def command_hotkeys(self, argument: str) -> None:
        """``/hotkeys``."""
        self.action_help()

    def command_help(self, argument: str) -> None:
        """``/help``."""
        self.action_help()

    def command_quit(self, argument: str) -> None:
        """``/quit``."""
        self.exit()

    def action_help(self) -> None:
        """Show commands and keys."""
        self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for command in COMMANDS:
            if command.takes_argument and command.name in ("rename",):
                continue
            yield SystemCommand(
                command.usage, command.help, lambda name=command.name: self.run_command(name, "")
            )


def coalesce_updates(events: list[AgentEvent]) -> list[AgentEvent]:
    """Merge runs of text or thinking deltas into one update each.

    When the model streams faster than the chat renders, the queue fills with small
    deltas; rendering them as one keeps the chat up to date instead of falling behind.
    """
    merged: list[AgentEvent] = []
    for event in events:
        previous = merged[-1] if merged else None
        if (
            isinstance(event, MessageUpdate)
            and isinstance(previous, MessageUpdate)
            and event.kind == previous.kind != "toolcall"
            and event.content_index == previous.content_index
            and event.message is previous.message
        ):
            merged[-1] = replace(previous, delta=previous.delta + event.delta)
        else:
            merged.append(event)
    return merged


async def _maybe_await(value: object) -> None:
    if inspect.isawaitable(value):
        await value
