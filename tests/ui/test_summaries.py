"""Compaction and branch summaries in the app, driven by keys and slash commands."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.pilot import Pilot

from pi_tui.agent.compaction import CompactionSettings
from pi_tui.agent.provider import ModelSpec
from pi_tui.agent_session import AgentSession
from pi_tui.session import SessionManager
from pi_tui.session.catalog import text_of
from pi_tui.ui.app import PiTuiApp
from pi_tui.ui.chat import SummaryBlock, UserBlock
from pi_tui.ui.navigator import SessionNavigator
from pi_tui.ui.screens.branch_summary import BranchSummaryScreen
from pi_tui.ui.status import StatusBar
from tests.factories import assistant, user

SIZE = (120, 36)
TURNS = 10


def ten_turn_session(root: Path) -> tuple[AgentSession, str, str]:
    """A question answered, then a 10-turn exploration after it; returns the agent, the first
    answer's id and the exploration's last entry id."""
    manager = SessionManager.create(root, root / ".pi" / "sessions")
    manager.append_model_change("offline", "pi-tui")
    manager.append_message(user("why does the salt check fail?"))
    first_answer = manager.append_message(
        assistant("line 23 decodes the salt twice", provider="offline", model="pi-tui")
    )
    for turn in range(1, TURNS + 1):
        manager.append_message(user(f"exploration step {turn}"))
        manager.append_message(assistant(f"finding {turn}", provider="offline", model="pi-tui"))
    agent = AgentSession(
        manager,
        model=ModelSpec("offline/pi-tui"),
        tools={},
        cwd=root,
        compaction=CompactionSettings(enabled=False, keep_recent_tokens=1),
    )
    last = agent.manager.leaf_id
    assert last is not None
    return agent, first_answer, last


async def settle(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, PiTuiApp)
    for _ in range(500):
        await pilot.pause()
        busy = any(worker.is_running for worker in app.workers if worker.group != "events")
        if not busy and app.idle and not app.agent.is_compacting:
            break
        await asyncio.sleep(0.01)
    await pilot.pause()


async def select_first_answer(pilot: Pilot[None], app: PiTuiApp, first_answer: str) -> None:
    await pilot.press("ctrl+t")
    await pilot.press("home", "down")
    assert app.navigator.cursor_entry_id == first_answer
    await pilot.press("enter")
    await pilot.pause()


async def test_leaving_a_ten_turn_branch_with_a_summary(tmp_path: Path) -> None:
    agent, first_answer, old_leaf = ten_turn_session(tmp_path)
    app = PiTuiApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select_first_answer(pilot, app, first_answer)
        assert isinstance(app.screen, BranchSummaryScreen)
        await pilot.press("down", "enter")  # "Summarize the branch"
        await settle(pilot)
        manager = app.agent.manager
        leaf = manager.leaf
        assert leaf is not None and leaf.type == "branch_summary"
        assert leaf.parent_id == first_answer
        assert "exploration step 1" in leaf.raw["summary"]
        assert "exploration step 10" in leaf.raw["summary"]
        assert manager.get_entry(old_leaf) is not None  # the old branch is still there
        blocks = app.chat.blocks()
        assert isinstance(blocks[-1], SummaryBlock)
        assert blocks[-1].summary_title == "Branch summary"
        assert [b.message["content"][0]["text"] for b in blocks if isinstance(b, UserBlock)] == [
            "why does the salt check fail?"
        ]
        assert leaf.id in app.navigator.model.rows.ids
        assert app.focused is not None and app.focused.id != "navigator"


async def test_escape_on_the_question_leaves_the_session_unchanged(tmp_path: Path) -> None:
    agent, first_answer, old_leaf = ten_turn_session(tmp_path)
    before = len(agent.manager.entries())
    app = PiTuiApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select_first_answer(pilot, app, first_answer)
        await pilot.press("escape")
        await settle(pilot)
        assert app.agent.manager.leaf_id == old_leaf
        assert len(app.agent.manager.entries()) == before
        assert isinstance(app.focused, SessionNavigator)
        assert app.navigator.cursor_entry_id == first_answer
        await pilot.press("enter", "1")  # "No summary": the leaf moves, nothing is written
        await settle(pilot)
        assert app.agent.manager.leaf_id == first_answer
        assert len(app.agent.manager.entries()) == before


async def test_a_summary_with_a_focus(tmp_path: Path) -> None:
    agent, first_answer, _ = ten_turn_session(tmp_path)
    app = PiTuiApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select_first_answer(pilot, app, first_answer)
        await pilot.press("3")
        await pilot.pause()
        await pilot.press(*"salt", "enter")
        await settle(pilot)
        leaf = app.agent.manager.leaf
        assert leaf is not None and leaf.type == "branch_summary"
        assert "Requested focus: salt" in leaf.raw["summary"]


async def test_compact_shows_the_summary_and_input_typed_meanwhile_is_sent_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, _, _ = ten_turn_session(tmp_path)
    app = PiTuiApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setenv("PI_TUI_OFFLINE_DELAY_MS", "20")
        app.prompt.focus_input()
        app.prompt.area.insert("/compact")
        await pilot.press("enter")
        for _ in range(200):
            if app.agent.is_compacting:
                break
            await asyncio.sleep(0.01)
        assert app.agent.is_compacting
        app.prompt.area.insert("ls")
        await pilot.press("enter")
        await settle(pilot)
        monkeypatch.setenv("PI_TUI_OFFLINE_DELAY_MS", "0")
        await settle(pilot)
        path = app.agent.manager.path()
        kinds = [entry.type for entry in path]
        assert kinds.count("compaction") == 1
        after = path[kinds.index("compaction") + 1 :]
        assert after[0].role == "user" and text_of(after[0].message["content"]) == "ls"
        assert after[-1].role == "assistant"
        titles = [b.summary_title for b in app.chat.blocks() if isinstance(b, SummaryBlock)]
        assert titles and titles[0].startswith("Compacted context")
        status = app.query_one(StatusBar).info
        assert status.context_percent is not None
