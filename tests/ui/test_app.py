"""The whole app driven by keys: the reference debugging session, slash commands, pickers."""

from __future__ import annotations

from pathlib import Path

from pi_tui.agent.offline import use_script
from pi_tui.agent_session import AgentSession
from pi_tui.session import SessionManager
from pi_tui.ui.app import PiTuiApp
from pi_tui.ui.chat import UserBlock
from pi_tui.ui.navigator import SessionNavigator
from pi_tui.ui.prompt import PromptArea
from tests.ui.conftest import FOLLOW_UP, QUESTION, make_agent, make_project, reference_script
from tests.ui.driving import settle, type_and_send

SIZE = (120, 36)


async def test_reference_scenario_with_keys_only(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    use_script(reference_script())
    agent = make_agent(root)
    app = PiTuiApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, QUESTION)
        manager = app.agent.manager
        e2 = next(e for e in manager.path() if e.role == "user")
        assert [e.role or e.type for e in manager.path()][-4:] == [
            "user",
            "assistant",
            "toolResult",
            "assistant",
        ]
        await pilot.press("ctrl+t")
        assert isinstance(app.focused, SessionNavigator)
        # Rows: e2 e3 e4 e5 with the cursor on the leaf e5; go up to the question.
        await pilot.press("up", "up", "up")
        assert app.navigator.cursor_entry_id == e2.id
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("1")  # leave the old branch without a summary
        await settle(pilot)
        assert manager.leaf_id == e2.id
        assert isinstance(app.focused, PromptArea)
        users = list(app.chat.query(UserBlock))
        assert len(users) == 1
        await type_and_send(pilot, FOLLOW_UP)
        await type_and_send(pilot, "/label root_cause_found")
        assert app.terminal_title == "pi-tui"
        await type_and_send(pilot, "/rename auth-debug")
        assert app.terminal_title == "pi-tui: auth-debug"
        assert app.sub_title == "auth-debug"

    session_file = agent.manager.session_file
    assert session_file is not None
    reloaded = SessionManager.open(session_file, read_only=True)
    e6 = next(
        e for e in reloaded.entries() if e.role == "user" and FOLLOW_UP in str(e.raw["message"])
    )
    assert e6.parent_id == e2.id
    assert len([c for c in reloaded.get_children(e2.id) if c.type == "message"]) == 2
    label = next(e for e in reloaded.entries() if e.type == "label")
    answer = [e for e in reloaded.path() if e.role == "assistant"][-1]
    assert label.raw == {**label.raw, "targetId": answer.id, "label": "root_cause_found"}
    assert reloaded.session_name == "auth-debug"
    assert reloaded.get_label(answer.id) == "root_cause_found"


def test_streamed_deltas_are_merged_but_nothing_else_is() -> None:
    from pi_tui.agent.events import MessageEnd, MessageUpdate
    from pi_tui.ui.app import coalesce_updates

    message: dict[str, object] = {"role": "assistant", "content": []}
    other: dict[str, object] = {"role": "assistant", "content": []}
    events = [
        MessageUpdate(message, "thinking", 0, "hm"),
        MessageUpdate(message, "text", 1, "Hel"),
        MessageUpdate(message, "text", 1, "lo"),
        MessageUpdate(message, "toolcall", 2, '{"a"'),
        MessageUpdate(message, "toolcall", 2, ": 1}"),
        MessageUpdate(other, "text", 1, " there"),
        MessageEnd(other),
    ]
    merged = coalesce_updates(list(events))
    assert [(type(e).__name__, getattr(e, "delta", None)) for e in merged] == [
        ("MessageUpdate", "hm"),
        ("MessageUpdate", "Hello"),
        ("MessageUpdate", '{"a"'),
        ("MessageUpdate", ": 1}"),
        ("MessageUpdate", " there"),
        ("MessageEnd", None),
    ]


async def test_reedit_label_and_focus_cycle(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    use_script(reference_script()[:2])
    app = PiTuiApp(make_agent(root))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, QUESTION)
        manager = app.agent.manager
        question = next(e for e in manager.path() if e.role == "user")
        await pilot.press("ctrl+t", "up", "up", "up")
        assert app.navigator.cursor_entry_id == question.id
        await pilot.press("L")
        await pilot.pause()
        for key in "start":
            await pilot.press(key)
        await pilot.press("enter")
        await pilot.pause()
        assert manager.get_label(question.id) == "start"
        await pilot.press("ctrl+t")
        app.navigator.move_cursor_to(question.id)
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("1")  # no summary of the branch left behind
        await settle(pilot)
        assert manager.leaf_id == question.parent_id
        assert app.prompt.text == QUESTION
        assert isinstance(app.focused, PromptArea)
        seen = set()
        for _ in range(4):
            await pilot.press("tab")
            seen.add(type(app.focused).__name__)
        assert {"SessionNavigator", "PromptArea"} <= seen and len(seen) >= 3


async def test_session_picker_renames_deletes_and_opens(tmp_path: Path) -> None:
    from tests.factories import assistant, user

    root = make_project(tmp_path)
    folder = root / ".pi" / "sessions"
    others = []
    for question in ("old question", "other question"):
        other = SessionManager.create(root, folder)
        other.append_message(user(question, timestamp=10))
        other.append_message(assistant("a", timestamp=11))
        other.close()
        others.append(other.session_file)
    use_script(reference_script()[:2])

    def opener(path: Path) -> AgentSession:
        return make_agent(root, SessionManager.open(path))

    app = PiTuiApp(make_agent(root), open_session=opener)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "first")
        await type_and_send(pilot, "/resume")
        for key in "old":
            await pilot.press(key)
        await pilot.press("ctrl+r", "ctrl+u")
        for key in "renamed":
            await pilot.press(key)
        await pilot.press("enter")
        await pilot.pause()
        assert SessionManager.open(others[0], read_only=True).session_name == "renamed"
        await pilot.press("ctrl+u")
        for key in "other":
            await pilot.press(key)
        await pilot.press("ctrl+d", "enter")
        await pilot.pause()
        assert not others[1].exists()
        await pilot.press("ctrl+u")
        for key in "renamed":
            await pilot.press(key)
        await pilot.press("enter")
        await pilot.pause()
        assert app.agent.manager.session_file == others[0]
