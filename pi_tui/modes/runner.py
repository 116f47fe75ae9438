"""Running one prompt to completion with Ctrl+C turned into an abort."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any

from ..agent_session import AgentSession


async def run_with_interrupt(session: AgentSession, prompt: str) -> list[dict[str, Any]]:
    """Run ``prompt``; SIGINT aborts the run instead of killing the process."""
    loop = asyncio.get_running_loop()
    installed = False
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, session.abort)
        installed = True
    try:
        return await session.prompt(prompt)
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
