"""The agent loop: call the model, run the tools it asks for, repeat until it stops.

A turn is one assistant response plus its tool executions. Tool calls of one response run
concurrently and their results are reported in call order. Everything that happens is emitted
as a typed event through one synchronous callback, in order, so whoever stores messages sees
them exactly as they occurred. Abort is an event, not task cancellation of the caller: the
stream or the tools are cancelled, and the partial answer is still reported (``aborted``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..session.ids import now_ms
from ..tools.base import Tool, ToolError, ToolResult
from .convert import to_provider_messages
from .events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    RetryScheduled,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from .provider import AssistantBuilder, ModelSpec, ProviderError, classify_error, open_stream

Message = dict[str, Any]
Emit = Callable[[AgentEvent], None]
Sleep = Callable[[float], Awaitable[None]]

ABORTED_TEXT = "Operation aborted"
SKIPPED_TEXT = "Skipped due to queued user message."


@dataclass(slots=True)
class LoopSettings:
    """What one run needs to know."""

    model: ModelSpec
    tools: dict[str, Tool] = field(default_factory=dict)
    system_prompt: str = ""
    thinking: str = "off"
    max_tokens: int | None = None
    max_retries: int = 3
    retry_base_delay: float = 2.0


def user_message(text: str, images: list[dict[str, Any]] | None = None) -> Message:
    """A pi user message."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content.extend(images or [])
    return {"role": "user", "content": content, "timestamp": now_ms()}


def tool_result_message(call: dict[str, Any], result: ToolResult) -> Message:
    """A pi toolResult message for a call."""
    message: Message = {
        "role": "toolResult",
        "toolCallId": call["id"],
        "toolName": call["name"],
        "content": result.content,
    }
    if result.details is not None:
        message["details"] = result.details
    message["isError"] = result.is_error
    message["timestamp"] = now_ms()
    return message


@dataclass(slots=True)
class _Attempt:
    """One model call: its message builder and whether ``message_start`` went out."""

    builder: AssistantBuilder
    started: bool = False


class AgentLoop:
    """Runs prompts against a model with tools; one run at a time."""

    def __init__(self, settings: LoopSettings, emit: Emit, sleep: Sleep = asyncio.sleep) -> None:
        self.settings = settings
        self._emit = emit
        self.sleep = sleep
        self.steering: deque[Message] = deque()
        self.follow_ups: deque[Message] = deque()
        self._abort = asyncio.Event()
        self.running = False

    # --- control ----------------------------------------------------------------------------

    def abort(self) -> None:
        """Stop the current run: the stream and running tools are cancelled."""
        self._abort.set()

    def steer(self, message: Message) -> None:
        """Deliver a message after the current tool batch (remaining calls are skipped)."""
        self.steering.append(message)

    def follow_up(self, message: Message) -> None:
        """Deliver a message after the run would otherwise end."""
        self.follow_ups.append(message)

    def clear_queues(self) -> list[Message]:
        """Remove and return every queued message (steering first)."""
        queued = [*self.steering, *self.follow_ups]
        self.steering.clear()
        self.follow_ups.clear()
        return queued

    # --- the run ----------------------------------------------------------------------------

    async def run(self, context: list[Message], prompts: list[Message]) -> list[Message]:
        """Run until the model stops calling tools and no queued message remains."""
        if self.running:
            raise RuntimeError("the agent is already running")
        self.running = True
        self._abort = asyncio.Event()
        produced: list[Message] = []
        context = list(context)
        pending = list(prompts)
        self._emit(AgentStart())
        try:
            await self._run(context, pending, produced)
        finally:
            self.running = False
            self._emit(AgentEnd(produced))
        return produced

    async def _run(
        self, context: list[Message], pending: list[Message], produced: list[Message]
    ) -> None:
        while True:
            self._emit(TurnStart())
            for message in pending:
                self._emit(MessageStart(message))
                self._emit(MessageEnd(message))
            context.extend(pending)
            produced.extend(pending)
            pending = []

            assistant, invalid = await self._call_model(context)
            context.append(assistant)
            produced.append(assistant)
            if assistant["stopReason"] in ("error", "aborted"):
                self._emit(TurnEnd(assistant, []))
                return
            calls = [b for b in assistant["content"] if b.get("type") == "toolCall"]
            results = await self._run_tools(calls, invalid) if calls else []
            context.extend(results)
            produced.extend(results)
            self._emit(TurnEnd(assistant, results))
            if self._abort.is_set():
                return
            if self.steering:
                pending = [self.steering.popleft()]
                continue
            if calls:
                continue
            if self.follow_ups:
                pending = [self.follow_ups.popleft()]
                continue
            return

    async def _race_abort(self, work: asyncio.Future[Any]) -> bool:
        """Wait for ``work`` or an abort; on abort cancel it. True when aborted."""
        waiter = asyncio.ensure_future(self._abort.wait())
        try:
            done, _ = await asyncio.wait({work, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if work in done:
            return False
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await work
        return True

    def _start(self, attempt: _Attempt) -> None:
        if not attempt.started:
            attempt.started = True
            self._emit(MessageStart(attempt.builder.message))

    def _close(self, attempt: _Attempt, reason: str | None, text: str = "") -> Message:
        """Finish the attempt's message (``reason``: None, "error" or "aborted") and report it."""
        self._start(attempt)
        builder = attempt.builder
        message = builder.finish() if reason is None else builder.fail(reason, text)
        self._emit(MessageEnd(message))
        return message

    async def _stream_into(self, attempt: _Attempt, context: list[Message]) -> None:
        settings = self.settings
        spec = settings.model
        messages = to_provider_messages(
            context,
            system_prompt=settings.system_prompt,
            provider=spec.provider,
            model=spec.model_id,
        )
        tools = [tool.schema() for tool in settings.tools.values()]
        stream = await open_stream(
            spec, messages, tools, thinking=settings.thinking, max_tokens=settings.max_tokens
        )
        builder = attempt.builder
        try:
            async for chunk in stream:
                deltas = builder.add_chunk(chunk)
                self._start(attempt)
                for delta in deltas:
                    self._emit(
                        MessageUpdate(builder.message, delta.kind, delta.content_index, delta.delta)
                    )
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    await close()

    async def _call_model(self, context: list[Message]) -> tuple[Message, dict[str, str]]:
        settings = self.settings
        retries = 0
        while True:
            attempt = _Attempt(AssistantBuilder(settings.model))
            work = asyncio.ensure_future(self._stream_into(attempt, context))
            invalid = attempt.builder.invalid_arguments
            if await self._race_abort(work):
                return self._close(attempt, "aborted", ABORTED_TEXT), invalid
            error = work.exception()
            if error is None:
                return self._close(attempt, None), invalid
            failure = (
                error if isinstance(error, ProviderError) else classify_error(error, settings.model)
            )
            if (
                failure.retryable
                and not attempt.builder.received
                and retries < settings.max_retries
            ):
                retries += 1
                delay = settings.retry_base_delay * 2 ** (retries - 1)
                self._emit(RetryScheduled(retries, settings.max_retries, delay, failure.message))
                if await self._race_abort(asyncio.ensure_future(self.sleep(delay))):
                    return self._close(attempt, "aborted", ABORTED_TEXT), invalid
                continue
            return self._close(attempt, "error", failure.message), invalid

    def _report_end(self, call: dict[str, Any], result: ToolResult, began: float) -> None:
        """Emit ``tool_execution_end``; ``began`` is a perf_counter start, or 0 (never ran)."""
        elapsed = int((time.perf_counter() - began) * 1000) if began else 0
        message = tool_result_message(call, result)
        self._emit(ToolExecutionEnd(call["id"], call["name"], message, result.is_error, elapsed))

    async def _run_tools(
        self, calls: list[dict[str, Any]], invalid: dict[str, str]
    ) -> list[Message]:
        outcomes: dict[str, ToolResult] = {}
        runnable: list[tuple[dict[str, Any], Tool, Any]] = []
        skip = bool(self.steering)
        for call in calls:
            self._emit(ToolExecutionStart(call["id"], call["name"], call["arguments"]))
            tool = self.settings.tools.get(call["name"])
            if skip:
                outcomes[call["id"]] = ToolResult.error(SKIPPED_TEXT)
            elif tool is None:
                outcomes[call["id"]] = ToolResult.error(f"Tool {call['name']} not found")
            elif call["id"] in invalid:
                outcomes[call["id"]] = ToolResult.error(
                    f"Invalid JSON arguments for {call['name']}: {invalid[call['id']]!r}"
                )
            else:
                try:
                    runnable.append((call, tool, tool.parse_args(call["arguments"])))
                except ToolError as exc:
                    outcomes[call["id"]] = ToolResult.error(str(exc))
            if call["id"] in outcomes:
                self._report_end(call, outcomes[call["id"]], 0)

        async def execute(call: dict[str, Any], tool: Tool, args: Any) -> None:
            began = time.perf_counter()

            def update(text: str) -> None:
                self._emit(ToolExecutionUpdate(call["id"], call["name"], text))

            try:
                result = await tool.execute(args, update)
            except ToolError as exc:
                result = ToolResult.error(str(exc))
            except asyncio.CancelledError:
                outcomes[call["id"]] = ToolResult.error(ABORTED_TEXT)
                self._report_end(call, outcomes[call["id"]], began)
                raise
            except Exception as exc:
                result = ToolResult.error(f"{type(exc).__name__}: {exc}")
            outcomes[call["id"]] = result
            self._report_end(call, result, began)

        if runnable:
            batch = asyncio.ensure_future(
                asyncio.gather(*(execute(call, tool, args) for call, tool, args in runnable))
            )
            if await self._race_abort(batch):
                for call, _, _ in runnable:
                    outcomes.setdefault(call["id"], ToolResult.error(ABORTED_TEXT))
        results = []
        for call in calls:
            message = tool_result_message(
                call, outcomes.get(call["id"]) or ToolResult.error(ABORTED_TEXT)
            )
            self._emit(MessageStart(message))
            self._emit(MessageEnd(message))
            results.append(message)
        return results
