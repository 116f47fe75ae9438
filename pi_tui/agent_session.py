"""AgentSession: one live session = SessionManager + agent loop + queues + settings.

Front ends (TUI, print, JSON) talk only to this class: they call its methods and render the
events it forwards. It is the only code that appends conversation entries, and it does so on
each ``message_end`` in the order the loop emits them, so a tool result can never land before
the assistant message that asked for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .agent.events import AgentEvent, MessageEnd
from .agent.loop import AgentLoop, LoopSettings, Sleep, user_message
from .agent.prompt import build_system_prompt
from .agent.provider import ModelSpec
from .session import EntryNotFound, SessionManager
from .session.catalog import text_of
from .session.entries import THINKING_LEVELS
from .tools.base import Tool

Listener = Callable[[AgentEvent], None]
Message = dict[str, Any]


class AgentBusy(RuntimeError):
    """A prompt was sent while a run is in progress (queue it with steer/follow_up)."""


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
    ) -> None:
        self.manager = manager
        self.cwd = cwd or Path(manager.cwd or ".")
        self._listeners: list[Listener] = []
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

    async def prompt(self, text: str, images: list[dict[str, Any]] | None = None) -> list[Message]:
        """Send a user message and run until the agent is done; returns the new messages."""
        if self.loop.running:
            raise AgentBusy("the agent is running; queue the message with steer or follow_up")
        context = self.manager.build_context().messages
        return await self.loop.run(context, [user_message(text, images)])

    def steer(self, text: str) -> None:
        """Queue a message delivered after the current tool batch."""
        self.loop.steer(user_message(text))

    def follow_up(self, text: str) -> None:
        """Queue a message delivered when the run would end."""
        self.loop.follow_up(user_message(text))

    def abort(self) -> list[str]:
        """Abort the run; returns the texts of queued messages so they can go back to the editor."""
        queued = [text_of(m.get("content")) for m in self.loop.clear_queues()]
        self.loop.abort()
        return queued

    # --- the tree ---------------------------------------------------------------------------

    def navigate(self, entry_id: str) -> str | None:
        """Move the leaf to an entry (pi's rule); returns editor text for a user message.

        On a user (or custom) message the leaf moves to its parent and the message's text is
        returned for re-editing; on any other entry the leaf moves to exactly that entry.
        """
        if self.loop.running:
            raise AgentBusy("abort the running agent before moving in the tree")
        entry = self.manager.get_entry(entry_id)
        if entry is None:
            raise EntryNotFound(entry_id)
        if entry.role == "user" or entry.type == "custom_message":
            if entry.parent_id is None:
                self.manager.reset_leaf()
            else:
                self.manager.branch(entry.parent_id)
            content = entry.message.get("content") if entry.message else entry.raw.get("content")
            return text_of(content)
        self.manager.branch(entry_id)
        return None

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
        """Abort any run and close the session file."""
        if self.loop.running:
            self.loop.abort()
        self.manager.close()
