"""A program running in a real terminal: its own tmux server, keys in, screen read back.

The real-terminal UI test and ``benchmarks/ui_bench.py`` both drive ``pi-tui`` this way.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

SIZE = (140, 40)


class TmuxTerminal:
    """One command in a detached tmux session on a server of its own (socket ``name``).

    ``key_pause`` is slept after each :meth:`keys`, and ``poll`` is how often
    :meth:`wait_for` looks at the screen.
    """

    def __init__(
        self,
        name: str,
        command: str,
        cwd: Path,
        env: dict[str, str] | None = None,
        *,
        key_pause: float = 0.0,
        poll: float = 0.01,
    ) -> None:
        self.name = name
        self.socket = ["-L", name]
        self.key_pause = key_pause
        self.poll = poll
        self.started = time.perf_counter()
        where = ["-x", str(SIZE[0]), "-y", str(SIZE[1]), "-c", str(cwd)]
        environment = [f"-e{key}={value}" for key, value in (env or {}).items()]
        new_session = ["new-session", "-d", "-s", name, *where, *environment, command]
        subprocess.run(["tmux", *self.socket, *new_session], check=True)

    def _tmux(self, *arguments: str) -> str:
        result = subprocess.run(
            ["tmux", *self.socket, *arguments], capture_output=True, text=True, check=False
        )
        return result.stdout

    def screen(self) -> str:
        """The visible text."""
        return self._tmux("capture-pane", "-p", "-t", self.name)

    def title(self) -> str:
        """The pane's title, as the program set it."""
        return self._tmux("display-message", "-p", "-t", self.name, "#{pane_title}").strip()

    def keys(self, *keys: str, literal: bool = False) -> None:
        """Send keys (tmux key names, or text with ``literal``)."""
        flags = ["-l"] if literal else []
        subprocess.run(
            ["tmux", *self.socket, "send-keys", "-t", self.name, *flags, *keys], check=True
        )
        time.sleep(self.key_pause)

    def wait_for(self, text: str, timeout: float = 60) -> float:
        """Wait until ``text`` is on screen; returns the seconds since the command started."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if text in self.screen():
                return time.perf_counter() - self.started
            time.sleep(self.poll)
        raise TimeoutError(f"{text!r} never appeared; screen:\n{self.screen()}")

    def key_until_repaint(self, key: str, timeout: float = 10) -> float:
        """Seconds from sending a key until the screen differs."""
        before = self.screen()
        began = time.perf_counter()
        self.keys(key)
        while time.perf_counter() - began < timeout:
            if self.screen() != before:
                return time.perf_counter() - began
        raise TimeoutError(f"{key} changed nothing")

    def capture_seconds(self, samples: int = 20) -> float:
        """What one look at the screen costs (the resolution of a key measurement)."""
        began = time.perf_counter()
        for _ in range(samples):
            self.screen()
        return (time.perf_counter() - began) / samples

    def close(self) -> None:
        """Stop the server and the program in it."""
        subprocess.run(["tmux", *self.socket, "kill-server"], check=False, capture_output=True)
