"""The agent loop through AgentSession with the scripted offline model (real LiteLLM path)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from pi_tui.agent import provider
from pi_tui.agent.events import (
    AgentEvent,
    MessageEnd,
    MessageUpdate,
    RetryScheduled,
    ToolExecutionEnd,
    ToolExecutionUpdate,
)
from pi_tui.agent.loop import ABORTED_TEXT, SKIPPED_TEXT
from pi_tui.agent.provider import ProviderError
from pi_tui.agent_session import AgentBusy, AgentSession
from pi_tui.session import read_session_file
from tests.agent.conftest import EchoTool, reply, script


def collect(session: AgentSession) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    session.subscribe(events.append)
    return events


def roles(session: AgentSession) -> list[str]:
    return [e.role or e.type for e in session.manager.path()]


async def test_reference_turn_stores_entries_in_order(session: AgentSession) -> None:
    script(
        reply("我先查看一下 auth.ts 的内容。", ("read", {"path": "src/auth.ts"})),
        reply("问题在第 23 行，salt 缺少 Base64 编码。", thinking="look at line 23"),
    )
    events = collect(session)
    await session.prompt("auth.ts 里的 salt 校验为什么失败？")
    assert roles(session) == [
        "model_change",
        "thinking_level_change",
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    path = session.manager.path()
    call = path[3].raw["message"]["content"][-1]
    assert call == {
        "type": "toolCall",
        "id": call["id"],
        "name": "read",
        "arguments": {"path": "src/auth.ts"},
    }
    result = path[4].raw["message"]
    assert result["toolCallId"] == call["id"] and result["content"][0]["text"] == (
        "contents of src/auth.ts"
    )
    assert (
        path[5].raw["message"]["content"][-1]["text"] == "问题在第 23 行，salt 缺少 Base64 编码。"
    )
    types = [e.type for e in events]
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    assert types.count("turn_start") == 2 and "tool_execution_start" in types
    assert any(isinstance(e, MessageUpdate) and e.kind == "toolcall" for e in events)
    # On disk, in the same order.
    assert session.manager.session_file is not None
    on_disk = read_session_file(session.manager.session_file)
    assert [e.id for e in on_disk.entries] == [e.id for e in path]


async def test_reasoning_streams_when_thinking_is_on(session: AgentSession) -> None:
    session.set_thinking("low")
    script(reply("answer", thinking="first I think"))
    events = collect(session)
    messages = await session.prompt("q")
    thinking = [e.delta for e in events if isinstance(e, MessageUpdate) and e.kind == "thinking"]
    assert "".join(thinking) == "first I think"
    assert messages[-1]["content"][0] == {"type": "thinking", "thinking": "first I think"}


async def test_parallel_tool_calls_run_together_and_report_in_call_order(
    session: AgentSession, echo_tool: EchoTool
) -> None:
    script(
        reply(
            "", ("read", {"path": "slow", "delay": 0.4}), ("read", {"path": "fast", "delay": 0.1})
        ),
        reply("done"),
    )
    events = collect(session)
    began = time.perf_counter()
    messages = await session.prompt("read both")
    elapsed = time.perf_counter() - began
    assert elapsed < 0.75  # sequential would take 0.5 s of sleeping plus overhead
    ends = [e.tool_call_id for e in events if isinstance(e, ToolExecutionEnd)]
    results = [m for m in messages if m["role"] == "toolResult"]
    calls = [b["id"] for b in messages[1]["content"] if b["type"] == "toolCall"]
    assert [r["toolCallId"] for r in results] == calls
    assert ends == list(reversed(calls))  # the fast one finished first
    assert sorted(echo_tool.started) == ["fast", "slow"]
    assert any(isinstance(e, ToolExecutionUpdate) for e in events)


async def test_tool_failures_unknown_tools_and_bad_arguments_become_error_results(
    session: AgentSession,
) -> None:
    script(
        reply(
            "",
            ("read", {"path": "x", "fail": True}),
            ("teleport", {"to": "mars"}),
            ("read", {"wrong": 1}),
        ),
        reply("I see the errors."),
    )
    messages = await session.prompt("try things")
    results = [m for m in messages if m["role"] == "toolResult"]
    assert [r["isError"] for r in results] == [True, True, True]
    texts = [r["content"][0]["text"] for r in results]
    assert texts[0] == "cannot read x"
    assert texts[1] == "Tool teleport not found"
    assert texts[2].startswith("Invalid arguments for read:") and "path" in texts[2]
    assert messages[-1]["stopReason"] == "stop"


async def test_abort_while_streaming_stores_the_partial_answer(
    session: AgentSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_TUI_OFFLINE_DELAY_MS", "30")
    script(reply("word " * 200))
    events = collect(session)
    aborted_at: list[float] = []

    def abort_on_first_text(event: AgentEvent) -> None:
        if isinstance(event, MessageUpdate) and not aborted_at:
            aborted_at.append(time.perf_counter())
            session.abort()

    session.subscribe(abort_on_first_text)
    messages = await session.prompt("talk a lot")
    finished = time.perf_counter()
    assert finished - aborted_at[0] < 0.1
    final = messages[-1]
    assert final["stopReason"] == "aborted" and final["errorMessage"] == ABORTED_TEXT
    assert 0 < len(final["content"][0]["text"]) < len("word " * 200)
    stored = session.manager.path()[-1].raw["message"]
    assert stored["stopReason"] == "aborted"
    assert [e.type for e in events][-1] == "agent_end"


async def test_abort_while_a_tool_runs_cancels_it(
    session: AgentSession, echo_tool: EchoTool
) -> None:
    script(reply("", ("read", {"path": "forever", "delay": 30})), reply("never sent"))

    async def abort_soon() -> None:
        while not echo_tool.started:
            await asyncio.sleep(0.01)
        session.abort()

    began = time.perf_counter()
    messages, _ = await asyncio.gather(session.prompt("go"), abort_soon())
    assert time.perf_counter() - began < 1.0
    assert echo_tool.cancelled == ["forever"]
    result = messages[-1]
    assert result["role"] == "toolResult" and result["isError"]
    assert result["content"][0]["text"] == ABORTED_TEXT


async def test_steering_skips_the_pending_batch_and_is_delivered_next(
    session: AgentSession, echo_tool: EchoTool
) -> None:
    script(reply("", ("read", {"path": "a"})), reply("ok, changed course"))

    def steer_when_assistant_ends(event: AgentEvent) -> None:
        if isinstance(event, MessageEnd) and event.message.get("stopReason") == "toolUse":
            session.steer("actually, stop")

    session.subscribe(steer_when_assistant_ends)
    messages = await session.prompt("read a")
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "user", "assistant"]
    assert messages[2]["content"][0]["text"] == SKIPPED_TEXT
    assert messages[3]["content"][0]["text"] == "actually, stop"
    assert echo_tool.started == []


async def test_follow_up_runs_after_the_answer(session: AgentSession) -> None:
    script(reply("first answer"), reply("second answer"))
    session.follow_up("and then?")
    messages = await session.prompt("first")
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[-1]["content"][0]["text"] == "second answer"


async def test_a_second_prompt_while_running_is_refused(session: AgentSession) -> None:
    script(reply("", ("read", {"path": "x", "delay": 0.2})), reply("done"))
    task = asyncio.ensure_future(session.prompt("one"))
    await asyncio.sleep(0.05)
    with pytest.raises(AgentBusy):
        await session.prompt("two")
    await task


async def test_transient_errors_are_retried_with_backoff_before_the_first_chunk(
    session: AgentSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = provider.open_stream
    failures = [ProviderError("RateLimitError: slow down", retryable=True)] * 2

    async def flaky(*args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop()
        return await real_open(*args, **kwargs)

    monkeypatch.setattr("pi_tui.agent.loop.open_stream", flaky)
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    session.loop.sleep = fake_sleep
    session.loop.settings.retry_base_delay = 2.0
    script(reply("finally"))
    events = collect(session)
    messages = await session.prompt("q")
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert [(r.attempt, r.delay_s) for r in retries] == [(1, 2.0), (2, 4.0)]
    assert slept == [2.0, 4.0]
    assert messages[-1]["stopReason"] == "stop"
    # Failed attempts leave nothing in the session.
    assert roles(session)[-2:] == ["user", "assistant"]


async def test_retries_give_up_after_three_and_store_the_error(
    session: AgentSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def always_down(*args: Any, **kwargs: Any) -> Any:
        raise ProviderError("InternalServerError: down", retryable=True)

    monkeypatch.setattr("pi_tui.agent.loop.open_stream", always_down)
    events = collect(session)
    messages = await session.prompt("q")
    assert len([e for e in events if isinstance(e, RetryScheduled)]) == 3
    final = messages[-1]
    assert final["stopReason"] == "error" and "down" in final["errorMessage"]
    assert session.manager.path()[-1].raw["message"]["stopReason"] == "error"


async def test_a_missing_key_is_one_clear_error_without_retries(
    session: AgentSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    session.set_model(provider.ModelSpec("anthropic/claude-sonnet-4-5"))
    events = collect(session)
    messages = await session.prompt("q")
    final = messages[-1]
    assert final["stopReason"] == "error"
    assert "ANTHROPIC_API_KEY" in final["errorMessage"] and "--api-key" in final["errorMessage"]
    assert not [e for e in events if isinstance(e, RetryScheduled)]
    assert roles(session)[-3:] == ["model_change", "user", "assistant"]


async def test_unknown_models_get_a_helpful_message(session: AgentSession) -> None:
    session.set_model(provider.ModelSpec("nonsense-model-xyz", api_key="k"))
    messages = await session.prompt("q")
    assert "Unknown model" in messages[-1]["errorMessage"]
    assert "anthropic/claude-sonnet-4-5" in messages[-1]["errorMessage"]
