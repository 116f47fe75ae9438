"""SessionManager semantics: appends, leaf moves, tree, labels, names, forks (pi §9.2–9.7)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from pi_tui.session import EntryNotFound, SessionManager, read_session_file
from pi_tui.session.entries import (
    AssistantMessage,
    CompactionEntry,
    TextContent,
    UserMessage,
    parse_entry,
)
from tests.factories import assistant, texts, user

ENTRY_ID = re.compile(r"^[0-9a-f]{8}$")


def memory() -> SessionManager:
    return SessionManager.in_memory(Path("/project"))


def test_session_id_is_a_uuid7_and_entry_ids_are_eight_hex_chars() -> None:
    session = memory()
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", session.session_id
    )
    ids = {session.append_message(user(str(n))) for n in range(200)}
    assert len(ids) == 200
    assert all(ENTRY_ID.match(entry_id) for entry_id in ids)


def test_each_new_session_gets_a_fresh_id_and_parent_session_is_kept(tmp_path: Path) -> None:
    first = SessionManager.create(tmp_path, tmp_path / "s")
    second = SessionManager.create(tmp_path, tmp_path / "s", parent_session="/old.jsonl")
    assert first.session_id != second.session_id
    assert second.header["parentSession"] == "/old.jsonl"
    assert "parentSession" not in first.header


def test_appends_chain_parent_ids_and_move_the_leaf() -> None:
    session = memory()
    assert session.leaf_id is None
    first = session.append_message(user("1"))
    assert session.leaf_id == first
    second = session.append_message(assistant("2"))
    third = session.append_message(user("3"))
    parents = [entry.parent_id for entry in session.entries()]
    assert parents == [None, first, second]
    assert session.leaf_id == third


def test_every_entry_kind_links_to_the_leaf_and_parents_the_next() -> None:
    session = memory()
    ids = [
        session.append_message(user("q")),
        session.append_thinking_level_change("high"),
        session.append_model_change("openai", "gpt"),
        session.append_compaction("sum", "x", 5, {"readFiles": [], "modifiedFiles": []}),
        session.append_custom("ext", {"n": 1}),
        session.append_custom_message("note", "hi"),
        session.append_session_info("  name  "),
    ]
    session.append_label(ids[0], "L")
    entries = session.entries()
    for previous, entry in itertools.pairwise(entries):
        assert entry.parent_id == previous.id
    compaction = session.get_entry(ids[3])
    assert compaction is not None
    assert compaction.raw["summary"] == "sum"
    assert compaction.raw["firstKeptEntryId"] == "x"
    assert compaction.raw["tokensBefore"] == 5
    assert compaction.raw["fromHook"] is False
    assert isinstance(compaction.model(), CompactionEntry)
    assert session.session_name == "name"


def test_typed_models_are_accepted_and_written_with_pi_keys() -> None:
    session = memory()
    session.append_message(UserMessage(content=[TextContent(text="typed")], timestamp=5))
    reply = AssistantMessage(
        content=[TextContent(text="yes")], provider="p", model="m", timestamp=6
    )
    entry_id = session.append_message(reply)
    entry = session.get_entry(entry_id)
    assert entry is not None
    message = entry.raw["message"]
    assert list(message) == [
        "role",
        "content",
        "api",
        "provider",
        "model",
        "usage",
        "stopReason",
        "timestamp",
    ]
    assert message["usage"]["cacheRead"] == 0
    assert "errorMessage" not in message
    assert texts(session.build_context().messages) == ["typed", "yes"]


def test_summary_roles_cannot_be_appended_as_messages() -> None:
    session = memory()
    with pytest.raises(ValueError, match="synthesized"):
        session.append_message(
            {"role": "branchSummary", "summary": "s", "fromId": "x", "timestamp": 1}
        )


def test_path_of_empty_single_and_full_sessions() -> None:
    session = memory()
    assert session.path() == []
    only = session.append_message(user("1"))
    assert [entry.id for entry in session.path()] == [only]
    second = session.append_thinking_level_change("low")
    third = session.append_message(assistant("2"))
    assert [entry.id for entry in session.path()] == [only, second, third]
    assert [entry.id for entry in session.path(second)] == [only, second]
    assert session.path("nope") == []


def test_branch_moves_the_leaf_writes_nothing_and_the_next_append_is_a_sibling() -> None:
    session = memory()
    question = session.append_message(user("q"))
    first_answer = session.append_message(assistant("a"))
    count = len(session.entries())
    session.branch(question)
    assert session.leaf_id == question
    assert len(session.entries()) == count
    second_answer = session.append_message(assistant("b"))
    assert {e.id for e in session.get_children(question)} == {first_answer, second_answer}


def test_branch_to_an_unknown_id_raises_entry_not_found() -> None:
    session = memory()
    with pytest.raises(EntryNotFound, match="Entry nonexistent not found"):
        session.branch("nonexistent")


def test_reset_leaf_makes_the_next_append_a_new_root() -> None:
    session = memory()
    session.append_message(user("q"))
    session.reset_leaf()
    assert session.leaf is None
    new_root = session.append_message(user("again"))
    entry = session.get_entry(new_root)
    assert entry is not None and entry.parent_id is None
    assert len(session.get_tree()) == 2


def test_get_tree_of_empty_linear_and_branchy_sessions() -> None:
    session = memory()
    assert session.get_tree() == []
    root = session.append_message(user("root"))
    point = session.append_message(assistant("point"))
    for n in range(3):
        session.branch(point)
        session.append_message(user(f"branch {n}"))
        session.append_message(assistant(f"answer {n}"))
    roots = session.get_tree()
    assert [node.entry.id for node in roots] == [root]
    branch_point = roots[0].children[0]
    assert branch_point.entry.id == point
    assert [texts([c.entry.raw["message"]])[0] for c in branch_point.children] == [
        "branch 0",
        "branch 1",
        "branch 2",
    ]
    assert all(len(child.children) == 1 for child in branch_point.children)


def test_tree_children_are_sorted_by_timestamp_not_file_order() -> None:
    session = memory()
    root = session.append_message(user("root"))
    late = session.append_message(user("late"))
    session.branch(root)
    early = session.append_message(user("early"))
    session.get_entry(late).raw["timestamp"] = "2099-01-01T00:00:00.000Z"  # type: ignore[union-attr]
    session.get_entry(late).timestamp = "2099-01-01T00:00:00.000Z"  # type: ignore[union-attr]
    children = session.get_tree()[0].children
    assert [child.entry.id for child in children] == [early, late]


def test_branch_with_summary_attaches_at_the_branch_point() -> None:
    session = memory()
    session.append_message(user("q"))
    answer = session.append_message(assistant("a"))
    session.append_message(user("explored"))
    summary = session.branch_with_summary(answer, "learned", {"readFiles": ["a.py"]})
    entry = session.get_entry(summary)
    assert entry is not None
    assert entry.parent_id == answer
    assert entry.raw["fromId"] == answer
    assert entry.raw["details"] == {"readFiles": ["a.py"]}
    assert session.leaf_id == summary
    with pytest.raises(EntryNotFound):
        session.branch_with_summary("missing", "x")


def test_branch_with_summary_from_before_the_root_uses_root_as_from_id() -> None:
    session = memory()
    session.append_message(user("q"))
    summary = session.branch_with_summary(None, "learned")
    entry = session.get_entry(summary)
    assert entry is not None
    assert entry.parent_id is None
    assert entry.raw["fromId"] == "root"


def test_get_entry_and_leaf_entry() -> None:
    session = memory()
    assert session.leaf is None
    assert session.get_entry("missing") is None
    entry_id = session.append_message(user("stored"))
    leaf = session.leaf
    assert leaf is not None and leaf.id == entry_id
    assert leaf.raw["message"]["content"][0]["text"] == "stored"


# --- labels ---------------------------------------------------------------------------------


def test_label_set_get_clear_and_last_wins() -> None:
    session = memory()
    target = session.append_message(user("q"))
    label_id = session.append_label(target, "first")
    label_entry = session.get_entry(label_id)
    assert label_entry is not None
    assert label_entry.raw["targetId"] == target and label_entry.raw["label"] == "first"
    assert session.get_label(target) == "first"
    session.append_label(target, "second")
    assert session.get_label(target) == "second"
    clear_id = session.append_label(target, None)
    assert session.get_label(target) is None
    cleared = session.get_entry(clear_id)
    assert cleared is not None and "label" not in cleared.raw


def test_labels_show_on_tree_nodes_and_never_in_context() -> None:
    session = memory()
    target = session.append_message(user("q"))
    session.append_label(target, "here")
    assert session.get_tree()[0].label == "here"
    assert len(session.build_context().messages) == 1


def test_labeling_an_unknown_entry_raises() -> None:
    with pytest.raises(EntryNotFound, match="Entry non-existent not found"):
        memory().append_label("non-existent", "x")


def test_custom_entry_is_on_the_path_but_not_in_the_context() -> None:
    session = memory()
    first = session.append_message(user("q"))
    custom = session.append_custom("state", {"a": 1})
    last = session.append_message(assistant("a"))
    custom_entry = session.get_entry(custom)
    assert custom_entry is not None and custom_entry.parent_id == first
    assert [entry.id for entry in session.path()] == [first, custom, last]
    assert len(session.build_context().messages) == 2
    assert list(custom_entry.raw) == ["type", "customType", "data", "id", "parentId", "timestamp"]


def test_session_name_is_the_latest_non_empty_one() -> None:
    session = memory()
    assert session.session_name is None
    session.append_session_info("first")
    session.append_session_info("   ")
    assert session.session_name == "first"
    session.append_session_info("second")
    assert session.session_name == "second"


# --- forks ----------------------------------------------------------------------------------


def _branchy(tmp_path: Path) -> tuple[SessionManager, dict[str, str]]:
    session = SessionManager.create(tmp_path, tmp_path / "sessions")
    ids = {"q1": session.append_message(user("q1"))}
    ids["a1"] = session.append_message(assistant("a1"))
    ids["q2"] = session.append_message(user("q2"))
    ids["a2"] = session.append_message(assistant("a2"))
    session.append_label(ids["q1"], "start")
    session.append_label(ids["a2"], "off-path")
    session.branch(ids["a1"])
    ids["q3"] = session.append_message(user("q3"))
    return session, ids


def test_fork_copies_the_path_and_recreates_its_labels(tmp_path: Path) -> None:
    source, ids = _branchy(tmp_path)
    forked = source.fork(ids["q3"])
    assert forked.session_id != source.session_id
    assert forked.header["parentSession"] == str(source.session_file)
    copied = [entry for entry in forked.entries() if entry.type == "message"]
    assert [entry.id for entry in copied] == [ids["q1"], ids["a1"], ids["q3"]]
    labels = [entry for entry in forked.entries() if entry.type == "label"]
    assert [(entry.raw["targetId"], entry.raw["label"]) for entry in labels] == [
        (ids["q1"], "start")
    ]
    assert labels[0].parent_id == ids["q3"]
    assert forked.get_label(ids["q1"]) == "start"
    # Written at once (the path holds an assistant), with exactly one header.
    assert forked.session_file is not None
    loaded = read_session_file(forked.session_file)
    assert loaded.header is not None and loaded.header["id"] == forked.session_id
    assert [entry.id for entry in loaded.entries] == [entry.id for entry in forked.entries()]
    forked.close()
    source.close()


def test_fork_without_an_assistant_is_written_only_at_the_first_reply(tmp_path: Path) -> None:
    source, ids = _branchy(tmp_path)
    forked = source.fork(ids["q1"])
    assert forked.session_file is not None
    assert not forked.session_file.exists()
    forked.append_custom("ext")
    forked.append_message(assistant("reply"))
    lines = forked.session_file.read_bytes().splitlines()
    assert sum(b'"type":"session"' in line for line in lines) == 1
    loaded = read_session_file(forked.session_file)
    assert len({entry.id for entry in loaded.entries}) == len(loaded.entries) == 4
    forked.close()
    source.close()


def test_fork_of_unknown_entry_raises_and_in_memory_fork_stays_in_memory() -> None:
    session = memory()
    session.append_message(user("q"))
    with pytest.raises(EntryNotFound):
        session.fork("nope")
    forked = session.fork(session.leaf_id or "")
    assert forked.session_file is None
    assert len(forked.entries()) == 1


def test_user_messages_lists_every_branch_in_file_order() -> None:
    session = memory()
    session.append_message(user("one"))
    answer = session.append_message(assistant("a"))
    session.append_message(user("two"))
    session.branch(answer)
    session.append_message(user("three"))
    session.append_message(user("   "))
    assert [text for _, text in session.user_messages()] == ["one", "two", "three"]


def test_parse_entry_gives_typed_views_and_keeps_unknown_types() -> None:
    unknown = parse_entry(
        {
            "type": "future_kind",
            "id": "abcdef12",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "extra": [1],
        }
    )
    assert unknown.type == "future_kind"
    assert unknown.to_record()["extra"] == [1]
