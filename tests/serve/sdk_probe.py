"""What an official SDK sees of one streamed answer: run in-process by the tests, or alone.

As a script it imports nothing of the harness: it is an agent's process, talking to
``harness serve`` over a socket::

    python sdk_probe.py openai sync http://127.0.0.1:PORT/v1 0.3
    python sdk_probe.py every http://127.0.0.1:PORT 0.3 < plan.json

prints one JSON line: the text, the tool calls, the stop reason and the error
class (``APITimeoutError``, ``RateLimitError`` …) with its status and
``retry-after``. ``every`` reads a plan ``{NAME: [DIALECT, BASE_URL]}``, switches the
server to each scenario NAME in turn and probes it sync then async, each on a fresh
world; it prints ``{NAME: {"sync": …, "async": …}}``. One process for many scenarios,
because starting Python and importing both SDKs costs far more than a probe.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.request
from typing import Any

import anthropic
import openai

MESSAGES = [{"role": "user", "content": "check and mail"}]


def client(dialect: str, mode: str, base_url: str, timeout: float,
           http_client: Any = None) -> Any:
    """The SDK's client: no retries of its own, so each fault is seen as it comes."""
    kinds = {("openai", "sync"): openai.OpenAI, ("openai", "async"): openai.AsyncOpenAI,
             ("anthropic", "sync"): anthropic.Anthropic,
             ("anthropic", "async"): anthropic.AsyncAnthropic}
    extra = {} if http_client is None else {"http_client": http_client}
    return kinds[dialect, mode](api_key="k", base_url=base_url, max_retries=0,
                                timeout=timeout, **extra)


def _error(seen: dict[str, Any], error: Exception) -> dict[str, Any]:
    response = getattr(error, "response", None)
    seen["error"] = type(error).__name__
    seen["status"] = getattr(error, "status_code", None)
    seen["retry_after"] = response.headers.get("retry-after") if response is not None else None
    return seen


def _openai_chunk(seen: dict[str, Any], chunk: Any) -> None:
    for choice in chunk.choices:
        seen["text"] += choice.delta.content or ""
        seen["stop"] = choice.finish_reason or seen["stop"]
        for call in choice.delta.tool_calls or []:
            if call.function is not None:
                seen["calls"].append([call.index, call.function.name, call.function.arguments])


def _anthropic_event(seen: dict[str, Any], event: Any) -> None:
    if event.type == "content_block_delta" and event.delta.type == "text_delta":
        seen["text"] += event.delta.text
    elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
        seen["calls"].append([event.index, None, event.delta.partial_json])
    elif event.type == "content_block_start" and event.content_block.type == "tool_use":
        seen["calls"].append([event.index, event.content_block.name, ""])
    elif event.type == "message_delta":
        seen["stop"] = event.delta.stop_reason


def _request(dialect: str) -> dict[str, Any]:
    if dialect == "openai":
        return {"model": "fake-model", "messages": MESSAGES, "stream": True,
                "stream_options": {"include_usage": True}}
    return {"model": "fake-model", "max_tokens": 1024, "messages": MESSAGES, "stream": True}


def _create(dialect: str, sdk: Any) -> Any:
    api = sdk.chat.completions if dialect == "openai" else sdk.messages
    return api.create(**_request(dialect))


def _fold(dialect: str) -> Any:
    return _openai_chunk if dialect == "openai" else _anthropic_event


def see_sync(dialect: str, sdk: Any) -> dict[str, Any]:
    seen: dict[str, Any] = {"text": "", "calls": [], "stop": None, "error": None}
    try:
        for item in _create(dialect, sdk):
            _fold(dialect)(seen, item)
    except Exception as error:  # an SDK may let a transport error out of a stream as is
        return _error(seen, error)
    return seen


async def see_async(dialect: str, sdk: Any) -> dict[str, Any]:
    seen: dict[str, Any] = {"text": "", "calls": [], "stop": None, "error": None}
    try:
        async for item in await _create(dialect, sdk):
            _fold(dialect)(seen, item)
    except Exception as error:  # an SDK may let a transport error out of a stream as is
        return _error(seen, error)
    finally:
        await sdk.close()
    return seen


def see(dialect: str, mode: str, base_url: str, timeout: float) -> dict[str, Any]:
    sdk = client(dialect, mode, base_url, timeout)
    return see_sync(dialect, sdk) if mode == "sync" else asyncio.run(see_async(dialect, sdk))


def reset(harness_url: str, scenario: str) -> None:
    """A fresh world of ``scenario``: POST /_harness/reset (its fault strikes again).

    The control endpoint's token comes in the environment, as to an ``--exec`` agent.
    """
    body = json.dumps({"scenario": scenario}).encode()
    request = urllib.request.Request(f"{harness_url}/_harness/reset", data=body,
                                     method="POST", headers={
                                         "Authorization": f"Bearer {os.environ['HARNESS_TOKEN']}"})
    urllib.request.urlopen(request, timeout=10).close()


def every(harness_url: str, timeout: float,
          plan: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Each planned scenario, sync then async, each probe on a fresh world of its own."""
    seen: dict[str, dict[str, Any]] = {}
    for name, (dialect, base_url) in plan.items():
        seen[name] = {}
        for mode in ("sync", "async"):
            reset(harness_url, name)
            seen[name][mode] = see(dialect, mode, base_url, timeout)
    return seen


def main(argv: list[str]) -> None:
    if argv[0] == "every":
        print(json.dumps(every(argv[1], float(argv[2]), json.load(sys.stdin))))
        return
    dialect, mode, base_url, timeout = argv[0], argv[1], argv[2], float(argv[3])
    print(json.dumps(see(dialect, mode, base_url, timeout)))


if __name__ == "__main__":
    main(sys.argv[1:])
