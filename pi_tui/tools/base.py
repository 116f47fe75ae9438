"""What every coding tool is: a name, a pydantic argument model, and an async ``execute``.

Tools never import the UI or the model layer. A tool reports failure by raising
:class:`ToolError` (the loop turns it into an error result the model can read); progress goes
through the optional ``on_update`` callback; cancellation is asyncio task cancellation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

UpdateCallback = Callable[[str], None]
"""Receives partial output text while a tool runs (bash streams through it)."""


class ToolError(Exception):
    """A tool failed in a way the model should be told about (its message is the result)."""


class ToolArgs(BaseModel):
    """Base of every tool's argument model: unknown keys are rejected."""

    model_config = ConfigDict(extra="forbid")


@dataclass(slots=True)
class ToolResult:
    """What a tool returns: pi's toolResult content blocks plus details for the UI."""

    content: list[dict[str, Any]]
    details: dict[str, Any] | None = None
    is_error: bool = False

    @classmethod
    def text(cls, text: str, details: dict[str, Any] | None = None) -> ToolResult:
        """A result holding one text block."""
        return cls([{"type": "text", "text": text}], details)

    @classmethod
    def error(cls, text: str) -> ToolResult:
        """An error result holding one text block."""
        return cls([{"type": "text", "text": text}], None, True)


@dataclass(slots=True)
class ToolContext:
    """Where a tool runs."""

    cwd: Path
    env: dict[str, str] | None = field(default=None)


class Tool(ABC):
    """A coding tool the model can call."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[ToolArgs]]

    def __init__(self, context: ToolContext) -> None:
        self.context = context

    def schema(self) -> dict[str, Any]:
        """The OpenAI-style function schema LiteLLM sends to the model."""
        parameters = self.Args.model_json_schema()
        parameters.pop("title", None)
        for spec in parameters.get("properties", {}).values():
            spec.pop("title", None)
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            },
        }

    def parse_args(self, arguments: dict[str, Any]) -> ToolArgs:
        """Validate raw arguments; raises ToolError with a readable message."""
        try:
            return self.Args.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or 'arguments'}: {error['msg']}"
                for error in exc.errors()
            )
            raise ToolError(f"Invalid arguments for {self.name}: {problems}") from None

    @abstractmethod
    async def execute(self, args: Any, on_update: UpdateCallback | None = None) -> ToolResult:
        """Run the tool with validated arguments."""

    def resolve(self, path: str) -> Path:
        """A user path made absolute against the cwd (``@`` prefix dropped, ``~`` expanded)."""
        cleaned = path[1:] if path.startswith("@") else path
        candidate = Path(cleaned).expanduser()
        return candidate if candidate.is_absolute() else self.context.cwd / candidate
