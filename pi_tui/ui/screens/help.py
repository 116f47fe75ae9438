"""The help screen: slash commands and key bindings."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen

from ..commands import COMMANDS

KEYS = [
    ("Enter", "send the prompt (while the agent runs: steer it)"),
    ("Alt+Enter", "queue a follow-up for after the run"),
    ("Shift+Enter, Ctrl+J", "new line in the prompt"),
    ("Up / Down", "prompt history (on the first / last line)"),
    ("Esc", "abort the running agent; in the tree: back to the prompt"),
    ("Ctrl+T", "focus the session tree"),
    ("Tab / Shift+Tab", "cycle focus: prompt, chat, tool trace, tree"),
    ("Ctrl+P", "command palette"),
    ("Ctrl+Q", "quit"),
]

TREE_KEYS = [
    ("Up / Down, PgUp / PgDn, Home / End", "move"),
    ("Left / Right", "fold / unfold a branch"),
    ("[ / ]", "previous / next sibling branch"),
    ("g", "jump to the current leaf"),
    ("type", "search (Enter keeps the query, Esc clears it)"),
    ("/", "search starting with a command letter (f, g, e, L)"),
    ("f", "cycle filters: default, no-tools, user-only, labeled, all"),
    ("Enter", "continue from this entry (nothing is deleted or written)"),
    ("e", "re-edit this user message (its text goes to the prompt)"),
    ("L", "edit this entry's label"),
    ("Esc", "back to the prompt"),
]


def help_markdown() -> str:
    """The help text."""
    lines = ["# pi-tui", "", "## Commands", "", "| command | what it does |", "|---|---|"]
    lines += [f"| `{c.usage}` | {c.help} |" for c in COMMANDS]
    lines += ["", "## Keys", "", "| key | action |", "|---|---|"]
    lines += [f"| {key} | {action} |" for key, action in KEYS]
    lines += ["", "## In the tree", "", "| key | action |", "|---|---|"]
    lines += [f"| {key} | {action} |" for key, action in TREE_KEYS]
    return "\n".join(lines)


class HelpScreen(ModalScreen[None]):
    """Commands and keys; Esc or q closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90%; max-width: 100; height: 85%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    """

    BINDINGS = [Binding("escape,q", "dismiss(None)", "Close")]

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown  # parsed only when help is opened

        with VerticalScroll():
            yield Markdown(help_markdown())
