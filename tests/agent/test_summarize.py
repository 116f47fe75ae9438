"""Summaries through the model: serialization, prompts, and the real offline model via LiteLLM."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pi_tui.agent import offline, provider, summarize
from pi_tui.agent.compaction import (
    BranchSummaryPreparation,
    CompactionPreparation,
    CompactionRefused,
    CompactionSettings,
    FileOperations,
    branch_entries,
    prepare_branch_summary,
    prepare_compaction,
)
from pi_tui.agent.offline import PlannedReply, offline_brain, plan_summary, summary_request
from pi_tui.agent.provider import ModelInfo, ModelSpec, ProviderError
from pi_tui.agent.summarize import (
    BRANCH_SUMMARY_PREAMBLE,
    BRANCH_SUMMARY_PROMPT,
    COMPACTION_PROMPT,
    NO_BRANCH_CONTENT,
    SPLIT_TURN_SEPARATOR,
    SUMMARIZER_SYSTEM_PROMPT,
    SummarizationAborted,
    SummarizationError,
    compact,
    request_text,
    serialize_conversation,
    summarize_branch,
)
from pi_tui.session import SessionManager
from tests.agent.conftest import reply, script
from tests.factories import assistant, tool_result, user

OFFLINE = ModelSpec("offline/pi-tui")

COMPACTION_HEADINGS = [
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Next Steps",
    "## Critical Context",
]


def call(name: str, call_id: str = "c1", **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def headings(summary: str) -> list[str]:
    return [line for line in summary.splitlines() if line.startswith("#")]


class StreamSpy:
    """Wraps ``open_stream`` in the summarize module and records each request."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.started = asyncio.Event()

    async def __call__(
        self,
        spec: ModelSpec,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        thinking: str = "off",
        max_tokens: int | None = None,
    ) -> AsyncIterator[Any]:
        self.requests.append(
            {"messages": messages, "tools": tools, "thinking": thinking, "max_tokens": max_tokens}
        )
        self.started.set()
        return await provider.open_stream(
            spec, messages, tools, thinking=thinking, max_tokens=max_tokens
        )


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> StreamSpy:
    recorder = StreamSpy()
    monkeypatch.setattr(summarize, "open_stream", recorder)
    return recorder


# --- serialization --------------------------------------------------------------------------


def test_a_conversation_becomes_labelled_plain_text() -> None:
    thinking_answer = assistant(
        "Reading it.",
        tool_calls=[
            call("read", "c1", path="src/a.py", offset=3),
            call("bash", "c2", command='echo "hi"'),
        ],
    )
    thinking_answer["content"].insert(0, {"type": "thinking", "thinking": "Check the file."})
    messages = [
        user("Fix the bug"),
        thinking_answer,
        tool_result("c1", "read", "line one\nline two"),
        tool_result("c2", "bash", "hi"),
        {"role": "bashExecution", "command": "make", "output": "built", "exitCode": 2},
        {"role": "custom", "customType": "git-status", "content": "clean", "display": True},
        {"role": "branchSummary", "summary": "explored X", "fromId": "a"},
        {"role": "compactionSummary", "summary": "## Goal\nold", "tokensBefore": 5},
    ]
    assert serialize_conversation(messages) == (
        "[User]: Fix the bug\n\n"
        "[Assistant thinking]: Check the file.\n\n"
        "[Assistant]: Reading it.\n\n"
        '[Assistant tool calls]: read(path="src/a.py", offset=3); bash(command="echo \\"hi\\"")\n\n'
        "[Tool result]: line one\nline two\n\n"
        "[Tool result]: hi\n\n"
        "[User shell command]: Ran `make`\n```\nbuilt\n```\n\nCommand exited with code 2\n\n"
        "[Custom message (git-status)]: clean\n\n"
        "[Summary of another branch]: explored X\n\n"
        "[Summary of earlier conversation]: ## Goal\nold"
    )


def test_long_tool_results_are_truncated_to_2000_characters() -> None:
    text = serialize_conversation([tool_result("c1", "read", "x" * 5000)])
    assert text == "[Tool result]: " + "x" * 2000 + "\n\n[... 3000 more characters truncated]"


def test_tool_results_up_to_the_limit_are_untouched() -> None:
    assert serialize_conversation([tool_result("c1", "read", "y" * 1500)]) == (
        "[Tool result]: " + "y" * 1500
    )


def test_long_user_and_assistant_text_is_never_truncated() -> None:
    text = serialize_conversation([user("u" * 10000), assistant("a" * 10000)])
    assert text == "[User]: " + "u" * 10000 + "\n\n[Assistant]: " + "a" * 10000


def test_failed_turns_lose_their_tool_calls_and_results_but_keep_their_text() -> None:
    failed = assistant("partial", stop_reason="error", tool_calls=[call("read", "bad", path="x")])
    messages = [
        user("go"),
        failed,
        tool_result("bad", "read", "never ran"),
        {"role": "bashExecution", "command": "secret", "output": "", "excludeFromContext": True},
        assistant("", stop_reason="aborted"),
    ]
    assert serialize_conversation(messages) == "[User]: go\n\n[Assistant]: partial"


def test_the_request_wraps_conversation_and_previous_summary_before_the_prompt() -> None:
    assert request_text([user("hi")], "PROMPT", "old summary") == (
        "<conversation>\n[User]: hi\n</conversation>\n\n"
        "<previous-summary>\nold summary\n</previous-summary>\n\nPROMPT"
    )
    assert request_text([user("hi")], "PROMPT") == (
        "<conversation>\n[User]: hi\n</conversation>\n\nPROMPT"
    )


def test_prompts_ask_for_pi_structure() -> None:
    assert headings(COMPACTION_PROMPT) == COMPACTION_HEADINGS
    assert headings(summarize.UPDATE_PROMPT) == COMPACTION_HEADINGS
    assert headings(summarize.TURN_PREFIX_PROMPT) == [
        "## Original Request",
        "## Early Progress",
        "## Context for Suffix",
    ]
    assert headings(BRANCH_SUMMARY_PROMPT) == COMPACTION_HEADINGS[:-1]
    assert "- [x]" in COMPACTION_PROMPT and "- [ ]" in COMPACTION_PROMPT
    assert "1. [" in COMPACTION_PROMPT
    assert "<previous-summary>" in summarize.UPDATE_PROMPT
    assert "Do not continue it" in SUMMARIZER_SYSTEM_PROMPT


# --- the offline summarizer -----------------------------------------------------------------


def test_the_offline_model_recognises_only_summary_requests() -> None:
    text = request_text([user("hi")], COMPACTION_PROMPT)
    system = {"role": "system", "content": SUMMARIZER_SYSTEM_PROMPT}
    assert summary_request([system, {"role": "user", "content": text}]) == text
    assert summary_request([{"role": "user", "content": "list files"}]) is None
    assert (
        summary_request(
            [{"role": "user", "content": text}, {"role": "assistant", "content": "x"}, system]
        )
        is None
    )


def test_the_offline_summary_follows_the_requested_headings() -> None:
    text = request_text(
        [
            user("Fix login"),
            assistant("Looking.", tool_calls=[call("read", path="src/auth.py")]),
            tool_result("c1", "read", "code"),
            assistant("Fixed the salt check."),
            user("Now add tests"),
        ],
        "Reply with:\n\n## Goal\n[...]\n\n## Files Touched\n[...]\n\n## Next Steps\n1. [...]",
    )
    assert plan_summary(text).text == (
        "## Goal\nFix login\n\n## Files Touched\n- (none)\n\n"
        "## Next Steps\n1. Continue with: Now add tests"
    )


def test_without_requested_headings_the_offline_summary_uses_a_default_outline() -> None:
    text = request_text([user("Plan a trip"), assistant("Booked.")], "Summarize briefly.")
    assert plan_summary(text).text == (
        "## Goal\nPlan a trip\n\n## Progress\n### Done\n- [x] Plan a trip — Booked.\n\n"
        "## Next Steps\n1. Wait for the next request."
    )


# --- compaction through the offline model ---------------------------------------------------


def long_session() -> SessionManager:
    manager = SessionManager.in_memory(Path("/project"))
    manager.append_model_change("offline", "pi-tui")
    manager.append_message(user("Fix the login bug in src/auth.py"))
    manager.append_message(assistant("", tool_calls=[call("read", "c1", path="src/auth.py")]))
    manager.append_message(tool_result("c1", "read", "def login(): ..."))
    manager.append_message(assistant("", tool_calls=[call("edit", "c2", path="src/auth.py")]))
    manager.append_message(tool_result("c2", "edit", "edited"))
    manager.append_message(assistant("The salt check is fixed."))
    manager.append_message(user("Now document it " + "d" * 400))
    manager.append_message(assistant("Documented in README.md " + "r" * 400))
    return manager


async def test_compaction_summary_has_the_structure_and_file_lists(spy: StreamSpy) -> None:
    preparation = prepare_compaction(
        long_session().path(), CompactionSettings(keep_recent_tokens=150, reserve_tokens=10000)
    )
    result = await compact(preparation, OFFLINE)
    body, lists = result.summary.split("\n\n<", 1)
    assert headings(body) == COMPACTION_HEADINGS
    assert "## Goal\nFix the login bug in src/auth.py\n" in body
    assert "- [x] Fix the login bug in src/auth.py — The salt check is fixed." in body
    assert "<" + lists == "<modified-files>\nsrc/auth.py\n</modified-files>"
    assert result.details == {"readFiles": [], "modifiedFiles": ["src/auth.py"]}
    assert result.first_kept_entry_id == preparation.first_kept_entry_id
    assert result.tokens_before == preparation.tokens_before
    [request] = spy.requests
    assert request["messages"][0] == {"role": "system", "content": SUMMARIZER_SYSTEM_PROMPT}
    assert request["messages"][1]["content"].startswith("<conversation>\n[User]: Fix the login")
    assert request["messages"][1]["content"].endswith(COMPACTION_PROMPT)
    assert request["tools"] == []
    assert (request["max_tokens"], request["thinking"]) == (8000, "high")


async def test_instructions_are_sent_as_additional_focus_and_honoured(spy: StreamSpy) -> None:
    preparation = prepare_compaction(
        long_session().path(), CompactionSettings(keep_recent_tokens=150)
    )
    result = await compact(preparation, OFFLINE, instructions="  the salt handling ")
    assert spy.requests[0]["messages"][1]["content"].endswith(
        "\n\nAdditional focus: the salt handling"
    )
    assert "- Requested focus: the salt handling" in result.summary


async def test_a_previous_summary_is_merged_with_the_update_prompt(spy: StreamSpy) -> None:
    manager = long_session()
    first_kept = manager.path()[7].id
    manager.append_compaction(
        "## Goal\nShip the login fix\n\n## Progress\n### Done\n- [x] Found the bug", first_kept, 9
    )
    manager.append_message(user("Release it " + "z" * 400))
    manager.append_message(assistant("Released " + "w" * 400))
    preparation = prepare_compaction(manager.path(), CompactionSettings(keep_recent_tokens=150))
    result = await compact(preparation, OFFLINE)
    request = spy.requests[0]["messages"][1]["content"]
    assert "<previous-summary>\n## Goal\nShip the login fix" in request
    assert request.endswith(summarize.UPDATE_PROMPT)
    assert result.summary.startswith("## Goal\nShip the login fix\n")
    assert "- [x] Found the bug\n- [x] Now document it" in result.summary


async def test_a_split_turn_joins_history_and_turn_context(spy: StreamSpy) -> None:
    manager = SessionManager.in_memory(Path("/project"))
    manager.append_message(user("Earlier question"))
    manager.append_message(assistant("Earlier answer"))
    manager.append_message(user("Big task"))
    manager.append_message(assistant("", tool_calls=[call("write", "c1", path="out.txt")]))
    manager.append_message(tool_result("c1", "write", "ok"))
    manager.append_message(assistant("k" * 800))
    settings = CompactionSettings(keep_recent_tokens=100, reserve_tokens=10000)
    preparation = prepare_compaction(manager.path(), settings)
    assert preparation.is_split_turn
    result = await compact(preparation, OFFLINE, instructions="watch out")
    history, turn = result.summary.split(SPLIT_TURN_SEPARATOR)
    assert history.startswith("## Goal\nEarlier question\n")
    assert "- Requested focus: watch out" in history
    assert turn.startswith("## Original Request\nBig task\n\n## Early Progress\n")
    assert turn.endswith("\n\n<modified-files>\nout.txt\n</modified-files>")
    budgets = sorted(request["max_tokens"] for request in spy.requests)
    assert budgets == [5000, 8000]


async def test_a_split_turn_without_history_says_so(spy: StreamSpy) -> None:
    manager = SessionManager.in_memory(Path("/project"))
    manager.append_message(user("Only task"))
    manager.append_message(assistant("s" * 800))
    manager.append_message(assistant("t" * 800))
    preparation = prepare_compaction(manager.path(), CompactionSettings(keep_recent_tokens=100))
    assert preparation.is_split_turn and not preparation.messages_to_summarize
    result = await compact(preparation, OFFLINE)
    assert result.summary.startswith("No prior history." + SPLIT_TURN_SEPARATOR)
    assert "## Original Request\nOnly task" in result.summary
    assert len(spy.requests) == 1


async def test_summaries_never_consume_scripted_replies() -> None:
    script(reply("scripted answer"))
    preparation = prepare_compaction(
        long_session().path(), CompactionSettings(keep_recent_tokens=150)
    )
    result = await compact(preparation, OFFLINE)
    assert "scripted answer" not in result.summary
    assert [planned.text for planned in offline_brain().script] == ["scripted answer"]


async def test_models_without_reasoning_get_no_reasoning_option(
    spy: StreamSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        summarize, "model_info", lambda spec: ModelInfo(128_000, 4_000, False, True)
    )
    preparation = prepare_compaction(
        long_session().path(), CompactionSettings(keep_recent_tokens=150)
    )
    await compact(preparation, OFFLINE)
    # The output budget is also held to what the model can write.
    assert (spy.requests[0]["thinking"], spy.requests[0]["max_tokens"]) == ("off", 4000)


# --- branch summaries through the offline model ---------------------------------------------


async def test_branch_summary_has_preamble_structure_and_file_lists(spy: StreamSpy) -> None:
    manager = long_session()
    entries, _ = branch_entries(manager, manager.leaf_id, manager.path()[0].id)
    result = await summarize_branch(prepare_branch_summary(entries), OFFLINE)
    assert result.summary.startswith(
        BRANCH_SUMMARY_PREAMBLE + "## Goal\nFix the login bug in src/auth.py\n"
    )
    assert "- [x] Fix the login bug in src/auth.py — The salt check is fixed." in result.summary
    assert headings(result.summary) == COMPACTION_HEADINGS[:-1]
    assert result.summary.endswith("\n\n<modified-files>\nsrc/auth.py\n</modified-files>")
    assert (result.read_files, result.modified_files) == ([], ["src/auth.py"])
    assert result.details == {"readFiles": [], "modifiedFiles": ["src/auth.py"]}
    [request] = spy.requests
    assert (request["max_tokens"], request["thinking"]) == (2048, "off")
    assert request["messages"][1]["content"].endswith(BRANCH_SUMMARY_PROMPT)


async def test_branch_instructions_add_focus_or_replace_the_prompt(spy: StreamSpy) -> None:
    preparation = BranchSummaryPreparation(
        [user("Try Redis"), assistant("Tried")], FileOperations(), 3
    )
    focused = await summarize_branch(preparation, OFFLINE, instructions="caching")
    assert "- Requested focus: caching" in focused.summary
    replaced = await summarize_branch(
        preparation,
        OFFLINE,
        instructions="Only list:\n## Outcome",
        replace_instructions=True,
    )
    assert replaced.summary == BRANCH_SUMMARY_PREAMBLE + "## Outcome\n- (none)"
    assert spy.requests[1]["messages"][1]["content"].endswith(
        "</conversation>\n\nOnly list:\n## Outcome"
    )


async def test_an_empty_branch_is_not_sent_to_the_model(spy: StreamSpy) -> None:
    ops = FileOperations(read={"r.py"})
    result = await summarize_branch(BranchSummaryPreparation([], ops, 0), OFFLINE)
    assert (result.summary, result.read_files) == (NO_BRANCH_CONTENT, ["r.py"])
    assert spy.requests == []


# --- errors and aborts ----------------------------------------------------------------------


def small_branch() -> BranchSummaryPreparation:
    return BranchSummaryPreparation([user("q"), assistant("a")], FileOperations(), 2)


async def test_provider_errors_become_summarization_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def refuse(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise ProviderError("No API key for offline/pi-tui")

    monkeypatch.setattr(summarize, "open_stream", refuse)
    with pytest.raises(SummarizationError) as failed:
        await summarize_branch(small_branch(), OFFLINE)
    assert failed.value.message == "Summarization failed: No API key for offline/pi-tui"


async def test_unexpected_exceptions_are_classified(monkeypatch: pytest.MonkeyPatch) -> None:
    async def explode(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr(summarize, "open_stream", explode)
    preparation = prepare_compaction(
        long_session().path(), CompactionSettings(keep_recent_tokens=150)
    )
    with pytest.raises(SummarizationError, match=r"^Summarization failed: RuntimeError .*boom"):
        await compact(preparation, OFFLINE)


async def test_an_empty_summary_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline, "plan_summary", lambda request: PlannedReply(""))
    with pytest.raises(SummarizationError, match="empty summary"):
        await summarize_branch(small_branch(), OFFLINE)


async def test_abort_while_streaming_raises_aborted(
    spy: StreamSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(offline.DELAY_ENV, "20")
    abort = asyncio.Event()
    manager = SessionManager.in_memory(Path("/project"))
    manager.append_message(user("Earlier"))
    manager.append_message(assistant("Answer"))
    manager.append_message(user("Task"))
    manager.append_message(assistant("p" * 800))
    manager.append_message(assistant("q" * 800))
    preparation = prepare_compaction(manager.path(), CompactionSettings(keep_recent_tokens=100))
    assert preparation.is_split_turn and preparation.messages_to_summarize
    task = asyncio.ensure_future(compact(preparation, OFFLINE, abort=abort))
    await asyncio.wait_for(spy.started.wait(), 30)
    abort.set()
    with pytest.raises(SummarizationAborted):
        await asyncio.wait_for(task, 5)


async def test_an_empty_compaction_is_refused_without_a_call(spy: StreamSpy) -> None:
    empty = CompactionPreparation(
        first_kept_entry_id="a",
        messages_to_summarize=[],
        turn_prefix_messages=[],
        is_split_turn=False,
        tokens_before=0,
        previous_summary=None,
        file_ops=FileOperations(),
        settings=CompactionSettings(),
    )
    with pytest.raises(CompactionRefused):
        await compact(empty, OFFLINE)
    assert spy.requests == []


async def test_an_abort_set_beforehand_makes_no_call(spy: StreamSpy) -> None:
    abort = asyncio.Event()
    abort.set()
    with pytest.raises(SummarizationAborted):
        await summarize_branch(small_branch(), OFFLINE, abort=abort)
    assert spy.requests == []


def test_a_conversation_too_long_for_the_summarizer_loses_its_oldest_messages() -> None:
    messages = [user(f"question {n} " + "x" * 100) for n in range(50)]
    whole = serialize_conversation(messages)
    cut = serialize_conversation(messages, max_chars=1000)
    assert len(cut) <= 1000 + 100  # the note is extra
    assert cut.startswith("[... ")
    kept = cut.count("[User]: ")
    assert 0 < kept < 50
    assert f"[... {50 - kept} earlier messages left out" in cut
    assert cut.endswith(whole[-200:])
    assert serialize_conversation(messages, max_chars=len(whole) + 2) == whole


def test_the_request_stays_within_its_token_budget() -> None:
    messages = [user("x" * 4000) for _ in range(20)]
    text = request_text(messages, "PROMPT", "old summary", max_tokens=5000)
    assert len(text) <= 5000 * 4 + 200
    assert text.endswith("PROMPT") and "<previous-summary>\nold summary" in text
