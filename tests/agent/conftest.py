"""Agent-layer fixtures: LiteLLM imported once, scripted offline replies, fake tools."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from pi_tui.agent.offline import PlannedCall, PlannedReply, use_script
from pi_tui.agent.provider import ModelSpec
from pi_tui.agent_session import AgentSession
from pi_tui.session import SessionManager
from pi_tui.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult, UpdateCallback
from tests.fakes import FakeOpenAIServer
from tests.model_fixtures import fast_offline_model, litellm_ready  # noqa: F401


class EchoArgs(ToolArgs):
    """Arguments of the test tool."""

    path: str = Field(description="a path")
    delay: float = 0.0
    fail: bool = False


class EchoTool(Tool):
    """Answers with its path after an optional delay; records what ran."""

    name = "read"
    description = "test tool"
    Args = EchoArgs

    def __init__(self, context: ToolContext) -> None:
        super().__init__(context)
        self.started: list[str] = []
        self.cancelled: list[str] = []

    async def execute(self, args: Any, on_update: UpdateCallback | None = None) -> ToolResult:
        self.started.append(args.path)
        if on_update is not None:
            on_update(f"working on {args.path}")
        try:
            await asyncio.sleep(args.delay)
        except asyncio.CancelledError:
            self.cancelled.append(args.path)
            raise
        if args.fail:
            raise ToolError(f"cannot read {args.path}")
        return ToolResult.text(f"contents of {args.path}", {"path": args.path})


def script(*replies: PlannedReply) -> None:
    """Make the offline model answer with these replies, in order."""
    use_script(list(replies))


def reply(text: str = "", *calls: tuple[str, dict[str, Any]], thinking: str = "") -> PlannedReply:
    """One scripted reply."""
    return PlannedReply(text, thinking, [PlannedCall(name, args) for name, args in calls])


@pytest.fixture
def echo_tool(tmp_path: Path) -> EchoTool:
    return EchoTool(ToolContext(tmp_path))


@pytest.fixture
def session(tmp_path: Path, echo_tool: EchoTool) -> Iterator[AgentSession]:
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    agent = AgentSession(
        manager,
        model=ModelSpec("offline/pi-tui"),
        tools={"read": echo_tool},
        cwd=tmp_path,
        retry_base_delay=0.01,
    )
    yield agent
    agent.close()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """A loopback OpenAI-compatible server; a test fails if the server saw a bad request."""
    with FakeOpenAIServer() as running:
        yield running
        assert running.errors == []
