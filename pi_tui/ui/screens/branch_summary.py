"""The question asked when the leaf leaves a branch: summarize what is left behind?"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

SKIP = "skip"
SUMMARIZE = "summarize"
CUSTOM = "custom"


class BranchSummaryScreen(ModalScreen[str | None]):
    """Three answers (no summary, summarize, summarize with a focus); Esc cancels the move.

    Dismisses with ``"skip"``, ``"summarize"``, ``"custom"`` or None.
    """

    DEFAULT_CSS = """
    BranchSummaryScreen { align: center middle; }
    BranchSummaryScreen > Vertical {
        width: 64; height: auto; border: round $primary; background: $surface; padding: 0 1;
    }
    BranchSummaryScreen Label { width: 100%; padding: 0 0 1 0; }
    BranchSummaryScreen OptionList, BranchSummaryScreen OptionList:focus {
        height: auto; border: none; padding: 0; background: $surface;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel"),
        Binding("1", "answer('skip')", show=False),
        Binding("2", "answer('summarize')", show=False),
        Binding("3", "answer('custom')", show=False),
    ]

    def __init__(self, abandoned: int) -> None:
        super().__init__()
        self.abandoned = abandoned

    def compose(self) -> ComposeResult:
        noun = "entry" if self.abandoned == 1 else "entries"
        with Vertical():
            yield Label(
                f"Leaving a branch of {self.abandoned} {noun}. Carry what it taught to the new "
                "position as a summary? (Esc: stay)"
            )
            yield OptionList(
                Option("1  No summary (nothing is written)", id=SKIP),
                Option("2  Summarize the branch", id=SUMMARIZE),
                Option("3  Summarize with a focus…", id=CUSTOM),
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on an answer."""
        self.dismiss(event.option.id)

    def action_answer(self, answer: str) -> None:
        """A digit picks its answer directly."""
        self.dismiss(answer)
