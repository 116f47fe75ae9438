"""The system prompt: what the agent is, its tools, and the project's own instructions.

Project instructions come from ``AGENTS.md`` or ``CLAUDE.md`` in the working folder and its
parents (outermost first). The prompt holds no clock time, so a resumed session sends the same
prefix and provider prompt caches keep working.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTION_BYTES = 64 * 1024

BASE_PROMPT = """You are pi_tui, a coding agent working in the user's project from a terminal.
You read and change files and run commands with the tools you are given; you do not guess what
a file contains when you can read it. Keep answers short and concrete: name files, functions
and line numbers. Before changing code, read the code you change. After changing it, check your
work (run the tests or the command that shows the change) when that is possible. Tell the user
plainly when something failed or when you are unsure."""


def project_instructions(cwd: Path) -> list[tuple[Path, str]]:
    """``AGENTS.md``/``CLAUDE.md`` files from the filesystem root down to ``cwd``."""
    found: list[tuple[Path, str]] = []
    for folder in reversed([cwd, *cwd.parents]):
        for name in INSTRUCTION_FILES:
            path = folder / name
            if path.is_file():
                try:
                    text = path.read_bytes()[:MAX_INSTRUCTION_BYTES].decode("utf-8", "replace")
                except OSError:
                    continue
                found.append((path, text.strip()))
                break
    return found


def build_system_prompt(cwd: Path, tool_descriptions: Iterable[tuple[str, str]]) -> str:
    """The full system prompt for a session in ``cwd``."""
    lines = [BASE_PROMPT, "", "Tools:"]
    lines.extend(f"- {name}: {description}" for name, description in tool_descriptions)
    lines.extend(["", f"Working directory: {cwd}"])
    for path, text in project_instructions(cwd):
        if text:
            lines.extend(["", f"Project instructions from {path}:", "", text])
    return "\n".join(lines)
