"""Driving the whole app through Pilot as a person would: type into the prompt, press Enter,
wait until everything the agent did is on screen.

The app tests and ``screenshots/regenerate.py`` (which records the sample session) share it.
"""

from __future__ import annotations

from textual.pilot import Pilot

from pi_tui.ui.app import PiTuiApp


async def settle(pilot: Pilot[None]) -> None:
    """Wait until the agent is idle and every event has been rendered."""
    app = pilot.app
    assert isinstance(app, PiTuiApp)
    await pilot.pause()
    await app.wait_until_idle()
    await pilot.pause()


async def type_and_send(pilot: Pilot[None], text: str) -> None:
    """Type ``text`` into the prompt, press Enter, and settle."""
    app = pilot.app
    assert isinstance(app, PiTuiApp)
    app.prompt.focus_input()
    app.prompt.area.insert(text)
    await pilot.press("enter")
    await settle(pilot)
