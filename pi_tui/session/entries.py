"""Typed models of pi's session format v3: header, nine entry types, messages, content blocks.

Attribute names are snake_case; on the wire every key is pi's camelCase. Unknown keys are kept
(``extra="allow"``), unknown entry types and message roles validate to permissive fallback
models, and absent optional fields stay absent when a model is written, as JavaScript's
``JSON.stringify`` drops ``undefined``.

Loading does not run these models over every line (that would cost more than the whole rest of
loading): the store keeps raw records and :func:`parse_entry` gives the typed view on demand.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    model_serializer,
)
from pydantic.alias_generators import to_camel

CURRENT_VERSION = 3

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh")


class PiModel(BaseModel):
    """Base of every model: camelCase on the wire, extra keys kept, absent fields omitted."""

    model_config = ConfigDict(
        extra="allow",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        # Building validators for ~25 models costs ~90 ms; pay it on first use, not import.
        defer_build=True,
    )
    KEEP_NULL: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None or k in self.KEEP_NULL}

    def to_record(self) -> dict[str, Any]:
        """The JSON object pi would write for this model."""
        return self.model_dump(by_alias=True)


# --- content blocks -------------------------------------------------------------------------


class TextContent(PiModel):
    """A run of text, in user, assistant, tool-result and custom messages."""

    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None


class ThinkingContent(PiModel):
    """Reasoning text of an assistant message; ``redacted`` ones keep an opaque signature."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ImageContent(PiModel):
    """A base64 image."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str


class ToolCall(PiModel):
    """A tool invocation requested by the model; its result links back by ``id``."""

    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    thought_signature: str | None = None


UserContentBlock = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContentBlock = Annotated[
    TextContent | ThinkingContent | ToolCall, Field(discriminator="type")
]


# --- usage ----------------------------------------------------------------------------------


class UsageCost(PiModel):
    """Cost in dollars, split like the token counters."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    total: float = 0


class Usage(PiModel):
    """Token counters of one model call."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: UsageCost = Field(default_factory=UsageCost)

    def context_tokens(self) -> int:
        """Tokens the call occupied: ``totalTokens`` when set, else the sum of the counters."""
        return self.total_tokens or (self.input + self.output + self.cache_read + self.cache_write)


# --- messages -------------------------------------------------------------------------------


class UserMessage(PiModel):
    """What the user typed (text or text and images)."""

    role: Literal["user"] = "user"
    content: str | list[UserContentBlock]
    timestamp: int


class AssistantMessage(PiModel):
    """One model response; error and aborted responses are stored too."""

    role: Literal["assistant"] = "assistant"
    content: list[AssistantContentBlock] = Field(default_factory=list)
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = Field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    timestamp: int
    error_message: str | None = None


class ToolResultMessage(PiModel):
    """The outcome of one tool call, linked to it by ``tool_call_id``."""

    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[UserContentBlock] = Field(default_factory=list)
    details: Any = None
    is_error: bool = False
    timestamp: int


class BashExecutionMessage(PiModel):
    """A shell command the user ran directly (``!cmd``) and its output."""

    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    timestamp: int
    exclude_from_context: bool | None = None


class CustomMessage(PiModel):
    """A message injected by an extension; it reaches the model as user text."""

    role: Literal["custom"] = "custom"
    custom_type: str
    content: str | list[UserContentBlock]
    display: bool = True
    details: Any = None
    timestamp: int


class BranchSummaryMessage(PiModel):
    """Synthesized from a ``branch_summary`` entry when a context is built."""

    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str
    timestamp: int


class CompactionSummaryMessage(PiModel):
    """Synthesized from a ``compaction`` entry when a context is built."""

    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: int
    timestamp: int


class UnknownMessage(PiModel):
    """A message role this version does not know; kept verbatim."""

    role: str


MESSAGE_ROLES = frozenset(
    {"user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary"}
    | {"compactionSummary"}
)


def _role_tag(value: Any) -> str:
    role = value.get("role") if isinstance(value, dict) else getattr(value, "role", None)
    return role if role in MESSAGE_ROLES else "unknown"


AgentMessage = Annotated[
    Annotated[UserMessage, Tag("user")]
    | Annotated[AssistantMessage, Tag("assistant")]
    | Annotated[ToolResultMessage, Tag("toolResult")]
    | Annotated[BashExecutionMessage, Tag("bashExecution")]
    | Annotated[CustomMessage, Tag("custom")]
    | Annotated[BranchSummaryMessage, Tag("branchSummary")]
    | Annotated[CompactionSummaryMessage, Tag("compactionSummary")]
    | Annotated[UnknownMessage, Tag("unknown")],
    Discriminator(_role_tag),
]


# --- header and entries ---------------------------------------------------------------------


class SessionHeader(PiModel):
    """First line of a session file; not a tree node."""

    type: Literal["session"] = "session"
    version: int | None = CURRENT_VERSION
    id: str
    timestamp: str
    cwd: str = ""
    parent_session: str | None = None


class EntryBase(PiModel):
    """Fields every tree entry carries."""

    KEEP_NULL: ClassVar[frozenset[str]] = frozenset({"parentId"})

    id: str
    parent_id: str | None
    timestamp: str


class MessageEntry(EntryBase):
    """A conversation message."""

    type: Literal["message"] = "message"
    message: AgentMessage


class ThinkingLevelChangeEntry(EntryBase):
    """The reasoning level changed."""

    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinking_level: str


class ModelChangeEntry(EntryBase):
    """The model changed."""

    type: Literal["model_change"] = "model_change"
    provider: str
    model_id: str


class CompactionEntry(EntryBase):
    """Older context replaced by a summary; entries from ``first_kept_entry_id`` stay."""

    type: Literal["compaction"] = "compaction"
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: Any = None
    from_hook: bool | None = None


class BranchSummaryEntry(EntryBase):
    """What an abandoned branch taught, attached where the user went."""

    type: Literal["branch_summary"] = "branch_summary"
    from_id: str
    summary: str
    details: Any = None
    from_hook: bool | None = None


class LabelEntry(EntryBase):
    """A bookmark on another entry; no ``label`` clears it."""

    type: Literal["label"] = "label"
    target_id: str
    label: str | None = None


class SessionInfoEntry(EntryBase):
    """Session metadata, the display name."""

    type: Literal["session_info"] = "session_info"
    name: str | None = None


class CustomEntry(PiModel):
    """Extension or app state that never reaches the model (pi's key order)."""

    KEEP_NULL: ClassVar[frozenset[str]] = frozenset({"parentId"})

    type: Literal["custom"] = "custom"
    custom_type: str
    data: Any = None
    id: str
    parent_id: str | None
    timestamp: str


class CustomMessageEntry(PiModel):
    """An extension message that is sent to the model as user text (pi's key order)."""

    KEEP_NULL: ClassVar[frozenset[str]] = frozenset({"parentId"})

    type: Literal["custom_message"] = "custom_message"
    custom_type: str
    content: str | list[UserContentBlock]
    display: bool = True
    details: Any = None
    id: str
    parent_id: str | None
    timestamp: str


class UnknownEntry(PiModel):
    """An entry type this version does not know: kept verbatim, still a tree node."""

    type: str
    id: str
    parent_id: str | None = None
    timestamp: str = ""


ENTRY_TYPES = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)


def _type_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ENTRY_TYPES else "unknown"


SessionEntry = Annotated[
    Annotated[MessageEntry, Tag("message")]
    | Annotated[ThinkingLevelChangeEntry, Tag("thinking_level_change")]
    | Annotated[ModelChangeEntry, Tag("model_change")]
    | Annotated[CompactionEntry, Tag("compaction")]
    | Annotated[BranchSummaryEntry, Tag("branch_summary")]
    | Annotated[CustomEntry, Tag("custom")]
    | Annotated[CustomMessageEntry, Tag("custom_message")]
    | Annotated[LabelEntry, Tag("label")]
    | Annotated[SessionInfoEntry, Tag("session_info")]
    | Annotated[UnknownEntry, Tag("unknown")],
    Discriminator(_type_tag),
]

_DEFERRED = ConfigDict(defer_build=True)
_ENTRY_ADAPTER: TypeAdapter[SessionEntry] = TypeAdapter(SessionEntry, config=_DEFERRED)
_MESSAGE_ADAPTER: TypeAdapter[AgentMessage] = TypeAdapter(AgentMessage, config=_DEFERRED)


def parse_entry(record: dict[str, Any]) -> SessionEntry:
    """The typed view of one raw entry record (raises pydantic's ValidationError)."""
    return _ENTRY_ADAPTER.validate_python(record)


def parse_message(record: dict[str, Any]) -> AgentMessage:
    """The typed view of one raw message object."""
    return _MESSAGE_ADAPTER.validate_python(record)
