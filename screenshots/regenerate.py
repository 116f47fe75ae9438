"""Regenerate the sample session in .pi/sessions/ and the PNG screenshots in screenshots/.

Run from the repository root:  python screenshots/regenerate.py [--sample-only | --shots-only]

1. The sample: the reference debugging session, recorded by the real app driven with keys on
   the scripted offline model (question, read call, answer; back to the question in the tree;
   a second question with a grep call; a label; a rename). The old sample file is replaced.
2. The screenshots: the app opened on a copy of the sample at 140×40, saved as SVG by
   Textual, then rendered to PNG by rsvg-convert with DejaVu Sans Mono and, for the Chinese
   text, WenQuanYi Micro Hei Mono. Needs
   `apt-get install librsvg2-bin fonts-dejavu-core fonts-wqy-microhei`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PI_TUI_OFFLINE_DELAY_MS", "0")

from textual.pilot import Pilot  # noqa: E402

from pi_tui.agent.offline import PlannedCall, PlannedReply, use_script  # noqa: E402
from pi_tui.agent.provider import ModelSpec, litellm_module  # noqa: E402
from pi_tui.agent_session import AgentSession  # noqa: E402
from pi_tui.session import SessionManager  # noqa: E402
from pi_tui.session.ids import now_ms  # noqa: E402
from pi_tui.tools.base import ToolContext  # noqa: E402
from pi_tui.tools.registry import create_tools  # noqa: E402
from pi_tui.ui.app import PiTuiApp  # noqa: E402
from pi_tui.ui.chat import SummaryBlock  # noqa: E402
from tests.ui.driving import type_and_send  # noqa: E402

SAMPLE_DIR = ROOT / ".pi" / "sessions"
SHOTS_DIR = ROOT / "screenshots"
SIZE = (140, 40)
FONTS = "DejaVu Sans Mono, WenQuanYi Micro Hei Mono"
SAMPLE_CWD = Path("/home/dev/auth-service")
"""The working folder the sample's header names (not a folder of any real machine)."""

QUESTION = "auth.ts 里的 salt 校验为什么失败？"
FOLLOW_UP = "先帮我看 hash 函数的实现"
AUTH_TS = """import { createHash } from "crypto";

export function hashPassword(password: string, salt: string): string {
  return createHash("sha256").update(salt + password).digest("hex");
}

export function checkPassword(password: string, stored: string): boolean {
  const [salt, digest] = stored.split(":");
  return hashPassword(password, salt) === digest;
}
"""

SCRIPT = [
    PlannedReply(
        "我先查看一下 auth.ts 的内容。", "", [PlannedCall("read", {"path": "src/auth.ts"})]
    ),
    PlannedReply(
        "问题在第 23 行，salt 缺少 Base64 编码。\n\n存储时 salt 被编码成 Base64，"
        "校验时却直接拿原始字符串去拼接，所以两边的 `hashPassword` 输入不一致。",
        "The stored salt is base64 but checkPassword uses it raw.",
    ),
    PlannedReply("我搜索一下 hash 的用法。", "", [PlannedCall("grep", {"pattern": "hash"})]),
    PlannedReply(
        "`hashPassword` 在 `src/auth.ts` 第 3 行定义，第 9 行被 `checkPassword` 调用：\n\n"
        "```ts\nreturn hashPassword(password, salt) === digest;\n```\n\n"
        "它用 `salt + password` 做 SHA-256，本身没有问题；问题出在传进来的 salt 编码。"
    ),
]


SCRIPTED_ANSWER = {
    "role": "assistant",
    "content": [{"type": "text", "text": "ok"}],
    "api": "litellm-completions",
    "provider": "offline",
    "model": "pi-tui",
    "usage": {
        "input": 1,
        "output": 1,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 2,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    },
    "stopReason": "stop",
    "timestamp": 2,
}


def agent_for(manager: SessionManager, project: Path) -> AgentSession:
    """The app's agent: offline model, real tools in ``project``."""
    return AgentSession(
        manager,
        model=ModelSpec("offline/pi-tui"),
        tools=create_tools(ToolContext(project)),
        cwd=project,
        system_prompt="You are pi_tui.",
    )


async def record_sample(work: Path) -> Path:
    """Record the reference session with the app; returns the new session file."""
    project = work / "auth-service"
    (project / "src").mkdir(parents=True)
    (project / "src" / "auth.ts").write_text(AUTH_TS)
    use_script(list(SCRIPT))
    manager = SessionManager.create(SAMPLE_CWD, work / "sessions")
    app = PiTuiApp(agent_for(manager, project))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, QUESTION)
        await pilot.press("ctrl+t", "up", "up", "up", "enter")
        await pilot.pause()
        await pilot.press("1")  # no summary: the sample keeps pi's plain branch
        await pilot.pause()
        await type_and_send(pilot, FOLLOW_UP)
        await type_and_send(pilot, "/label root_cause_found")
        await type_and_send(pilot, "/rename auth-debug")
    assert manager.session_file is not None
    return manager.session_file


Step = Callable[[Pilot[None]], Awaitable[None]]


async def _nothing(pilot: Pilot[None]) -> None:
    await pilot.pause()


async def _tree(pilot: Pilot[None]) -> None:
    await pilot.press("ctrl+t", "up", "up")
    await pilot.pause()


async def _tool_expanded(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, PiTuiApp)
    app.trace.option_list.focus()
    await pilot.press("home", "enter")
    await pilot.pause()


async def _picker(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, PiTuiApp)
    folder = app.agent.manager.session_file
    assert folder is not None
    for question, name in (("重构 token 刷新逻辑", "token-refresh"), ("why is CI slow?", None)):
        other = SessionManager.create(SAMPLE_CWD, folder.parent)
        other.append_message(
            {"role": "user", "content": [{"type": "text", "text": question}], "timestamp": now_ms()}
        )
        other.append_message({**SCRIPTED_ANSWER, "timestamp": now_ms()})
        if name:
            other.append_session_info(name)
        other.close()
    await type_and_send(pilot, "/resume")
    await pilot.pause()


async def _branch_summary(pilot: Pilot[None]) -> None:
    """Back to the line-23 answer, summarizing the hash branch left behind, summary open."""
    app = pilot.app
    assert isinstance(app, PiTuiApp)
    answer = next(
        entry
        for entry in app.agent.manager.entries()
        if entry.role == "assistant" and "23" in str(entry.raw["message"]["content"])
    )
    await pilot.press("ctrl+t")
    app.navigator.move_cursor_to(answer.id)
    await pilot.press("enter")
    await pilot.pause()
    await pilot.press("2")
    while app.agent.is_compacting or app.agent.manager.leaf_id == answer.id:
        await pilot.pause(0.05)
    await pilot.pause(0.3)
    summary = app.chat.blocks()[-1]
    assert isinstance(summary, SummaryBlock)
    summary.collapsed = False
    await pilot.pause(0.2)
    app.chat.scroll_end(animate=False)
    await pilot.pause()


async def _help(pilot: Pilot[None]) -> None:
    await pilot.press("f1")
    await pilot.pause()


SHOTS: dict[str, Step] = {
    "main": _nothing,
    "navigator": _tree,
    "tool-call-expanded": _tool_expanded,
    "session-picker": _picker,
    "help": _help,
    "branch-summary": _branch_summary,
}


async def take_screenshots(sample: Path, work: Path) -> list[Path]:
    """One SVG per entry of SHOTS, each from a fresh app on a copy of the sample."""
    svgs = []
    for name, step in SHOTS.items():
        folder = work / name
        folder.mkdir()
        copy = folder / sample.name
        shutil.copy(sample, copy)
        manager = SessionManager.open(copy)
        app = PiTuiApp(
            agent_for(manager, work), open_session=lambda p: agent_for(SessionManager.open(p), work)
        )
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause(0.3)
            await step(pilot)
            await pilot.pause(0.2)
            svgs.append(Path(app.save_screenshot(f"{name}.svg", str(work))))
    return svgs


def to_png(svg: Path, png: Path) -> None:
    """Render an SVG screenshot to PNG with rsvg-convert and installed fonts.

    Textual's SVG asks for the Fira Code web font; a monospace font that is installed is
    used instead, with a CJK font behind it for the Chinese text (Pango falls back per glyph).
    Spaces are preserved, or a key hint like "/ Search" is drawn as "/Search".
    """
    if shutil.which("rsvg-convert") is None:
        raise SystemExit("rsvg-convert is missing: apt-get install librsvg2-bin")
    text = re.sub(r"font-family:[^;\"]*", f"font-family: {FONTS}", svg.read_text())
    # librsvg drops a text run's leading spaces unless told to keep them.
    text = text.replace("<svg ", '<svg xml:space="preserve" ', 1)
    fixed = svg.with_suffix(".fonts.svg")
    fixed.write_text(text)
    subprocess.run(["rsvg-convert", "-w", "1800", str(fixed), "-o", str(png)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample-only", action="store_true")
    parser.add_argument("--shots-only", action="store_true")
    args = parser.parse_args()
    litellm_module()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        if not args.shots_only:
            recorded = asyncio.run(record_sample(work))
            SAMPLE_DIR.mkdir(parents=True, exist_ok=True)
            for old in SAMPLE_DIR.glob("*.jsonl"):
                old.unlink()
            shutil.copy(recorded, SAMPLE_DIR / recorded.name)
            print(f"sample: {SAMPLE_DIR / recorded.name}")
        if args.sample_only:
            return
        samples = sorted(SAMPLE_DIR.glob("*.jsonl"))
        if not samples:
            raise SystemExit("no sample session; run without --shots-only first")
        for svg in asyncio.run(take_screenshots(samples[0], work)):
            png = SHOTS_DIR / f"{svg.stem}.png"
            to_png(svg, png)
            print(f"screenshot: {png.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
