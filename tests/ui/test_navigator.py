"""SessionNavigator driven headless through Pilot: cursor keys, filters, search, messages."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.message import Message

from pi_tui.session.manager import SessionManager
from pi_tui.ui.navigator import SessionNavigator
from tests.factories import assistant, user
from tests.ui.test_tree_model import debugging, worked_example

SIZE = (80, 24)


class Host(App[None]):
    """Mounts one navigator full screen and records the messages it posts."""

    def __init__(self, manager: SessionManager, defer_build: bool = False) -> None:
        super().__init__()
        self.manager = manager
        self.defer_build = defer_build
        self.received: list[Message] = []

    def compose(self) -> ComposeResult:
        yield SessionNavigator(self.manager, id="nav", defer_build=self.defer_build)

    def on_mount(self) -> None:
        self.query_one(SessionNavigator).focus()

    def on_session_navigator_entry_selected(self, message: SessionNavigator.EntrySelected) -> None:
        self.received.append(message)

    def on_session_navigator_edit_requested(self, message: SessionNavigator.EditRequested) -> None:
        self.received.append(message)

    def on_session_navigator_label_requested(
        self, message: SessionNavigator.LabelRequested
    ) -> None:
        self.received.append(message)

    def on_session_navigator_dismissed(self, message: SessionNavigator.Dismissed) -> None:
        self.received.append(message)

    @property
    def nav(self) -> SessionNavigator:
        return self.query_one(SessionNavigator)


def screen_lines(nav: SessionNavigator) -> list[str]:
    """The widget's lines as plain text, right-trimmed."""
    return [nav.render_line(y).text.rstrip() for y in range(nav.scrollable_content_region.height)]


async def test_initial_render_of_the_worked_example() -> None:
    example = worked_example()
    app = Host(example.manager)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        nav = app.nav
        assert nav.has_focus
        # The leaf J (a label) is hidden: the cursor starts on its nearest visible ancestor I.
        assert nav.cursor_entry_id == example.ids["I"]
        lines = screen_lines(nav)
        assert lines[:7] == [
            "  • [start] user: hi",
            "  • assistant: hello",
            "  ├⊟ • [branch summary]: explored X",
            "  │  • user: try Y",
            "› │  • assistant: Y done",
            "  └⊟ user: try X",
            "     assistant: X done",
        ]
        assert lines[-1].endswith("(5/7)")
        assert all(line == "" for line in lines[7:-1])


async def test_leaf_row_is_emphasised_and_cursor_row_highlighted() -> None:
    scenario = debugging()
    app = Host(scenario.manager)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        nav = app.nav
        assert nav.cursor_entry_id == scenario.ids["e9"]
        leaf_line = nav.render_line(3)
        assert leaf_line.text.startswith("› │  • assistant: two call sites")
        leaf_text = next(seg for seg in leaf_line if "two call sites" in seg.text)
        assert leaf_text.style is not None and leaf_text.style.bold
        cursor_bg = next(iter(leaf_line)).style
        other_bg = next(iter(nav.render_line(0))).style
        assert cursor_bg is not None and other_bg is not None
        assert cursor_bg.bgcolor != other_bg.bgcolor


async def test_up_down_wrap_home_end_and_g() -> None:
    scenario = debugging()
    e = scenario.ids
    app = Host(scenario.manager)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        await pilot.press("down", "down")
        assert nav.cursor_entry_id == e["e5"]
        await pilot.press("down")  # wraps to the top
        assert nav.cursor_index == 0
        await pilot.press("up")  # wraps to the bottom
        assert nav.cursor_entry_id == e["e5"]
        await pilot.press("home")
        assert nav.cursor_index == 0
        await pilot.press("end")
        assert nav.cursor_index == 5
        await pilot.press("g")
        assert nav.cursor_entry_id == e["e9"]
        await pilot.press("pageup")
        assert nav.cursor_index == 0
        await pilot.press("pagedown")
        assert nav.cursor_index == 5


async def test_sibling_branch_keys() -> None:
    scenario = debugging()
    e = scenario.ids
    app = Host(scenario.manager)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        await pilot.press("right_square_bracket")
        assert nav.cursor_entry_id == e["e4"]
        await pilot.press("right_square_bracket")  # no next sibling: stays (bell)
        assert nav.cursor_entry_id == e["e4"]
        await pilot.press("left_square_bracket")
        assert nav.cursor_entry_id == e["e6"]


async def test_fold_unfold_and_left_to_parent() -> None:
    scenario = debugging()
    e = scenario.ids
    app = Host(scenario.manager)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        await pilot.press("left")  # e9 sits inside a chain: go to its parent row e8
        assert nav.cursor_entry_id == e["e8"]
        await pilot.press("left")
        assert nav.cursor_entry_id == e["e6"]
        await pilot.press("left")  # e6 is a branch child: fold it
        assert nav.cursor_entry_id == e["e6"]
        assert len(nav.model) == 4
        assert screen_lines(nav)[1] == "› ├⊞ • user: search for the call sites instead"
        await pilot.press("down")
        assert nav.cursor_entry_id == e["e4"]
        await pilot.press("up", "left")  # already folded: go to the parent e2
        assert nav.cursor_entry_id == e["e2"]
        await pilot.press("down", "right")
        assert len(nav.model) == 6
        await pilot.press("left", "f")  # fold, then a filter change resets folds
        assert nav.filter_mode == "no-tools"
        assert nav.model.folded == frozenset()
        assert nav.cursor_entry_id == e["e6"]


async def test_filter_cycle_keeps_the_cursor_on_the_entry_or_its_ancestor() -> None:
    scenario = debugging()
    e = scenario.ids
    app = Host(scenario.manager)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        await pilot.press("up")  # e8, the grep result
        assert nav.cursor_entry_id == e["e8"]
        await pilot.press("f")  # no-tools hides e8: nearest visible ancestor e6
        assert nav.cursor_entry_id == e["e6"]
        assert screen_lines(nav)[-1].endswith("(2/4) [no-tools]")
        await pilot.press("f")  # user-only
        assert nav.filter_mode == "user-only"
        assert nav.cursor_entry_id == e["e6"]
        await pilot.press("f")  # labeled: nothing is labelled
        assert nav.cursor_entry_id is None
        assert "(0/0) [labeled]" in screen_lines(nav)[-1]
        await pilot.press("f")  # all: the remembered selection comes back
        assert nav.cursor_entry_id == e["e6"]
        await pilot.press("f")
        assert nav.filter_mode == "default"


async def test_search_mode_typing_backspace_enter_and_escape() -> None:
    scenario = debugging()
    e = scenario.ids
    app = Host(scenario.manager)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        await pilot.press("slash")
        assert nav.searching
        await pilot.press(*"grep")  # 'g' and 'e' are typed, not commands
        assert nav.search_query == "grep"
        assert [row.entry_id for row in nav.model.rows] == [e["e8"]]
        assert nav.cursor_entry_id == e["e8"]
        assert screen_lines(nav)[-1].startswith(" /grep")
        await pilot.press("backspace", "backspace", "backspace", "backspace")
        assert nav.search_query == ""
        await pilot.press(*"call", "space", *"sites")
        assert nav.search_query == "call sites"
        assert len(nav.model) == 2
        await pilot.press("enter")  # ends typing, keeps the query
        assert not nav.searching
        assert nav.search_query == "call sites"
        assert "search: call sites" in screen_lines(nav)[-1]
        await pilot.press("escape")  # clears the query; no Dismissed yet
        assert nav.search_query == ""
        assert len(nav.model) == 6
        assert app.received == []
        await pilot.press("escape")
        assert [type(m) for m in app.received] == [SessionNavigator.Dismissed]


async def test_a_deferred_tree_is_built_by_the_first_refresh() -> None:
    scenario = debugging()
    app = Host(scenario.manager, defer_build=True)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        assert len(nav.model) == 0
        assert nav.cursor_entry_id is None
        nav.refresh_tree()
        await pilot.pause()
        assert len(nav.model) == 6
        assert nav.cursor_entry_id == scenario.manager.leaf_id


async def test_typing_a_non_command_letter_starts_the_search() -> None:
    scenario = debugging()
    e = scenario.ids
    app = Host(scenario.manager)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        await pilot.press("space")  # a space does not start a query
        assert not nav.searching
        await pilot.press(*"divides")  # 'e' is typed once the query has started
        assert nav.searching
        assert nav.search_query == "divides"
        await pilot.press("space", *"zero")
        assert nav.search_query == "divides zero"
        assert [row.entry_id for row in nav.model.rows] == [e["e5"]]
        await pilot.press("escape")
        assert not nav.searching
        assert nav.search_query == ""
        await pilot.press("up", "g")  # a command letter is still a command outside typing
        assert not nav.searching
        assert nav.cursor_entry_id == scenario.manager.leaf.id


async def test_search_edit_resets_folds_and_no_match_shows_empty() -> None:
    scenario = debugging()
    app = Host(scenario.manager)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        await pilot.press("home", "left")
        assert nav.model.folded
        await pilot.press("slash", "q", "q", "q")
        assert nav.model.folded == frozenset()
        assert len(nav.model) == 0
        assert nav.cursor_entry_id is None
        assert "No entries found" in screen_lines(nav)[-1]
        await pilot.press("escape")
        assert nav.cursor_entry_id == scenario.ids["e2"]


async def test_enter_e_and_shift_l_post_messages_with_entry_ids() -> None:
    scenario = debugging()
    e = scenario.ids
    app = Host(scenario.manager)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")  # on the leaf e9
        await pilot.press("e")  # e9 is an assistant message: nothing posted
        await pilot.press("L")
        await pilot.press("home", "e")  # e2, a user message
        await pilot.press("down", "enter")
        await pilot.pause()
        got = [(type(m).__name__, getattr(m, "entry_id", None)) for m in app.received]
        assert got == [
            ("EntrySelected", e["e9"]),
            ("LabelRequested", e["e9"]),
            ("EditRequested", e["e2"]),
            ("EntrySelected", e["e6"]),
        ]
        assert all(m.control is app.nav for m in app.received)


async def test_refresh_tree_follows_the_leaf_or_keeps_the_cursor() -> None:
    scenario = debugging()
    e = scenario.ids
    manager = scenario.manager
    app = Host(manager)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        new = manager.append_message(user("more"))
        nav.refresh_tree()  # the cursor was on the leaf: it follows
        await pilot.pause()
        assert nav.cursor_entry_id == new
        await pilot.press("home")
        manager.append_message(assistant("sure"))
        nav.refresh_tree()  # the cursor was moved away: it stays
        assert nav.cursor_entry_id == e["e2"]
        label = manager.append_label(e["e5"], "keep")
        nav.refresh_tree(keep_cursor=False)
        assert manager.leaf_id == label
        assert nav.cursor_entry_id == nav.model.rows[nav.model.leaf_index() or 0].entry_id
        assert nav.model.rows[nav.model.index_of(e["e5"]) or 0].label == "keep"
        assert nav.move_cursor_to(e["e3"])  # hidden tool-call turn → its visible parent
        assert nav.cursor_entry_id == e["e2"]
        assert not nav.move_cursor_to("missing")


async def test_ten_thousand_entries_keys_and_scrolling() -> None:
    manager = SessionManager.in_memory(Path("/p"))
    for turn in range(5000):
        manager.append_message(user(f"q{turn}"))
        manager.append_message(assistant(f"a{turn}"))
    app = Host(manager)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        await pilot.pause()
        assert len(nav.model) == 10_000
        assert nav.cursor_index == 9_999
        assert screen_lines(nav)[-2].startswith("› • assistant: a4999")
        assert screen_lines(nav)[-1].endswith("(10000/10000)")
        await pilot.press("down")  # wrap to the top
        await pilot.pause()
        assert nav.scroll_y == 0
        assert screen_lines(nav)[0].startswith("› • user: q0")
        await pilot.press("pagedown")  # 24 lines: 23 rows and the status line
        assert nav.cursor_index == 23


async def test_deep_chain_renders_without_recursion_error() -> None:
    manager = SessionManager.in_memory(Path("/p"))
    for turn in range(2500):
        manager.append_message(user(f"q{turn}"))
        manager.append_message(assistant(f"a{turn}"))
    app = Host(manager)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        await pilot.pause()
        assert len(nav.model) == 5000
        await pilot.press("home")
        await pilot.pause()
        assert screen_lines(nav)[0] == "› • user: q0"
        await pilot.press("end", "left")
        assert nav.cursor_index == 4998


async def test_deeply_nested_branches_render() -> None:
    # Every level branches: 1 200 nesting levels, beyond what Textual's Tree can draw.
    manager = SessionManager.in_memory(Path("/p"))
    parent = manager.append_message(user("root"))
    for level in range(1200):
        manager.branch(parent)
        manager.append_message(user(f"side {level}"))
        manager.branch(parent)
        parent = manager.append_message(user(f"main {level}"))
    app = Host(manager)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        await pilot.pause()
        assert nav.cursor_entry_id == parent
        line = screen_lines(nav)[nav.cursor_index - round(nav.scroll_y)]  # type: ignore[operator]
        assert line.startswith("› │  │  │  ")
        assert len(line) <= SIZE[0] and line.endswith("…")
        assert len(nav.model) == 2401
        await pilot.press("home", "down", "right_square_bracket")
        assert nav.cursor_index == 2400  # side 0, the last row
        await pilot.pause()
        assert screen_lines(nav)[-2] == "› └─ user: side 0"


async def test_selection_is_remembered_through_a_filter_that_hides_it() -> None:
    scenario = debugging()
    e = scenario.ids
    scenario.manager.append_label(e["e5"], "wrong")
    scenario.manager.branch(e["e9"])
    app = Host(scenario.manager)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.nav
        assert nav.cursor_entry_id == e["e9"]
        nav.set_filter("labeled")
        assert nav.cursor_entry_id == e["e5"]  # parked on the only row
        assert screen_lines(nav)[0] == "› [wrong] assistant: a.py divides by zero"
        await pilot.press("f")  # all
        assert nav.cursor_entry_id == e["e9"]


async def test_click_moves_the_cursor() -> None:
    scenario = debugging()
    app = Host(scenario.manager)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click(SessionNavigator, offset=(10, 1))
        assert app.nav.cursor_entry_id == scenario.ids["e6"]
        await pilot.click(SessionNavigator, offset=(10, 23))  # the status line
        assert app.nav.cursor_entry_id == scenario.ids["e6"]
