"""The status bar: session name, model, thinking level, tokens, cost, context use, activity."""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


@dataclass(slots=True)
class StatusInfo:
    """What the bar shows; the app fills it in."""

    session_name: str = ""
    model: str = ""
    thinking: str = "off"
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    context_percent: float | None = None
    activity: str = ""
    """Set while working ("thinking…", "running bash", "loading model support…")."""


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


class StatusBar(Static):
    """One line at the bottom; a spinner and elapsed time while the agent works."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.info = StatusInfo()
        self._busy_since: float | None = None
        self._frame = 0

    def on_mount(self) -> None:
        self.set_interval(0.1, self._tick)

    def update_info(self, info: StatusInfo) -> None:
        """Show new values."""
        if info.activity and self._busy_since is None:
            self._busy_since = time.monotonic()
        if not info.activity:
            self._busy_since = None
        self.info = info
        self.update(self.render_text())

    def _tick(self) -> None:
        if self._busy_since is not None:
            self._frame += 1
            self.update(self.render_text())

    def render_text(self) -> Text:
        """The bar's content."""
        info = self.info
        text = Text(no_wrap=True, overflow="ellipsis")
        if self._busy_since is not None:
            elapsed = time.monotonic() - self._busy_since
            spinner = SPINNER[self._frame % len(SPINNER)]
            text.append(f"{spinner} {info.activity} {elapsed:.0f}s", style="bold")
            text.append("  ·  ")
        text.append(info.session_name or "unnamed session", style="bold")
        text.append(f"  ·  {info.model}")
        if info.thinking != "off":
            text.append(f"  ·  thinking {info.thinking}")
        text.append(f"  ·  ↑{_tokens(info.tokens_in)} ↓{_tokens(info.tokens_out)}")
        text.append(f"  ·  ${info.cost:.3f}")
        if info.context_percent is not None:
            text.append(f"  ·  ctx {info.context_percent:.0f}%")
        return text
