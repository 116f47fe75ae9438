"""The prompt: a multi-line TextArea where Enter sends and Shift+Enter / Ctrl+J add a line.

Up on the first row and Down on the last walk the history of sent prompts (the unsent draft
is kept). Typing ``/`` at the start opens the slash-command completion list above the prompt;
Tab or Enter takes the highlighted command.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

from .commands import SlashCommand, match_commands

NEWLINE_KEYS = frozenset({"shift+enter", "ctrl+j"})


class PromptArea(TextArea):
    """The text area itself; it reports submissions and history moves as messages."""

    @dataclass
    class Submitted(Message):
        """The user pressed Enter."""

        text: str

    @dataclass
    class HistoryMove(Message):
        """Up on the first row (-1) or Down on the last row (+1)."""

        direction: int

    @dataclass
    class CompletionMove(Message):
        """Up/Down/Tab/Escape while the completion list is open."""

        key: str

    completing = False
    """Set by the owner while the slash-command list is showing."""

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if self.completing and key in ("up", "down", "tab", "escape"):
            event.stop()
            event.prevent_default()
            self.post_message(self.CompletionMove(key))
            return
        if key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self.text))
            return
        if key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            start, end = self.selection
            self._replace_via_keyboard("\n", start, end)
            return
        row, _ = self.cursor_location
        if key == "up" and row == 0:
            event.stop()
            event.prevent_default()
            self.post_message(self.HistoryMove(-1))
            return
        if key == "down" and row == self.document.line_count - 1:
            event.stop()
            event.prevent_default()
            self.post_message(self.HistoryMove(1))
            return
        await super()._on_key(event)


class Prompt(Vertical):
    """Prompt area plus its slash-command completion list and sent-prompt history."""

    DEFAULT_CSS = """
    Prompt {
        height: auto;
        max-height: 50%;
        border-top: solid $primary 40%;
        padding: 0 1;
    }
    Prompt OptionList#completions {
        height: auto;
        max-height: 10;
        display: none;
        border: none;
        background: $panel;
    }
    Prompt.-completing OptionList#completions {
        display: block;
    }
    Prompt PromptArea {
        height: auto;
        min-height: 1;
        max-height: 12;
        border: none;
        padding: 0;
        background: $surface;
    }
    Prompt PromptArea:focus {
        border: none;
    }
    """

    @dataclass
    class Sent(Message):
        """A prompt (or slash command) to act on."""

        text: str

    def __init__(self, commands: list[SlashCommand], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.commands = commands
        self.history: list[str] = []
        self._history_index: int | None = None
        self._draft = ""
        self._matches: list[SlashCommand] = []

    def compose(self) -> ComposeResult:
        yield OptionList(id="completions")
        yield PromptArea(
            "",
            soft_wrap=True,
            show_line_numbers=False,
            compact=True,
            placeholder="Ask anything  ·  / for commands  ·  ctrl+t tree  ·  Enter send",
            id="prompt-area",
        )

    @property
    def area(self) -> PromptArea:
        """The text area."""
        return self.query_one(PromptArea)

    @property
    def text(self) -> str:
        """The current text."""
        return self.area.text

    def set_text(self, text: str) -> None:
        """Replace the text and put the cursor at its end."""
        area = self.area
        area.load_text(text)
        area.move_cursor(area.document.end)

    def focus_input(self) -> None:
        """Give the text area the focus."""
        self.area.focus()

    # --- completion -------------------------------------------------------------------------

    @on(TextArea.Changed)
    def _update_completions(self, event: TextArea.Changed) -> None:
        text = event.text_area.text
        word = text.split(maxsplit=1)[0] if text.strip() else ""
        showing = text.startswith("/") and " " not in text and "\n" not in text
        self._matches = match_commands(self.commands, word) if showing else []
        options = self.query_one("#completions", OptionList)
        options.clear_options()
        for command in self._matches:
            prompt = Text.assemble((f"{command.usage:<16}", "bold"), "  ", (command.help, "dim"))
            options.add_option(Option(prompt, id=command.name))
        if self._matches:
            options.highlighted = 0
        self.set_class(bool(self._matches), "-completing")
        self.area.completing = bool(self._matches)

    def _accept_completion(self) -> None:
        options = self.query_one("#completions", OptionList)
        index = options.highlighted
        if index is None or not self._matches:
            return
        command = self._matches[index]
        self.set_text(f"/{command.name}" + (" " if command.takes_argument else ""))

    @on(PromptArea.CompletionMove)
    def _completion_key(self, event: PromptArea.CompletionMove) -> None:
        options = self.query_one("#completions", OptionList)
        if event.key == "up":
            options.action_cursor_up()
        elif event.key == "down":
            options.action_cursor_down()
        elif event.key == "tab":
            self._accept_completion()
        else:
            self.set_class(False, "-completing")
            self.area.completing = False

    # --- sending and history ----------------------------------------------------------------

    @on(PromptArea.Submitted)
    def _submitted(self, event: PromptArea.Submitted) -> None:
        event.stop()
        text = event.text
        if self.area.completing and self._matches:
            typed = text.strip()
            options = self.query_one("#completions", OptionList)
            chosen = self._matches[options.highlighted or 0]
            if typed != f"/{chosen.name}":
                self._accept_completion()
                if chosen.takes_argument:
                    return
                text = f"/{chosen.name}"
        if not text.strip():
            return
        if not self.history or self.history[-1] != text:
            self.history.append(text)
        self._history_index = None
        self.set_text("")
        self.post_message(self.Sent(text))

    @on(PromptArea.HistoryMove)
    def _history(self, event: PromptArea.HistoryMove) -> None:
        event.stop()
        if not self.history:
            return
        if self._history_index is None:
            if event.direction > 0:
                return
            self._draft = self.text
            self._history_index = len(self.history) - 1
        else:
            self._history_index += event.direction
        if self._history_index >= len(self.history):
            self._history_index = None
            self.set_text(self._draft)
            return
        self._history_index = max(0, self._history_index)
        self.set_text(self.history[self._history_index])
