"""build_context follows pi's buildSessionContext rules (pi-reference §4, tests §9.1)."""

from __future__ import annotations

from pathlib import Path

from pi_tui.session import SessionIndex, SessionManager, build_context
from pi_tui.session.records import Entry
from tests.factories import assistant, texts, user


def memory() -> SessionManager:
    return SessionManager.in_memory(Path("/project"))


def test_empty_session_has_no_messages_thinking_off_and_no_model() -> None:
    context = memory().build_context()
    assert context.messages == []
    assert context.thinking_level == "off"
    assert context.model is None


def test_single_user_message() -> None:
    session = memory()
    session.append_message(user("hello"))
    assert texts(session.build_context().messages) == ["hello"]


def test_plain_conversation_keeps_roles_in_order() -> None:
    session = memory()
    for text in ("q1", "a1", "q2", "a2"):
        session.append_message(user(text) if text.startswith("q") else assistant(text))
    messages = session.build_context().messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert texts(messages) == ["q1", "a1", "q2", "a2"]


def test_thinking_level_change_sets_level_without_adding_a_message() -> None:
    session = memory()
    session.append_message(user("q"))
    session.append_thinking_level_change("high")
    context = session.build_context()
    assert context.thinking_level == "high"
    assert len(context.messages) == 1


def test_model_comes_from_the_assistant_message() -> None:
    session = memory()
    session.append_message(user("q"))
    session.append_message(assistant("a", provider="anthropic", model="claude-x"))
    model = session.build_context().model
    assert model is not None
    assert (model.provider, model.model_id) == ("anthropic", "claude-x")


def test_a_later_assistant_overrides_an_earlier_model_change() -> None:
    session = memory()
    session.append_model_change("openai", "gpt-a")
    session.append_message(user("q"))
    session.append_message(assistant("a", provider="anthropic", model="claude-x"))
    model = session.build_context().model
    assert model is not None and model.model_id == "claude-x"
    session.append_model_change("openai", "gpt-b")
    model = session.build_context().model
    assert model is not None and model.to_json() == {"provider": "openai", "modelId": "gpt-b"}


def _five_messages_with_compaction(first_kept_position: int) -> SessionManager:
    session = memory()
    ids = []
    for text in ("q1", "a1", "q2", "a2"):
        ids.append(session.append_message(user(text) if text[0] == "q" else assistant(text)))
    session.append_compaction("summary of the start", ids[first_kept_position], 1234)
    session.append_message(user("q3"))
    session.append_message(assistant("a3"))
    return session


def test_compaction_emits_summary_then_kept_entries_then_later_ones() -> None:
    messages = _five_messages_with_compaction(2).build_context().messages
    assert messages[0]["role"] == "compactionSummary"
    assert messages[0]["tokensBefore"] == 1234
    assert texts(messages) == ["summary of the start", "q2", "a2", "q3", "a3"]


def test_compaction_keeping_from_the_first_message_keeps_all() -> None:
    messages = _five_messages_with_compaction(0).build_context().messages
    assert texts(messages) == ["summary of the start", "q1", "a1", "q2", "a2", "q3", "a3"]


def test_only_the_latest_compaction_counts() -> None:
    session = memory()
    first = session.append_message(user("q1"))
    session.append_message(assistant("a1"))
    session.append_compaction("first summary", first, 10)
    kept = session.append_message(user("q2"))
    session.append_message(assistant("a2"))
    session.append_compaction("second summary", kept, 20)
    session.append_message(user("q3"))
    messages = session.build_context().messages
    assert texts(messages) == ["second summary", "q2", "a2", "q3"]


def test_compaction_whose_first_kept_is_off_the_path_keeps_nothing_before_it() -> None:
    session = memory()
    session.append_message(user("q1"))
    session.append_message(assistant("a1"))
    session.append_compaction("summary", "ffffffff", 10)
    session.append_message(user("q2"))
    assert texts(session.build_context().messages) == ["summary", "q2"]


def test_each_branch_sees_only_its_own_path() -> None:
    session = memory()
    session.append_message(user("q"))
    answer = session.append_message(assistant("a"))
    branch_a = session.append_message(user("branch A"))
    session.branch(answer)
    branch_b = session.append_message(user("branch B"))
    assert texts(session.build_context(branch_a).messages)[2] == "branch A"
    assert texts(session.build_context(branch_b).messages)[2] == "branch B"


def test_branch_summary_sits_between_the_old_path_and_the_new_question() -> None:
    session = memory()
    session.append_message(user("q"))
    answer = session.append_message(assistant("a"))
    session.append_message(user("abandoned"))
    session.branch_with_summary(answer, "what we learned")
    session.append_message(user("new question"))
    messages = session.build_context().messages
    assert [m["role"] for m in messages] == ["user", "assistant", "branchSummary", "user"]
    assert messages[2]["fromId"] == answer
    assert texts(messages)[2:] == ["what we learned", "new question"]


def test_complex_tree_each_leaf_has_its_own_context() -> None:
    session = memory()
    session.append_message(user("q1"))
    a1 = session.append_message(assistant("a1"))
    q2 = session.append_message(user("q2"))
    session.append_message(assistant("a2"))
    session.append_compaction("compacted", q2, 100)
    session.append_message(user("q3"))
    leaf_one = session.append_message(assistant("a3"))
    session.branch_with_summary(a1, "branch learned")
    session.append_message(user("q4"))
    leaf_two = session.append_message(assistant("a4"))
    assert texts(session.build_context(leaf_one).messages) == ["compacted", "q2", "a2", "q3", "a3"]
    assert texts(session.build_context(leaf_two).messages) == [
        "q1",
        "a1",
        "branch learned",
        "q4",
        "a4",
    ]


def test_unknown_leaf_falls_back_to_the_last_entry() -> None:
    session = memory()
    session.append_message(user("q"))
    session.append_message(assistant("a"))
    context = build_context(session.index, "not-an-id")
    assert texts(context.messages) == ["q", "a"]


def test_explicit_none_leaf_is_an_empty_context() -> None:
    session = memory()
    session.append_message(user("q"))
    assert build_context(session.index, None).messages == []


def test_orphan_context_is_only_its_own_chain() -> None:
    index = SessionIndex(
        [
            Entry.from_record(
                {
                    "type": "message",
                    "id": "aaaaaaaa",
                    "parentId": None,
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "message": user("root"),
                }
            ),
            Entry.from_record(
                {
                    "type": "message",
                    "id": "bbbbbbbb",
                    "parentId": "missing0",
                    "timestamp": "2026-01-01T00:00:01.000Z",
                    "message": user("orphan"),
                }
            ),
        ]
    )
    assert texts(build_context(index, "bbbbbbbb").messages) == ["orphan"]


def test_custom_message_and_labels_and_custom_entries() -> None:
    session = memory()
    question = session.append_message(user("q"))
    session.append_custom("plan-mode", {"enabled": True})
    session.append_label(question, "start")
    session.append_session_info("named")
    session.append_custom_message("git-status", "clean tree", display=False)
    messages = session.build_context().messages
    assert [m["role"] for m in messages] == ["user", "custom"]
    custom = messages[1]
    assert custom["customType"] == "git-status"
    assert custom["content"] == "clean tree"
    assert custom["display"] is False
    assert "details" not in custom
    assert isinstance(custom["timestamp"], int) and custom["timestamp"] > 1_700_000_000_000
