"""The LiteLLM adapter: lazy import, one streamed call → pi's assistant message, clear errors.

LiteLLM takes 7–9 s to import, so nothing imports it at module level: :func:`litellm_module`
imports it on first use (with offline mode set, so the import never touches the network, and
its console chatter silenced) and :func:`warm_up` does that in a background thread.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import warnings
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import orjson

from ..session.ids import now_ms
from .events import DeltaKind

Message = dict[str, Any]

API_NAME = "litellm-completions"
"""The ``api`` field of assistant messages pi_tui stores."""

_import_lock = threading.Lock()
_litellm: ModuleType | None = None

STOP_REASONS = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


def litellm_module() -> ModuleType:
    """Import LiteLLM once, configured for an interactive app (offline price map, quiet)."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _import_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            # LiteLLM's TypedDicts make pydantic warn on the first call; that is not the
            # user's business and must not leak into the terminal.
            warnings.filterwarnings(
                "ignore", message=".*`ReadOnly` qualifier", category=UserWarning
            )
            litellm.suppress_debug_info = True
            litellm.drop_params = True
            litellm.disable_hf_tokenizer_download = True
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
                logger = logging.getLogger(name)
                logger.handlers.clear()
                logger.propagate = False
                logger.setLevel(logging.CRITICAL)
            from .offline import register_offline_provider

            register_offline_provider(litellm)
            _litellm = litellm
    return _litellm


def litellm_loaded() -> bool:
    """True once LiteLLM has been imported."""
    return _litellm is not None


def warm_up() -> threading.Thread:
    """Import LiteLLM in a daemon thread; join the returned thread to wait for it."""
    thread = threading.Thread(target=litellm_module, name="pi-tui-litellm-import", daemon=True)
    thread.start()
    return thread


# --- models ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A model as the user names it (any LiteLLM model string) plus where to reach it."""

    name: str
    api_base: str | None = None
    api_key: str | None = None

    @property
    def provider(self) -> str:
        """The provider part (``anthropic`` of ``anthropic/claude-…``; ``openai`` if bare)."""
        return self.name.split("/", 1)[0] if "/" in self.name else "openai"

    @property
    def model_id(self) -> str:
        """The model part, as ``model_change`` entries store it."""
        return self.name.split("/", 1)[1] if "/" in self.name else self.name

    @classmethod
    def from_session(cls, provider: str, model_id: str, **where: str | None) -> ModelSpec:
        """The spec for a ``model_change`` entry's provider and model id."""
        return cls(f"{provider}/{model_id}", **where)


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What the app needs to know about a model."""

    context_window: int
    max_output_tokens: int
    supports_reasoning: bool
    known: bool


FALLBACK_INFO = ModelInfo(
    context_window=128_000, max_output_tokens=16_384, supports_reasoning=False, known=False
)


@functools.lru_cache(maxsize=64)
def model_info(spec: ModelSpec) -> ModelInfo:
    """Context window and limits from LiteLLM's bundled map, or a stated fallback."""
    if spec.provider == "offline":
        return ModelInfo(128_000, 8_192, True, True)
    litellm = litellm_module()
    try:
        info = litellm.get_model_info(spec.name)
    except Exception:
        return FALLBACK_INFO
    window = info.get("max_input_tokens") or info.get("max_tokens") or FALLBACK_INFO.context_window
    output = info.get("max_output_tokens") or FALLBACK_INFO.max_output_tokens
    try:
        reasoning = bool(litellm.supports_reasoning(spec.name))
    except Exception:
        reasoning = False
    return ModelInfo(int(window), int(output), reasoning, True)


THINKING_TO_EFFORT = {
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
}


# --- errors ---------------------------------------------------------------------------------


class ProviderError(Exception):
    """A model call failed; ``message`` says what happened and what to do."""

    def __init__(self, message: str, *, retryable: bool = False, overflow: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.overflow = overflow


KEY_HINT = "set {env} or pass --api-key"

RETRYABLE_CLASSES = (
    "RateLimitError",
    "Timeout",
    "APIConnectionError",
    "InternalServerError",
    "BadGatewayError",
    "ServiceUnavailableError",
)


def missing_key_error(spec: ModelSpec) -> ProviderError | None:
    """A clear error when the provider needs a key that is not configured."""
    if spec.api_key or spec.api_base or spec.provider in ("offline", "ollama", "ollama_chat"):
        return None
    litellm = litellm_module()
    try:
        status = litellm.validate_environment(model=spec.name)
    except Exception:
        return None
    keys = [k for k in status.get("missing_keys", []) if "KEY" in k or "TOKEN" in k]
    if not keys:
        return None
    return ProviderError(f"No API key for {spec.name}: " + KEY_HINT.format(env=" and ".join(keys)))


OVERFLOW_TEXT = re.compile(
    r"context window exceeded|context[ _]length"
    r"|too long|exceeds the context window|maximum context|too many tokens|reduce the length",
    re.IGNORECASE,
)
"""Provider phrasings of "the prompt does not fit" (OpenAI, Anthropic, Gemini, vLLM, Ollama)."""


def is_context_overflow(message: Message) -> bool:
    """True when an assistant message failed because its input did not fit the context."""
    return message.get("stopReason") == "error" and bool(
        OVERFLOW_TEXT.search(str(message.get("errorMessage") or ""))
    )


def classify_error(exc: BaseException, spec: ModelSpec) -> ProviderError:
    """Turn a LiteLLM/HTTP exception into a ProviderError a user can act on."""
    original = getattr(exc, "original_exception", None)
    if isinstance(original, BaseException) and type(exc).__name__ == "MidStreamFallbackError":
        exc = original
    name = type(exc).__name__
    text = str(getattr(exc, "message", None) or exc)
    status = getattr(exc, "status_code", None)
    where = spec.api_base or spec.provider
    if name == "ContextWindowExceededError" or OVERFLOW_TEXT.search(text):
        return ProviderError(f"Context window exceeded for {spec.name}: {text}", overflow=True)
    if name == "AuthenticationError" or status == 401 or "Missing credentials" in text:
        return ProviderError(
            f"Authentication failed for {spec.name} ({where}): {text}. Check the API key: "
            + KEY_HINT.format(env=f"{spec.provider.upper()}_API_KEY")
        )
    if "LLM Provider NOT provided" in text:
        return ProviderError(
            f"Unknown model {spec.name!r}. Use a LiteLLM model string such as "
            "anthropic/claude-sonnet-4-5, openai/gpt-4o or ollama_chat/qwen3:8b."
        )
    if name == "NotFoundError" or status == 404:
        return ProviderError(f"Model {spec.name} was not found at {where}: {text}")
    if "Connection error" in text or "Cannot connect" in text or name == "APIConnectionError":
        return ProviderError(
            f"Cannot reach {where} for {spec.name}: {text}. Is the server running?",
            retryable=True,
        )
    retryable = name in RETRYABLE_CLASSES or (isinstance(status, int) and status >= 500)
    return ProviderError(f"{name} from {spec.name}: {text}", retryable=retryable)


# --- streaming ------------------------------------------------------------------------------


@dataclass(slots=True)
class StreamDelta:
    """One piece of streamed content, already placed into the partial message."""

    kind: DeltaKind
    content_index: int
    delta: str


@dataclass(slots=True)
class AssistantBuilder:
    """Accumulates LiteLLM chunks into pi's assistant message, in place."""

    spec: ModelSpec
    message: Message = field(default_factory=dict)
    _calls: dict[int, tuple[int, list[str]]] = field(default_factory=dict)
    received: bool = False
    invalid_arguments: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.message = {
            "role": "assistant",
            "content": [],
            "api": API_NAME,
            "provider": self.spec.provider,
            "model": self.spec.model_id,
            "usage": empty_usage(),
            "stopReason": "stop",
            "timestamp": now_ms(),
        }

    @property
    def content(self) -> list[dict[str, Any]]:
        """The content blocks built so far."""
        blocks: list[dict[str, Any]] = self.message["content"]
        return blocks

    def _block(self, kind: str) -> int:
        if not self.content or self.content[-1]["type"] != kind:
            self.content.append({"type": kind, kind: ""})
        return len(self.content) - 1

    def add_chunk(self, chunk: Any) -> list[StreamDelta]:
        """Apply one LiteLLM stream chunk; returns the deltas it carried."""
        self.received = True
        deltas: list[StreamDelta] = []
        usage = getattr(chunk, "usage", None)
        if usage:
            self._set_usage(usage, chunk)
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return deltas
        choice = choices[0]
        delta = choice.delta
        reasoning = getattr(delta, "reasoning_content", None)
        if reasoning:
            index = self._block("thinking")
            self.content[index]["thinking"] += reasoning
            deltas.append(StreamDelta("thinking", index, reasoning))
        for block in getattr(delta, "thinking_blocks", None) or []:
            signature = block.get("signature") if isinstance(block, dict) else None
            if signature:
                index = self._block("thinking")
                self.content[index]["thinkingSignature"] = signature
        if delta.content:
            index = self._block("text")
            self.content[index]["text"] += delta.content
            deltas.append(StreamDelta("text", index, delta.content))
        for call in getattr(delta, "tool_calls", None) or []:
            deltas.append(self._add_tool_fragment(call))
        if choice.finish_reason:
            self.message["stopReason"] = STOP_REASONS.get(choice.finish_reason, "stop")
        return deltas

    def _add_tool_fragment(self, call: Any) -> StreamDelta:
        position = getattr(call, "index", None) or 0
        function = getattr(call, "function", None)
        fragment = (getattr(function, "arguments", None) or "") if function else ""
        if position not in self._calls:
            call_id = getattr(call, "id", None) or f"call_{now_ms():x}_{position}"
            name = (getattr(function, "name", None) or "") if function else ""
            self.content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": {}})
            self._calls[position] = (len(self.content) - 1, [])
        block_index, parts = self._calls[position]
        parts.append(fragment)
        return StreamDelta("toolcall", block_index, fragment)

    def _set_usage(self, usage: Any, chunk: Any) -> None:
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        details = getattr(usage, "prompt_tokens_details", None)
        cached = int(getattr(details, "cached_tokens", 0) or 0) if details else 0
        written = int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
        record = self.message["usage"]
        record.update(
            input=max(0, prompt - cached),
            output=completion,
            cacheRead=cached,
            cacheWrite=written,
            totalTokens=prompt + completion + written,
        )
        hidden = getattr(chunk, "_hidden_params", None) or {}
        cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
        if isinstance(cost, int | float):
            record["cost"]["total"] = float(cost)
            self._split_cost(prompt, completion)

    def _split_cost(self, prompt: int, completion: int) -> None:
        try:
            cost_in, cost_out = litellm_module().cost_per_token(
                model=self.spec.name, prompt_tokens=prompt, completion_tokens=completion
            )
        except Exception:
            return
        self.message["usage"]["cost"].update(input=float(cost_in), output=float(cost_out))

    def finish(self) -> Message:
        """Parse tool-call arguments and settle the stop reason; returns the message."""
        for block_index, parts in self._calls.values():
            block = self.content[block_index]
            raw = "".join(parts)
            try:
                arguments = orjson.loads(raw) if raw.strip() else {}
            except orjson.JSONDecodeError:
                arguments = {}
                self.invalid_arguments[block["id"]] = raw
            block["arguments"] = arguments if isinstance(arguments, dict) else {}
        if self._calls:
            self.message["stopReason"] = "toolUse"
        return self.message

    def fail(self, reason: str, error_message: str) -> Message:
        """Close the message as ``error`` or ``aborted`` keeping what arrived."""
        self.finish()
        if reason == "aborted":
            self.content[:] = [b for b in self.content if b["type"] != "toolCall"]
        self.message["stopReason"] = reason
        self.message["errorMessage"] = error_message
        return self.message


def empty_usage() -> dict[str, Any]:
    """pi's zeroed usage record."""
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.0},
    }


async def open_stream(
    spec: ModelSpec,
    messages: list[Message],
    tools: list[dict[str, Any]],
    *,
    thinking: str = "off",
    max_tokens: int | None = None,
    timeout: float = 600.0,
) -> AsyncIterator[Any]:
    """Start a streamed completion; returns LiteLLM's async chunk iterator."""
    litellm = litellm_module()
    missing = missing_key_error(spec)
    if missing is not None:
        raise missing
    kwargs: dict[str, Any] = {
        "model": spec.name,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "num_retries": 0,
        "timeout": timeout,
    }
    if tools:
        kwargs["tools"] = tools
    if spec.api_base:
        kwargs["api_base"] = spec.api_base
    if spec.api_key:
        kwargs["api_key"] = spec.api_key
    elif spec.api_base:
        kwargs["api_key"] = "none"  # local servers ignore it, but the openai/ path needs one
    if max_tokens:
        kwargs["max_tokens"] = max_tokens
    effort = THINKING_TO_EFFORT.get(thinking)
    if effort is not None:
        # Known models without reasoning get none (drop_params drops it quietly elsewhere);
        # custom providers refuse the parameter unless it is explicitly allowed.
        kwargs["reasoning_effort"] = effort
        if spec.provider == "offline":
            kwargs["allowed_openai_params"] = ["reasoning_effort"]
    stream: AsyncIterator[Any] = await litellm.acompletion(**kwargs)
    return stream
