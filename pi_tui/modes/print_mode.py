"""``pi-tui -p PROMPT``: run one prompt and print the final answer.

The answer goes to stdout; a failed turn prints its error to stderr and exits 1; Ctrl+C aborts
the run (the partial answer is stored as aborted) and exits 130.
"""

from __future__ import annotations

import sys
from typing import TextIO

from ..agent_session import AgentSession
from ..session.catalog import text_of
from .runner import run_with_interrupt

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_ABORTED = 130


async def run_print(
    session: AgentSession, prompt: str, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    """Run ``prompt`` and print the last assistant answer."""
    messages = await run_with_interrupt(session, prompt)
    final = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
    if final is None:
        print("pi-tui: the model produced no answer", file=err)
        return EXIT_FAILED
    if final.get("stopReason") == "aborted":
        print("pi-tui: aborted", file=err)
        return EXIT_ABORTED
    if final.get("stopReason") == "error":
        print(f"pi-tui: error: {final.get('errorMessage', 'the model call failed')}", file=err)
        return EXIT_FAILED
    print(text_of(final.get("content")).strip(), file=out)
    return EXIT_OK
