"""SVG snapshots of the app on the sample session at a fixed size (pytest-textual-snapshot).

Regenerate the baselines with ``pytest tests/ui/test_snapshots.py --snapshot-update`` after
a deliberate change to how the app looks.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from pi_tui.session import SessionManager
from pi_tui.ui.app import PiTuiApp
from tests.ui.conftest import make_agent

SAMPLES = sorted((Path(__file__).resolve().parents[2] / ".pi" / "sessions").glob("*.jsonl"))
SIZE = (120, 34)


@pytest.fixture
def sample_app(tmp_path: Path) -> PiTuiApp:
    copy = tmp_path / "sessions" / SAMPLES[0].name
    copy.parent.mkdir()
    shutil.copy(SAMPLES[0], copy)
    agent = make_agent(tmp_path, SessionManager.open(copy))
    return PiTuiApp(agent)


def steps(*keys: str, trace: bool = False) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, PiTuiApp)
        app.prompt.area.cursor_blink = False
        if trace:
            app.trace.option_list.focus()
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.pause()

    return run


CASES = {
    "main": steps(),
    "navigator": steps("ctrl+t", "up", "up"),
    "navigator-all-filter": steps("ctrl+t", "f", "f", "f", "f"),
    "tool-trace-expanded": steps("home", "enter", trace=True),
    "fork-picker": steps("/", "f", "o", "r", "k", "enter"),
    "help": steps("f1"),
    "branch-summary-choice": steps("ctrl+t", "up", "up", "enter"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_snapshot(case: str, sample_app: PiTuiApp, snap_compare: Any) -> None:
    assert snap_compare(sample_app, terminal_size=SIZE, run_before=CASES[case])
