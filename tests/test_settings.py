"""Settings files: defaults, the project over the user, and clear errors for bad values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.settings import SettingsError, load_settings, parse_settings


def test_defaults_match_pi() -> None:
    settings = parse_settings({})
    assert settings.compaction.enabled
    assert settings.compaction.reserve_tokens == 16384
    assert settings.compaction.keep_recent_tokens == 20000
    assert settings.branch_summary.reserve_tokens == 16384
    assert settings.on_navigate == "ask"
    assert settings.summary_model is None


def test_skip_prompt_means_never_summarize_unless_on_navigate_says_otherwise() -> None:
    assert parse_settings({"branchSummary": {"skipPrompt": True}}).on_navigate == "skip"
    both = {"branchSummary": {"skipPrompt": True, "onNavigate": "summarize"}}
    assert parse_settings(both).on_navigate == "summarize"


def test_the_project_file_wins_over_the_user_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"compaction": {"keepRecentTokens": 5, "reserveTokens": 7}}))
    monkeypatch.setenv("PI_TUI_SETTINGS", str(user))
    project = tmp_path / "project"
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.json").write_text(
        json.dumps({"compaction": {"keepRecentTokens": 9}, "summaryModel": "openai/gpt-4o-mini"})
    )
    settings = load_settings(project)
    assert settings.compaction.keep_recent_tokens == 9
    assert settings.compaction.reserve_tokens == 7
    assert settings.summary_model == "openai/gpt-4o-mini"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"compaction": {"keepRecentTokens": "many"}}, "'keepRecentTokens' must be a whole"),
        ({"compaction": {"reserveTokens": True}}, "'reserveTokens' must be a whole"),
        ({"compaction": {"enabled": "yes"}}, "'enabled' must be true or false"),
        ({"compaction": []}, "'compaction' must be an object"),
        ({"branchSummary": {"onNavigate": "maybe"}}, "'onNavigate' must be one of"),
        ({"summaryModel": 3}, "'summaryModel' must be a model string"),
    ],
)
def test_bad_values_are_named(data: dict[str, object], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        parse_settings(data)


def test_a_file_that_is_not_json_is_reported_with_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_TUI_SETTINGS", str(tmp_path / "absent.json"))
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi" / "settings.json").write_text("{not json")
    with pytest.raises(SettingsError, match=r"cannot read settings .*settings\.json"):
        load_settings(tmp_path)
