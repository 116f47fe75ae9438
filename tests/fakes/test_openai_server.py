"""Tests for :mod:`tests.fakes.openai_server`, mostly driven through real LiteLLM.

LiteLLM is imported once per module (the import costs seconds) by the ``litellm`` fixture,
with offline mode and the local cost map so nothing reaches the network. A few wire-level
tests use :mod:`http.client` directly to pin the exact SSE format.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import time
from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Reply, ToolCallSpec, Usage, iter_sse_data

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    """LiteLLM, imported once for the module, configured for offline use."""
    os.environ["LITELLM_OFFLINE_MODE"] = "true"
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    import litellm as litellm_module

    litellm_module.suppress_debug_info = True
    return litellm_module


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake
        assert fake.errors == []


async def _acompletion(
    litellm: ModuleType, server: FakeOpenAIServer, *, stream: bool = True, **kwargs: Any
) -> Any:
    extra: dict[str, Any] = {"stream_options": {"include_usage": True}} if stream else {}
    return await litellm.acompletion(
        model="openai/fake-model",
        api_base=server.url,
        api_key="test",
        messages=MESSAGES,
        stream=stream,
        num_retries=0,
        **extra,
        **kwargs,
    )


async def _chunks(response: AsyncIterator[Any]) -> list[Any]:
    async with asyncio.timeout(10):
        return [chunk async for chunk in response]


def _raw_post(
    server: FakeOpenAIServer, body: dict[str, Any]
) -> tuple[http.client.HTTPResponse, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request(
            "POST",
            "/v1/chat/completions",
            body=json.dumps(body),
            headers={"Content-Type": "application/json"},
        )
        response = conn.getresponse()
        return response, response.read()
    finally:
        conn.close()


# -- streaming through LiteLLM -------------------------------------------------------------


async def test_streamed_text_arrives_in_pieces(
    litellm: ModuleType, server: FakeOpenAIServer
) -> None:
    server.enqueue(Reply(text=["Hel", "lo", " world"]))

    chunks = await _chunks(await _acompletion(litellm, server))

    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert pieces == ["Hel", "lo", " world"]
    finish = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finish == ["stop"]
    assert server.completed_streams == 1
    (request,) = server.requests
    assert request["model"] == "fake-model"
    assert request["stream"] is True
    assert request["messages"] == MESSAGES
    assert server.request_headers[0]["authorization"] == "Bearer test"


async def test_interleaved_tool_call_fragments_reassemble_by_index(
    litellm: ModuleType, server: FakeOpenAIServer
) -> None:
    server.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec(
                    id="call_1", name="read", arguments_fragments=['{"pa', 'th": "a.py"}']
                ),
                ToolCallSpec(
                    id="call_2", name="bash", arguments_fragments=['{"com', 'mand": "ls"}']
                ),
            ],
            interleave=True,
        )
    )

    chunks = await _chunks(await _acompletion(litellm, server))

    calls: dict[int, dict[str, str]] = {}
    order: list[int] = []
    for chunk in chunks:
        if not chunk.choices:
            continue
        for delta_call in chunk.choices[0].delta.tool_calls or []:
            order.append(delta_call.index)
            slot = calls.setdefault(delta_call.index, {"id": "", "name": "", "arguments": ""})
            if delta_call.id:
                slot["id"] = delta_call.id
            if delta_call.function.name:
                slot["name"] = delta_call.function.name
            slot["arguments"] += delta_call.function.arguments or ""
    assert order == [0, 1, 0, 1, 0, 1]  # really interleaved on the wire
    assert calls == {
        0: {"id": "call_1", "name": "read", "arguments": '{"path": "a.py"}'},
        1: {"id": "call_2", "name": "bash", "arguments": '{"command": "ls"}'},
    }
    assert json.loads(calls[0]["arguments"]) == {"path": "a.py"}
    finish = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finish == ["tool_calls"]


async def test_reasoning_content_deltas(litellm: ModuleType, server: FakeOpenAIServer) -> None:
    server.enqueue(Reply(reasoning=["Let me ", "think."], text=["Done."]))

    chunks = await _chunks(await _acompletion(litellm, server))

    reasoning = [
        getattr(c.choices[0].delta, "reasoning_content", None)
        for c in chunks
        if c.choices and getattr(c.choices[0].delta, "reasoning_content", None)
    ]
    assert reasoning == ["Let me ", "think."]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Done."


async def test_usage_chunk_arrives_with_include_usage(
    litellm: ModuleType, server: FakeOpenAIServer
) -> None:
    server.enqueue(Reply(text=["ok"], usage=Usage(prompt_tokens=12, completion_tokens=3)))

    chunks = await _chunks(await _acompletion(litellm, server))

    usage_chunks = [c for c in chunks if getattr(c, "usage", None) is not None]
    assert len(usage_chunks) == 1
    assert usage_chunks[0].choices == []
    assert usage_chunks[0] is chunks[-1]
    usage = usage_chunks[0].usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (12, 3, 15)
    assert server.requests[0]["stream_options"] == {"include_usage": True}


# -- errors through LiteLLM ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "exception_name"),
    [
        (429, "RateLimitError"),
        (500, "InternalServerError"),
        (503, "ServiceUnavailableError"),
        (401, "AuthenticationError"),
        (404, "NotFoundError"),
        (400, "BadRequestError"),
    ],
)
async def test_http_errors_map_to_litellm_exceptions_without_retry(
    litellm: ModuleType, server: FakeOpenAIServer, status: int, exception_name: str
) -> None:
    server.enqueue(Reply.error(status, f"scripted {status}", retry_after=1))

    with pytest.raises(getattr(litellm, exception_name)) as excinfo:
        async with asyncio.timeout(10):
            await _acompletion(litellm, server)

    assert f"scripted {status}" in str(excinfo.value)
    assert len(server.requests) == 1  # num_retries=0: the SDK must not have retried


async def test_context_window_error(litellm: ModuleType, server: FakeOpenAIServer) -> None:
    server.enqueue(Reply.context_window_exceeded(8192))

    with pytest.raises(litellm.ContextWindowExceededError):
        await _acompletion(litellm, server)

    assert len(server.requests) == 1


async def test_mid_stream_drop_raises_while_iterating(
    litellm: ModuleType, server: FakeOpenAIServer
) -> None:
    server.enqueue(Reply(text=["a", "b", "c", "d"], drop_after=2))

    response = await _acompletion(litellm, server)
    received: list[str] = []
    with pytest.raises(Exception) as excinfo:  # LiteLLM wraps the transport error
        async with asyncio.timeout(10):
            async for chunk in response:
                if chunk.choices and chunk.choices[0].delta.content:
                    received.append(chunk.choices[0].delta.content)

    assert not isinstance(excinfo.value, TimeoutError)
    assert received == ["a"]  # role chunk + "a" were sent, then the socket was cut
    assert server.drops == 1
    assert server.completed_streams == 0


async def test_cancelling_a_slow_stream_disconnects_promptly(
    litellm: ModuleType, server: FakeOpenAIServer
) -> None:
    server.enqueue(Reply(text=["x"] * 200, delay_between_chunks=0.05))
    first_chunk = asyncio.Event()

    async def consume() -> None:
        response = await _acompletion(litellm, server)
        async for _chunk in response:
            first_chunk.set()

    task = asyncio.create_task(consume())
    async with asyncio.timeout(5):
        await first_chunk.wait()
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 0.5

    assert await asyncio.to_thread(server.wait_for_disconnect, 2.0)
    assert time.monotonic() - started < 1.0
    assert server.client_disconnects == 1
    assert server.connections_closed == 1
    assert server.completed_streams == 0


async def test_non_streaming_reply(litellm: ModuleType, server: FakeOpenAIServer) -> None:
    server.enqueue(
        Reply(
            text=["Hel", "lo"],
            tool_calls=[ToolCallSpec(id="call_9", name="read", arguments_fragments=["{}"])],
            finish_reason="tool_calls",
            usage=Usage(prompt_tokens=4, completion_tokens=2),
        )
    )

    response = await _acompletion(litellm, server, stream=False)

    message = response.choices[0].message
    assert message.content == "Hello"
    assert message.tool_calls[0].id == "call_9"
    assert message.tool_calls[0].function.name == "read"
    assert message.tool_calls[0].function.arguments == "{}"
    assert response.choices[0].finish_reason == "tool_calls"
    assert response.usage.prompt_tokens == 4
    assert server.requests[0].get("stream") in (None, False)


async def test_several_sequential_requests_consume_replies_fifo(
    litellm: ModuleType, server: FakeOpenAIServer
) -> None:
    server.enqueue(Reply(text=["one"]), Reply(text=["two"]), Reply(text=["three"]))

    texts = []
    for _ in range(3):
        chunks = await _chunks(await _acompletion(litellm, server))
        texts.append("".join(c.choices[0].delta.content or "" for c in chunks if c.choices))

    assert texts == ["one", "two", "three"]
    assert server.pending_replies == 0
    assert len(server.requests) == 3


# -- wire level ----------------------------------------------------------------------------


def test_sse_wire_format(server: FakeOpenAIServer) -> None:
    server.enqueue(Reply(text=["Hi"], usage=Usage(prompt_tokens=1, completion_tokens=1)))

    response, raw = _raw_post(
        server,
        {
            "model": "m",
            "messages": MESSAGES,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )

    assert response.status == 200
    assert response.getheader("Content-Type") == "text/event-stream"
    assert response.getheader("Transfer-Encoding") == "chunked"
    assert response.getheader("Connection") == "close"
    payloads = list(iter_sse_data(raw))
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    assert [c["object"] for c in chunks] == ["chat.completion.chunk"] * 4
    assert all(c["model"] == "m" and c["id"] == chunks[0]["id"] for c in chunks)
    assert chunks[0]["choices"] == [
        {
            "index": 0,
            "delta": {"role": "assistant", "content": ""},
            "logprobs": None,
            "finish_reason": None,
        }
    ]
    assert chunks[1]["choices"][0]["delta"] == {"content": "Hi"}
    assert chunks[2]["choices"][0]["delta"] == {}
    assert chunks[2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[3]["choices"] == []
    assert chunks[3]["usage"] == {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}


def test_no_usage_chunk_without_include_usage_and_reasoning_field(
    server: FakeOpenAIServer,
) -> None:
    server.enqueue(
        Reply(reasoning=["hm"], reasoning_field="reasoning", usage=Usage(prompt_tokens=1))
    )

    _, raw = _raw_post(server, {"model": "m", "messages": MESSAGES, "stream": True})

    chunks = [json.loads(p) for p in iter_sse_data(raw) if p != "[DONE]"]
    assert all(c["choices"] for c in chunks)
    assert chunks[1]["choices"][0]["delta"] == {"reasoning": "hm"}


def test_sequential_tool_calls_and_default_finish_reason(server: FakeOpenAIServer) -> None:
    server.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec(id="a", name="x", arguments_fragments=["1", "2"]),
                ToolCallSpec(id="b", name="y", arguments_fragments=["3"]),
            ]
        )
    )

    _, raw = _raw_post(server, {"model": "m", "messages": MESSAGES, "stream": True})

    chunks = [json.loads(p) for p in iter_sse_data(raw) if p != "[DONE]"]
    calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks[1:-1]]
    assert calls == [
        {"index": 0, "id": "a", "type": "function", "function": {"name": "x", "arguments": ""}},
        {"index": 0, "function": {"arguments": "1"}},
        {"index": 0, "function": {"arguments": "2"}},
        {"index": 1, "id": "b", "type": "function", "function": {"name": "y", "arguments": ""}},
        {"index": 1, "function": {"arguments": "3"}},
    ]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_error_body_and_retry_after_header(server: FakeOpenAIServer) -> None:
    server.enqueue(Reply(status=429, retry_after=7, error_message="slow down"))

    response, raw = _raw_post(server, {"model": "m", "messages": MESSAGES, "stream": True})

    assert response.status == 429
    assert response.getheader("Retry-After") == "7"
    assert json.loads(raw) == {
        "error": {
            "message": "slow down",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }


@pytest.mark.parametrize("stream", [True, False])
def test_drop_cuts_the_body_short(server: FakeOpenAIServer, stream: bool) -> None:
    server.enqueue(Reply(text=["a", "b"], drop_after=99))  # past the last chunk: no [DONE]

    with pytest.raises(http.client.IncompleteRead):
        _raw_post(server, {"model": "m", "messages": MESSAGES, "stream": stream})

    assert server.drops == 1
    assert server.completed_streams == 0


def test_empty_script_answers_500_loudly(server: FakeOpenAIServer) -> None:
    response, raw = _raw_post(server, {"model": "m", "messages": MESSAGES})

    assert response.status == 500
    assert "ran out of replies" in json.loads(raw)["error"]["message"]
    assert len(server.requests) == 1


def test_models_endpoint(server: FakeOpenAIServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("GET", "/v1/models")
        response = conn.getresponse()
        body = json.loads(response.read())
    finally:
        conn.close()

    assert response.status == 200
    assert [m["id"] for m in body["data"]] == ["fake-model"]


def test_delay_before_headers_and_loopback_url(server: FakeOpenAIServer) -> None:
    assert server.url == f"http://127.0.0.1:{server.port}/v1"
    server.enqueue(Reply(text=["x"], delay_before_headers=0.2))

    started = time.monotonic()
    response, _ = _raw_post(server, {"model": "m", "messages": MESSAGES, "stream": True})

    assert response.status == 200
    assert time.monotonic() - started >= 0.2


def test_stop_aborts_an_in_flight_slow_stream() -> None:
    fake = FakeOpenAIServer([Reply(text=["x"] * 1000, delay_between_chunks=0.05)])
    fake.start()
    conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
    try:
        conn.request("POST", "/v1/chat/completions", body=json.dumps({"stream": True}))
        response = conn.getresponse()
        assert response.status == 200
        started = time.monotonic()
        fake.stop()
        assert time.monotonic() - started < 1.0
        with pytest.raises(http.client.IncompleteRead):
            response.read()
    finally:
        conn.close()
    assert fake.client_disconnects == 0
    assert fake.errors == []
