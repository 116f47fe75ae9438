"""The reference scenario in a real terminal: pi-tui under tmux, keys in, screen read back."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_tui.session import SessionManager
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


class Terminal:
    """A detached tmux session running one command."""

    def __init__(self, name: str, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.name = name
        self.socket = ["-L", name]
        subprocess.run(
            [
                "tmux",
                *self.socket,
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                "140",
                "-y",
                "40",
                "-c",
                str(cwd),
                *[f"-e{k}={v}" for k, v in env.items()],
                " ".join(command),
            ],
            check=True,
        )

    def screen(self) -> str:
        result = subprocess.run(
            ["tmux", *self.socket, "capture-pane", "-p", "-t", self.name],
            capture_output=True,
            text=True,
            check=False,
        )
        return result.stdout

    def title(self) -> str:
        result = subprocess.run(
            ["tmux", *self.socket, "display-message", "-p", "-t", self.name, "#{pane_title}"],
            capture_output=True,
            text=True,
            check=False,
        )
        return result.stdout.strip()

    def keys(self, *keys: str, literal: bool = False) -> None:
        flags = ["-l"] if literal else []
        subprocess.run(
            ["tmux", *self.socket, "send-keys", "-t", self.name, *flags, *keys], check=True
        )
        time.sleep(0.3)

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; screen:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", *self.socket, "kill-server"], check=False, capture_output=True)


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
    terminal = Terminal(f"pitui{os.getpid()}", [sys.executable, "-m", "pi_tui"], root, env)
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
