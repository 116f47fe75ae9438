"""Which model a session uses when the user does not say: a configured key, else offline.

Order: ``--model``, then ``$PI_TUI_MODEL``, then the model the resumed session last used (when
its provider is usable here), then the first provider whose key is set, then the built-in
offline model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .agent.offline import MODEL_NAME as OFFLINE_MODEL

MODEL_ENV = "PI_TUI_MODEL"

KEYED_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-5-mini"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-flash"),
    ("OPENROUTER_API_KEY", "openrouter/anthropic/claude-sonnet-4.5"),
)

PROVIDER_KEYS = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}
KEYLESS_PROVIDERS = frozenset({"offline", "ollama", "ollama_chat"})


def provider_usable(provider: str, env: Mapping[str, str]) -> bool:
    """True when calling this provider needs no key or its key is set."""
    if provider in KEYLESS_PROVIDERS:
        return True
    key = PROVIDER_KEYS.get(provider)
    return key is not None and bool(env.get(key))


def choose_model(
    requested: str | None,
    session_model: tuple[str, str] | None,
    env: Mapping[str, str] | None = None,
) -> str:
    """The LiteLLM model string to use."""
    env = os.environ if env is None else env
    if requested:
        return requested
    if env.get(MODEL_ENV):
        return env[MODEL_ENV]
    if session_model is not None and provider_usable(session_model[0], env):
        return f"{session_model[0]}/{session_model[1]}"
    for key, model in KEYED_DEFAULTS:
        if env.get(key):
            return model
    return OFFLINE_MODEL
