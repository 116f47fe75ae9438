"""Session benchmarks: open, context, tree and append on large branchy pi v3 sessions.

Run from the repository root:  python benchmarks/session_bench.py [--quick | --sizes 1000,10000]

Generates synthetic sessions that look like real coding sessions (≈2 KB per line: user
prompts, assistant replies with tool calls, long tool results, a rewind every ~50 entries,
labels, session names and a compaction every ~2000 entries; one text in ten holds characters
beyond Latin-1) into a temporary folder. Each size is then measured in a fresh Python
process, so the peak RSS belongs to that size alone:

- open: ``SessionManager.open(path, read_only=True)`` (read, parse, index);
- context: ``manager.build_context()`` at the resumed leaf;
- open+context: both in one timed span (the headline number);
- get_tree+flatten: ``manager.get_tree()`` then ``manager.index.flatten(roots)``.

Times are the best of ``--runs`` runs (default 3), with the first run of the fresh process
(what a user starting pi-tui sees) shown beside it; the peak RSS is the child's ``ru_maxrss``
after all runs. A second table gives the mean time of one ``append_message`` on
a writable copy of the 1k session, with ``FsyncPolicy.CLOSE`` (1000 appends) and
``FsyncPolicy.ENTRY`` (200 appends). Generation is never timed. The data is deterministic:
the same sizes always produce the same files. The targets (10k open+context < 200 ms, 100k
< 2 s, 100k peak RSS < 600 MB, append < 1 ms) are reported as met or missed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 10_000)
APPEND_SOURCE_SIZE = 1_000
APPENDS_NO_FSYNC = 1_000
APPENDS_FSYNC = 200
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z
MB = 1024 * 1024
TARGETS_MS = {10_000: 200.0, 100_000: 2_000.0}
"""open+context targets by entry count."""
TARGET_RSS_MB = {100_000: 600.0}
TARGET_APPEND_MS = 1.0

Record = dict[str, Any]

# --- synthetic session data -------------------------------------------------------------------

_VOCABULARY = """
    session entry parent leaf branch index context message tool result cache token file path
    config parser writer reader buffer stream event model provider render widget value count
    offset chunk header record label summary compaction user assistant
"""
_WORDS = _VOCABULARY.split()
_FILES = (
    "src/app.py",
    "src/session/store.py",
    "src/session/tree.py",
    "src/ui/widgets.py",
    "tests/test_store.py",
    "README.md",
    "pyproject.toml",
)
_TOOLS = ("read", "bash", "edit", "write", "grep")
_LABELS = ("checkpoint", "before refactor", "tests green", "good state", "try again here")


_WIDE_LINES = ("✓ 42 passed, 1 skipped", "├── src/session → tree.py", "⚠ 日本語のコメント")
"""Lines beyond Latin-1: a text holding one is stored with 2+ bytes per character in memory."""
WIDE_TEXT_SHARE = 0.1


def _code_line(rng: random.Random) -> str:
    """One plausible line of source code or tool output (quotes and some Latin-1 included)."""
    a, b, c = rng.choice(_WORDS), rng.choice(_WORDS), rng.choice(_WORDS)
    shape = rng.randrange(6)
    if shape == 0:
        return f"    {a}_{b} = self.{c}({a}, limit={rng.randrange(1000)})"
    if shape == 1:
        return f'        raise ValueError(f"bad {a}: {{{b}!r}}")  # {c}'
    if shape == 2:
        return f"def {a}_{b}(self, {c}: str | None = None) -> list[{a.title()}]:"
    if shape == 3:
        return f"{rng.choice(_FILES)}:{rng.randrange(1, 900)}: {a} {b} -> {c}"
    if shape == 4:
        return f'    """Return the {a} of the {b}; résumé of {c} when empty."""'
    return f"\t{a}[{rng.randrange(64)}] += {b}.{c}  # TODO(naïve)"


def _line_pool(rng: random.Random, count: int = 512) -> list[str]:
    return [_code_line(rng) for _ in range(count)]


def _iso(ms: int) -> str:
    """Entry timestamp in pi's ``toISOString`` form."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


class SessionGenerator:
    """Produces one branchy session, entry by entry, with a deterministic random stream."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.pool = _line_pool(self.rng)
        self.taken: set[str] = set()
        self.clock_ms = START_MS
        self.count = 0
        self.calls = 0
        self.path: list[str] = []
        """Ids root → current leaf."""
        self.user_positions: list[int] = []
        """Positions in ``path`` of the user messages on it."""

    # --- building blocks --------------------------------------------------------------------

    def _text(self, approx_bytes: int) -> str:
        """About ``approx_bytes`` of JSON-encoded text (a pool line is ≈60 bytes escaped)."""
        lines = self.rng.choices(self.pool, k=max(1, approx_bytes // 60))
        if self.rng.random() < WIDE_TEXT_SHARE:
            lines[self.rng.randrange(len(lines))] = self.rng.choice(_WIDE_LINES)
        return "\n".join(lines)

    def _new_id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate

    def _entry(self, kind: str, **fields: Any) -> Record:
        """A tree entry hung under the current leaf, which then becomes the leaf."""
        self.clock_ms += self.rng.randint(200, 4000)
        entry_id = self._new_id()
        record: Record = {
            "type": kind,
            "id": entry_id,
            "parentId": self.path[-1] if self.path else None,
            "timestamp": _iso(self.clock_ms),
            **fields,
        }
        self.path.append(entry_id)
        self.count += 1
        return record

    def _message(self, message: Record) -> Record:
        record = self._entry("message", message=message)
        message["timestamp"] = self.clock_ms
        return record

    def header(self) -> Record:
        """The session header line."""
        session_id = uuid.UUID(int=self.rng.getrandbits(128), version=4)
        return {
            "type": "session",
            "version": 3,
            "id": str(session_id),
            "timestamp": _iso(START_MS),
            "cwd": "/tmp/x",
        }

    # --- messages ---------------------------------------------------------------------------

    def _user(self) -> Record:
        position = len(self.path)
        record = self._message(
            {"role": "user", "content": [{"type": "text", "text": self._text(900)}]}
        )
        self.user_positions.append(position)
        return record

    def _assistant(self, text_bytes: int, calls: Sequence[tuple[str, str]]) -> Record:
        content: list[Record] = [{"type": "text", "text": self._text(text_bytes)}]
        for call_id, tool in calls:
            content.append(
                {
                    "type": "toolCall",
                    "id": call_id,
                    "name": tool,
                    "arguments": {"path": self.rng.choice(_FILES)},
                }
            )
        tokens_in = self.rng.randint(2_000, 120_000)
        tokens_out = self.rng.randint(20, 2_000)
        cost_in, cost_out = round(tokens_in * 3e-6, 6), round(tokens_out * 1.5e-5, 6)
        return self._message(
            {
                "role": "assistant",
                "content": content,
                "api": "openai-completions",
                "provider": "openai",
                "model": "gpt-4o",
                "usage": {
                    "input": tokens_in,
                    "output": tokens_out,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": tokens_in + tokens_out,
                    "cost": {
                        "input": cost_in,
                        "output": cost_out,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "total": round(cost_in + cost_out, 6),
                    },
                },
                "stopReason": "toolUse" if calls else "stop",
            }
        )

    def _tool_result(self, call_id: str, tool: str) -> Record:
        return self._message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": tool,
                "content": [{"type": "text", "text": self._text(3_200)}],
                "isError": self.rng.random() < 0.05,
            }
        )

    def _turn(self) -> Iterator[Record]:
        """User prompt, 1-3 tool rounds, final answer."""
        yield self._user()
        for _ in range(self.rng.randint(1, 3)):
            self.calls += 1
            call = (f"call_{self.calls}", self.rng.choice(_TOOLS))
            yield self._assistant(700, [call])
            yield self._tool_result(*call)
        yield self._assistant(1_700, [])

    # --- other entry types ------------------------------------------------------------------

    def _label(self) -> Record:
        target = self.path[self.rng.randrange(len(self.path))]
        return self._entry("label", targetId=target, label=self.rng.choice(_LABELS))

    def _session_info(self) -> Record:
        return self._entry("session_info", name=f"refactor {self.rng.choice(_WORDS)} handling")

    def _compaction(self) -> Record:
        # Keep the last few turns: the first kept entry is a user message a little way back.
        kept = self.user_positions[-3] if len(self.user_positions) >= 3 else 1
        return self._entry(
            "compaction",
            summary=self._text(1_500),
            firstKeptEntryId=self.path[kept],
            tokensBefore=self.rng.randint(80_000, 160_000),
            details={"readFiles": [], "modifiedFiles": []},
            fromHook=False,
        )

    def _rewind(self) -> None:
        """Move the leaf to the parent of one of the last user messages on the path."""
        if not self.user_positions:
            return
        position = self.rng.choice(self.user_positions[-4:])
        del self.path[position:]
        while self.user_positions and self.user_positions[-1] >= position:
            self.user_positions.pop()

    def entries(self) -> Iterator[Record]:
        """An endless stream of entries; take as many as needed."""
        yield self._entry("model_change", provider="openai", modelId="gpt-4o")
        next_rewind = self.rng.randint(40, 60)
        next_label = self.rng.randint(200, 400)
        next_info = self.rng.randint(500, 1_500)
        next_compaction = self.rng.randint(1_800, 2_200)
        while True:
            if self.count >= next_rewind:
                self._rewind()
                next_rewind = self.count + self.rng.randint(40, 60)
            yield from self._turn()
            if self.count >= next_label:
                yield self._label()
                next_label = self.count + self.rng.randint(200, 400)
            if self.count >= next_info:
                yield self._session_info()
                next_info = self.count + self.rng.randint(500, 1_500)
            if self.count >= next_compaction:
                yield self._compaction()
                next_compaction = self.count + self.rng.randint(1_800, 2_200)


def write_session(path: Path, entry_count: int) -> None:
    """Write a session with exactly ``entry_count`` entries after the header."""
    generator = SessionGenerator(seed=entry_count)
    with path.open("wb", buffering=MB) as handle:
        handle.write(orjson.dumps(generator.header()) + b"\n")
        for record in islice(generator.entries(), entry_count):
            handle.write(orjson.dumps(record) + b"\n")


# --- measurements (run in child processes) ----------------------------------------------------


def _peak_rss_mb() -> float:
    """This process's peak RSS (``ru_maxrss`` is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / MB if sys.platform == "darwin" else peak / 1024


def _import_session_package() -> Any:
    """``pi_tui.session`` from this checkout (imported in the child only)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import pi_tui.session

    return pi_tui.session


def _read_once(session: Any, path: Path) -> tuple[dict[str, float], dict[str, float]]:
    """One open → context → tree pass: seconds per step, and what was loaded."""
    gc.collect()
    start = time.perf_counter()
    manager = session.SessionManager.open(path, read_only=True)
    opened = time.perf_counter()
    context = manager.build_context()
    built = time.perf_counter()
    rows = manager.index.flatten(manager.get_tree())
    flattened = time.perf_counter()
    seconds = {
        "open": opened - start,
        "context": built - opened,
        "total": built - start,
        "tree": flattened - built,
    }
    shape: dict[str, float] = {
        "entries": len(manager.index),
        "path": len(manager.path()),
        "messages": len(context.messages),
        "rows": len(rows),
        "warnings": len(manager.warnings),
    }
    return seconds, shape


def measure_read(path: Path, runs: int) -> dict[str, float]:
    """Best-of-``runs`` ms of open, context and tree on one file, the first run, peak RSS."""
    session = _import_session_package()
    baseline = _peak_rss_mb()
    passes = [_read_once(session, path) for _ in range(runs)]
    best = {key: min(seconds[key] for seconds, _ in passes) * 1000 for key in passes[0][0]}
    first = passes[0][0]["total"] * 1000
    shape = passes[-1][1]
    return {**best, "first": first, **shape, "rss": _peak_rss_mb(), "rss_baseline": baseline}


def _assistant_message() -> Record:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": "Done."}],
        "api": "openai-completions",
        "provider": "openai",
        "model": "gpt-4o",
        "usage": {
            "input": 1200,
            "output": 40,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 1240,
            "cost": {
                "input": 0.0036,
                "output": 0.0006,
                "cacheRead": 0,
                "cacheWrite": 0,
                "total": 0.0042,
            },
        },
        "stopReason": "stop",
        "timestamp": 1,
    }


def _mean_append_ms(path: Path, policy: Any, count: int) -> float:
    session = _import_session_package()
    user: Record = {"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": 1}
    messages = (user, _assistant_message())
    manager = session.SessionManager.open(path, fsync=policy)
    try:
        start = time.perf_counter()
        for number in range(count):
            manager.append_message(messages[number % 2])
        elapsed = time.perf_counter() - start
    finally:
        manager.close()
    return elapsed * 1000 / count


def measure_append(source: Path) -> dict[str, float]:
    """Mean ms per append on writable copies of ``source`` (fsync at close / every entry)."""
    session = _import_session_package()
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="pi-tui-append-") as scratch:
        for key, policy, count in (
            ("close", session.FsyncPolicy.CLOSE, APPENDS_NO_FSYNC),
            ("entry", session.FsyncPolicy.ENTRY, APPENDS_FSYNC),
        ):
            copy = Path(scratch) / f"append-{key}.jsonl"
            shutil.copyfile(source, copy)
            results[key] = _mean_append_ms(copy, policy, count)
    return results


# --- orchestration ----------------------------------------------------------------------------


def _run_child(*args: str) -> dict[str, float]:
    """Run this script in a fresh interpreter and return the JSON it prints."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def import_time_ms() -> float:
    """Wall time of ``python -c "import pi_tui.session"`` in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import pi_tui.session"], check=True, cwd=ROOT, env=env)
    return (time.perf_counter() - start) * 1000


@dataclass(frozen=True, slots=True)
class ReadResult:
    """One row of the main table."""

    entries: int
    file_mb: float
    timings: dict[str, float]


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def bench_sizes(sizes: Sequence[int], runs: int, folder: Path) -> list[ReadResult]:
    """Generate and measure every size; each measurement runs in its own process."""
    results = []
    for size in sizes:
        path = folder / f"session-{size}.jsonl"
        _progress(f"generating {size:,} entries …")
        write_session(path, size)
        _progress(f"measuring {size:,} entries …")
        timings = _run_child("--child-read", str(path), "--runs", str(runs))
        if timings["entries"] != size or timings["warnings"]:
            raise SystemExit(f"{path.name}: loaded {timings['entries']:.0f} entries with warnings")
        results.append(ReadResult(size, path.stat().st_size / MB, timings))
    return results


def bench_append(folder: Path) -> dict[str, float]:
    """Append timings on a copy of the 1k session (generated if not already there)."""
    source = folder / f"session-{APPEND_SOURCE_SIZE}.jsonl"
    if not source.exists():
        write_session(source, APPEND_SOURCE_SIZE)
    _progress("measuring appends …")
    return _run_child("--child-append", str(source))


def _ms(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def format_read_table(results: Sequence[ReadResult], runs: int) -> str:
    """The main Markdown table."""
    lines = [
        f"### Open, context, tree (best of {runs}; ms)",
        "",
        "| entries | file MB | leaf path | open | context | **open+context** "
        "| open+context, 1st run | get_tree+flatten | peak RSS MB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        t = result.timings
        lines.append(
            f"| {result.entries:,} | {result.file_mb:,.1f} | {t['path']:,.0f} | {_ms(t['open'])} "
            f"| {_ms(t['context'])} | **{_ms(t['total'])}** | {_ms(t['first'])} "
            f"| {_ms(t['tree'])} | {t['rss']:,.0f} |"
        )
    if results:
        baseline = max(result.timings["rss_baseline"] for result in results)
        lines += ["", f"Peak RSS includes ≈{baseline:.0f} MB for Python and pi_tui.session."]
    return "\n".join(lines)


def format_append_table(appends: dict[str, float], import_ms: float) -> str:
    """The append table and the import time."""
    return "\n".join(
        [
            f"### append_message on a copy of the {APPEND_SOURCE_SIZE:,}-entry session",
            "",
            "| fsync policy | appends | mean ms per append |",
            "|---|---:|---:|",
            f"| CLOSE (no fsync while appending) | {APPENDS_NO_FSYNC:,} | {appends['close']:.3f} |",
            f"| ENTRY (fsync every entry) | {APPENDS_FSYNC:,} | {appends['entry']:.3f} |",
            "",
            f'`python -c "import pi_tui.session"`: {import_ms:.0f} ms wall time (one run).',
        ]
    )


def _verdict(value: float, limit: float, unit: str) -> str:
    mark = "met" if value < limit else "MISSED"
    return f"{value:,.0f} {unit} (< {limit:,.0f} {unit}: {mark})"


def format_targets(results: Sequence[ReadResult], appends: dict[str, float]) -> str:
    """One line per target that the measured sizes can answer."""
    lines = ["Targets:"]
    for result in results:
        if result.entries in TARGETS_MS:
            verdict = _verdict(result.timings["total"], TARGETS_MS[result.entries], "ms")
            lines.append(f"- {result.entries:,} entries, open+context: {verdict}")
        if result.entries in TARGET_RSS_MB:
            verdict = _verdict(result.timings["rss"], TARGET_RSS_MB[result.entries], "MB")
            lines.append(f"- {result.entries:,} entries, peak RSS: {verdict}")
    mark = "met" if appends["close"] < TARGET_APPEND_MS else "MISSED"
    lines.append(f"- append without fsync: {appends['close']:.3f} ms (< 1 ms: {mark})")
    return "\n".join(lines)


def machine_line() -> str:
    """Processor, CPU count and Python version."""
    processor = platform.processor() or platform.machine()
    return (
        f"Machine: {processor}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()} ({platform.system()})"
    )


def _parse_sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of integers: {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("sizes must be positive integers")
    return sizes


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command line: sizes, runs, and the hidden child modes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument(
        "--sizes", type=_parse_sizes, default=DEFAULT_SIZES, help="comma-separated entry counts"
    )
    choice.add_argument("--quick", action="store_true", help="only 1k and 10k entries")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per size (best is kept)")
    parser.add_argument("--child-read", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-append", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark (or one child measurement) and print the result."""
    args = parse_args(argv)
    if args.child_read is not None:
        print(json.dumps(measure_read(args.child_read, max(1, args.runs))))
        return
    if args.child_append is not None:
        print(json.dumps(measure_append(args.child_append)))
        return
    sizes = QUICK_SIZES if args.quick else args.sizes
    runs = max(1, args.runs)
    with tempfile.TemporaryDirectory(prefix="pi-tui-bench-") as scratch:
        folder = Path(scratch)
        results = bench_sizes(sizes, runs, folder)
        appends = bench_append(folder)
    import_ms = import_time_ms()
    print(format_read_table(results, runs))
    print()
    print(format_append_table(appends, import_ms))
    print()
    print(format_targets(results, appends))
    print()
    print(machine_line())


if __name__ == "__main__":
    main()
