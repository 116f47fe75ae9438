"""The reference scenario in a real terminal: pi-tui under tmux, keys in, screen read back."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from pi_tui.session import SessionManager
from tests.terminal import TmuxTerminal
from tests.ui.conftest import FOLLOW_UP, QUESTION, make_project

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

REPLIES = [
    {
        "text": "我先查看一下 auth.ts 的内容。",
        "tool_calls": [{"name": "read", "arguments": {"path": "src/auth.ts"}}],
    },
    {"text": "问题在第 23 行，salt 缺少 Base64 编码。"},
    {
        "text": "我搜索一下 hash 的定义。",
        "tool_calls": [{"name": "grep", "arguments": {"pattern": "hash"}}],
    },
    {"text": "hash 在 src/auth.ts 第 2 行被调用。"},
]


def test_reference_scenario_in_tmux(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": REPLIES}, ensure_ascii=False))
    env = {
        "PI_TUI_SCRIPT": str(script),
        "PI_TUI_OFFLINE_DELAY_MS": "1",
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "PATH": os.environ.get("PATH", ""),
    }
    terminal = TmuxTerminal(
        f"pitui{os.getpid()}", f"{sys.executable} -m pi_tui", root, env, key_pause=0.3, poll=0.2
    )
    try:
        terminal.wait_for("Session tree")
        terminal.keys(QUESTION, literal=True)
        terminal.keys("Enter")
        terminal.wait_for("Base64", timeout=90)
        terminal.keys("C-t")
        terminal.keys("Up", "Up", "Up")
        terminal.keys("Enter")
        terminal.wait_for("No summary")
        terminal.keys("1")
        terminal.keys(FOLLOW_UP, literal=True)
        terminal.keys("Enter")
        terminal.wait_for("第 2 行")
        terminal.keys("/label root_cause_found", literal=True)
        terminal.keys("Enter")
        terminal.wait_for("[root_cause_found]")
        terminal.keys("/rename auth-debug", literal=True)
        terminal.keys("Enter")
        terminal.wait_for("auth-debug")
        assert terminal.title() == "pi-tui: auth-debug"
        terminal.keys("C-q")
        deadline = time.monotonic() + 20
        while "Session tree" in terminal.screen() and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        terminal.close()

    files = list((root / ".pi" / "sessions").glob("*.jsonl"))
    assert len(files) == 1
    session = SessionManager.open(files[0], read_only=True)
    question = next(e for e in session.entries() if e.role == "user")
    children = [c for c in session.get_children(question.id) if c.type == "message"]
    assert sorted(c.role or "" for c in children) == ["assistant", "user"]
    assert session.session_name == "auth-debug"
    label = next(e for e in session.entries() if e.type == "label")
    assert label.raw["label"] == "root_cause_found"
