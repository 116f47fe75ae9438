"""Agent benchmarks: process start to first streamed token, and loop throughput.

Run from the repository root:  python benchmarks/agent_bench.py [--runs N]

Prints a Markdown table:
- first token: wall time from starting ``pi-tui --mode json`` to its first ``message_update``
  line, on the offline model and against a loopback OpenAI-compatible server (both include
  importing LiteLLM, which dominates);
- events per second the agent loop sustains in-process (offline model with no delay, and the
  loopback server), counting every event the AgentSession emits, storage included.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pi_tui.agent.offline import PlannedReply, use_script  # noqa: E402
from pi_tui.agent.provider import ModelSpec, litellm_module  # noqa: E402
from pi_tui.agent_session import AgentSession  # noqa: E402
from pi_tui.session import SessionManager  # noqa: E402
from tests.fakes import FakeOpenAIServer, Reply  # noqa: E402

KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY")


def first_token_seconds(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawning pi-tui to its first streamed token."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "pi_tui", "--mode", "json", "--no-session", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    elapsed = float("nan")
    for line in process.stdout:
        if '"message_update"' in line:
            elapsed = time.perf_counter() - began
            break
    process.stdout.close()
    process.wait(timeout=120)
    return elapsed


def measure_first_token(runs: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    env["PYTHONPATH"] = str(ROOT)
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        script = work / "script.json"
        script.write_text(json.dumps({"replies": [{"text": "hello there"}]}))
        offline_env = {**env, "PI_TUI_SCRIPT": str(script), "PI_TUI_OFFLINE_DELAY_MS": "0"}
        samples = [first_token_seconds(["hi"], offline_env, work) for _ in range(runs)]
        results["offline model"] = statistics.median(samples)
        with FakeOpenAIServer() as server:
            samples = []
            for _ in range(runs):
                server.enqueue(Reply(text=["hello", " there"]))
                argv = ["--model", "openai/fake-model", "--api-base", server.url, "--api-key", "k"]
                samples.append(first_token_seconds([*argv, "hi"], env, work))
            results["loopback server"] = statistics.median(samples)
    return results


async def events_per_second(spec: ModelSpec, work: Path) -> tuple[int, float]:
    manager = SessionManager.create(work, work / "sessions")
    session = AgentSession(manager, model=spec, tools={}, cwd=work)
    count = 0

    def on_event(_: object) -> None:
        nonlocal count
        count += 1

    session.subscribe(on_event)
    began = time.perf_counter()
    await session.prompt("stream a lot")
    elapsed = time.perf_counter() - began
    session.close()
    return count, count / elapsed


def measure_throughput() -> dict[str, tuple[int, float]]:
    litellm_module()
    os.environ["PI_TUI_OFFLINE_DELAY_MS"] = "0"
    results: dict[str, tuple[int, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        # Varied words: LiteLLM aborts a stream that repeats one chunk 100 times in a row.
        words = [f"w{n} " for n in range(4000)]
        use_script([PlannedReply(text="".join(words))])
        results["offline model"] = asyncio.run(events_per_second(ModelSpec("offline/pi-tui"), work))
        with FakeOpenAIServer() as server:
            server.enqueue(Reply(text=words))
            spec = ModelSpec("openai/fake-model", api_base=server.url, api_key="k")
            results["loopback server"] = asyncio.run(events_per_second(spec, work))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="subprocess runs per first-token row")
    args = parser.parse_args()
    first = measure_first_token(args.runs)
    throughput = measure_throughput()
    print("| measure | offline model | loopback server |")
    print("|---|---|---|")
    print(
        f"| process start → first streamed token (median of {args.runs}) "
        f"| {first['offline model']:.2f} s | {first['loopback server']:.2f} s |"
    )
    offline_count, offline_rate = throughput["offline model"]
    server_count, server_rate = throughput["loopback server"]
    print(
        f"| agent loop events per second (one run, {offline_count} / {server_count} events) "
        f"| {offline_rate:,.0f} | {server_rate:,.0f} |"
    )
    print()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )


if __name__ == "__main__":
    main()
