"""The bottom line of key hints for wherever the focus is.

Textual's Footer recomposes into one widget per key on every focus change, which re-lays the
whole screen: with a long session loaded that cost 150–230 ms per focus change (opening the
tree took half a second). This bar shows the same hints as one line of text, redrawn in place.
"""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static


class KeyHints(Static):
    """Keys that work where the focus is (bindings marked ``show``), the palette key last."""

    DEFAULT_CSS = """
    KeyHints {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
    }
    """

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[Any]) -> None:
        if screen is self.screen:
            self.update(self.hints())

    def hints(self) -> Content:
        """The hints for the current focus, one ``key description`` pair per action."""
        app = self.app
        active = self.screen.active_bindings
        parts: list[str | tuple[str, str]] = []
        seen: set[str] = set()
        for _, binding, enabled, _ in active.values():
            if not binding.show or not enabled or binding.action in seen:
                continue
            seen.add(binding.action)
            parts += [(app.get_key_display(binding), "bold $accent"), f" {binding.description}  "]
        palette = active.get(app.COMMAND_PALETTE_BINDING) if app.ENABLE_COMMAND_PALETTE else None
        if palette is not None:
            parts += [(app.get_key_display(palette.binding), "bold $accent"), " palette"]
        return Content.assemble(*parts)
