"""AgentSession compaction and branch summaries, through the offline model and the HTTP path."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.agent.compaction import CompactionRefused, CompactionSettings
from pi_tui.agent.events import AgentEvent, CompactionEnd, CompactionStart, MessageStart
from pi_tui.agent.provider import ModelSpec
from pi_tui.agent.summarize import SummarizationAborted
from pi_tui.agent_session import OVERFLOW_RECOVERY_FAILED, AgentSession
from pi_tui.session import SessionManager
from pi_tui.session.catalog import text_of
from tests.agent.conftest import EchoTool, reply, script
from tests.fakes import FakeOpenAIServer, Reply, Usage

KEEP_LITTLE = CompactionSettings(keep_recent_tokens=1)
OFFLINE_WINDOW = 128_000


def collect(session: AgentSession) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    session.subscribe(events.append)
    return events


def offline_session(
    tmp_path: Path, echo_tool: EchoTool, compaction: CompactionSettings
) -> AgentSession:
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    return AgentSession(
        manager,
        model=ModelSpec("offline/pi-tui"),
        tools={"read": echo_tool},
        cwd=tmp_path,
        compaction=compaction,
    )


@pytest.fixture
def compacting(tmp_path: Path, echo_tool: EchoTool) -> Iterator[AgentSession]:
    """Compaction keeps almost nothing verbatim, and never triggers on its own."""
    agent = offline_session(
        tmp_path, echo_tool, CompactionSettings(enabled=False, keep_recent_tokens=1)
    )
    yield agent
    agent.close()


@pytest.fixture
def tight(tmp_path: Path, echo_tool: EchoTool) -> Iterator[AgentSession]:
    """A reserve just below the offline model's window: every reply crosses the threshold."""
    settings = CompactionSettings(reserve_tokens=OFFLINE_WINDOW - 10, keep_recent_tokens=1)
    agent = offline_session(tmp_path, echo_tool, settings)
    yield agent
    agent.close()


async def three_turns(agent: AgentSession) -> None:
    script(reply("answer one"), reply("answer two"), reply("answer three"))
    for question in ("question one", "question two", "question three"):
        await agent.prompt(question)


async def abort_while_summarizing(agent: AgentSession, work: Coroutine[Any, Any, Any]) -> None:
    """Start ``work``, abort once a summary is being written, and expect the abort."""
    task = asyncio.create_task(work)
    while not agent.is_compacting:
        await asyncio.sleep(0.005)
    agent.abort()
    with pytest.raises(SummarizationAborted):
        await task


def user_texts(messages: list[dict[str, object]]) -> list[str]:
    return [text_of(m.get("content")) for m in messages if m.get("role") == "user"]


async def test_manual_compaction_appends_one_entry_and_the_context_starts_with_it(
    compacting: AgentSession,
) -> None:
    await three_turns(compacting)
    before = len(compacting.manager.entries())
    events = collect(compacting)
    result = await compacting.compact("the answers")
    entries = compacting.manager.entries()
    assert len(entries) == before + 1
    compaction = entries[-1]
    assert compaction.type == "compaction"
    assert compaction.raw["firstKeptEntryId"] == result.first_kept_entry_id
    assert compaction.raw["tokensBefore"] == result.tokens_before > 0
    assert set(compaction.raw["details"]) == {"readFiles", "modifiedFiles"}
    assert "## Goal" in result.summary
    assert "the answers" in result.summary  # the focus reached the summarizer
    context = compacting.manager.build_context().messages
    assert context[0]["role"] == "compactionSummary"
    assert context[0]["summary"] == result.summary
    assert "question one" not in user_texts(context)
    assert [type(e) for e in events] == [CompactionStart, CompactionEnd]
    assert isinstance(events[1], CompactionEnd) and events[1].entry_id == compaction.id
    # The originals stay in the file and on the path.
    assert "question one" in str([e.raw for e in compacting.manager.path()])


async def test_compaction_is_refused_without_a_model_call(
    tmp_path: Path, echo_tool: EchoTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[object] = []

    async def no_call(*args: object, **kwargs: object) -> str:
        calls.append(args)
        raise AssertionError("the summarizer must not be called")

    monkeypatch.setattr("pi_tui.agent.summarize._summarize", no_call)
    agent = offline_session(tmp_path, echo_tool, CompactionSettings(enabled=False))
    with pytest.raises(CompactionRefused, match="Nothing to compact"):
        await agent.compact()  # no messages at all
    await three_turns(agent)
    before = len(agent.manager.entries())
    with pytest.raises(CompactionRefused, match="Nothing to compact"):
        await agent.compact()  # everything fits in the 20,000 tokens kept verbatim
    assert len(agent.manager.entries()) == before
    assert calls == []
    agent.close()


async def test_a_compaction_right_after_a_compaction_is_refused(
    compacting: AgentSession,
) -> None:
    await three_turns(compacting)
    await compacting.compact()
    count = len(compacting.manager.entries())
    with pytest.raises(CompactionRefused, match="Already compacted"):
        await compacting.compact()
    assert len(compacting.manager.entries()) == count


async def test_over_the_threshold_a_run_is_followed_by_a_compaction(
    tight: AgentSession,
) -> None:
    events = collect(tight)
    script(reply("answer one"))
    await tight.prompt("question one")
    starts = [e for e in events if isinstance(e, CompactionStart)]
    assert [e.reason for e in starts] == ["threshold"]
    assert tight.manager.path()[-1].type == "compaction"


async def test_under_the_threshold_nothing_is_compacted(
    tmp_path: Path, echo_tool: EchoTool
) -> None:
    roomy = CompactionSettings(reserve_tokens=OFFLINE_WINDOW - 100_000, keep_recent_tokens=1)
    agent = offline_session(tmp_path, echo_tool, roomy)
    events = collect(agent)
    await three_turns(agent)
    assert not [e for e in events if isinstance(e, CompactionStart)]
    agent.close()


async def test_usage_from_before_the_latest_compaction_never_triggers_another(
    tight: AgentSession,
) -> None:
    agent = tight
    script(reply("answer one"), reply("answer two"), reply("answer three"))
    await agent.prompt("question one")
    await agent.prompt("question two")
    assert agent.manager.path()[-1].type == "compaction"
    assert agent.context_tokens() is None  # the kept reply's usage is stale
    events = collect(agent)
    await agent.prompt("question three")
    first_message = next(i for i, e in enumerate(events) if isinstance(e, MessageStart))
    assert not [e for e in events[:first_message] if isinstance(e, CompactionStart)]


async def test_input_sent_during_a_compaction_reaches_the_model_afterwards(
    compacting: AgentSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    await three_turns(compacting)
    monkeypatch.setenv("PI_TUI_OFFLINE_DELAY_MS", "20")
    script(reply("answer four"), reply("answer five"))
    compaction = asyncio.create_task(compacting.compact())
    while not compacting.is_compacting:
        await asyncio.sleep(0.005)
    fourth = asyncio.create_task(compacting.prompt("question four"))
    fifth = asyncio.create_task(compacting.prompt("question five"))
    await asyncio.sleep(0.05)
    assert compacting.is_compacting
    await compaction
    await asyncio.gather(fourth, fifth)
    path = compacting.manager.path()
    kinds = [e.type for e in path]
    after = path[kinds.index("compaction") + 1 :]
    assert [text_of(e.message.get("content")) for e in after if e.message] == [
        "question four",
        "answer four",
        "question five",
        "answer five",
    ]


async def test_aborting_a_compaction_leaves_the_session_unchanged(
    compacting: AgentSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    await three_turns(compacting)
    monkeypatch.setenv("PI_TUI_OFFLINE_DELAY_MS", "50")
    before = [e.id for e in compacting.manager.entries()]
    events = collect(compacting)
    await abort_while_summarizing(compacting, compacting.compact())
    assert [e.id for e in compacting.manager.entries()] == before
    assert not compacting.is_compacting
    assert isinstance(events[-1], CompactionEnd) and events[-1].aborted


# --- overflow, through the real HTTP path -----------------------------------------------------


@pytest.fixture
def remote(tmp_path: Path, server: FakeOpenAIServer) -> Iterator[AgentSession]:
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    agent = AgentSession(
        manager,
        model=ModelSpec("openai/fake-model", api_base=server.url, api_key="test-key"),
        tools={},
        cwd=tmp_path,
        retry_base_delay=0.01,
        compaction=KEEP_LITTLE,
    )
    yield agent
    agent.close()


async def two_remote_turns(agent: AgentSession, server: FakeOpenAIServer) -> None:
    server.enqueue(Reply(["answer one"], usage=Usage(100, 10)), Reply(["answer two"]))
    await agent.prompt("question one")
    await agent.prompt("question two")


async def test_overflow_compacts_once_and_retries_the_turn(
    remote: AgentSession, server: FakeOpenAIServer
) -> None:
    await two_remote_turns(remote, server)
    server.enqueue(
        Reply.context_window_exceeded(8192),
        Reply(["## Goal\nAnswer the questions."]),
        Reply(["answer three"]),
    )
    events = collect(remote)
    produced = await remote.prompt("question three")
    assert [m.get("stopReason") for m in produced if m["role"] == "assistant"] == [
        "error",
        "stop",
    ]
    ends = [e for e in events if isinstance(e, CompactionEnd)]
    assert [(e.reason, e.will_retry) for e in ends] == [("overflow", True)]
    path = remote.manager.path()
    kinds = [e.type for e in path]
    assert kinds.count("compaction") == 1
    # The failed reply stays in the file, before the compaction; the retry comes after it.
    failed = next(e for e in path if e.message and e.message.get("stopReason") == "error")
    assert kinds.index("compaction") > path.index(failed)
    assert path[-1].message is not None and text_of(path[-1].message["content"]) == "answer three"
    sent = str(server.requests[-1]["messages"])
    assert "Answer the questions." in sent and "question three" in sent


async def test_a_second_overflow_is_not_compacted_again(
    remote: AgentSession, server: FakeOpenAIServer
) -> None:
    await two_remote_turns(remote, server)
    server.enqueue(
        Reply.context_window_exceeded(8192),
        Reply(["## Goal\nAnswer the questions."]),
        Reply.context_window_exceeded(8192),
    )
    events = collect(remote)
    await remote.prompt("question three")
    assert [e.type for e in remote.manager.path()].count("compaction") == 1
    ends = [e for e in events if isinstance(e, CompactionEnd)]
    assert ends[-1].error_message == OVERFLOW_RECOVERY_FAILED
    assert len([e for e in events if isinstance(e, CompactionStart)]) == 1


# --- branch summaries ---------------------------------------------------------------------------


async def branched(agent: AgentSession) -> tuple[str, str]:
    """q1/a1, then an exploration q2/a2 (reading a file); returns (q2 id, a1 id)."""
    script(reply("answer one"), reply("", ("read", {"path": "src/auth.ts"})), reply("it is salt"))
    await agent.prompt("question one")
    await agent.prompt("look at auth")
    path = agent.manager.path()
    second = [e for e in path if e.role == "user"][1]
    assert second.parent_id is not None
    return second.id, second.parent_id


async def test_leaving_a_branch_with_a_summary_attaches_it_at_the_new_position(
    compacting: AgentSession,
) -> None:
    second, first_answer = await branched(compacting)
    old_leaf = compacting.manager.leaf_id
    navigation = await compacting.navigate_with_summary(second, "the salt")
    assert navigation.editor_text == "look at auth"
    summary = compacting.manager.get_entry(navigation.summary_entry_id or "")
    assert summary is not None and summary.type == "branch_summary"
    assert summary.parent_id == first_answer
    assert summary.raw["fromId"] == first_answer
    assert compacting.manager.leaf_id == summary.id
    assert summary.raw["summary"].startswith("The user explored a different conversation branch")
    assert "the salt" in summary.raw["summary"]
    assert summary.raw["details"] == {"readFiles": ["src/auth.ts"], "modifiedFiles": []}
    assert compacting.manager.get_entry(old_leaf or "") is not None
    context = compacting.manager.build_context().messages
    assert context[-1]["role"] == "branchSummary"


async def test_leaving_a_branch_without_a_summary_writes_nothing(
    compacting: AgentSession,
) -> None:
    second, first_answer = await branched(compacting)
    before = len(compacting.manager.entries())
    assert compacting.navigate(second) == "look at auth"
    assert compacting.manager.leaf_id == first_answer
    assert len(compacting.manager.entries()) == before


async def test_a_cancelled_branch_summary_changes_nothing(
    compacting: AgentSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    second, _ = await branched(compacting)
    monkeypatch.setenv("PI_TUI_OFFLINE_DELAY_MS", "50")
    before = [e.id for e in compacting.manager.entries()]
    leaf = compacting.manager.leaf_id
    await abort_while_summarizing(compacting, compacting.navigate_with_summary(second))
    assert [e.id for e in compacting.manager.entries()] == before
    assert compacting.manager.leaf_id == leaf


async def test_moving_down_the_same_branch_needs_no_summary(compacting: AgentSession) -> None:
    _, first_answer = await branched(compacting)
    leaf = compacting.manager.leaf_id
    compacting.navigate(first_answer, exact=True)
    before = len(compacting.manager.entries())
    navigation = await compacting.navigate_with_summary(leaf or "", exact=True)
    assert navigation.summary_entry_id is None
    assert compacting.manager.leaf_id == leaf
    assert len(compacting.manager.entries()) == before


async def test_compact_aborts_a_running_turn_first(
    compacting: AgentSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    await three_turns(compacting)
    monkeypatch.setenv("PI_TUI_OFFLINE_DELAY_MS", "30")
    script(reply("slowly " * 200))
    running = asyncio.create_task(compacting.prompt("question four"))
    while not compacting.is_running:
        await asyncio.sleep(0.005)
    monkeypatch.setenv("PI_TUI_OFFLINE_DELAY_MS", "0")
    result = await compacting.compact()
    produced = await running
    assert produced[-1]["stopReason"] == "aborted"
    path = compacting.manager.path()
    assert path[-1].type == "compaction"
    assert path[-1].raw["summary"] == result.summary
    aborted = [e for e in path if e.message and e.message.get("stopReason") == "aborted"]
    assert len(aborted) == 1
