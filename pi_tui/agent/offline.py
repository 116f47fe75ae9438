"""The built-in offline model ``offline/pi-tui``: no network, no key, real tool calls.

It is a LiteLLM custom provider, so it runs through exactly the same streaming path as a
hosted model. Each call answers with the next scripted reply from ``$PI_TUI_SCRIPT`` (a JSON
file ``{"replies": [{"thinking"?, "text"?, "tool_calls"?: [{"name", "arguments"}]}]}``) and,
once the script is used up or absent, with small rules: plain requests such as "list files",
"read README.md", "grep TODO", "find *.py" or "run pytest" become tool calls, tool results
become a short answer, and anything else gets an honest note on configuring a real model.
Summary requests (compaction and branch summaries) are recognised whatever the script says and
answered with the Markdown sections they ask for, filled from the conversation they carry.

The planning here is plain Python; LiteLLM is only touched inside
:func:`register_offline_provider`, which the lazy importer calls.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..session.catalog import text_of

PROVIDER = "offline"
MODEL_ID = "pi-tui"
MODEL_NAME = f"{PROVIDER}/{MODEL_ID}"
SCRIPT_ENV = "PI_TUI_SCRIPT"
DELAY_ENV = "PI_TUI_OFFLINE_DELAY_MS"
DEFAULT_DELAY_MS = 4.0
CHUNK_CHARS = 6

HELP_TEXT = (
    "I am pi_tui's built-in offline model, so I can only do simple things: "
    '"list files", "read README.md", "grep TODO", "find *.py" or "run pytest". '
    "For real answers, configure a model: set ANTHROPIC_API_KEY, OPENAI_API_KEY or "
    "GEMINI_API_KEY and restart, or pass --model with any LiteLLM model string "
    "(for example --model ollama_chat/qwen3:8b for a local Ollama server, or "
    "--model openai/NAME --api-base URL for any OpenAI-compatible server)."
)


@dataclass(slots=True)
class PlannedCall:
    """A tool call the offline model will make."""

    name: str
    arguments: dict[str, Any]


@dataclass(slots=True)
class PlannedReply:
    """What one model call streams back."""

    text: str = ""
    thinking: str = ""
    tool_calls: list[PlannedCall] = field(default_factory=list)


def load_script(path: str | os.PathLike[str]) -> list[PlannedReply]:
    """Read a ``PI_TUI_SCRIPT`` file; raises ValueError with the reason when it is malformed."""
    try:
        data = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ValueError(f"cannot read offline script {path}: {exc}") from exc
    replies = data.get("replies") if isinstance(data, dict) else None
    if not isinstance(replies, list):
        raise ValueError(f'offline script {path} needs a top-level {{"replies": [...]}} list')
    planned = []
    for number, reply in enumerate(replies, start=1):
        if not isinstance(reply, dict):
            raise ValueError(f"offline script {path}: reply {number} is not an object")
        calls = [
            PlannedCall(str(call["name"]), dict(call.get("arguments") or {}))
            for call in reply.get("tool_calls") or []
        ]
        planned.append(
            PlannedReply(str(reply.get("text", "")), str(reply.get("thinking", "")), calls)
        )
    return planned


REQUESTS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"^(?:please\s+)?(?:list|show)\s+(?:the\s+)?files(?:\s+in\s+(?P<path>\S+))?", re.I
        ),
        "ls",
    ),
    (re.compile(r"^(?:please\s+)?ls(?:\s+(?P<path>\S+))?\s*$", re.I), "ls"),
    (re.compile(r"^(?:please\s+)?(?:read|open|show|cat)\s+(?P<path>\S+)", re.I), "read"),
    (re.compile(r"^(?:please\s+)?(?:grep|search\s+for)\s+(?P<pattern>.+?)\s*$", re.I), "grep"),
    (re.compile(r"^(?:please\s+)?find\s+(?P<pattern>\S+)", re.I), "find"),
    (re.compile(r"^(?:please\s+)?run\s+(?P<command>.+?)\s*$", re.I), "bash"),
]


def plan_from_rules(messages: list[dict[str, Any]], tool_names: set[str]) -> PlannedReply:
    """The rule-based reply to a conversation (OpenAI-style messages)."""
    if not messages:
        return PlannedReply(HELP_TEXT)
    last = messages[-1]
    if last.get("role") == "tool":
        return _answer_from_results(messages)
    request = text_of(last.get("content")).strip().rstrip(".?!")
    for pattern, tool in REQUESTS:
        match = pattern.match(request)
        if match is None:
            continue
        if tool not in tool_names:
            return PlannedReply(
                f"The {tool} tool is not enabled in this session, so I cannot do that."
            )
        arguments = {k: v.strip("'\"`") for k, v in match.groupdict().items() if v}
        if tool == "ls":
            arguments.setdefault("path", ".")
        return PlannedReply(
            text=_intro(tool, arguments),
            thinking=f"The user asked me to use {tool}; I will call it.",
            tool_calls=[PlannedCall(tool, arguments)],
        )
    return PlannedReply(HELP_TEXT)


def _intro(tool: str, arguments: dict[str, Any]) -> str:
    if tool == "ls":
        return f"Listing `{arguments['path']}`."
    if tool == "read":
        return f"Reading `{arguments['path']}`."
    if tool == "grep":
        return f"Searching for `{arguments['pattern']}`."
    if tool == "find":
        return f"Looking for files matching `{arguments['pattern']}`."
    return f"Running `{arguments.get('command', '')}`."


def _answer_from_results(messages: list[dict[str, Any]]) -> PlannedReply:
    results = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        results.append(text_of(message.get("content")))
    results.reverse()
    parts = []
    for text in results:
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines:
            parts.append("The tool returned nothing.")
            continue
        shown = "\n".join(lines[:40])
        more = f"\n… and {len(lines) - 40} more lines." if len(lines) > 40 else ""
        parts.append(f"Here is the result ({len(lines)} lines):\n\n```\n{shown}\n```{more}")
    return PlannedReply("\n\n".join(parts))


# --- summary requests -----------------------------------------------------------------------

CONVERSATION_OPEN = "<conversation>\n"
CONVERSATION_CLOSE = "\n</conversation>"
PREVIOUS_OPEN = "<previous-summary>\n"
PREVIOUS_CLOSE = "\n</previous-summary>"
DEFAULT_SECTIONS = [("##", "Goal"), ("##", "Progress"), ("###", "Done"), ("##", "Next Steps")]
LINE_LIMIT = 200

_BLOCK_START = re.compile(r"\n\n(?=\[[^\]\n]+\]: )")
_BLOCK = re.compile(r"\[([^\]\n]+)\]: (.*)", re.S)
_HEADING = re.compile(r"^(#{2,3}) (.+?)\s*$", re.M)
_FOCUS = re.compile(r"^Additional focus: (.+)$", re.M)
_CALL_NAME = re.compile(r"(?:^|; )([\w.-]+)\(")
_PATH_ARG = re.compile(r'\bpath=("(?:[^"\\]|\\.)*")')
_PREVIOUS_GOAL = re.compile(r"^## Goal\n(.*?)(?=\n#|\Z)", re.M | re.S)


def summary_request(messages: list[dict[str, Any]]) -> str | None:
    """The request text when a call asks for a summary, else None.

    pi_tui's summary requests are a single user message (after the system prompt) that opens
    with the serialized conversation in ``<conversation>`` tags.
    """
    turns = [m for m in messages if m.get("role") != "system"]
    if len(turns) != 1 or turns[0].get("role") != "user":
        return None
    text = text_of(turns[0].get("content"))
    if text.startswith(CONVERSATION_OPEN) and CONVERSATION_CLOSE in text:
        return text
    return None


def _line(text: str) -> str:
    first = text.strip().split("\n", 1)[0].strip()
    return first if len(first) <= LINE_LIMIT else first[: LINE_LIMIT - 1] + "…"


@dataclass(slots=True)
class _Digest:
    """What the offline summarizer gathers from a serialized conversation."""

    exchanges: list[tuple[str, str | None]] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    previous_goal: str = ""
    previous_done: list[str] = field(default_factory=list)
    focus: str = ""

    def add_block(self, label: str, content: str) -> None:
        """Take in one ``[Label]: content`` block of the conversation."""
        if label == "User":
            self.exchanges.append((_line(content), None))
        elif label == "Assistant" and self.exchanges:
            request, _ = self.exchanges[-1]
            self.exchanges[-1] = (request, _line(content))
        elif label == "Assistant tool calls":
            for name in _CALL_NAME.findall(content):
                if name not in self.tools:
                    self.tools.append(name)
            for encoded in _PATH_ARG.findall(content):
                path = str(orjson.loads(encoded))
                if path not in self.files:
                    self.files.append(path)

    def section(self, title: str) -> list[str]:
        """The body lines for a requested heading; unknown headings get "(none)"."""
        key = title.lower()
        answered = [(q, a) for q, a in self.exchanges if a is not None]
        waiting = [q for q, a in self.exchanges if a is None]
        if key in ("goal", "original request"):
            first = self.exchanges[0][0] if self.exchanges else "(none)"
            return [self.previous_goal or first]
        if key.startswith("constraints"):
            return [f"- Requested focus: {self.focus}" if self.focus else "- (none)"]
        if key == "done":
            done = [f"- [x] {q} — {a}" for q, a in answered]
            return [*self.previous_done, *done] or ["- [x] (none)"]
        if key == "early progress":
            return [f"- {q} — {a}" for q, a in answered] or ["- (none)"]
        if key == "in progress":
            return [f"- [ ] {q}" for q in waiting] or ["- [ ] (none)"]
        if key == "key decisions" and self.tools:
            return [f"- **Tools used**: {', '.join(self.tools)}"]
        if key == "next steps":
            step = f"Continue with: {waiting[-1]}" if waiting else "Wait for the next request."
            return [f"1. {step}"]
        if key in ("critical context", "context for suffix") and self.files:
            return [f"- Files: {', '.join(self.files)}"]
        return ["- (none)"]


def plan_summary(request: str) -> PlannedReply:
    """A deterministic summary with the sections the request's prompt asks for.

    The goal is the first user request (or the earlier summary's goal), done items pair each
    answered request with the first line of its answer, the files are the ``path`` arguments
    of tool calls, and an "Additional focus" instruction is echoed under the constraints.
    """
    body, _, rest = request[len(CONVERSATION_OPEN) :].partition(CONVERSATION_CLOSE)
    digest = _Digest()
    if PREVIOUS_OPEN in rest:
        previous, _, rest = rest.partition(PREVIOUS_OPEN)[2].partition(PREVIOUS_CLOSE)
        goal = _PREVIOUS_GOAL.search(previous)
        digest.previous_goal = goal.group(1).strip() if goal else ""
        digest.previous_done = [line for line in previous.splitlines() if line.startswith("- [x] ")]
    focus = _FOCUS.search(rest)
    digest.focus = focus.group(1).strip() if focus else ""
    for block in _BLOCK_START.split(body.strip()):
        match = _BLOCK.match(block)
        if match is not None:
            digest.add_block(match.group(1), match.group(2))
    sections = _HEADING.findall(rest) or DEFAULT_SECTIONS
    lines: list[str] = []
    for position, (level, title) in enumerate(sections):
        following = sections[position + 1][0] if position + 1 < len(sections) else ""
        lines.append(f"{level} {title}")
        # A heading directly followed by its own sub-headings has no body of its own.
        if len(following) <= len(level):
            lines.extend([*digest.section(title), ""])
    return PlannedReply("\n".join(lines).strip())


def _pieces(text: str) -> list[str]:
    return [text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)]


def _estimate_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(len(text_of(m.get("content"))) for m in messages) // 4 + 1


class OfflineBrain:
    """Chooses replies: the script first (in order, once per process), then the rules."""

    def __init__(self, script: list[PlannedReply] | None = None) -> None:
        self.script: deque[PlannedReply] = deque(script or [])

    @classmethod
    def from_environment(cls) -> OfflineBrain:
        """A brain with ``$PI_TUI_SCRIPT`` loaded, if set."""
        path = os.environ.get(SCRIPT_ENV)
        return cls(load_script(path) if path else None)

    def next_reply(self, messages: list[dict[str, Any]], tool_names: set[str]) -> PlannedReply:
        """The reply to this call."""
        request = summary_request(messages)
        if request is not None:
            return plan_summary(request)
        if self.script:
            return self.script.popleft()
        return plan_from_rules(messages, tool_names)


_brain: OfflineBrain | None = None


def offline_brain() -> OfflineBrain:
    """The process-wide brain (created from the environment on first use)."""
    global _brain
    if _brain is None:
        _brain = OfflineBrain.from_environment()
    return _brain


def use_script(replies: list[PlannedReply] | None) -> None:
    """Replace the process-wide script (tests and the sample-session generator use this)."""
    global _brain
    _brain = OfflineBrain(replies)


def register_offline_provider(litellm: Any) -> None:
    """Register ``offline/pi-tui`` with an imported LiteLLM module."""
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    class OfflineModel(litellm.CustomLLM):  # type: ignore[misc]
        """LiteLLM's view of the offline model."""

        async def astreaming(self, *args: Any, **kwargs: Any) -> Any:
            messages: list[dict[str, Any]] = kwargs.get("messages") or []
            params: dict[str, Any] = kwargs.get("optional_params") or {}
            tools = {t.get("function", {}).get("name") for t in params.get("tools") or []}
            reply = offline_brain().next_reply(messages, tools)
            delay = float(os.environ.get(DELAY_ENV, DEFAULT_DELAY_MS)) / 1000
            if reply.thinking and params.get("reasoning_effort"):
                for piece in _pieces(reply.thinking):
                    yield ModelResponseStream(
                        choices=[StreamingChoices(index=0, delta=Delta(reasoning_content=piece))]
                    )
                    await asyncio.sleep(delay)
            for piece in _pieces(reply.text):
                yield _chunk(text=piece)
                await asyncio.sleep(delay)
            for index, call in enumerate(reply.tool_calls):
                encoded = orjson.dumps(call.arguments).decode()
                call_id = f"call_{secrets.token_hex(6)}"
                for position, fragment in enumerate(_pieces(encoded) or [""]):
                    first = position == 0
                    yield _chunk(
                        tool_use={
                            "index": index,
                            "id": call_id if first else None,
                            "type": "function",
                            "function": {
                                "name": call.name if first else None,
                                "arguments": fragment,
                            },
                        }
                    )
                    await asyncio.sleep(delay)
            prompt = _estimate_tokens(messages)
            completion = max(1, (len(reply.text) + len(reply.thinking)) // 4)
            yield _chunk(
                finished=True,
                finish_reason="tool_calls" if reply.tool_calls else "stop",
                usage={
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            )

    others = [
        entry
        for entry in getattr(litellm, "custom_provider_map", [])
        if entry.get("provider") != PROVIDER
    ]
    litellm.custom_provider_map = [
        *others,
        {"provider": PROVIDER, "custom_handler": OfflineModel()},
    ]


def _chunk(
    *,
    text: str = "",
    tool_use: dict[str, Any] | None = None,
    finished: bool = False,
    finish_reason: str = "",
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    return {
        "text": text,
        "tool_use": tool_use,
        "is_finished": finished,
        "finish_reason": finish_reason,
        "usage": usage,
        "index": 0,
    }
