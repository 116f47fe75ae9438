"""UI benchmarks: first frame, opening the navigator, navigator key latency, streaming.

Run from the repository root:  python benchmarks/ui_bench.py [--sizes 1000,10000]

- first frame: wall time from starting ``pi-tui --session FILE`` in a real terminal (tmux,
  140×40) until the tree pane's title is on screen (skipped without tmux);
- open navigator: ``ctrl+t`` until the app is idle again (cursor placed on the leaf), in
  ``App.run_test`` at 140×40;
- key latency: mean time of one ``down`` key in the navigator until the app is idle (40
  presses), beside the same for a key nothing is bound to (Pilot's own round trip);
- streaming: words per second the chat renders when the offline model streams a 3,000-word
  answer with no delay (model, loop, storage and Markdown rendering together).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["PI_TUI_OFFLINE_DELAY_MS"] = "0"

from textual.pilot import Pilot  # noqa: E402

from benchmarks.session_bench import write_session  # noqa: E402
from pi_tui.agent.offline import PlannedReply, use_script  # noqa: E402
from pi_tui.agent.provider import ModelSpec, litellm_module  # noqa: E402
from pi_tui.agent_session import AgentSession  # noqa: E402
from pi_tui.session import SessionManager  # noqa: E402
from pi_tui.ui.app import PiTuiApp  # noqa: E402

SIZE = (140, 40)


def first_frame_seconds(session: Path, runs: int = 3) -> float | None:
    """Median seconds from process start to the first painted frame, through tmux."""
    if shutil.which("tmux") is None:
        return None
    samples = []
    for run in range(runs):
        name = f"uibench{os.getpid()}{run}"
        copy = session.with_name(f"copy{run}-{session.name}")
        shutil.copy(session, copy)
        command = f"{sys.executable} -m pi_tui --session {copy}"
        began = time.perf_counter()
        subprocess.run(
            [
                "tmux",
                "-L",
                name,
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                "140",
                "-y",
                "40",
                "-c",
                str(session.parent),
                command,
            ],
            check=True,
        )
        try:
            while time.perf_counter() - began < 60:
                screen = subprocess.run(
                    ["tmux", "-L", name, "capture-pane", "-p", "-t", name],
                    capture_output=True,
                    text=True,
                    check=False,
                ).stdout
                if "Session tree" in screen:
                    samples.append(time.perf_counter() - began)
                    break
                time.sleep(0.01)
        finally:
            subprocess.run(["tmux", "-L", name, "kill-server"], check=False)
    return statistics.median(samples) if samples else None


def app_for(session: Path) -> PiTuiApp:
    manager = SessionManager.open(session)
    agent = AgentSession(
        manager, model=ModelSpec("offline/pi-tui"), tools={}, cwd=session.parent, system_prompt="x"
    )
    return PiTuiApp(agent)


async def mean_key_seconds(pilot: object, key: str, presses: int = 40) -> float:
    """Mean seconds for one key press until the app is idle again."""
    assert isinstance(pilot, Pilot)
    began = time.perf_counter()
    for _ in range(presses):
        await pilot.press(key)
        await pilot.pause()
    return (time.perf_counter() - began) / presses


async def navigator_timings(session: Path) -> tuple[float, float, float]:
    """(seconds to open the navigator, per key press in it, per key nothing is bound to)."""
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        began = time.perf_counter()
        await pilot.press("ctrl+t")
        await pilot.pause()
        opened = time.perf_counter() - began
        per_key = await mean_key_seconds(pilot, "down")
        baseline = await mean_key_seconds(pilot, "x")
    return opened, per_key, baseline


async def streaming_words_per_second(folder: Path) -> float:
    """Words per second from sending a prompt until the whole answer is rendered."""
    words = 3000
    # Paragraphs of 60 words, like a real answer (one endless paragraph is re-parsed whole).
    text = " ".join(f"word{n}" + ("\n\n" if n % 60 == 59 else "") for n in range(words))
    use_script([PlannedReply(text)])
    manager = SessionManager.create(folder, folder / "stream-sessions")
    agent = AgentSession(
        manager, model=ModelSpec("offline/pi-tui"), tools={}, cwd=folder, system_prompt="x"
    )
    app = PiTuiApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        began = time.perf_counter()
        app.send("stream please")
        await pilot.pause()
        await app.wait_until_idle(timeout=120)
        await pilot.pause()
        elapsed = time.perf_counter() - began
    return words / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="entry counts, comma-separated")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    litellm_module()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for size in sizes:
            session = work / f"session-{size}.jsonl"
            write_session(session, size)
            first = first_frame_seconds(session)
            opened, per_key, baseline = asyncio.run(navigator_timings(session))
            rows.append((size, first, opened, per_key, baseline))
        rate = asyncio.run(streaming_words_per_second(work))
    print(
        "| entries | first frame (process start, tmux) | open navigator | navigator key "
        "| unbound key (Pilot baseline) |"
    )
    print("|---:|---:|---:|---:|---:|")
    for size, first, opened, per_key, baseline in rows:
        shown = f"{first:.2f} s" if first is not None else "n/a (no tmux)"
        print(
            f"| {size:,} | {shown} | {opened * 1000:.0f} ms | {per_key * 1000:.0f} ms "
            f"| {baseline * 1000:.0f} ms |"
        )
    print()
    print(f"streaming: {rate:,.0f} words/s rendered in the chat (3,000-word answer, no delay)")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )


if __name__ == "__main__":
    main()
