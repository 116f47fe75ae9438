"""A scripted, loopback-only OpenAI-compatible chat-completions server for tests.

The server lets the test suite drive LiteLLM's *real* HTTP path (``openai/<model>`` with an
``api_base``) without touching the network. Each ``POST /v1/chat/completions`` consumes the
next scripted :class:`Reply` (FIFO); the reply decides whether the answer is a streamed SSE
response, a plain ``chat.completion`` JSON, an HTTP error, a slow stream or a stream that is
cut off mid-way.

Example::

    with FakeOpenAIServer() as server:
        server.enqueue(Reply(text=["Hel", "lo"], usage=Usage(12, 2)))
        response = await litellm.acompletion(
            model="openai/fake-model",
            api_base=server.url,
            api_key="test",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
            num_retries=0,
        )
        async for chunk in response:
            ...
        assert server.requests[0]["messages"][0]["content"] == "hi"

Wire format of a streamed reply (``Transfer-Encoding: chunked``, ``Connection: close``)::

    data: {"object": "chat.completion.chunk", ..., "delta": {"role": "assistant", "content": ""}}
    data: ... one chunk per reasoning piece, text piece, tool-call header and argument fragment
    data: {... "delta": {}, "finish_reason": "stop"}
    data: {... "choices": [], "usage": {...}}        (only if stream_options.include_usage)
    data: [DONE]

Only the standard library is used. The server binds ``127.0.0.1`` on an ephemeral port and
serves each connection on a daemon thread.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

__all__ = ["FakeOpenAIServer", "Reply", "ToolCallSpec", "Usage", "iter_sse_data"]

JSONDict = dict[str, Any]

# Default OpenAI-style ``error.type`` / ``error.code`` / message per HTTP status.
_ERROR_DEFAULTS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("permission_error", None, "You are not allowed to use this model."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests."),
    500: ("server_error", None, "The server had an error while processing your request."),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


@dataclass(frozen=True)
class ToolCallSpec:
    """One scripted tool call.

    Streamed OpenAI-style: a header chunk carrying ``index``, ``id``, ``type="function"``,
    ``function.name`` and empty ``function.arguments``, then one chunk per entry of
    ``arguments_fragments`` carrying only ``index`` and ``function.arguments``. The fragments
    need not be valid JSON on their own; the client is expected to concatenate them.
    """

    id: str
    name: str
    arguments_fragments: list[str] = field(default_factory=list)

    @property
    def arguments(self) -> str:
        """The complete arguments string (all fragments joined)."""
        return "".join(self.arguments_fragments)


@dataclass(frozen=True)
class Usage:
    """Token usage reported for a reply.

    ``cached_tokens`` and ``reasoning_tokens`` are only sent (as ``prompt_tokens_details`` and
    ``completion_tokens_details``) when not ``None``.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None

    def to_json(self) -> JSONDict:
        """The OpenAI ``usage`` object."""
        usage: JSONDict = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }
        if self.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        if self.reasoning_tokens is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": self.reasoning_tokens}
        return usage


@dataclass
class Reply:
    """One scripted answer to a ``POST /v1/chat/completions``.

    Success replies (``status == 200``) stream, in this order: a role chunk
    (``{"role": "assistant", "content": ""}``), one chunk per ``reasoning`` piece, one per
    ``text`` piece, the tool-call chunks, a finish chunk (empty delta + ``finish_reason``), a
    usage chunk (``choices: []``; only if ``usage`` is set *and* the request asked for
    ``stream_options.include_usage``) and ``data: [DONE]``. A non-streaming request gets a
    single ``chat.completion`` object built from the same fields.

    Attributes:
        text: Content pieces, one ``delta.content`` chunk each.
        reasoning: Reasoning pieces, one chunk each, sent as ``delta.<reasoning_field>``.
        reasoning_field: ``"reasoning_content"`` (DeepSeek/LiteLLM style) or ``"reasoning"``.
        tool_calls: Tool calls; their position in the list is their streamed ``index``.
        interleave: Stream the tool calls' chunks round-robin by index instead of one call
            after the other (header 0, header 1, fragment 0.0, fragment 1.0, ...).
        finish_reason: Defaults to ``"tool_calls"`` when there are tool calls, else ``"stop"``.
        usage: Token usage; ``None`` means no usage is reported at all.
        status: HTTP status. Anything but 200 answers with an OpenAI-style error JSON body
            before any chunk is sent.
        error_message / error_type / error_code: Override the error body's fields (defaults
            depend on ``status``).
        retry_after: Seconds for a ``Retry-After`` header on error replies.
        drop_after: Send this many SSE chunks (the role chunk counts), then close the socket
            without ``data: [DONE]`` nor the chunked-encoding terminator. For a non-streaming
            request the headers and half the body are sent before the connection is cut.
        delay_before_headers: Seconds to wait before sending the status line.
        delay_between_chunks: Seconds to wait before each chunk after the first one.
        model: ``model`` field of the chunks; defaults to the model named in the request.
    """

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    reasoning_field: Literal["reasoning_content", "reasoning"] = "reasoning_content"
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    interleave: bool = False
    finish_reason: str | None = None
    usage: Usage | None = None
    status: int = 200
    error_message: str | None = None
    error_type: str | None = None
    error_code: str | None = None
    retry_after: float | None = None
    drop_after: int | None = None
    delay_before_headers: float = 0.0
    delay_between_chunks: float = 0.0
    model: str | None = None

    @classmethod
    def error(
        cls,
        status: int,
        message: str | None = None,
        *,
        type: str | None = None,
        code: str | None = None,
        retry_after: float | None = None,
    ) -> Reply:
        """An HTTP error reply (OpenAI-style error JSON body, no chunks)."""
        return cls(
            status=status,
            error_message=message,
            error_type=type,
            error_code=code,
            retry_after=retry_after,
        )

    @classmethod
    def context_window_exceeded(cls, max_tokens: int = 8192) -> Reply:
        """A 400 error shaped like OpenAI's context-length error."""
        return cls.error(
            400,
            f"This model's maximum context length is {max_tokens} tokens. However, your "
            "messages resulted in more tokens. Please reduce the length of the messages.",
            type="invalid_request_error",
            code="context_length_exceeded",
        )

    @property
    def effective_finish_reason(self) -> str:
        """``finish_reason`` or its default."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"

    def error_body(self) -> JSONDict:
        """The OpenAI-style error JSON body for a non-200 ``status``."""
        default_type, default_code, default_message = _ERROR_DEFAULTS.get(
            self.status, ("api_error", None, "Request failed.")
        )
        return {
            "error": {
                "message": self.error_message
                if self.error_message is not None
                else default_message,
                "type": self.error_type if self.error_type is not None else default_type,
                "param": None,
                "code": self.error_code if self.error_code is not None else default_code,
            }
        }

    def deltas(self) -> list[JSONDict]:
        """The ``delta`` objects of the content chunks (between role and finish chunks)."""
        deltas: list[JSONDict] = [{self.reasoning_field: piece} for piece in self.reasoning]
        deltas.extend({"content": piece} for piece in self.text)
        per_call: list[list[JSONDict]] = []
        for index, call in enumerate(self.tool_calls):
            header: JSONDict = {
                "index": index,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            sequence = [header]
            sequence.extend(
                {"index": index, "function": {"arguments": fragment}}
                for fragment in call.arguments_fragments
            )
            per_call.append(sequence)
        if self.interleave:
            ordered = [
                item
                for round_ in itertools.zip_longest(*per_call)
                for item in round_
                if item is not None
            ]
        else:
            ordered = [item for sequence in per_call for item in sequence]
        deltas.extend({"tool_calls": [item]} for item in ordered)
        return deltas

    def message(self) -> JSONDict:
        """The assistant ``message`` of a non-streaming ``chat.completion``."""
        message: JSONDict = {
            "role": "assistant",
            "content": "".join(self.text) if self.text or not self.tool_calls else None,
        }
        if self.reasoning:
            message[self.reasoning_field] = "".join(self.reasoning)
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        return message


class _ClientGone(Exception):
    """The client closed the connection before its reply was fully sent."""


class _Stopping(Exception):
    """The server is shutting down; in-flight replies are abandoned."""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, owner: FakeOpenAIServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Never let a handler failure print noise or kill anything: record it for tests.
        exc = sys.exc_info()[1]
        if exc is not None:
            self.owner._record_error(exc)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeOpenAI/1.0"
    sys_version = ""
    server: _HTTPServer

    # -- plumbing ---------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    @property
    def owner(self) -> FakeOpenAIServer:
        return self.server.owner

    def _send_json(self, status: int, body: JSONDict, extra: dict[str, str] | None = None) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()
        self.close_connection = True

    def _client_hung_up(self) -> bool:
        """True if the peer has closed its end (EOF/RST pending on the socket)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK)
            return peeked == b""
        except (OSError, ValueError):
            return True

    def _wait(self, seconds: float) -> None:
        """Sleep ``seconds`` while watching for a client hang-up or a server stop."""
        deadline = time.monotonic() + seconds
        while True:
            if self.owner._stopping.is_set():
                raise _Stopping
            if self._client_hung_up():
                raise _ClientGone
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                select.select([self.connection], [], [], min(remaining, 0.02))
            except (OSError, ValueError) as exc:
                raise _ClientGone from exc

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGone from exc

    def _write_http_chunk(self, data: bytes) -> None:
        self._write(b"%x\r\n%s\r\n" % (len(data), data))

    def _abort_connection(self) -> None:
        """Cut the connection abruptly (no terminator); further writes are skipped."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    # -- routes -----------------------------------------------------------------------------

    def do_GET(self) -> None:
        self.close_connection = True
        if self.path.rstrip("/").endswith("/models"):
            model = {
                "id": self.owner.model_id,
                "object": "model",
                "created": 0,
                "owned_by": "fake-openai-server",
            }
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_json(404, _error_json(f"Unknown path {self.path}", "invalid_request_error"))

    def do_POST(self) -> None:
        self.close_connection = True
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
            self._send_json(404, _error_json(f"Unknown path {self.path}", "invalid_request_error"))
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("request body is not a JSON object")
        except ValueError as exc:
            self._send_json(400, _error_json(f"Invalid JSON body: {exc}", "invalid_request_error"))
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        reply = self.owner._record_request(body, headers)
        if reply is None:
            message = (
                "FakeOpenAIServer script ran out of replies: request "
                f"#{len(self.owner.requests)} has no scripted Reply (enqueue one more)."
            )
            self._send_json(500, _error_json(message, "fake_server_script_exhausted"))
            return
        try:
            self._answer(reply, body)
        except _ClientGone:
            self.owner._record_disconnect()
            self._abort_connection()
        except _Stopping:
            self._abort_connection()

    # -- answers ----------------------------------------------------------------------------

    def _answer(self, reply: Reply, body: JSONDict) -> None:
        if reply.delay_before_headers > 0:
            self._wait(reply.delay_before_headers)
        if reply.status != 200:
            extra = {}
            if reply.retry_after is not None:
                extra["Retry-After"] = _format_seconds(reply.retry_after)
            try:
                self._send_json(reply.status, reply.error_body(), extra)
            except OSError as exc:
                raise _ClientGone from exc
            return
        model = reply.model or str(body.get("model") or self.owner.model_id)
        completion_id = f"chatcmpl-fake-{next(self.owner._ids)}"
        created = int(time.time())
        if body.get("stream"):
            self._stream(reply, body, model, completion_id, created)
        else:
            self._complete(reply, model, completion_id, created)

    def _complete(self, reply: Reply, model: str, completion_id: str, created: int) -> None:
        completion: JSONDict = {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": reply.message(),
                    "finish_reason": reply.effective_finish_reason,
                }
            ],
        }
        if reply.usage is not None:
            completion["usage"] = reply.usage.to_json()
        if reply.drop_after is None:
            try:
                self._send_json(200, completion)
            except OSError as exc:
                raise _ClientGone from exc
            return
        payload = json.dumps(completion).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        self.end_headers()
        self._write(payload[: len(payload) // 2])
        self.owner._record_drop()
        self._abort_connection()

    def _stream(
        self, reply: Reply, body: JSONDict, model: str, completion_id: str, created: int
    ) -> None:
        def chunk(delta: JSONDict, finish_reason: str | None = None) -> JSONDict:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": None,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
                ],
            }

        events: list[JSONDict] = [chunk({"role": "assistant", "content": ""})]
        events.extend(chunk(delta) for delta in reply.deltas())
        events.append(chunk({}, reply.effective_finish_reason))
        stream_options = body.get("stream_options") or {}
        if reply.usage is not None and stream_options.get("include_usage"):
            events.append(
                {
                    "id": completion_id,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "system_fingerprint": None,
                    "choices": [],
                    "usage": reply.usage.to_json(),
                }
            )

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        try:
            self.end_headers()
        except OSError as exc:
            raise _ClientGone from exc

        for position, event in enumerate(events):
            if reply.drop_after is not None and position >= reply.drop_after:
                break
            if position > 0 and reply.delay_between_chunks > 0:
                self._wait(reply.delay_between_chunks)
            self._write_http_chunk(b"data: " + json.dumps(event).encode() + b"\n\n")
        if reply.drop_after is not None:
            self.owner._record_drop()
            self._abort_connection()
            return
        self._write_http_chunk(b"data: [DONE]\n\n")
        self._write(b"0\r\n\r\n")
        self.owner._record_completed_stream()


def _error_json(message: str, type_: str, code: str | None = None) -> JSONDict:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def _format_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else str(seconds)


class FakeOpenAIServer:
    """A scripted OpenAI-compatible chat-completions server on ``127.0.0.1`` (ephemeral port).

    Use it as a context manager (``__enter__`` starts it, ``__exit__`` stops it) or call
    :meth:`start` / :meth:`stop`. Script answers with :meth:`enqueue`; each
    ``POST /v1/chat/completions`` consumes one :class:`Reply` in FIFO order. A request that
    finds the script empty is answered with HTTP 500 and an error whose message says the
    script ran out, so a test that forgot a reply fails loudly. ``GET /v1/models`` lists one
    model (``model_id``).

    All counters and recordings are safe to read from the test thread while the server runs.
    """

    def __init__(self, replies: Iterable[Reply] = (), *, model_id: str = "fake-model") -> None:
        """Create a stopped server, optionally pre-loaded with ``replies``."""
        self.model_id = model_id
        self._lock = threading.Lock()
        self._replies: deque[Reply] = deque(replies)
        self._requests: list[JSONDict] = []
        self._request_headers: list[dict[str, str]] = []
        self._errors: list[BaseException] = []
        self._client_disconnects = 0
        self._drops = 0
        self._completed_streams = 0
        self._disconnected = threading.Event()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Bind and start serving on a daemon thread. Returns ``self``."""
        if self._httpd is not None:
            raise RuntimeError("FakeOpenAIServer already started")
        self._stopping.clear()
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"FakeOpenAIServer:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: abort in-flight slow streams, shut down, close the socket, join."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses --------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (only valid while started)."""
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL to pass as ``api_base``, e.g. ``"http://127.0.0.1:PORT/v1"``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- script -----------------------------------------------------------------------------

    def enqueue(self, *replies: Reply) -> None:
        """Append one or more replies to the script (consumed FIFO)."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending_replies(self) -> int:
        """How many scripted replies have not been consumed yet."""
        with self._lock:
            return len(self._replies)

    # -- recordings -------------------------------------------------------------------------

    @property
    def requests(self) -> list[JSONDict]:
        """Parsed JSON bodies of all chat-completion POSTs received, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """HTTP headers of those requests (lower-cased names), aligned with :attr:`requests`."""
        with self._lock:
            return [dict(headers) for headers in self._request_headers]

    @property
    def client_disconnects(self) -> int:
        """How many times a client hung up before its reply was fully sent."""
        with self._lock:
            return self._client_disconnects

    @property
    def connections_closed(self) -> int:
        """Alias of :attr:`client_disconnects` (connections the client closed early)."""
        return self.client_disconnects

    @property
    def drops(self) -> int:
        """How many replies were cut off on purpose (``Reply.drop_after``)."""
        with self._lock:
            return self._drops

    @property
    def completed_streams(self) -> int:
        """How many streamed replies were sent completely (through ``data: [DONE]``)."""
        with self._lock:
            return self._completed_streams

    @property
    def errors(self) -> list[BaseException]:
        """Unexpected exceptions raised inside handler threads (should stay empty)."""
        with self._lock:
            return list(self._errors)

    def wait_for_disconnect(self, timeout: float = 2.0) -> bool:
        """Block until a client disconnect has been recorded; ``False`` on timeout."""
        return self._disconnected.wait(timeout)

    # -- called from handler threads --------------------------------------------------------

    def _record_request(self, body: JSONDict, headers: dict[str, str]) -> Reply | None:
        with self._lock:
            self._requests.append(body)
            self._request_headers.append(headers)
            return self._replies.popleft() if self._replies else None

    def _record_disconnect(self) -> None:
        with self._lock:
            self._client_disconnects += 1
        self._disconnected.set()

    def _record_drop(self) -> None:
        with self._lock:
            self._drops += 1

    def _record_completed_stream(self) -> None:
        with self._lock:
            self._completed_streams += 1

    def _record_error(self, exc: BaseException) -> None:
        with self._lock:
            self._errors.append(exc)


def iter_sse_data(raw: bytes) -> Iterator[str]:
    """Yield the ``data:`` payloads of a de-chunked SSE body (helper for wire-level tests)."""
    for event in raw.decode().split("\n\n"):
        for line in event.splitlines():
            if line.startswith("data: "):
                yield line[len("data: ") :]
