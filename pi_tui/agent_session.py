"""AgentSession: one live session = SessionManager + agent loop + queues + settings.

Front ends (TUI, print, JSON) talk only to this class: they call its methods and render the
events it forwards. It is the only code that appends conversation entries, and it does so on
each ``message_end`` in the order the loop emits them, so a tool result can never land before
the assistant message that asked for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .agent import summarize
from .agent.compaction import (
    BranchSummarySettings,
    CompactionPreparation,
    CompactionRefused,
    CompactionSettings,
    branch_entries,
    branch_summary_budget,
    estimate_tokens,
    prepare_branch_summary,
    prepare_compaction,
    should_compact,
    usage_tokens,
)
from .agent.events import AgentEvent, CompactionEnd, CompactionStart, MessageEnd
from .agent.loop import AgentLoop, LoopSettings, Sleep, user_message
from .agent.prompt import build_system_prompt
from .agent.provider import ModelSpec, is_context_overflow, model_info
from .agent.summarize import CompactionResult, SummarizationAborted, SummarizationError
from .session import EntryNotFound, SessionManager
from .session.catalog import text_of
from .session.entries import THINKING_LEVELS
from .session.ids import ms_from_iso
from .session.records import Entry
from .tools.base import Tool

T = TypeVar("T")
Listener = Callable[[AgentEvent], None]
Message = dict[str, Any]


OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Compact with /compact and a focus, start a new session with /new, or use a model with a "
    "larger context window."
)


class AgentBusy(RuntimeError):
    """A prompt was sent while a run is in progress (queue it with steer/follow_up)."""


@dataclass(frozen=True, slots=True)
class Navigation:
    """Where a move in the tree left the session."""

    editor_text: str | None
    """The text of the user message navigated to, for re-editing; None otherwise."""
    summary_entry_id: str | None = None
    """The ``branch_summary`` written at the new position, if one was asked for."""


class AgentSession:
    """A session being worked on: the file, the model, the tools and the running loop."""

    def __init__(
        self,
        manager: SessionManager,
        *,
        model: ModelSpec,
        tools: dict[str, Tool],
        thinking: str = "off",
        cwd: Path | None = None,
        system_prompt: str | None = None,
        max_retries: int = 3,
        retry_base_delay: float = 2.0,
        sleep: Sleep = asyncio.sleep,
        compaction: CompactionSettings | None = None,
        branch_summary: BranchSummarySettings | None = None,
        summary_model: ModelSpec | None = None,
    ) -> None:
        self.manager = manager
        self.cwd = cwd or Path(manager.cwd or ".")
        self.compaction = compaction or CompactionSettings()
        self.branch_summary = branch_summary or BranchSummarySettings()
        self.summary_model = summary_model
        """The model that writes summaries; the session's model when None."""
        self._listeners: list[Listener] = []
        self._summary_abort: asyncio.Event | None = None
        self._summary_done = asyncio.Event()
        self._overflow_retried = False
        prompt = system_prompt
        if prompt is None:
            prompt = build_system_prompt(
                self.cwd, [(tool.name, tool.description) for tool in tools.values()]
            )
        self.loop = AgentLoop(
            LoopSettings(
                model=model,
                tools=tools,
                system_prompt=prompt,
                thinking=thinking,
                max_retries=max_retries,
                retry_base_delay=retry_base_delay,
            ),
            self._dispatch,
            sleep,
        )
        self._sync_settings_entries()

    # --- settings ---------------------------------------------------------------------------

    @property
    def model(self) -> ModelSpec:
        """The model the next call uses."""
        return self.loop.settings.model

    @property
    def thinking(self) -> str:
        """The thinking level the next call uses."""
        return self.loop.settings.thinking

    def _sync_settings_entries(self) -> None:
        """Record the model and thinking level where the path does not already say them."""
        context = self.manager.build_context()
        current = context.model
        spec = self.model
        if current is None or (current.provider, current.model_id) != (
            spec.provider,
            spec.model_id,
        ):
            self.manager.append_model_change(spec.provider, spec.model_id)
        has_level = any(e.type == "thinking_level_change" for e in self.manager.path())
        if not has_level or context.thinking_level != self.thinking:
            self.manager.append_thinking_level_change(self.thinking)

    def set_model(self, model: ModelSpec) -> None:
        """Switch the model; appends ``model_change`` when it really changes."""
        previous = self.model
        self.loop.settings.model = model
        if (previous.provider, previous.model_id) != (model.provider, model.model_id):
            self.manager.append_model_change(model.provider, model.model_id)

    def set_thinking(self, level: str) -> None:
        """Switch the thinking level; appends an entry only when it changes."""
        if level not in THINKING_LEVELS:
            raise ValueError(
                f"unknown thinking level {level!r}; use one of {', '.join(THINKING_LEVELS)}"
            )
        if level != self.thinking:
            self.loop.settings.thinking = level
            self.manager.append_thinking_level_change(level)

    # --- events -----------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every agent event; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _dispatch(self, event: AgentEvent) -> None:
        if isinstance(event, MessageEnd):
            self.manager.append_message(event.message)
        for listener in list(self._listeners):
            listener(event)

    # --- running ----------------------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        """True while a run is in progress."""
        return self.loop.running

    @property
    def is_compacting(self) -> bool:
        """True while a compaction or a branch summary is being written."""
        return self._summary_abort is not None

    async def prompt(self, text: str, images: list[dict[str, Any]] | None = None) -> list[Message]:
        """Send a user message and run until the agent is done; returns the new messages.

        A prompt sent while a summary is being written waits for it, then runs (or, if another
        waiting prompt started first, is queued as a follow-up), so no input is lost.
        """
        waited = self.is_compacting
        while self.is_compacting:
            await self._summary_done.wait()
        if self.loop.running:
            if waited:
                self.follow_up(text)
                return []
            raise AgentBusy("the agent is running; queue the message with steer or follow_up")
        self._overflow_retried = False
        context = self.manager.build_context().messages
        if await self._compact_if_over_threshold(context):
            if self.loop.running:
                self.follow_up(text)
                return []
            context = self.manager.build_context().messages
        produced = await self.loop.run(context, [user_message(text, images)])
        return produced + await self._after_run(produced)

    # --- compaction -------------------------------------------------------------------------

    @property
    def _summarizer(self) -> ModelSpec:
        return self.summary_model or self.model

    def context_tokens(self, messages: list[Message] | None = None) -> int | None:
        """Tokens the next call would send, from the latest reply's usage plus an estimate of
        what came after it; None when no reply since the latest compaction reported usage.

        Usage from before the latest compaction on the path never counts: it describes a
        context that no longer exists (pi #1860). ``messages`` is the current context when the
        caller already built it.
        """
        compacted_at = self._latest_compaction_ms()
        if messages is None:
            messages = self.manager.build_context().messages
        for position in range(len(messages) - 1, -1, -1):
            message = messages[position]
            if message.get("role") != "assistant" or message.get("stopReason") == "error":
                continue
            used = usage_tokens(message.get("usage"))
            if used <= 0:
                continue
            if compacted_at is not None and int(message.get("timestamp") or 0) <= compacted_at:
                return None
            return used + sum(estimate_tokens(m) for m in messages[position + 1 :])
        return None

    def estimated_context_tokens(self) -> int:
        """A pure characters/4 estimate of the current context (right after a compaction)."""
        return sum(estimate_tokens(m) for m in self.manager.build_context().messages)

    def _latest_compaction_ms(self) -> int | None:
        for entry in reversed(self.manager.path()):
            if entry.type == "compaction":
                return ms_from_iso(entry.timestamp)
        return None

    async def compact(self, instructions: str | None = None) -> CompactionResult:
        """Compact the active path now (``/compact``); a running turn is aborted first.

        Raises :class:`CompactionRefused` (nothing to summarize, already compacted),
        :class:`SummarizationError` or :class:`SummarizationAborted`; the session is unchanged
        in all three cases.
        """
        if self.is_compacting:
            raise CompactionRefused("A compaction is already running.")
        if self.loop.running:
            self.abort()
            while self.loop.running:
                await asyncio.sleep(0.01)
        preparation = prepare_compaction(self.manager.path(), self.compaction)
        return await self._run_compaction(preparation, "manual", instructions)

    async def _run_compaction(
        self,
        preparation: CompactionPreparation,
        reason: str,
        instructions: str | None = None,
        will_retry: bool = False,
    ) -> CompactionResult:
        self._dispatch(CompactionStart(reason))
        try:
            result = await self._summarizing(
                lambda abort: summarize.compact(
                    preparation, self._summarizer, instructions=instructions, abort=abort
                )
            )
        except SummarizationAborted:
            self._dispatch(CompactionEnd(reason, aborted=True))
            raise
        except SummarizationError as exc:
            self._dispatch(CompactionEnd(reason, error_message=str(exc)))
            raise
        entry_id = self.manager.append_compaction(
            result.summary, result.first_kept_entry_id, result.tokens_before, result.details
        )
        self._dispatch(
            CompactionEnd(
                reason, entry_id=entry_id, tokens_before=result.tokens_before, will_retry=will_retry
            )
        )
        return result

    async def _summarizing(self, write: Callable[[asyncio.Event], Awaitable[T]]) -> T:
        """Write a summary with the session marked busy and abortable; input waits meanwhile."""
        abort = self._summary_abort = asyncio.Event()
        # A new event per summary: an event is bound to the loop that first waits on it.
        done = self._summary_done = asyncio.Event()
        try:
            return await write(abort)
        finally:
            self._summary_abort = None
            done.set()

    async def _auto_compact(self, reason: str, will_retry: bool = False) -> bool:
        """Compact without being asked; True when an entry was written."""
        try:
            preparation = prepare_compaction(self.manager.path(), self.compaction)
            await self._run_compaction(preparation, reason, will_retry=will_retry)
        except (CompactionRefused, SummarizationError, SummarizationAborted):
            return False
        return True

    def _context_window(self) -> int:
        return model_info(self.model).context_window

    async def _compact_if_over_threshold(self, context: list[Message]) -> bool:
        """Before a prompt: compact when ``context`` would not leave the reserve free; True
        when a compaction was written (the context must then be built again)."""
        if not self.compaction.enabled:
            return False
        tokens = self.context_tokens(context)
        if tokens is None or not should_compact(tokens, self._context_window(), self.compaction):
            return False
        return await self._auto_compact("threshold")

    async def _after_run(self, produced: list[Message]) -> list[Message]:
        """After a run: compact-and-retry once on overflow, or compact over the threshold."""
        last = next((m for m in reversed(produced) if m.get("role") == "assistant"), None)
        if last is None or not self.compaction.enabled:
            return []
        same_model = (last.get("provider"), last.get("model")) == (
            self.model.provider,
            self.model.model_id,
        )
        # Only a failed reply is retried: one that succeeded although its input overflowed
        # would be answered twice; the threshold check below compacts after it instead.
        if same_model and is_context_overflow(last):
            if self._overflow_retried:
                self._dispatch(CompactionEnd("overflow", error_message=OVERFLOW_RECOVERY_FAILED))
                return []
            self._overflow_retried = True
            if not await self._auto_compact("overflow", will_retry=True):
                return []
            # The failed reply stays in the file; the retry's context leaves it out.
            context = self.manager.build_context().messages
            retried = await self.loop.run(context, [])
            return retried + await self._after_run(retried)
        if last.get("stopReason") in ("error", "aborted"):
            return []
        self._overflow_retried = False
        if should_compact(usage_tokens(last.get("usage")), self._context_window(), self.compaction):
            await self._auto_compact("threshold")
        return []

    def steer(self, text: str) -> None:
        """Queue a message delivered after the current tool batch."""
        self.loop.steer(user_message(text))

    def follow_up(self, text: str) -> None:
        """Queue a message delivered when the run would end."""
        self.loop.follow_up(user_message(text))

    def abort(self) -> list[str]:
        """Abort the run or the summary being written; returns the texts of queued messages so
        they can go back to the editor."""
        queued = [text_of(m.get("content")) for m in self.loop.clear_queues()]
        self.loop.abort()
        if self._summary_abort is not None:
            self._summary_abort.set()
        return queued

    # --- the tree ---------------------------------------------------------------------------

    def _target(self, entry_id: str, exact: bool) -> tuple[Entry, str | None, str | None]:
        """The entry, the leaf a move to it lands on, and the text offered for re-editing.

        On a user (or custom) message the leaf moves to its parent and the message's text is
        offered; on any other entry, or with ``exact``, the leaf moves to exactly that entry.
        """
        if self.loop.running or self.is_compacting:
            raise AgentBusy("abort the running agent before moving in the tree")
        entry = self.manager.get_entry(entry_id)
        if entry is None:
            raise EntryNotFound(entry_id)
        if not exact and (entry.role == "user" or entry.type == "custom_message"):
            content = entry.message.get("content") if entry.message else entry.raw.get("content")
            return entry, entry.parent_id, text_of(content)
        return entry, entry_id, None

    def navigate(self, entry_id: str, *, exact: bool = False) -> str | None:
        """Move the leaf to an entry (pi's rule); returns editor text for a user message.

        With ``exact`` the leaf moves to exactly that entry, whatever it is, and no text is
        returned. Nothing is written: the move is O(1) and the old branch stays as it was.
        """
        _, leaf, text = self._target(entry_id, exact)
        if leaf is None:
            self.manager.reset_leaf()
        else:
            self.manager.branch(leaf)
        return text

    def abandoned_entries(self, entry_id: str) -> list[Entry]:
        """The entries a move to ``entry_id`` would leave behind (what a summary covers)."""
        return branch_entries(self.manager, self.manager.leaf_id, entry_id)[0]

    async def navigate_with_summary(
        self,
        entry_id: str,
        instructions: str | None = None,
        *,
        replace_instructions: bool = False,
        exact: bool = False,
    ) -> Navigation:
        """Move the leaf like :meth:`navigate` and attach a summary of the branch left behind.

        The summary covers the entries from the old leaf up to the common ancestor and is
        appended as a ``branch_summary`` at the new position, which becomes the leaf. When
        nothing is left behind (moving down the same branch) this is a plain move. On abort or
        failure the session is unchanged and the exception propagates.
        """
        _, leaf, text = self._target(entry_id, exact)
        entries = self.abandoned_entries(entry_id)
        if not entries:
            return Navigation(self.navigate(entry_id, exact=exact))
        budget = branch_summary_budget(
            model_info(self._summarizer).context_window, self.branch_summary
        )
        preparation = prepare_branch_summary(entries, budget)
        result = await self._summarizing(
            lambda abort: summarize.summarize_branch(
                preparation,
                self._summarizer,
                instructions=instructions,
                replace_instructions=replace_instructions,
                abort=abort,
            )
        )
        summary_id = self.manager.branch_with_summary(leaf, result.summary, result.details)
        return Navigation(text, summary_id)

    def rename(self, name: str) -> None:
        """Name the session."""
        self.manager.append_session_info(name)

    def label(self, entry_id: str, text: str | None) -> None:
        """Label an entry (None or empty clears)."""
        self.manager.append_label(entry_id, text)

    def _sibling(self, manager: SessionManager) -> AgentSession:
        """A session on another file with this one's model, tools and settings."""
        settings = self.loop.settings
        return AgentSession(
            manager,
            model=settings.model,
            tools=settings.tools,
            thinking=settings.thinking,
            cwd=self.cwd,
            system_prompt=settings.system_prompt,
            max_retries=settings.max_retries,
            retry_base_delay=settings.retry_base_delay,
            sleep=self.loop.sleep,
            compaction=self.compaction,
            branch_summary=self.branch_summary,
            summary_model=self.summary_model,
        )

    def fork(self, entry_id: str) -> tuple[AgentSession, str | None]:
        """A new session file holding the path up to ``entry_id`` (pi's ``/fork``).

        Forking at a user message copies the path up to its parent and returns the message's
        text for re-editing; forking anywhere else copies the path through that entry.
        """
        entry = self.manager.get_entry(entry_id)
        if entry is None:
            raise EntryNotFound(entry_id)
        text: str | None = None
        cut: str | None = entry_id
        if entry.role == "user":
            text = text_of(entry.message.get("content") if entry.message else None)
            cut = entry.parent_id
        if cut is None:
            parent = str(self.manager.session_file) if self.manager.session_file else None
            directory = self.manager.session_file.parent if self.manager.session_file else None
            manager = (
                SessionManager.create(self.cwd, directory, parent_session=parent)
                if directory is not None
                else SessionManager.in_memory(self.cwd)
            )
        else:
            manager = self.manager.fork(cut)
        return self._sibling(manager), text

    def new(self) -> AgentSession:
        """A fresh session in the same folder with the same model and tools."""
        file = self.manager.session_file
        if file is None:
            return self._sibling(SessionManager.in_memory(self.cwd))
        return self._sibling(SessionManager.create(self.cwd, file.parent))

    def close(self) -> None:
        """Abort any run or summary and close the session file."""
        if self.loop.running:
            self.loop.abort()
        if self._summary_abort is not None:
            self._summary_abort.set()
        self.manager.close()
