"""Typed events of an agent run; every front end (TUI, print, JSON) renders the same stream.

Messages inside events are pi-format App message dicts, the same objects the session stores.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal

Message = dict[str, Any]
DeltaKind = Literal["text", "thinking", "toolcall"]


@dataclass(frozen=True, slots=True)
class AgentEvent:
    """Base class; ``type`` is the wire name used by ``--mode json``."""

    type: ClassVar[str] = "event"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with ``type`` first."""
        payload: dict[str, Any] = {"type": self.type}
        for spec in fields(self):
            payload[spec.name] = getattr(self, spec.name)
        return payload


@dataclass(frozen=True, slots=True)
class AgentStart(AgentEvent):
    """A run began (a prompt was accepted)."""

    type: ClassVar[str] = "agent_start"


@dataclass(frozen=True, slots=True)
class TurnStart(AgentEvent):
    """One assistant response plus its tool executions begins."""

    type: ClassVar[str] = "turn_start"


@dataclass(frozen=True, slots=True)
class MessageStart(AgentEvent):
    """A message begins (user and tool results start and end at once)."""

    type: ClassVar[str] = "message_start"
    message: Message


@dataclass(frozen=True, slots=True)
class MessageUpdate(AgentEvent):
    """A streamed piece of the assistant message; ``message`` is the partial message so far."""

    type: ClassVar[str] = "message_update"
    message: Message
    kind: DeltaKind
    content_index: int
    delta: str


@dataclass(frozen=True, slots=True)
class MessageEnd(AgentEvent):
    """A message is complete; this is when it is stored."""

    type: ClassVar[str] = "message_end"
    message: Message


@dataclass(frozen=True, slots=True)
class ToolExecutionStart(AgentEvent):
    """A tool call starts running."""

    type: ClassVar[str] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolExecutionUpdate(AgentEvent):
    """Partial output of a running tool (bash streams)."""

    type: ClassVar[str] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    partial: str


@dataclass(frozen=True, slots=True)
class ToolExecutionEnd(AgentEvent):
    """A tool call finished; ``result`` is the toolResult message."""

    type: ClassVar[str] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: Message
    is_error: bool
    duration_ms: int


@dataclass(frozen=True, slots=True)
class TurnEnd(AgentEvent):
    """A turn finished with its assistant message and tool results."""

    type: ClassVar[str] = "turn_end"
    message: Message
    tool_results: list[Message] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class AgentEnd(AgentEvent):
    """The run finished; ``messages`` are all messages it produced."""

    type: ClassVar[str] = "agent_end"
    messages: list[Message] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RetryScheduled(AgentEvent):
    """A transient provider failure; the call is retried after ``delay_s``."""

    type: ClassVar[str] = "retry"
    attempt: int
    max_attempts: int
    delay_s: float
    error_message: str


@dataclass(frozen=True, slots=True)
class CompactionStart(AgentEvent):
    """A compaction began: ``reason`` is ``manual``, ``threshold`` or ``overflow``."""

    type: ClassVar[str] = "compaction_start"
    reason: str


@dataclass(frozen=True, slots=True)
class CompactionEnd(AgentEvent):
    """A compaction ended: with its entry, aborted, or with an error message.

    ``will_retry`` is set when an overflowed turn is about to be retried on the compacted
    context.
    """

    type: ClassVar[str] = "compaction_end"
    reason: str
    entry_id: str | None = None
    tokens_before: int | None = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
