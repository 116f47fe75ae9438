"""Compaction benchmarks: planning, serializing and writing a compaction on long paths.

Run from the repository root:  python benchmarks/compaction_bench.py [--sizes 1000,10000]

Uses the synthetic sessions of ``session_bench.py`` (≈2 KB per line, branchy, a compaction
every ~2000 entries) and, for each size, measures on the resumed path (best of 3):

- prepare: ``prepare_compaction(path, CompactionSettings())`` (token estimates, cut point,
  file tracking);
- serialize: ``serialize_conversation`` of the messages to summarize (what the summarizer
  reads), with its size in characters;
- compact: ``AgentSession.compact()`` end to end on a copy of the file with the built-in
  offline model streaming without delay (prepare, one summarizer call through LiteLLM, append);
- branch: ``branch_entries`` + ``prepare_branch_summary`` when leaving the resumed leaf for
  the first entry of the path.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["PI_TUI_OFFLINE_DELAY_MS"] = "0"

from benchmarks.session_bench import write_session  # noqa: E402
from pi_tui.agent.compaction import (  # noqa: E402
    CompactionSettings,
    branch_entries,
    prepare_branch_summary,
    prepare_compaction,
)
from pi_tui.agent.provider import ModelSpec, litellm_module  # noqa: E402
from pi_tui.agent.summarize import serialize_conversation  # noqa: E402
from pi_tui.agent_session import AgentSession  # noqa: E402
from pi_tui.session import SessionManager  # noqa: E402


def best_ms(work: Callable[[], Any], runs: int = 3) -> float:
    """Fastest of ``runs`` calls, in milliseconds."""
    best = float("inf")
    for _ in range(runs):
        began = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - began)
    return best * 1000


def compact_ms(session: Path, runs: int = 3) -> float:
    """Fastest end-to-end ``compact()`` on fresh copies of the file."""
    best = float("inf")
    for run in range(runs):
        copy = session.with_name(f"compact{run}-{session.name}")
        shutil.copy(session, copy)
        manager = SessionManager.open(copy)
        agent = AgentSession(manager, model=ModelSpec("offline/pi-tui"), tools={}, cwd=ROOT)
        began = time.perf_counter()
        asyncio.run(agent.compact())
        best = min(best, time.perf_counter() - began)
        agent.close()
    return best * 1000


def measure(session: Path) -> tuple[int, float, float, int, float, float]:
    """(path length, prepare ms, serialize ms, serialized chars, compact ms, branch ms)."""
    manager = SessionManager.open(session, read_only=True)
    path = manager.path()
    settings = CompactionSettings()
    preparation = prepare_compaction(path, settings)
    prepare = best_ms(lambda: prepare_compaction(path, settings))
    text = serialize_conversation(preparation.messages_to_summarize)
    serialize = best_ms(lambda: serialize_conversation(preparation.messages_to_summarize))
    leaf, first = manager.leaf_id, path[0].id

    def branch() -> None:
        entries, _ = branch_entries(manager, leaf, first)
        prepare_branch_summary(entries, 128_000 - 16_384)

    branch_time = best_ms(branch)
    return len(path), prepare, serialize, len(text), compact_ms(session), branch_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="entry counts, comma-separated")
    args = parser.parse_args()
    litellm_module()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for size in (int(s) for s in args.sizes.split(",")):
            session = Path(folder) / f"session-{size}.jsonl"
            write_session(session, size)
            rows.append((size, *measure(session)))
    print(
        "| entries | path | prepare | serialize (chars) | compact, offline model "
        "| branch summary prep |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for size, length, prepare, serialize, chars, compact, branch in rows:
        print(
            f"| {size:,} | {length:,} | {prepare:.1f} ms | {serialize:.1f} ms ({chars:,}) "
            f"| {compact:.0f} ms | {branch:.1f} ms |"
        )
    print()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )


if __name__ == "__main__":
    main()
