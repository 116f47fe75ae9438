"""UI benchmarks: first frame, opening the navigator, navigator key latency, streaming.

Run from the repository root:  python benchmarks/ui_bench.py [--sizes 1000,10000]

- first frame: wall time from starting ``pi-tui --session FILE`` in a real terminal (tmux,
  140×40) until the tree pane's title is on screen, after one untimed start that writes the
  bytecode (skipped without tmux);
- the same first frame for a one-widget Textual app, the floor on this machine right now;
- open navigator: ``ctrl+t`` until the app is idle again (cursor placed on the leaf), in
  ``App.run_test`` at 140×40;
- key latency: median time from ``tmux send-keys Down`` in the navigator until
  ``capture-pane`` shows a changed screen (30 presses × 3 runs, starting ``--settle`` seconds
  after the first frame), beside what one ``capture-pane`` costs, which bounds the resolution;
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
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["PI_TUI_OFFLINE_DELAY_MS"] = "0"


from benchmarks.session_bench import write_session  # noqa: E402
from pi_tui.agent.offline import PlannedReply, use_script  # noqa: E402
from pi_tui.agent.provider import ModelSpec, litellm_module  # noqa: E402
from pi_tui.agent_session import AgentSession  # noqa: E402
from pi_tui.session import SessionManager  # noqa: E402
from pi_tui.ui.app import PiTuiApp  # noqa: E402
from tests.terminal import SIZE, TmuxTerminal  # noqa: E402

BARE_APP = (
    "from textual.app import App\n"
    "from textual.widgets import Static\n"
    "class Bare(App):\n"
    "    def compose(self):\n"
    "        yield Static('Session tree')\n"
    "Bare().run()\n"
)


def bare_textual_first_frame(folder: Path, runs: int = 3) -> float | None:
    """Median first frame of a one-widget Textual app in the same terminal: the floor that
    Python and Textual set on this machine at this moment (the machine's speed drifts)."""
    if shutil.which("tmux") is None:
        return None
    script = folder / "bare_app.py"
    script.write_text(BARE_APP)
    python = f"env -u PYTHONDONTWRITEBYTECODE {sys.executable}"
    firsts = []
    for run in range(-1, runs):
        terminal = TmuxTerminal(f"uibare{os.getpid()}{run}", f"{python} {script}", folder)
        try:
            seconds = terminal.wait_for("Session tree")
            if run >= 0:
                firsts.append(seconds)
        finally:
            terminal.close()
    return statistics.median(firsts)


def terminal_timings(
    session: Path, runs: int = 3, presses: int = 30, settle: float = 1.0
) -> tuple[float, ...] | None:
    """Medians in a real terminal: (first frame, navigator key, screen capture), in seconds.

    First frame is from process start until the tree pane's title is on screen; the key
    latency is from ``send-keys Down`` in the navigator until the screen changed, polled with
    ``capture-pane`` (whose own cost is the third number), ``settle`` seconds after the first
    frame (LiteLLM's import runs in a background thread for several seconds after it).
    """
    if shutil.which("tmux") is None:
        return None
    firsts, keys, captures = [], [], []
    # Bytecode is written as it would be for a user (some sandboxes turn that off), and an
    # untimed first start writes it: the timed starts are the second and later ones.
    python = f"env -u PYTHONDONTWRITEBYTECODE {sys.executable}"
    for run in range(-1, runs):
        copy = session.with_name(f"copy{run}-{session.name}")
        shutil.copy(session, copy)
        command = f"{python} -m pi_tui --session {copy}"
        terminal = TmuxTerminal(f"uibench{os.getpid()}{run}", command, session.parent)
        try:
            if run < 0:
                terminal.wait_for("Session tree")
                continue
            firsts.append(terminal.wait_for("Session tree"))
            time.sleep(settle)
            terminal.key_until_repaint("C-t")
            time.sleep(0.3)
            keys.extend(terminal.key_until_repaint("Down") for _ in range(presses))
            captures.append(terminal.capture_seconds())
        finally:
            terminal.close()
    return statistics.median(firsts), statistics.median(keys), statistics.median(captures)


def app_for(session: Path) -> PiTuiApp:
    manager = SessionManager.open(session)
    agent = AgentSession(
        manager, model=ModelSpec("offline/pi-tui"), tools={}, cwd=session.parent, system_prompt="x"
    )
    return PiTuiApp(agent)


async def open_navigator_seconds(session: Path) -> float:
    """Seconds from ``ctrl+t`` until the app is idle with the cursor on the leaf (Pilot),
    once the history has loaded (before, ctrl+t waited for the chat and the trace to fill)."""
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.wait_until_idle()
        await asyncio.sleep(1.0)
        await pilot.pause()
        began = time.perf_counter()
        await pilot.press("ctrl+t")
        await pilot.pause()
        return time.perf_counter() - began


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
    parser.add_argument(
        "--settle",
        type=float,
        default=1.0,
        help="seconds between the first frame and the key presses (default 1: during the "
        "LiteLLM warm-up; 12: after it)",
    )
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    litellm_module()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for size in sizes:
            session = work / f"session-{size}.jsonl"
            write_session(session, size)
            terminal = terminal_timings(session, settle=args.settle)
            opened = asyncio.run(open_navigator_seconds(session))
            rows.append((size, terminal, opened))
        rate = asyncio.run(streaming_words_per_second(work))
        bare = bare_textual_first_frame(work)
    print(
        "| entries | first frame (process start, tmux) | open navigator (Pilot) "
        "| navigator key → repaint (tmux) | one capture-pane |"
    )
    print("|---:|---:|---:|---:|---:|")
    for size, terminal, opened in rows:
        first, key, capture = (
            (f"{terminal[0]:.2f} s", f"{terminal[1] * 1000:.0f} ms", f"{terminal[2] * 1000:.1f} ms")
            if terminal is not None
            else ("n/a (no tmux)",) * 3
        )
        print(f"| {size:,} | {first} | {opened * 1000:.0f} ms | {key} | {capture} |")
    print()
    print(f"streaming: {rate:,.0f} words/s rendered in the chat (3,000-word answer, no delay)")
    if bare is not None:
        print(f"first frame of a one-widget Textual app in the same terminal: {bare:.2f} s")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )


if __name__ == "__main__":
    main()
