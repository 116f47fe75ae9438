"""The key-hints line follows the focus without rebuilding widgets."""

from __future__ import annotations

from pathlib import Path

from pi_tui.ui.app import PiTuiApp
from pi_tui.ui.key_hints import KeyHints
from tests.ui.conftest import make_agent, make_project


async def test_hints_follow_the_focus(tmp_path: Path) -> None:
    app = PiTuiApp(make_agent(make_project(tmp_path)))
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause()
        hints = app.query_one(KeyHints)
        at_prompt = hints.hints().plain
        assert "^q Quit" in at_prompt and at_prompt.endswith("^p palette")
        assert "Filter" not in at_prompt
        children_before = list(hints.children)
        await pilot.press("ctrl+t")
        await pilot.pause()
        in_tree = str(hints.render())
        assert "f Filter" in in_tree and "g Leaf" in in_tree and "L Label" in in_tree
        assert in_tree.index("Go") < in_tree.index("Quit")  # the focused pane's keys first
        assert list(hints.children) == children_before == []
        await pilot.press("escape")
        await pilot.pause()
        assert "Filter" not in str(hints.render())
