"""Fixtures for tests that run the model: LiteLLM imported once, no streaming delay, no script.

Conftests that need them import them (pytest picks up fixtures imported into a conftest).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pi_tui.agent.offline import use_script
from pi_tui.agent.provider import litellm_module


@pytest.fixture(scope="session", autouse=True)
def litellm_ready() -> None:
    """Import LiteLLM once for the whole session (it costs seconds)."""
    litellm_module()


@pytest.fixture(autouse=True)
def fast_offline_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The offline model streams without delay, and every test starts without a script."""
    monkeypatch.setenv("PI_TUI_OFFLINE_DELAY_MS", "0")
    yield
    use_script(None)
