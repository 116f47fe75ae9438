"""Message factories and the location of pi's real session files, shared by the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

PI_FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "pi"

requires_pi_fixtures = pytest.mark.skipif(
    not PI_FIXTURES.is_dir(), reason="pi's fixture files (../shared/fixtures/pi) are not present"
)


def user(text: str, timestamp: int = 1) -> dict[str, Any]:
    """A user message record."""
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}


def assistant(
    text: str = "ok",
    *,
    model: str = "m1",
    provider: str = "p1",
    stop_reason: str = "stop",
    tool_calls: list[dict[str, Any]] | None = None,
    timestamp: int = 2,
) -> dict[str, Any]:
    """An assistant message record."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.extend(tool_calls or [])
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": provider,
        "model": model,
        "usage": {
            "input": 10,
            "output": 5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 15,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": stop_reason,
        "timestamp": timestamp,
    }


def tool_call(name: str, call_id: str = "c1", **arguments: Any) -> dict[str, Any]:
    """A toolCall content block of an assistant message."""
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def tool_result(
    call_id: str,
    name: str,
    text: str,
    *,
    is_error: bool = False,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A toolResult message record (with ``details`` when given)."""
    message: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": is_error,
        "timestamp": 3,
    }
    if details is not None:
        message["details"] = details
    return message


def texts(messages: list[dict[str, Any]]) -> list[str]:
    """The first text of each message (or its summary), for compact assertions."""
    result = []
    for message in messages:
        if "summary" in message:
            result.append(message["summary"])
            continue
        content = message.get("content")
        if isinstance(content, str):
            result.append(content)
        else:
            result.append(next((b["text"] for b in content if b.get("type") == "text"), ""))
    return result
