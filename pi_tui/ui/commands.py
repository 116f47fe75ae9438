"""Slash commands: the list the prompt completes from and ``/help`` shows.

The app maps each name to an action; this module only knows names, usage and help text,
and how to match what the user typed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One slash command."""

    name: str
    help: str
    argument: str = ""
    """How the argument is written in the usage line (empty: takes none)."""

    @property
    def usage(self) -> str:
        """``/name ARG``."""
        return f"/{self.name} {self.argument}".rstrip()

    @property
    def takes_argument(self) -> bool:
        """True when the command accepts an argument."""
        return bool(self.argument)


COMMANDS: list[SlashCommand] = [
    SlashCommand("tree", "focus the session tree navigator"),
    SlashCommand("rename", "name this session", "NAME"),
    SlashCommand("label", "label the current entry (no text clears; or ID TEXT)", "[ID] [TEXT]"),
    SlashCommand("model", "switch model (no name: open the picker)", "[NAME]"),
    SlashCommand("thinking", "set the thinking level (off … xhigh)", "[LEVEL]"),
    SlashCommand(
        "compact", "summarize older turns to free context (the originals stay)", "[FOCUS]"
    ),
    SlashCommand("new", "start a new session"),
    SlashCommand("resume", "open another session of this folder"),
    SlashCommand("fork", "new session file from an earlier user message"),
    SlashCommand("session", "file, ids, counts, tokens and cost of this session"),
    SlashCommand("copy", "copy the last answer to the clipboard"),
    SlashCommand("hotkeys", "show all key bindings"),
    SlashCommand("help", "show commands and keys"),
    SlashCommand("quit", "leave pi-tui"),
]


def _is_subsequence(needle: str, haystack: str) -> bool:
    position = 0
    for char in haystack:
        if position < len(needle) and needle[position] == char:
            position += 1
    return position == len(needle)


def match_commands(commands: list[SlashCommand], typed: str) -> list[SlashCommand]:
    """Commands matching ``/xyz``: prefix matches first, then fuzzy (subsequence) ones."""
    query = typed.lstrip("/").lower()
    prefix = [c for c in commands if c.name.startswith(query)]
    fuzzy = [c for c in commands if c not in prefix and _is_subsequence(query, c.name)]
    return prefix + fuzzy


def parse_command(text: str) -> tuple[str, str] | None:
    """``"/label abc def"`` → ``("label", "abc def")``; None when it is not a command."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, argument = stripped[1:].partition(" ")
    return name.lower(), argument.strip()
