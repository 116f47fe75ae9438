"""A fuzzy picker and a one-line text input, both modal and keyboard driven."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option


@dataclass(frozen=True, slots=True)
class Choice:
    """One pickable item: ``value`` is returned, ``label`` shown, ``search`` matched."""

    value: str
    label: str
    search: str = ""


def _score(query: str, text: str) -> int | None:
    """Lower is better; None when ``query`` is not a subsequence of ``text``."""
    if not query:
        return 0
    text = text.lower()
    at = text.find(query)
    if at >= 0:
        return at
    position = 0
    gaps = 0
    for index, char in enumerate(text):
        if position < len(query) and char == query[position]:
            position += 1
        elif position:
            gaps += 1
        if position == len(query):
            return 100 + gaps + index
    return None


def filter_choices(choices: list[Choice], query: str) -> list[Choice]:
    """Choices matching every word of ``query``, best first (stable otherwise)."""
    words = query.lower().split()
    scored: list[tuple[int, int, Choice]] = []
    for order, choice in enumerate(choices):
        haystack = f"{choice.label} {choice.search}"
        scores = [_score(word, haystack) for word in words]
        if all(score is not None for score in scores):
            scored.append((sum(s for s in scores if s is not None), order, choice))
    scored.sort(key=lambda item: (item[0], item[1]) if words else (0, item[1]))
    return [choice for _, _, choice in scored]


class PickerScreen(ModalScreen[str | None]):
    """Type to filter, up/down to move, Enter to pick, Esc to cancel."""

    DEFAULT_CSS = """
    PickerScreen { align: center middle; }
    PickerScreen > Vertical {
        width: 80%; max-width: 110; height: 70%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    PickerScreen Label.title { text-style: bold; padding: 0 0 1 0; }
    PickerScreen Input { border: none; background: $panel; }
    PickerScreen OptionList { height: 1fr; border: none; }
    PickerScreen Label.hint { color: $text-muted; }
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("up", "move(-1)", "Up", show=False, priority=True),
        Binding("down", "move(1)", "Down", show=False, priority=True),
        Binding("pageup", "move(-10)", show=False, priority=True),
        Binding("pagedown", "move(10)", show=False, priority=True),
        Binding("ctrl+r", "rename", "Rename", priority=True),
        Binding("ctrl+d", "delete", "Delete", priority=True),
    ]

    def __init__(
        self,
        title: str,
        choices: list[Choice],
        *,
        hint: str = "",
        selected: str | None = None,
        rename: Callable[[str, str], list[Choice]] | None = None,
        delete: Callable[[str], list[Choice]] | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.hint = hint
        self.selected = selected
        self.shown: list[Choice] = choices
        self.rename = rename
        """Called with (value, new name); returns the refreshed choices."""
        self.delete = delete
        """Called with a value after confirmation; returns the refreshed choices."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, classes="title")
            yield Input(placeholder="type to filter", id="query")
            yield OptionList(id="choices")
            if self.hint:
                yield Label(self.hint, classes="hint")

    def on_mount(self) -> None:
        self._refill("")
        if self.selected is not None:
            for index, choice in enumerate(self.shown):
                if choice.value == self.selected:
                    self.query_one(OptionList).highlighted = index
        self.query_one(Input).focus()

    def _refill(self, query: str) -> None:
        self.shown = filter_choices(self.choices, query)
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(Text(choice.label), id=choice.value) for choice in self.shown])
        if self.shown:
            options.highlighted = 0

    @on(Input.Changed, "#query")
    def _query_changed(self, event: Input.Changed) -> None:
        self._refill(event.value)

    @on(Input.Submitted, "#query")
    def _submitted(self) -> None:
        index = self.query_one(OptionList).highlighted
        if index is not None and self.shown:
            self.dismiss(self.shown[index].value)

    @on(OptionList.OptionSelected)
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_move(self, step: int) -> None:
        """Move the highlight."""
        options = self.query_one(OptionList)
        if not self.shown:
            return
        current = options.highlighted or 0
        options.highlighted = max(0, min(len(self.shown) - 1, current + step))

    def action_cancel(self) -> None:
        """Close without a choice."""
        self.dismiss(None)

    def _highlighted(self) -> Choice | None:
        index = self.query_one(OptionList).highlighted
        return self.shown[index] if index is not None and self.shown else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # None hides the key: pickers without rename or delete do not offer them.
        if action == "rename":
            return True if self.rename is not None else None
        if action == "delete":
            return True if self.delete is not None else None
        return True

    def action_rename(self) -> None:
        """Rename the highlighted item."""
        choice = self._highlighted()
        if choice is None or self.rename is None:
            return
        rename = self.rename

        def save(name: str | None) -> None:
            if name and name.strip():
                self._replace(rename(choice.value, name.strip()))

        self.app.push_screen(TextInputScreen("New name", choice.label.split("  ")[0].strip()), save)

    def action_delete(self) -> None:
        """Delete the highlighted item after confirmation."""
        choice = self._highlighted()
        if choice is None or self.delete is None:
            return
        delete = self.delete

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._replace(delete(choice.value))

        self.app.push_screen(
            ConfirmScreen(f"Delete {choice.label.split('  ')[0].strip()}?"), confirmed
        )

    def _replace(self, choices: list[Choice]) -> None:
        self.choices = choices
        self._refill(self.query_one(Input).value)


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question: Enter confirms, Esc cancels."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 60; height: auto; border: round $error; background: $surface; padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("enter", "answer(True)", "Confirm", priority=True),
        Binding("escape", "answer(False)", "Cancel", priority=True),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.question)
            yield Label("Enter deletes it for good; Esc cancels.")

    def action_answer(self, yes: bool) -> None:
        """Close with the answer."""
        self.dismiss(yes)


class TextInputScreen(ModalScreen[str | None]):
    """One line of text: Enter saves (empty text is a valid answer), Esc cancels."""

    DEFAULT_CSS = """
    TextInputScreen { align: center middle; }
    TextInputScreen > Vertical {
        width: 70; height: auto; border: round $primary; background: $surface; padding: 0 1;
    }
    TextInputScreen Label { padding: 0 0 1 0; }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield Input(self.value, placeholder=self.placeholder)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        """Close without saving."""
        self.dismiss(None)
