"""TreeModel: the navigator's rows as pure data (filters, search, layout, folds, jumps)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pi_tui.session.manager import LEAF_MARKER_TYPE, SessionManager
from pi_tui.session.records import Entry
from pi_tui.session.tree import SessionIndex
from pi_tui.ui.tree_model import FILTER_MODES, TreeModel, is_tool_call_only
from tests.factories import assistant, tool_result, user


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    """A toolCall content block."""
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def shape(model: TreeModel) -> list[tuple[str, str]]:
    """(display prefix, text) per row: the picture a person sees."""
    return [(row.display_prefix, row.text) for row in model.rows]


def ids(model: TreeModel) -> list[str]:
    return [row.entry_id for row in model.rows]


@dataclass
class WorkedExample:
    """pi-reference §13: A…J with a branch at D and a label on C."""

    manager: SessionManager
    ids: dict[str, str]


def worked_example() -> WorkedExample:
    manager = SessionManager.in_memory(Path("/p"))
    e: dict[str, str] = {}
    e["A"] = manager.append_model_change("p", "m")
    e["B"] = manager.append_thinking_level_change("medium")
    e["C"] = manager.append_message(user("hi"))
    e["D"] = manager.append_message(assistant("hello"))
    e["E"] = manager.append_message(user("try X"))
    e["F"] = manager.append_message(assistant("X done"))
    manager.branch(e["D"])
    e["G"] = manager.append_branch_summary("explored X")
    e["H"] = manager.append_message(user("try Y"))
    e["I"] = manager.append_message(assistant("Y done"))
    e["J"] = manager.append_label(e["C"], "start")
    return WorkedExample(manager, e)


@dataclass
class Debugging:
    """The reference debugging scenario: a read turn, then a second try with grep."""

    manager: SessionManager
    ids: dict[str, str]


def debugging() -> Debugging:
    manager = SessionManager.in_memory(Path("/p"))
    e: dict[str, str] = {}
    e["e1"] = manager.append_model_change("p", "m")
    e["e2"] = manager.append_message(user("why does it crash?"))
    e["e3"] = manager.append_message(
        assistant("", stop_reason="toolUse", tool_calls=[call("c1", "read", path="a.py")])
    )
    e["e4"] = manager.append_message(tool_result("c1", "read", "x = 1"))
    e["e5"] = manager.append_message(assistant("a.py divides by zero"))
    manager.branch(e["e2"])
    e["e6"] = manager.append_message(user("search for the call sites instead"))
    e["e7"] = manager.append_message(
        assistant("", stop_reason="toolUse", tool_calls=[call("c2", "grep", pattern="divide")])
    )
    e["e8"] = manager.append_message(tool_result("c2", "grep", "a.py:3"))
    e["e9"] = manager.append_message(assistant("two call sites"))
    return Debugging(manager, e)


# --- pi-reference §13 ---------------------------------------------------------------------


def test_worked_example_rows_markers_label_and_active_branch_first() -> None:
    example = worked_example()
    e = example.ids
    model = TreeModel.from_manager(example.manager)
    assert ids(model) == [e[k] for k in "CDGHIEF"]
    assert shape(model) == [
        ("", "user: hi"),
        ("", "assistant: hello"),
        ("├⊟ ", "[branch summary]: explored X"),
        ("│  ", "user: try Y"),
        ("│  ", "assistant: Y done"),
        ("└⊟ ", "user: try X"),
        ("   ", "assistant: X done"),
    ]
    assert [row.on_active_path for row in model.rows] == [True] * 5 + [False] * 2
    assert [row.depth for row in model.rows] == [0, 0, 1, 1, 1, 1, 1]
    assert model.rows[0].label == "start"
    assert [row.label for row in model.rows[1:]] == [None] * 6
    # The leaf J is a label entry: hidden, so the leaf row falls back to I.
    assert model.leaf_id == e["J"]
    assert not any(row.is_leaf for row in model.rows)
    assert model.nearest_visible(e["J"]) == e["I"]
    assert model.leaf_index() == 4


def test_worked_example_in_all_mode_shows_settings_and_the_label_leaf() -> None:
    example = worked_example()
    e = example.ids
    model = TreeModel.from_manager(example.manager, filter_mode="all")
    assert ids(model) == [e[k] for k in "ABCDGHIJEF"]
    assert model.rows[7].is_leaf
    assert model.rows[7].text == "[label: start]"
    assert model.leaf_index() == 7


# --- the debugging scenario ---------------------------------------------------------------


def test_debugging_scenario_shows_the_branch_point_with_the_active_retry_first() -> None:
    scenario = debugging()
    e = scenario.ids
    model = TreeModel.from_manager(scenario.manager)
    assert shape(model) == [
        ("", "user: why does it crash?"),
        ("├⊟ ", "user: search for the call sites instead"),
        ("│  ", "[grep: /divide/ in .]"),
        ("│  ", "assistant: two call sites"),
        ("└⊟ ", "[read: a.py]"),
        ("   ", "assistant: a.py divides by zero"),
    ]
    assert ids(model) == [e[k] for k in ("e2", "e6", "e8", "e9", "e4", "e5")]
    assert [row.on_active_path for row in model.rows] == [True, True, True, True, False, False]
    assert model.rows[3].is_leaf
    assert model.leaf_index() == 3


def test_tool_call_only_detection() -> None:
    scenario = debugging()
    index = scenario.manager.index
    hidden = {entry.id for entry in index.entries if is_tool_call_only(entry)}
    assert hidden == {scenario.ids["e3"], scenario.ids["e7"]}


# --- filters ------------------------------------------------------------------------------


def test_no_tools_filter_hides_tool_results() -> None:
    scenario = debugging()
    e = scenario.ids
    model = TreeModel.from_manager(scenario.manager, filter_mode="no-tools")
    assert ids(model) == [e["e2"], e["e6"], e["e9"], e["e5"]]
    assert [row.prefix for row in model.rows] == ["", "├─ ", "│  ", "└─ "]


def test_user_only_filter() -> None:
    scenario = debugging()
    e = scenario.ids
    model = TreeModel.from_manager(scenario.manager, filter_mode="user-only")
    assert shape(model) == [
        ("", "user: why does it crash?"),
        ("", "user: search for the call sites instead"),
    ]
    assert model.leaf_index() == 1
    assert model.nearest_visible(e["e9"]) == e["e6"]


def test_labeled_filter_shows_only_labelled_entries() -> None:
    scenario = debugging()
    e = scenario.ids
    model = TreeModel.from_manager(scenario.manager, filter_mode="labeled")
    assert len(model) == 0
    assert model.leaf_index() is None
    scenario.manager.append_label(e["e5"], "wrong guess")
    scenario.manager.append_label(e["e2"], "question")
    model.refresh(scenario.manager.leaf_id)
    assert ids(model) == [e["e2"], e["e5"]]
    assert [row.label for row in model.rows] == ["question", "wrong guess"]


def test_all_filter_shows_everything_including_tool_call_turns() -> None:
    scenario = debugging()
    e = scenario.ids
    model = TreeModel.from_manager(scenario.manager, filter_mode="all")
    assert ids(model) == [e[k] for k in ("e1", "e2", "e6", "e7", "e8", "e9", "e3", "e4", "e5")]
    assert model.rows[3].text == "assistant: [grep: /divide/ in .]"


def test_default_hides_settings_custom_and_leaf_markers() -> None:
    manager = SessionManager.in_memory(Path("/p"))
    first = manager.append_message(user("one"))
    manager.append_custom("ext.state", {"x": 1})
    manager.append_custom(LEAF_MARKER_TYPE)
    manager.append_thinking_level_change("high")
    last = manager.append_message(user("two"))
    model = TreeModel.from_manager(manager)
    assert ids(model) == [first, last]
    model.set_filter("all")
    assert len(model) == 5


def test_cycle_filter_order() -> None:
    model = TreeModel.from_manager(debugging().manager)
    seen = [model.filter_mode]
    for _ in FILTER_MODES:
        seen.append(model.cycle_filter())
    assert seen == ["default", "no-tools", "user-only", "labeled", "all", "default"]
    assert model.cycle_filter(-1) == "all"
    with pytest.raises(ValueError):
        model.set_filter("bogus")  # type: ignore[arg-type]


def test_tool_call_only_leaf_is_shown_unless_the_filter_mode_hides_it() -> None:
    scenario = debugging()
    e = scenario.ids
    scenario.manager.branch(e["e7"])
    model = TreeModel.from_manager(scenario.manager)
    assert e["e7"] in ids(model)
    assert model.rows[model.leaf_index() or 0].is_leaf
    assert model.rows[model.index_of(e["e7"]) or 0].text == "assistant: [grep: /divide/ in .]"
    assert e["e3"] not in ids(model)
    model.set_filter("user-only")
    assert e["e7"] not in ids(model)
    assert model.leaf_index() == model.index_of(e["e6"])


def test_hidden_leaf_label_falls_back_to_its_nearest_visible_ancestor() -> None:
    scenario = debugging()
    e = scenario.ids
    label = scenario.manager.append_label(e["e6"], "retry")
    model = TreeModel.from_manager(scenario.manager)
    assert model.leaf_id == label
    assert model.index_of(label) is None
    assert model.nearest_visible(label) == e["e9"]
    assert model.leaf_index() == model.index_of(e["e9"])
    assert model.rows[1].label == "retry"


# --- ordering and layout ------------------------------------------------------------------


def _record(entry_id: str, parent: str | None, stamp: str, text: str) -> Entry:
    return Entry.from_record(
        {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": stamp,
            "message": user(text),
        }
    )


def test_siblings_active_first_then_by_timestamp() -> None:
    entries = [
        _record("r", None, "2026-01-01T00:00:00.000Z", "root"),
        _record("c", "r", "2026-01-01T00:00:03.000Z", "third"),
        _record("a", "r", "2026-01-01T00:00:01.000Z", "first"),
        _record("b", "r", "2026-01-01T00:00:02.000Z", "second"),
    ]
    index = SessionIndex(entries)
    assert ids(TreeModel(index, "r")) == ["r", "a", "b", "c"]
    assert ids(TreeModel(index, "b")) == ["r", "b", "a", "c"]
    assert [row.prefix for row in TreeModel(index, "c").rows] == ["", "├─ ", "├─ ", "└─ "]


def test_lifted_children_are_sorted_by_timestamp() -> None:
    # r → hidden tool-call turn h (children x at :05) and y at :02: y comes first.
    hidden = Entry.from_record(
        {
            "type": "message",
            "id": "h",
            "parentId": "r",
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": assistant("", stop_reason="toolUse", tool_calls=[call("c", "ls")]),
        }
    )
    entries = [
        _record("r", None, "2026-01-01T00:00:00.000Z", "root"),
        hidden,
        _record("x", "h", "2026-01-01T00:00:05.000Z", "x"),
        _record("y", "r", "2026-01-01T00:00:02.000Z", "y"),
    ]
    model = TreeModel(SessionIndex(entries), "r")
    assert ids(model) == ["r", "y", "x"]


def test_multiple_roots_hang_under_a_virtual_root() -> None:
    manager = SessionManager.in_memory(Path("/p"))
    first = manager.append_message(user("one"))
    manager.append_message(assistant("a"))
    manager.reset_leaf()
    second = manager.append_message(user("two"))
    model = TreeModel.from_manager(manager)
    assert ids(model)[0] == second  # the active root first
    assert [row.display_prefix for row in model.rows] == ["├─ ", "└⊟ ", "   "]
    assert model.rows[1].entry_id == first
    assert [row.depth for row in model.rows] == [1, 1, 1]


def test_nested_branches_draw_gutters() -> None:
    manager = SessionManager.in_memory(Path("/p"))
    root = manager.append_message(user("root"))
    a = manager.append_message(user("a"))
    manager.append_message(user("a1"))
    manager.branch(a)
    manager.append_message(user("a2"))
    manager.branch(root)
    manager.append_message(user("b"))
    manager.branch(a)
    model = TreeModel.from_manager(manager)
    assert [(row.prefix, row.text) for row in model.rows] == [
        ("", "user: root"),
        ("├─ ", "user: a"),
        ("│  ├─ ", "user: a1"),
        ("│  └─ ", "user: a2"),
        ("└─ ", "user: b"),
    ]
    assert model.rows[1].is_leaf
    assert [row.depth for row in model.rows] == [0, 1, 2, 2, 1]


# --- search -------------------------------------------------------------------------------


def test_search_tokens_must_all_match_case_insensitively() -> None:
    scenario = debugging()
    e = scenario.ids
    model = TreeModel.from_manager(scenario.manager)
    model.set_search("GREP")
    assert ids(model) == [e["e8"]]
    model.set_search("call  sites")
    assert ids(model) == [e["e6"], e["e9"]]
    assert [row.prefix for row in model.rows] == ["", ""]
    model.set_search("user crash")
    assert ids(model) == [e["e2"]]
    model.set_search("nothing-like-this")
    assert len(model) == 0
    model.set_search("")
    assert len(model) == 6


def test_search_matches_labels_and_keeps_structure_under_matching_ancestors() -> None:
    scenario = debugging()
    e = scenario.ids
    scenario.manager.append_label(e["e5"], "Wrong guess")
    model = TreeModel.from_manager(scenario.manager)
    model.set_search("wrong")
    assert ids(model) == [e["e5"]]
    model.set_search("user")
    assert ids(model) == [e["e2"], e["e6"]]
    model.set_search("a")  # matches nearly everything: the branch structure survives
    assert ids(model)[0] == e["e2"]
    assert model.rows[1].prefix == "├─ "


# --- folding ------------------------------------------------------------------------------


def test_fold_and_unfold_branch_children() -> None:
    scenario = debugging()
    e = scenario.ids
    model = TreeModel.from_manager(scenario.manager)
    assert not model.fold(e["e8"])  # inside a chain: not foldable
    assert model.fold(e["e6"])
    assert ids(model) == [e["e2"], e["e6"], e["e4"], e["e5"]]
    assert model.rows[1].folded
    assert model.rows[1].display_prefix == "├⊞ "
    assert not model.fold(e["e6"])
    assert model.toggle_fold(e["e6"])
    assert len(model) == 6
    assert not model.unfold(e["e6"])
    # The single root folds too; everything else disappears.
    assert model.fold(e["e2"])
    assert shape(model) == [("⊞ ", "user: why does it crash?")]
    assert model.leaf_index() == 0
    assert model.nearest_visible(e["e9"]) == e["e2"]


def test_filter_change_and_search_edit_reset_folds() -> None:
    scenario = debugging()
    e = scenario.ids
    model = TreeModel.from_manager(scenario.manager)
    model.fold(e["e6"])
    model.set_filter("no-tools")
    assert model.folded == frozenset()
    assert len(model) == 4
    model.fold(e["e6"])
    model.set_search("u")
    assert model.folded == frozenset()
    model.fold(e["e2"])
    model.refresh(scenario.manager.leaf_id)  # a refresh keeps folds
    assert model.folded == {e["e2"]}


# --- navigation helpers -------------------------------------------------------------------


def test_sibling_branch_jumps() -> None:
    scenario = debugging()
    e = scenario.ids
    model = TreeModel.from_manager(scenario.manager)
    at = model.index_of
    assert model.next_sibling_branch(at(e["e8"]) or 0) == at(e["e4"])
    assert model.next_sibling_branch(at(e["e6"]) or 0) == at(e["e4"])
    assert model.next_sibling_branch(at(e["e5"]) or 0) is None
    assert model.prev_sibling_branch(at(e["e5"]) or 0) == at(e["e6"])
    assert model.prev_sibling_branch(at(e["e6"]) or 0) is None
    assert model.prev_sibling_branch(at(e["e2"]) or 0) is None
    assert model.next_sibling_branch(99) is None
    assert model.parent_index(at(e["e4"]) or 0) == at(e["e2"])
    assert model.parent_index(0) is None


def test_index_of_unknown_and_hidden_entries() -> None:
    scenario = debugging()
    model = TreeModel.from_manager(scenario.manager)
    assert model.index_of("nope") is None
    assert model.index_of(None) is None
    assert model.nearest_visible("nope") is None
    assert model.index_of(scenario.ids["e3"]) is None
    assert model.nearest_visible(scenario.ids["e3"]) == scenario.ids["e2"]


def test_refresh_sees_new_entries_and_a_moved_leaf() -> None:
    scenario = debugging()
    e = scenario.ids
    model = TreeModel.from_manager(scenario.manager)
    scenario.manager.branch(e["e5"])
    extra = scenario.manager.append_message(user("and now?"))
    model.refresh(scenario.manager.leaf_id)
    assert model.rows[0].entry_id == e["e2"]
    assert ids(model)[1:4] == [e["e4"], e["e5"], extra]
    assert model.rows[model.leaf_index() or 0].entry_id == extra


def test_empty_session() -> None:
    model = TreeModel.from_manager(SessionManager.in_memory(Path("/p")))
    assert len(model) == 0
    assert model.leaf_index() is None
    assert model.prev_sibling_branch(0) is None


# --- size ---------------------------------------------------------------------------------


def _big_session(pairs: int) -> SessionManager:
    manager = SessionManager.in_memory(Path("/p"))
    recent: list[str] = []
    for turn in range(pairs):
        recent.append(manager.append_message(user(f"question {turn}")))
        recent.append(manager.append_message(assistant(f"answer {turn}")))
        if turn % 100 == 99:
            manager.branch(recent[-50])  # a branch every 100 turns
    return manager


def test_ten_thousand_entries() -> None:
    manager = _big_session(5000)
    started = time.perf_counter()
    model = TreeModel.from_manager(manager)
    built = time.perf_counter() - started
    started = time.perf_counter()
    model.set_filter("user-only")
    refiltered = time.perf_counter() - started
    print(
        f"\nnote: 10 000 entries: rows built in {built * 1000:.1f} ms, "
        f"user-only refilter in {refiltered * 1000:.1f} ms"
    )
    assert len(model) == 5000
    model.set_filter("default")
    assert len(model) == 10_000
    assert model.rows[model.leaf_index() or 0].is_leaf
    model.set_search("question 4242")
    assert [row.text for row in model.rows] == ["user: question 4242"]


def test_hundred_thousand_deep_chain_without_recursion() -> None:
    depth = 100_000
    entries = [
        _record(f"{n:08x}", f"{n - 1:08x}" if n else None, "2026-01-01T00:00:00.000Z", f"m{n}")
        for n in range(depth)
    ]
    limit = sys.getrecursionlimit()
    model = TreeModel(SessionIndex(entries), entries[-1].id)
    assert sys.getrecursionlimit() == limit
    assert len(model) == depth
    assert model.rows[-1].is_leaf
    assert model.rows[depth // 2].prefix == ""
    assert model.nearest_visible(entries[-1].id) == entries[-1].id
    assert model.fold(entries[0].id)
    assert len(model) == 1


def test_parent_cycles_and_orphans_still_show_every_entry() -> None:
    stamp = "2026-01-01T00:00:00.000Z"
    entries = [
        _record("r", None, stamp, "root"),
        _record("a", "b", stamp, "in a cycle"),
        _record("b", "a", stamp, "in a cycle too"),
        _record("o", "missing", stamp, "orphan"),
        _record("s", "s", stamp, "self parent"),
    ]
    model = TreeModel(SessionIndex(entries), "r")
    assert sorted(ids(model)) == ["a", "b", "o", "r", "s"]
    assert ids(model)[0] == "r"
