"""Settings from JSON files: the user's (``~/.config/pi-tui/settings.json``, or the file named by
``$PI_TUI_SETTINGS``) and the project's (``<cwd>/.pi/settings.json``), the project winning.

The keys follow pi's names where pi has them::

    {
      "compaction": {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20000},
      "branchSummary": {"reserveTokens": 16384, "skipPrompt": false, "onNavigate": "ask"},
      "summaryModel": "anthropic/claude-haiku-4-5"
    }

``branchSummary.onNavigate`` is ours: ``ask`` shows the choice when leaving a branch,
``summarize`` always writes a summary, ``skip`` never does (pi's ``skipPrompt: true``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import orjson

from .agent.compaction import BranchSummarySettings, CompactionSettings

SETTINGS_ENV = "PI_TUI_SETTINGS"
NavigateChoice = Literal["ask", "summarize", "skip"]
NAVIGATE_CHOICES: tuple[NavigateChoice, ...] = ("ask", "summarize", "skip")


class SettingsError(ValueError):
    """A settings file cannot be used; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the settings files can change."""

    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    branch_summary: BranchSummarySettings = field(default_factory=BranchSummarySettings)
    on_navigate: NavigateChoice = "ask"
    summary_model: str | None = None


def user_settings_file() -> Path:
    """Where the user's settings live."""
    named = os.environ.get(SETTINGS_ENV)
    return Path(named) if named else Path.home() / ".config" / "pi-tui" / "settings.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, orjson.JSONDecodeError) as exc:
        raise SettingsError(f"cannot read settings {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"settings {path}: the top level must be a JSON object")
    return data


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _section(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise SettingsError(f"{where}: {key!r} must be an object")
    return value


def _flag(section: Mapping[str, Any], key: str, default: bool, where: str) -> bool:
    value = section.get(key, default)
    if not isinstance(value, bool):
        raise SettingsError(f"{where}: {key!r} must be true or false, not {value!r}")
    return value


def _count(section: Mapping[str, Any], key: str, default: int, where: str) -> int:
    value = section.get(key, default)
    # bool is an int in Python; a count given as true is a mistake worth reporting.
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise SettingsError(f"{where}: {key!r} must be a whole number >= 0, not {value!r}")
    return value


def parse_settings(data: Mapping[str, Any], where: str = "settings") -> Settings:
    """Settings from already-merged JSON data; raises :class:`SettingsError` on a bad value."""
    compaction = _section(data, "compaction", where)
    defaults = CompactionSettings()
    branch = _section(data, "branchSummary", where)
    branch_defaults = BranchSummarySettings()
    skip = _flag(branch, "skipPrompt", branch_defaults.skip_prompt, where)
    choice = branch.get("onNavigate", "skip" if skip else "ask")
    if choice not in NAVIGATE_CHOICES:
        raise SettingsError(
            f"{where}: 'onNavigate' must be one of {', '.join(NAVIGATE_CHOICES)}, not {choice!r}"
        )
    model = data.get("summaryModel")
    if model is not None and not isinstance(model, str):
        raise SettingsError(f"{where}: 'summaryModel' must be a model string")
    return Settings(
        compaction=CompactionSettings(
            enabled=_flag(compaction, "enabled", defaults.enabled, where),
            reserve_tokens=_count(compaction, "reserveTokens", defaults.reserve_tokens, where),
            keep_recent_tokens=_count(
                compaction, "keepRecentTokens", defaults.keep_recent_tokens, where
            ),
        ),
        branch_summary=BranchSummarySettings(
            reserve_tokens=_count(branch, "reserveTokens", branch_defaults.reserve_tokens, where),
            skip_prompt=skip,
        ),
        on_navigate=cast(NavigateChoice, choice),
        summary_model=model or None,
    )


def load_settings(cwd: Path) -> Settings:
    """The user's settings overlaid with the project's."""
    user_file = user_settings_file()
    project_file = cwd / ".pi" / "settings.json"
    data = _merge(_read(user_file), _read(project_file))
    where = f"settings ({user_file} and {project_file})"
    return parse_settings(data, where)
