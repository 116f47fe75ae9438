"""App messages (what the session stores) → provider messages (what LiteLLM sends).

The only place that knows both shapes. Rules, as pi replays history:
- assistant turns that ended in ``error`` or ``aborted`` are dropped, with their tool results;
- a tool call left without a result gets a synthetic error result before the next message;
- bashExecution, custom, branchSummary and compactionSummary reach the model as user text;
- reasoning is sent back only to the model that produced it (it carries provider signatures).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

Message = dict[str, Any]

SKIPPED_STOP_REASONS = frozenset({"error", "aborted"})
MISSING_RESULT_TEXT = "No result provided"

COMPACTION_PREAMBLE = (
    "The conversation history before this point was compacted into the following summary:"
)
BRANCH_PREAMBLE = "The following is a summary of a branch that this conversation came back from:"


def text_blocks(content: Any) -> str:
    """All text of a content value (string or blocks), joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _user_content(content: Any) -> str | list[dict[str, Any]]:
    """User content for OpenAI-style messages: a string, or parts when images are present."""
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    if not any(isinstance(b, dict) and b.get("type") == "image" for b in blocks):
        return text_blocks(blocks)
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append({"type": "text", "text": block.get("text", "")})
        elif block.get("type") == "image":
            url = f"data:{block.get('mimeType', 'image/png')};base64,{block.get('data', '')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def bash_execution_text(message: Message) -> str:
    """How a user-run shell command reads to the model."""
    output = str(message.get("output") or "")
    text = f"Ran `{message.get('command', '')}`\n"
    text += f"```\n{output.rstrip()}\n```" if output.strip() else "(no output)"
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif message.get("exitCode") not in (None, 0):
        text += f"\n\nCommand exited with code {message.get('exitCode')}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def _assistant(message: Message, same_model: bool) -> Message:
    content = message.get("content") or []
    text = "".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )
    converted: Message = {"role": "assistant", "content": text or None}
    calls = [
        {
            "id": block.get("id"),
            "type": "function",
            "function": {
                "name": block.get("name"),
                "arguments": orjson.dumps(block.get("arguments") or {}).decode(),
            },
        }
        for block in content
        if isinstance(block, dict) and block.get("type") == "toolCall"
    ]
    if calls:
        converted["tool_calls"] = calls
    if same_model:
        thinking = [b for b in content if isinstance(b, dict) and b.get("type") == "thinking"]
        if thinking:
            converted["reasoning_content"] = "".join(str(b.get("thinking", "")) for b in thinking)
            signed = [
                {
                    "type": "thinking",
                    "thinking": b.get("thinking", ""),
                    "signature": b["thinkingSignature"],
                }
                for b in thinking
                if b.get("thinkingSignature")
            ]
            if signed:
                converted["thinking_blocks"] = signed
    return converted


def _tool_result(message: Message) -> Message:
    text = text_blocks(message.get("content"))
    images = [
        b for b in message.get("content") or [] if isinstance(b, dict) and b.get("type") == "image"
    ]
    if images:
        text = (text + "\n" if text else "") + f"[{len(images)} image(s) attached below]"
    return {
        "role": "tool",
        "tool_call_id": message.get("toolCallId"),
        "content": text or "(empty result)",
    }


def to_provider_messages(
    messages: Iterable[Message],
    *,
    system_prompt: str | None = None,
    provider: str | None = None,
    model: str | None = None,
) -> list[Message]:
    """Convert a context's App messages into LiteLLM chat messages."""
    result: list[Message] = []
    if system_prompt:
        result.append({"role": "system", "content": system_prompt})
    pending_calls: list[str] = []
    live_calls: set[str] = set()
    trailing_images: list[Message] = []

    def close_pending() -> None:
        for call_id in pending_calls:
            result.append({"role": "tool", "tool_call_id": call_id, "content": MISSING_RESULT_TEXT})
        pending_calls.clear()
        if trailing_images:
            result.append({"role": "user", "content": list(trailing_images)})
            trailing_images.clear()

    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            call_id = message.get("toolCallId")
            if call_id not in live_calls:
                continue  # its call belonged to a dropped (error/aborted) turn
            live_calls.discard(call_id)
            if call_id in pending_calls:
                pending_calls.remove(call_id)
            result.append(_tool_result(message))
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "image":
                    data = f"data:{block.get('mimeType')};base64,{block.get('data')}"
                    trailing_images.append({"type": "image_url", "image_url": {"url": data}})
            continue
        close_pending()
        if role == "assistant":
            if message.get("stopReason") in SKIPPED_STOP_REASONS:
                continue
            same = message.get("provider") == provider and message.get("model") == model
            converted = _assistant(message, same)
            if converted["content"] is None and "tool_calls" not in converted:
                continue
            result.append(converted)
            for call in converted.get("tool_calls", []):
                pending_calls.append(call["id"])
                live_calls.add(call["id"])
        elif role in ("user", "custom"):
            result.append({"role": "user", "content": _user_content(message.get("content"))})
        elif role == "bashExecution":
            if not message.get("excludeFromContext"):
                result.append({"role": "user", "content": bash_execution_text(message)})
        elif role == "branchSummary":
            text = f"{BRANCH_PREAMBLE}\n<summary>\n{message.get('summary', '')}\n</summary>"
            result.append({"role": "user", "content": text})
        elif role == "compactionSummary":
            text = f"{COMPACTION_PREAMBLE}\n<summary>\n{message.get('summary', '')}\n</summary>"
            result.append({"role": "user", "content": text})
    close_pending()
    return result
