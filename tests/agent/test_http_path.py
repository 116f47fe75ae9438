"""The real LiteLLM HTTP path against a loopback OpenAI-compatible server the tests start."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.agent.events import AgentEvent, MessageUpdate, RetryScheduled
from pi_tui.agent.provider import ModelSpec
from pi_tui.agent_session import AgentSession
from pi_tui.session import SessionManager
from tests.agent.conftest import EchoTool
from tests.fakes import FakeOpenAIServer, Reply, ToolCallSpec, Usage


@pytest.fixture
def agent(tmp_path: Path, server: FakeOpenAIServer, echo_tool: EchoTool) -> Iterator[AgentSession]:
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    session = AgentSession(
        manager,
        model=ModelSpec("openai/fake-model", api_base=server.url, api_key="test-key"),
        tools={"read": echo_tool},
        cwd=tmp_path,
        retry_base_delay=0.01,
    )
    yield session
    session.close()


def collect(session: AgentSession) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    session.subscribe(events.append)
    return events


async def test_streamed_text_reasoning_tool_calls_and_usage(
    agent: AgentSession, server: FakeOpenAIServer
) -> None:
    server.enqueue(
        Reply(
            reasoning=["Let me ", "look."],
            text=["Reading ", "both."],
            tool_calls=[
                ToolCallSpec("call_a", "read", ['{"pa', 'th": "a.py"}']),
                ToolCallSpec("call_b", "read", ['{"path"', ': "b.py"}']),
            ],
            interleave=True,
            usage=Usage(prompt_tokens=120, completion_tokens=30, cached_tokens=20),
        ),
        Reply(
            text=["Both ", "files ", "read."], usage=Usage(prompt_tokens=200, completion_tokens=5)
        ),
    )
    agent.set_thinking("medium")
    events = collect(agent)
    messages = await agent.prompt("read a.py and b.py")
    first = messages[1]
    assert first["content"] == [
        {"type": "thinking", "thinking": "Let me look."},
        {"type": "text", "text": "Reading both."},
        {"type": "toolCall", "id": "call_a", "name": "read", "arguments": {"path": "a.py"}},
        {"type": "toolCall", "id": "call_b", "name": "read", "arguments": {"path": "b.py"}},
    ]
    assert first["stopReason"] == "toolUse"
    assert first["provider"] == "openai" and first["model"] == "fake-model"
    usage = first["usage"]
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["totalTokens"]) == (
        100,
        30,
        20,
        150,
    )
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]
    assert messages[-1]["content"] == [{"type": "text", "text": "Both files read."}]
    kinds = {e.kind for e in events if isinstance(e, MessageUpdate)}
    assert kinds == {"thinking", "text", "toolcall"}
    # The second request replayed the history in OpenAI's shape, results linked by id.
    second = server.requests[1]
    assert second["stream"] is True and second["stream_options"] == {"include_usage": True}
    assert second["reasoning_effort"] == "medium"
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool"]
    assert [m["tool_call_id"] for m in second["messages"][3:]] == ["call_a", "call_b"]
    assert {t["function"]["name"] for t in second["tools"]} == {"read"}


async def test_rate_limit_then_success_is_retried_once(
    agent: AgentSession, server: FakeOpenAIServer
) -> None:
    server.enqueue(Reply.error(429, "slow down"), Reply(text=["fine"]))
    events = collect(agent)
    messages = await agent.prompt("q")
    assert messages[-1]["content"] == [{"type": "text", "text": "fine"}]
    assert len(server.requests) == 2
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert len(retries) == 1 and "RateLimitError" in retries[0].error_message


async def test_server_errors_exhaust_three_retries_then_store_the_error(
    agent: AgentSession, server: FakeOpenAIServer
) -> None:
    server.enqueue(*[Reply.error(500, "boom")] * 4)
    messages = await agent.prompt("q")
    assert len(server.requests) == 4
    final = messages[-1]
    assert final["stopReason"] == "error" and "boom" in final["errorMessage"]


async def test_authentication_errors_are_not_retried(
    agent: AgentSession, server: FakeOpenAIServer
) -> None:
    server.enqueue(Reply.error(401, "bad key"))
    messages = await agent.prompt("q")
    assert len(server.requests) == 1
    message = messages[-1]["errorMessage"]
    assert message.startswith("Authentication failed") and "OPENAI_API_KEY" in message


async def test_context_overflow_is_reported_as_such(
    agent: AgentSession, server: FakeOpenAIServer
) -> None:
    server.enqueue(Reply.context_window_exceeded(8192))
    messages = await agent.prompt("q")
    assert len(server.requests) == 1
    assert messages[-1]["errorMessage"].startswith("Context window exceeded")


async def test_a_connection_dropped_mid_stream_keeps_the_partial_text(
    agent: AgentSession, server: FakeOpenAIServer
) -> None:
    server.enqueue(Reply(text=["partial ", "answer ", "never ", "finished"], drop_after=3))
    messages = await agent.prompt("q")
    final = messages[-1]
    assert final["stopReason"] == "error"
    assert final["content"] == [{"type": "text", "text": "partial answer "}]
    assert len(server.requests) == 1  # text was shown: no silent retry


async def test_aborting_a_slow_stream_closes_the_connection(
    agent: AgentSession, server: FakeOpenAIServer
) -> None:
    server.enqueue(Reply(text=["tick "] * 100, delay_between_chunks=0.05))
    started = asyncio.Event()

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, MessageUpdate):
            started.set()

    agent.subscribe(on_event)
    task = asyncio.ensure_future(agent.prompt("q"))
    await asyncio.wait_for(started.wait(), 30)
    aborted = time.perf_counter()
    agent.abort()
    messages = await task
    assert time.perf_counter() - aborted < 0.1
    assert messages[-1]["stopReason"] == "aborted"
    assert await asyncio.to_thread(server.wait_for_disconnect, 2.0)
