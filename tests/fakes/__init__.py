"""Test doubles for driving pi_tui against real client libraries without a network.

:mod:`tests.fakes.openai_server` holds :class:`FakeOpenAIServer`, a scripted, loopback-only
OpenAI-compatible chat-completions server used to exercise LiteLLM's real HTTP path.
"""

from tests.fakes.openai_server import FakeOpenAIServer, Reply, ToolCallSpec, Usage

__all__ = ["FakeOpenAIServer", "Reply", "ToolCallSpec", "Usage"]
