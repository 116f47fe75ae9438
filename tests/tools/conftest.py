"""Shared fixtures: a tool context on a temporary project tree and a way to call tools."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from pi_tui.tools.base import ToolContext, ToolResult, UpdateCallback
from pi_tui.tools.registry import create_tools

RunTool = Callable[..., Coroutine[Any, Any, ToolResult]]


@pytest.fixture
def context(tmp_path: Path) -> ToolContext:
    return ToolContext(tmp_path)


@pytest.fixture
def run(context: ToolContext) -> RunTool:
    """Call a tool by name with raw (model-style) arguments, as the agent loop does."""
    tools = create_tools(context)

    async def call(
        name: str, on_update: UpdateCallback | None = None, **arguments: Any
    ) -> ToolResult:
        tool = tools[name]
        return await tool.execute(tool.parse_args(arguments), on_update)

    return call


def text_of(result: ToolResult) -> str:
    """The text of a single-text-block result."""
    assert len(result.content) == 1
    block = result.content[0]
    assert block["type"] == "text"
    text: str = block["text"]
    return text
