"""``pi-tui --mode json PROMPT``: one JSON object per agent event on stdout.

Keys are camelCase like pi's event stream. ``message_update`` lines carry the delta, not the
whole partial message, so the output grows with the answer rather than with its square.
"""

from __future__ import annotations

import sys
from typing import Any, BinaryIO

import orjson

from ..agent.events import AgentEvent, MessageUpdate
from ..agent_session import AgentSession
from .print_mode import EXIT_ABORTED, EXIT_FAILED, EXIT_OK
from .runner import run_with_interrupt


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def event_json(event: AgentEvent) -> dict[str, Any]:
    """The JSON object printed for one event."""
    payload = event.to_json()
    if isinstance(event, MessageUpdate):
        payload.pop("message")
    return {_camel(key) if key != "type" else key: value for key, value in payload.items()}


async def run_json(session: AgentSession, prompt: str, out: BinaryIO | None = None) -> int:
    """Run ``prompt`` printing every event as a JSON line."""
    stream = out or sys.stdout.buffer

    def write(event: AgentEvent) -> None:
        stream.write(orjson.dumps(event_json(event)) + b"\n")
        stream.flush()

    unsubscribe = session.subscribe(write)
    try:
        messages = await run_with_interrupt(session, prompt)
    finally:
        unsubscribe()
    final = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
    if final is None or final.get("stopReason") == "error":
        return EXIT_FAILED
    return EXIT_ABORTED if final.get("stopReason") == "aborted" else EXIT_OK
