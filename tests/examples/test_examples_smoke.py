"""The example agents really work end to end, run as their users run them.

Each agent is called as ``main(prompt)`` with nothing of the harness inside: the
test only points the SDK at a fake provider through the environment
(``OPENAI_BASE_URL`` ...) and swaps the default transport of ``httpx2`` (which the
official SDKs are built on) for the provider's in-process transport. Any other
host, any ``httpx`` request and any socket connection fail, so nothing leaves the
process. The tool functions are monkeypatched; the scripted model asks for one
``send_mail`` call, then answers in text.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai
import pytest

from fakes import (
    ConnectionReset,
    FakeHttpx2Transport,
    FakeProvider,
    Fault,
    ProviderRequest,
    ScriptedResponse,
    ScriptedUsage,
    Text,
    ToolUse,
    TruncatedToolArguments,
)

PROMPT = "Mail ops@example.com that deploy 42 is approved."
ANSWER = "Mailed ops@example.com."
MAIL = {"to": "ops@example.com", "body": "deploy 42 approved"}


def reply(request: ProviderRequest) -> ScriptedResponse:
    """Turn 1 asks for the mail; every later turn answers in text."""
    if request.turn == 1:
        return ScriptedResponse((Text("Sending it."), ToolUse("call_1", "send_mail", MAIL)),
                                "tool_calls", ScriptedUsage(40, 12))
    return ScriptedResponse((Text(ANSWER),), "stop", ScriptedUsage(60, 4))


class ProcessDied(BaseException):
    """The agent's process is gone: nothing after this line of the agent runs."""


class World:
    """The fake provider an agent talks to and the mails its tool was asked to send."""

    def __init__(self, provider: FakeProvider) -> None:
        self.provider = provider
        self.mails: list[dict[str, Any]] = []
        self.crash_after_send = False

    def send_mail(self, to: str, body: str) -> dict[str, Any]:
        self.mails.append({"to": to, "body": body})
        if self.crash_after_send:
            self.crash_after_send = False
            raise ProcessDied("killed right after the mail went out")
        return {"id": f"msg_{len(self.mails)}", "status": "queued"}

    def answered_turns(self) -> list[int]:
        return [request.turn for request in self.provider.requests]

    def body(self, number: int) -> dict[str, Any]:
        """The JSON body of the ``number``-th request the provider saw (from 0)."""
        body = self.provider.requests[number].json
        assert body is not None
        return dict(body)


def _refuse(*args: object, **kwargs: object) -> Any:
    raise OSError(f"no network in tests: {args[1:]!r}")


async def _refuse_async(*args: object, **kwargs: object) -> Any:
    _refuse(*args)


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., World]:
    """Route the SDKs to a fake provider, in an empty working folder, with no network."""
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY",
                 "ANTHROPIC_AUTH_TOKEN", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(socket.socket, "connect", _refuse)
    monkeypatch.setattr(socket, "getaddrinfo", _refuse)
    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", _refuse)
    monkeypatch.setattr(httpx.AsyncHTTPTransport, "handle_async_request", _refuse_async)
    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", _refuse)

    def build(dialect: str, faults: dict[tuple[int, int], tuple[Fault, ...]] | None = None,
              tool_modules: tuple[str, ...] = ()) -> World:
        provider = FakeProvider(dialect, reply, faults)  # type: ignore[arg-type]
        fake = FakeHttpx2Transport(provider)

        async def handle(self: httpx2.AsyncHTTPTransport,
                         request: httpx2.Request) -> httpx2.Response:
            return await fake.handle_async_request(request)

        # Every httpx2 client built with its default transport now reaches the fake.
        monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", handle)
        prefix = dialect.upper()
        monkeypatch.setenv(f"{prefix}_BASE_URL", provider.base_url)
        monkeypatch.setenv(f"{prefix}_API_KEY", "sk-test")
        built = World(provider)
        for module in tool_modules:
            monkeypatch.setattr(f"{module}.send_mail", built.send_mail)
        return built

    return build


def run(main: Callable[[str], Any]) -> str:
    """Call ``main`` as a user's program would: ``asyncio.run`` for a coroutine."""
    result = main(PROMPT)
    if inspect.iscoroutine(result):
        result = asyncio.run(result)
    assert isinstance(result, str)
    return result


# Faults for the first answer: a reset after the 200 headers, tool arguments cut at the
# output limit.
RESET_MID_STREAM: dict[tuple[int, int], tuple[Fault, ...]] = {
    (1, 1): (ConnectionReset(after_events=3),)}
CUT_ARGUMENTS: dict[tuple[int, int], tuple[Fault, ...]] = {
    (1, 1): (TruncatedToolArguments(fraction=0.5),)}


def test_openai_agent_sends_once_and_answers(world: Callable[..., World]) -> None:
    from examples.openai_agent import main

    w = world("openai", tool_modules=("examples.openai_agent.tools",))
    assert run(main) == ANSWER
    assert w.mails == [MAIL]
    assert w.answered_turns() == [1, 2]
    request = w.body(1)
    assert request["stream"] is True
    assert request["stream_options"] == {"include_usage": True}
    assert [m["role"] for m in request["messages"]] == ["system", "user", "assistant", "tool"]
    state = json.loads(Path("state.json").read_text())
    assert state["answer"] == ANSWER


def test_openai_agent_resumes_from_its_state_file(world: Callable[..., World]) -> None:
    from examples.openai_agent import main

    w = world("openai", tool_modules=("examples.openai_agent.tools",))
    assert run(main) == ANSWER
    # A second start finds the finished run in state.json and asks nobody anything.
    assert run(main) == ANSWER
    assert w.mails == [MAIL]
    assert w.answered_turns() == [1, 2]


def test_foreign_hosts_are_refused(world: Callable[..., World]) -> None:
    world("openai")

    async def fetch(url: str) -> None:
        async with httpx2.AsyncClient() as client:
            await client.get(url)

    with pytest.raises(httpx2.ConnectError, match="no fake host"):
        asyncio.run(fetch("https://api.openai.com/v1/models"))
    with pytest.raises(OSError, match="no network"):
        httpx.get("https://example.com/")
    with pytest.raises(OSError, match="no network"):
        socket.create_connection(("example.com", 443))


# Its bugs are real: a crash after the send, a reset mid-stream, cut tool arguments.


def test_a_crash_after_the_send_makes_the_naive_agent_send_again(
        world: Callable[..., World]) -> None:
    from examples.openai_agent import main

    w = world("openai", tool_modules=("examples.openai_agent.tools",))
    w.crash_after_send = True
    with pytest.raises(ProcessDied):
        run(main)
    assert run(main) == ANSWER  # restarted: state.json says the call is not done
    assert w.mails == [MAIL, MAIL]


def test_a_reset_after_the_headers_fails_the_naive_agent(world: Callable[..., World]) -> None:
    from examples.openai_agent import main

    w = world("openai", RESET_MID_STREAM, tool_modules=("examples.openai_agent.tools",))
    with pytest.raises(openai.APIConnectionError):
        run(main)
    assert w.answered_turns() == [1]
    assert w.mails == []


def test_cut_tool_arguments_crash_the_naive_agent(world: Callable[..., World]) -> None:
    from examples.openai_agent import main

    w = world("openai", CUT_ARGUMENTS, tool_modules=("examples.openai_agent.tools",))
    with pytest.raises(json.JSONDecodeError):
        run(main)
    assert w.mails == []


# The careful agent does the same task and has none of those bugs.


def test_careful_openai_agent_sends_once_and_answers(world: Callable[..., World]) -> None:
    from examples.openai_careful import main

    w = world("openai", tool_modules=("examples.openai_agent.tools",))
    assert run(main) == ANSWER
    assert w.mails == [MAIL]
    assert w.answered_turns() == [1, 2]
    assert sorted(p.name for p in Path.cwd().iterdir()) == ["state.json"]


def test_after_a_crash_after_the_send_the_careful_agent_asks_the_model(
        world: Callable[..., World]) -> None:
    from examples.openai_careful import main

    w = world("openai", tool_modules=("examples.openai_agent.tools",))
    w.crash_after_send = True
    with pytest.raises(ProcessDied):
        run(main)
    assert run(main) == ANSWER
    assert w.mails == [MAIL]
    reply = w.body(1)["messages"][-1]
    assert reply["role"] == "tool"
    assert "may or may not have happened" in reply["content"]


def test_the_careful_agent_retries_a_reset_after_the_headers(
        world: Callable[..., World], monkeypatch: pytest.MonkeyPatch) -> None:
    from examples.openai_careful import main

    naps: list[float] = []
    sleep = asyncio.sleep

    async def nap(seconds: float) -> None:
        naps.append(seconds)
        await sleep(0)

    monkeypatch.setattr(asyncio, "sleep", nap)
    w = world("openai", RESET_MID_STREAM, tool_modules=("examples.openai_agent.tools",))
    assert run(main) == ANSWER
    assert w.answered_turns() == [1, 1, 2]
    assert w.mails == [MAIL]
    assert [nap for nap in naps if nap > 0] == naps[-1:]
    assert 1.0 <= naps[-1] <= 2.0


def test_the_careful_agent_runs_nothing_from_cut_arguments(world: Callable[..., World]) -> None:
    from examples.openai_careful import main

    w = world("openai", CUT_ARGUMENTS, tool_modules=("examples.openai_agent.tools",))
    assert run(main) == ANSWER
    assert w.mails == []
    request = w.body(1)
    assert "output limit" in request["messages"][-1]["content"]


def test_anthropic_agent_sends_once_and_answers(world: Callable[..., World]) -> None:
    from examples.anthropic_agent import main

    w = world("anthropic", tool_modules=("examples.anthropic_agent.tools",))
    assert run(main) == ANSWER
    assert w.mails == [MAIL]
    assert w.answered_turns() == [1, 2]
    request = w.body(1)
    assert request["stream"] is True
    assert [m["role"] for m in request["messages"]] == ["user", "assistant", "user"]


def test_the_anthropic_agent_calls_a_tool_with_cut_arguments(
        world: Callable[..., World]) -> None:
    from examples.anthropic_agent import main

    w = world("anthropic", CUT_ARGUMENTS, tool_modules=("examples.anthropic_agent.tools",))
    # The SDK hands over what it could parse of the cut JSON: the body is missing.
    with pytest.raises(TypeError, match="body"):
        run(main)
    assert w.mails == []


def test_pydantic_ai_agent_sends_once_and_answers(world: Callable[..., World]) -> None:
    w = world("openai", tool_modules=("examples.pydantic_ai_agent.tools",))
    # The agent builds its model client at import, from the environment.
    from examples.pydantic_ai_agent import main

    assert run(main) == ANSWER
    assert w.mails == [MAIL]
    assert w.answered_turns() == [1, 2]
    request = w.body(0)
    assert request["stream"] is True
