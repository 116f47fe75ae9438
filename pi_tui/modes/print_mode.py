"""``pi-tui -p PROMPT``: run one prompt and print the final answer.

The answer goes to stdout and notes about compaction to stderr; a failed turn prints its error
to stderr and exits 1; Ctrl+C aborts the run (the partial answer is stored as aborted) and
exits 130.
"""

from __future__ import annotations

import sys
from typing import TextIO

from ..agent.events import AgentEvent, CompactionEnd
from ..agent_session import AgentSession
from ..session.catalog import text_of
from .runner import run_with_interrupt

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_ABORTED = 130


async def run_print(
    session: AgentSession, prompt: str, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    """Run ``prompt`` and print the last assistant answer (compactions are noted on stderr)."""

    def note(event: AgentEvent) -> None:
        if not isinstance(event, CompactionEnd):
            return
        if event.entry_id is not None:
            print(f"pi-tui: context compacted ({event.tokens_before or 0:,} tokens)", file=err)
        elif event.error_message:
            print(f"pi-tui: compaction failed: {event.error_message}", file=err)

    unsubscribe = session.subscribe(note)
    try:
        messages = await run_with_interrupt(session, prompt)
    finally:
        unsubscribe()
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
