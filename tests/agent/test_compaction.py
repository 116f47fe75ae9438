"""Compaction and branch-summary planning: estimates, cut points, refusals, file lists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_tui.agent.compaction import (
    ALREADY_COMPACTED,
    NOTHING_TO_COMPACT,
    BranchSummarySettings,
    CompactionRefused,
    CompactionSettings,
    FileOperations,
    branch_entries,
    branch_summary_budget,
    estimate_context_tokens,
    estimate_tokens,
    find_cut_point,
    find_turn_start,
    last_assistant_usage,
    prepare_branch_summary,
    prepare_compaction,
    should_compact,
    usage_tokens,
)
from pi_tui.session import EntryNotFound, SessionManager
from pi_tui.session.records import Entry
from tests.factories import (
    PI_FIXTURES,
    assistant,
    requires_pi_fixtures,
    texts,
    tool_call,
    tool_result,
    user,
)


def with_usage(message: dict[str, Any], total: int) -> dict[str, Any]:
    message["usage"] = {**message["usage"], "totalTokens": total}
    return message


def bash(command: str, output: str) -> dict[str, Any]:
    return {"role": "bashExecution", "command": command, "output": output, "timestamp": 5}


def new_manager() -> SessionManager:
    return SessionManager.in_memory(Path("/project"))


def ids_of(entries: list[Entry]) -> list[str]:
    return [entry.id for entry in entries]


def raw(manager: SessionManager, entry_id: str) -> dict[str, Any]:
    """The stored record of an entry that must exist."""
    entry = manager.get_entry(entry_id)
    assert entry is not None
    return entry.raw


# --- estimates ------------------------------------------------------------------------------


def test_user_text_is_chars_over_four_rounded_up_and_images_do_not_count() -> None:
    assert estimate_tokens({"role": "user", "content": "abcde"}) == 2
    message = user("a" * 8)
    message["content"].append({"type": "image", "data": "x" * 999, "mimeType": "image/png"})
    assert estimate_tokens(message) == 2


def test_assistant_counts_text_thinking_tool_names_and_compact_json_arguments() -> None:
    message = assistant("abcd", tool_calls=[tool_call("read", path="a.py")])
    message["content"].insert(0, {"type": "thinking", "thinking": "think"})
    # 4 text + 5 thinking + 4 "read" + len('{"path":"a.py"}') = 15
    assert estimate_tokens(message) == -(-(4 + 5 + 4 + 15) // 4)


def test_tool_results_and_custom_messages_count_4800_chars_per_image() -> None:
    result = tool_result("c1", "read", "abcd")
    result["content"].append({"type": "image", "data": "", "mimeType": "image/png"})
    assert estimate_tokens(result) == (4 + 4800) // 4
    assert estimate_tokens({"role": "custom", "customType": "t", "content": "abcdefgh"}) == 2


def test_shell_runs_summaries_and_unknown_roles() -> None:
    assert estimate_tokens(bash("ls", "abcdef")) == 2
    assert estimate_tokens({"role": "compactionSummary", "summary": "x" * 9}) == 3
    assert estimate_tokens({"role": "branchSummary", "summary": "x" * 8}) == 2
    assert estimate_tokens({"role": "somethingNew", "content": "x" * 100}) == 0


def test_characters_are_counted_as_javascript_does() -> None:
    # An emoji outside the Basic Multilingual Plane is two UTF-16 units in pi.
    assert estimate_tokens({"role": "user", "content": "😀😀"}) == 1
    assert estimate_tokens({"role": "user", "content": "😀😀😀"}) == 2


def test_usage_tokens_prefers_total_then_sums_the_four_counters() -> None:
    usage = {"input": 1000, "output": 500, "cacheRead": 200, "cacheWrite": 100, "totalTokens": 0}
    assert usage_tokens(usage) == 1800
    assert usage_tokens({**usage, "totalTokens": 1800}) == 1800
    assert usage_tokens({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}) == 0
    assert usage_tokens(None) == 0


def test_last_assistant_usage_skips_aborted_and_errored_turns() -> None:
    good = with_usage(assistant("a"), 111)
    aborted = with_usage(assistant("b", stop_reason="aborted"), 222)
    errored = with_usage(assistant("c", stop_reason="error"), 333)
    assert last_assistant_usage([user("q"), good, user("r"), aborted, errored]) is good["usage"]
    assert last_assistant_usage([user("q"), aborted]) is None
    assert last_assistant_usage([]) is None


def test_context_estimate_is_last_usage_plus_later_messages() -> None:
    messages = [user("x" * 400), with_usage(assistant("a"), 1000), user("y" * 40)]
    assert estimate_context_tokens(messages) == 1000 + 10
    assert estimate_context_tokens([user("x" * 400), user("y" * 40)]) == 110


def test_should_compact_only_strictly_past_the_reserve() -> None:
    settings = CompactionSettings(reserve_tokens=10000)
    assert should_compact(95000, 100000, settings) is True
    assert should_compact(89000, 100000, settings) is False
    assert should_compact(90000, 100000, settings) is False
    disabled = CompactionSettings(enabled=False, reserve_tokens=10000)
    assert should_compact(95000, 100000, disabled) is False


# --- file operations ------------------------------------------------------------------------


def test_only_read_write_and_edit_calls_with_a_string_path_count() -> None:
    ops = FileOperations()
    ops.add_message(
        assistant(
            "",
            tool_calls=[
                tool_call("read", "1", path="src/a.py"),
                tool_call("write", "2", path="src/new.py", content="x"),
                tool_call("edit", "3", path="src/a.py", oldText="a", newText="b"),
                tool_call("read", "4", path="docs/readme.md"),
                tool_call("bash", "5", path="ignored.sh", command="ls"),
                tool_call("read", "6", path=7),
                tool_call("read", "7"),
            ],
        )
    )
    ops.add_message({"role": "user", "content": [tool_call("read", path="not-a-call.py")]})
    assert ops.read_files() == ["docs/readme.md"]
    assert ops.modified_files() == ["src/a.py", "src/new.py"]
    assert ops.details() == {
        "readFiles": ["docs/readme.md"],
        "modifiedFiles": ["src/a.py", "src/new.py"],
    }


def test_file_lists_are_formatted_like_pi_with_empty_sections_left_out() -> None:
    ops = FileOperations(read={"b.py", "a.py"}, written={"z.py"}, edited={"y.py"})
    assert ops.format_file_lists() == (
        "\n\n<read-files>\na.py\nb.py\n</read-files>"
        "\n\n<modified-files>\ny.py\nz.py\n</modified-files>"
    )
    assert FileOperations(edited={"y.py"}).format_file_lists() == (
        "\n\n<modified-files>\ny.py\n</modified-files>"
    )
    assert FileOperations().format_file_lists() == ""


def test_earlier_summary_details_carry_over_unless_an_extension_made_them() -> None:
    manager = new_manager()
    manager.append_message(user("q"))
    pi_made = manager.append_branch_summary(
        "s", {"readFiles": ["r.py", 3], "modifiedFiles": ["m.py"]}
    )
    hooked = manager.append_branch_summary(
        "s", {"readFiles": ["hook.py"], "modifiedFiles": []}, from_hook=True
    )
    ops = FileOperations()
    for entry_id in (pi_made, hooked):
        entry = manager.get_entry(entry_id)
        assert entry is not None
        ops.add_summary_details(entry)
    assert (ops.read_files(), ops.modified_files()) == (["r.py"], ["m.py"])


# --- cut points -----------------------------------------------------------------------------


def test_cut_never_lands_on_a_tool_result_and_splits_the_turn_at_its_user_message() -> None:
    manager = new_manager()
    manager.append_message(user("first " * 20))
    manager.append_message(assistant("", tool_calls=[tool_call("read", path="big.txt")]))
    manager.append_message(tool_result("c1", "read", "x" * 4000))
    manager.append_message(assistant("done"))
    path = manager.path()
    cut = find_cut_point(path, 0, len(path), keep_recent_tokens=500)
    # The budget is reached on the tool result; the next valid cut is the final assistant.
    assert path[cut.first_kept_index].role == "assistant"
    assert cut.first_kept_index == 3
    assert (cut.is_split_turn, cut.turn_start_index) == (True, 0)


def test_without_valid_cut_points_the_window_start_is_returned() -> None:
    manager = new_manager()
    manager.append_thinking_level_change("high")
    manager.append_message(tool_result("c1", "read", "orphan"))
    path = manager.path()
    cut = find_cut_point(path, 0, len(path), keep_recent_tokens=1)
    assert (cut.first_kept_index, cut.is_split_turn, cut.turn_start_index) == (0, False, None)


def test_a_budget_that_is_never_reached_keeps_everything() -> None:
    manager = new_manager()
    manager.append_model_change("p1", "m1")
    manager.append_thinking_level_change("off")
    for n in range(3):
        manager.append_message(user(f"question {n}"))
        manager.append_message(assistant(f"answer {n}"))
    path = manager.path()
    cut = find_cut_point(path, 0, len(path), keep_recent_tokens=20000)
    # The first cut point (the first user message) moves back over the settings entries.
    assert cut.first_kept_index == 0 and cut.is_split_turn is False


def test_cut_moves_back_over_non_message_entries_and_stops_at_a_message() -> None:
    manager = new_manager()
    manager.append_message(user("old " * 50))
    manager.append_message(assistant("old answer"))
    manager.append_model_change("p2", "m2")
    first_user = manager.path()[0].id
    manager.append_label(first_user, "start")
    manager.append_custom("plan-mode", {"on": True})
    manager.append_message(user("new " * 50))
    manager.append_message(assistant("new answer"))
    path = manager.path()
    cut = find_cut_point(path, 0, len(path), keep_recent_tokens=40)
    assert [entry.type for entry in path[cut.first_kept_index :]][:3] == [
        "model_change",
        "label",
        "custom",
    ]
    assert path[cut.first_kept_index - 1].role == "assistant"
    # The kept part starts with whole turns: settings in front of a user message do not
    # make it the middle of a turn.
    assert cut.is_split_turn is False and cut.turn_start_index is None


def test_cut_does_not_move_back_past_a_compaction() -> None:
    manager = new_manager()
    manager.append_message(user("a"))
    manager.append_message(assistant("b"))
    first = manager.path()[0].id
    manager.append_compaction("summary", first, 10)
    manager.append_thinking_level_change("high")
    manager.append_message(user("c " * 50))
    manager.append_message(assistant("d"))
    path = manager.path()
    cut = find_cut_point(path, 0, len(path), keep_recent_tokens=20)
    assert path[cut.first_kept_index].type == "thinking_level_change"
    assert path[cut.first_kept_index - 1].type == "compaction"


def test_split_turn_reports_the_user_message_that_started_it() -> None:
    manager = new_manager()
    manager.append_message(user("earlier question"))
    manager.append_message(assistant("earlier answer"))
    manager.append_message(user("do the big task"))
    manager.append_message(assistant("step", tool_calls=[tool_call("read", path="a.py")]))
    manager.append_message(tool_result("c1", "read", "content"))
    manager.append_message(assistant("x" * 400))
    manager.append_message(assistant("y" * 40))
    path = manager.path()
    cut = find_cut_point(path, 0, len(path), keep_recent_tokens=100)
    assert cut.first_kept_index == 5
    assert cut.is_split_turn is True and cut.turn_start_index == 2


def test_shell_runs_and_custom_messages_start_turns() -> None:
    manager = new_manager()
    manager.append_message(user("question"))
    manager.append_message(bash("make", "ok"))
    manager.append_message(assistant("a"))
    manager.append_custom_message("note", "injected")
    manager.append_message(assistant("b"))
    path = manager.path()
    assert find_turn_start(path, 2, 0) == 1
    assert find_turn_start(path, 4, 0) == 3
    assert find_turn_start(path, 4, 4) is None


# --- prepare_compaction ---------------------------------------------------------------------


def conversation(manager: SessionManager, turns: int, size: int = 400) -> list[str]:
    """Append ``turns`` user/assistant pairs of about ``size`` characters each; their ids."""
    ids = []
    for n in range(turns):
        ids.append(manager.append_message(user(f"q{n} " + "x" * size)))
        ids.append(manager.append_message(with_usage(assistant(f"a{n} " + "y" * size), 1000 + n)))
    return ids


def test_a_path_ending_in_a_compaction_is_refused() -> None:
    manager = new_manager()
    ids = conversation(manager, 3)
    manager.append_compaction("summary", ids[2], 500)
    with pytest.raises(CompactionRefused, match="Already compacted") as refused:
        prepare_compaction(manager.path(), CompactionSettings(keep_recent_tokens=10))
    assert str(refused.value) == ALREADY_COMPACTED


def test_a_session_with_one_message_is_refused() -> None:
    manager = new_manager()
    manager.append_model_change("p1", "m1")
    manager.append_message(user("x" * 4000))
    with pytest.raises(CompactionRefused) as refused:
        prepare_compaction(manager.path(), CompactionSettings(keep_recent_tokens=1))
    assert str(refused.value) == NOTHING_TO_COMPACT
    with pytest.raises(CompactionRefused):
        prepare_compaction([], CompactionSettings())


def test_nothing_to_summarize_is_refused_instead_of_an_empty_request() -> None:
    manager = new_manager()
    conversation(manager, 3)
    with pytest.raises(CompactionRefused) as refused:
        prepare_compaction(manager.path(), CompactionSettings(keep_recent_tokens=20000))
    assert str(refused.value) == NOTHING_TO_COMPACT


def test_preparation_summarizes_whole_turns_and_keeps_the_newest() -> None:
    manager = new_manager()
    manager.append_model_change("p1", "m1")
    manager.append_message(user("read it"))
    manager.append_message(assistant("", tool_calls=[tool_call("read", path="old.py")]))
    manager.append_message(tool_result("c1", "read", "old"))
    manager.append_message(with_usage(assistant("read"), 900))
    ids = conversation(manager, 2)
    edit = assistant("", tool_calls=[tool_call("edit", "c9", path="kept.py")])
    manager.append_message(with_usage(edit, 1234))
    manager.append_message(tool_result("c9", "edit", "edited"))
    path = manager.path()
    settings = CompactionSettings(keep_recent_tokens=150)
    preparation = prepare_compaction(path, settings)
    assert preparation.first_kept_entry_id == ids[2]
    assert texts(preparation.messages_to_summarize) == [
        "read it",
        "",
        "old",
        "read",
        texts([path[5].raw["message"]])[0],
        texts([path[6].raw["message"]])[0],
    ]
    assert preparation.is_split_turn is False and preparation.turn_prefix_messages == []
    assert preparation.previous_summary is None
    # The last good usage plus the estimate of the tool result after it.
    assert preparation.tokens_before == 1234 + estimate_tokens(path[-1].raw["message"])
    # Only summarized tool calls count; the kept edit is still in the context.
    assert preparation.file_ops.details() == {"readFiles": ["old.py"], "modifiedFiles": []}
    assert preparation.settings is settings


def test_preparation_of_a_split_turn_separates_history_and_turn_prefix() -> None:
    manager = new_manager()
    manager.append_message(user("earlier"))
    manager.append_message(assistant("earlier answer"))
    turn = manager.append_message(user("big task"))
    manager.append_message(
        assistant("", tool_calls=[tool_call("write", path="out.py", content="")])
    )
    manager.append_message(tool_result("c1", "write", "ok"))
    kept = manager.append_message(assistant("z" * 800))
    preparation = prepare_compaction(manager.path(), CompactionSettings(keep_recent_tokens=100))
    assert preparation.first_kept_entry_id == kept
    assert preparation.is_split_turn is True
    assert texts(preparation.messages_to_summarize) == ["earlier", "earlier answer"]
    assert [m["role"] for m in preparation.turn_prefix_messages] == [
        "user",
        "assistant",
        "toolResult",
    ]
    assert preparation.turn_prefix_messages[0] is raw(manager, turn)["message"]
    assert preparation.file_ops.modified_files() == ["out.py"]


def test_a_repeated_compaction_also_summarizes_what_the_previous_one_kept() -> None:
    manager = new_manager()
    ids = conversation(manager, 2)
    manager.append_message(assistant("", tool_calls=[tool_call("read", path="seen.py")]))
    manager.append_compaction(
        "first summary", ids[2], 777, {"readFiles": ["a.py"], "modifiedFiles": ["b.py"]}
    )
    later = conversation(manager, 2)
    manager.append_message(user("last question"))
    path = manager.path()
    preparation = prepare_compaction(path, CompactionSettings(keep_recent_tokens=120))
    assert preparation.previous_summary == "first summary"
    assert preparation.first_kept_entry_id == later[2]
    summarized = texts(preparation.messages_to_summarize)
    assert summarized[:2] == [
        texts([path[2].raw["message"]])[0],
        texts([path[3].raw["message"]])[0],
    ]
    assert len(summarized) == 5 and "first summary" not in summarized
    assert preparation.file_ops.details() == {
        "readFiles": ["a.py", "seen.py"],
        "modifiedFiles": ["b.py"],
    }
    # From the previous summary on: the last good usage (1001) plus the trailing question.
    assert preparation.tokens_before == 1001 + estimate_tokens(user("last question"))


def test_previous_details_made_by_an_extension_are_not_carried_over() -> None:
    manager = new_manager()
    ids = conversation(manager, 2)
    manager.append_compaction(
        "hook summary", ids[2], 1, {"readFiles": ["hook.py"], "modifiedFiles": []}, from_hook=True
    )
    conversation(manager, 3)
    preparation = prepare_compaction(manager.path(), CompactionSettings(keep_recent_tokens=120))
    assert preparation.file_ops.details() == {"readFiles": [], "modifiedFiles": []}


def test_appending_the_prepared_compaction_gives_summary_then_kept_messages() -> None:
    manager = new_manager()
    manager.append_model_change("p1", "m1")
    manager.append_thinking_level_change("medium")
    ids = conversation(manager, 4)
    preparation = prepare_compaction(manager.path(), CompactionSettings(keep_recent_tokens=250))
    kept_from = ids.index(preparation.first_kept_entry_id)
    assert kept_from > 0
    manager.append_compaction(
        "## Goal\nTest.",
        preparation.first_kept_entry_id,
        preparation.tokens_before,
        preparation.file_ops.details(),
    )
    context = manager.build_context()
    assert context.messages[0]["role"] == "compactionSummary"
    assert context.messages[0]["summary"] == "## Goal\nTest."
    assert context.messages[0]["tokensBefore"] == preparation.tokens_before
    kept = [raw(manager, entry_id)["message"] for entry_id in ids[kept_from:]]
    assert context.messages[1:] == kept
    assert context.thinking_level == "medium"


@requires_pi_fixtures
def test_pi_compactions_are_reproduced_on_its_own_files() -> None:
    with SessionManager.open(PI_FIXTURES / "rpc_compact.jsonl", read_only=True) as manager:
        first = prepare_compaction(
            manager.path("08423ed0"), CompactionSettings(keep_recent_tokens=400)
        )
        assert (first.first_kept_entry_id, first.tokens_before) == ("4cd612cd", 1536)
        second = prepare_compaction(
            manager.path("40dd06e3"), CompactionSettings(keep_recent_tokens=400)
        )
        assert (second.first_kept_entry_id, second.tokens_before) == ("8115ab30", 2088)
        assert second.previous_summary == raw(manager, "f9656dc9")["summary"]
    with SessionManager.open(PI_FIXTURES / "rpc_compact_split.jsonl", read_only=True) as manager:
        split = prepare_compaction(
            manager.path("ffd1b991"), CompactionSettings(keep_recent_tokens=600)
        )
        assert (split.first_kept_entry_id, split.tokens_before) == ("90a4e5b0", 1536)
        assert split.is_split_turn is True and split.messages_to_summarize == []
        assert texts(split.turn_prefix_messages) == ["Do step one."]


# --- branch summaries -----------------------------------------------------------------------


def branched() -> tuple[SessionManager, dict[str, str]]:
    """root ← q1 ← a1, then two branches from a1: q2 ← a2 (old) and q3 ← a3 (other)."""
    manager = new_manager()
    names: dict[str, str] = {}
    names["root"] = manager.append_model_change("p1", "m1")
    names["q1"] = manager.append_message(user("q1"))
    names["a1"] = manager.append_message(assistant("a1"))
    names["q2"] = manager.append_message(user("q2"))
    names["a2"] = manager.append_message(assistant("a2"))
    manager.branch(names["a1"])
    names["q3"] = manager.append_message(user("q3"))
    names["a3"] = manager.append_message(assistant("a3"))
    return manager, names


def test_branch_entries_run_from_the_old_leaf_to_the_common_ancestor() -> None:
    manager, n = branched()
    entries, common = branch_entries(manager, n["a2"], n["q3"])
    assert ids_of(entries) == [n["q2"], n["a2"]] and common == n["a1"]
    entries, common = branch_entries(manager.index, n["a3"], n["q2"])
    assert ids_of(entries) == [n["q3"], n["a3"]] and common == n["a1"]


def test_no_branch_entries_without_an_old_leaf_or_when_moving_down_the_same_path() -> None:
    manager, n = branched()
    assert branch_entries(manager, None, n["a2"]) == ([], None)
    assert branch_entries(manager, "unknown", n["a2"]) == ([], None)
    assert branch_entries(manager, n["q1"], n["a2"]) == ([], n["q1"])
    assert branch_entries(manager, n["a2"], n["a2"]) == ([], n["a2"])


def test_moving_up_the_same_path_covers_the_entries_left_behind() -> None:
    manager, n = branched()
    entries, common = branch_entries(manager, n["a2"], n["q1"])
    assert ids_of(entries) == [n["a1"], n["q2"], n["a2"]] and common == n["q1"]


def test_separate_roots_share_no_ancestor_and_an_unknown_target_is_an_error() -> None:
    manager, n = branched()
    manager.reset_leaf()
    other_root = manager.append_message(user("another root"))
    entries, common = branch_entries(manager, n["a3"], other_root)
    assert ids_of(entries) == [n["root"], n["q1"], n["a1"], n["q3"], n["a3"]]
    assert common is None
    with pytest.raises(EntryNotFound):
        branch_entries(manager, n["a3"], "missing")


def test_branch_preparation_converts_entries_and_skips_results_and_settings() -> None:
    manager = new_manager()
    start = manager.append_message(user("start"))
    manager.append_message(assistant("", tool_calls=[tool_call("edit", path="e.py")]))
    manager.append_message(tool_result("c1", "edit", "edited"))
    manager.append_thinking_level_change("high")
    manager.append_custom("state", {})
    manager.append_label(start, "here")
    manager.append_custom_message("note", "injected")
    manager.append_compaction("compacted", start, 5)
    manager.append_branch_summary("nested", {"readFiles": ["n.py"], "modifiedFiles": []})
    entries = manager.path()
    preparation = prepare_branch_summary(entries)
    assert [m["role"] for m in preparation.messages] == [
        "user",
        "assistant",
        "custom",
        "compactionSummary",
        "branchSummary",
    ]
    assert preparation.total_tokens == sum(estimate_tokens(m) for m in preparation.messages)
    assert preparation.file_ops.details() == {"readFiles": ["n.py"], "modifiedFiles": ["e.py"]}


def test_branch_budget_keeps_the_newest_messages_but_all_nested_file_lists() -> None:
    manager = new_manager()
    manager.append_branch_summary("old", {"readFiles": ["deep.py"], "modifiedFiles": []})
    manager.append_message(assistant("", tool_calls=[tool_call("write", path="early.py")]))
    manager.append_message(user("a" * 400))
    manager.append_message(user("b" * 400))
    manager.append_message(user("c" * 400))
    preparation = prepare_branch_summary(manager.path(), token_budget=250)
    assert texts(preparation.messages) == ["b" * 400, "c" * 400]
    assert preparation.total_tokens == 200
    # File lists of nested summaries count even beyond the budget; calls beyond it do not.
    assert preparation.file_ops.details() == {"readFiles": ["deep.py"], "modifiedFiles": []}


def test_a_summary_is_squeezed_in_below_ninety_percent_of_the_budget() -> None:
    manager = new_manager()
    manager.append_message(user("too old"))
    manager.append_branch_summary("s" * 200)
    manager.append_message(user("x" * 280))
    squeezed = prepare_branch_summary(manager.path(), token_budget=100)
    assert [m["role"] for m in squeezed.messages] == ["branchSummary", "user"]
    assert squeezed.total_tokens == 50 + 70

    manager = new_manager()
    manager.append_branch_summary("s" * 200)
    manager.append_message(user("x" * 360))
    full = prepare_branch_summary(manager.path(), token_budget=100)
    assert [m["role"] for m in full.messages] == ["user"]


def test_branch_budget_is_the_window_minus_the_reserve() -> None:
    assert branch_summary_budget(128000, BranchSummarySettings()) == 128000 - 16384
    assert branch_summary_budget(1000, BranchSummarySettings(reserve_tokens=5000)) == 0
