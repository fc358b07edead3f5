"""Conversations the provider holds for a client that sends only the new turn.

Two APIs keep a conversation on the server side, and their SDKs use it by default:

* the Anthropic Messages API's threads: ``thread: {"type": "create"}`` asks the
  server to hold the conversation under the response's id, and
  ``thread: {"type": "continue", "previous_message_id": ID}`` resumes it, the
  request carrying only the new messages (anthropic's tool runner does this);
* the OpenAI Responses API's ``previous_response_id``: the input of that response
  and its output come before the new ``input`` items (``store`` holds a response
  unless it is ``false``; the OpenAI Agents SDK chains turns this way).

:class:`HeldConversations` expands such a request into the whole conversation
before anything else reads it, so the scripted model, the pairing check and the
recorded trace see what the server would have seen; and it holds each answered
response's conversation (the request's and the answer) under the response's id.
The conversations live in the world: a crashed agent that resumes a thread finds
it as the real server would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from fakes._input_items import stored_items


class HeldConversations:
    """Whole conversations by response id, for the two dialects that continue them."""

    def __init__(self) -> None:
        self._held: dict[str, list[Any]] = {}
        #: The stored Responses objects by id, as ``GET /v1/responses/{id}`` returns them.
        self.responses: dict[str, bytes] = {}
        # What each stored response's input items are made from, kept even once the
        # response is deleted (a follow-up made before still lists them).
        self._sources: dict[str, _ItemSource] = {}
        #: Each stored response's input items as the API lists them (ids, item shape):
        #: the continued conversation's items, then the request's own; built when asked,
        #: since a client that resends its whole conversation each turn would otherwise
        #: keep the square of it.
        self.input_items = InputItems(self._sources)

    def expand(self, dialect: str, body: Mapping[str, Any]
               ) -> tuple[Mapping[str, Any], str | None]:
        """``body`` with the held conversation it continues put before its own messages.

        A body that continues nothing comes back as it is; one that continues an id
        the provider does not hold comes back with the API's words for that error.
        """
        previous = _continued_id(dialect, body)
        if previous is None:
            return body, None
        held = self._held.get(previous)
        if held is None:
            return body, _unknown_message(dialect, previous)
        if dialect == "anthropic":
            return {**body, "messages": [*held, *_list(body.get("messages"))]}, None
        return {**body, "input": [*held, *_input_items(body.get("input"))]}, None

    @staticmethod
    def holds(dialect: str, body: Mapping[str, Any]) -> bool:
        """Whether the server keeps this request's conversation (it asked, or by default)."""
        return _holds(dialect, body)

    def remember(self, dialect: str, body: Mapping[str, Any], response_id: str,
                 rendered: bytes) -> None:
        """Hold ``body``'s conversation with the answer (``rendered``, its JSON) under its id."""
        answer = json.loads(rendered)
        if dialect == "anthropic":
            turn = {"role": "assistant", "content": answer.get("content", [])}
            self._held[response_id] = [*_list(body.get("messages")), turn]
        else:
            self._held[response_id] = [*_input_items(body.get("input")),
                                       *_list(answer.get("output"))]
            self.responses[response_id] = _stored_response(body, answer)
            self._list(body, response_id, _list(answer.get("output")))

    def forget(self, response_id: str) -> None:
        """Drop a stored response (``DELETE /v1/responses/{id}``): it can be continued no more."""
        self._held.pop(response_id, None)
        self.responses.pop(response_id, None)
        self.input_items.deleted.add(response_id)

    def _list(self, body: Mapping[str, Any], response_id: str, output: list[Any]) -> None:
        """Keep what the input items of ``body`` (expanded: the continued items come
        first) are made from."""
        previous = body.get("previous_response_id")
        self._sources[response_id] = _ItemSource(
            previous if isinstance(previous, str) and previous in self._sources else None,
            _input_items(body.get("input")), output)


@dataclass(frozen=True)
class _ItemSource:
    """A stored response's request, as its input items are built from it."""

    previous: str | None  # the stored response it continued
    items: list[Any]  # the request's input, expanded: the continued items first
    output: list[Any]


class InputItems(Mapping[str, list[Any]]):
    """The stored responses' input items by id, each list built when it is asked for."""

    def __init__(self, sources: dict[str, _ItemSource]) -> None:
        self._sources = sources
        self.deleted: set[str] = set()

    def __getitem__(self, response_id: str) -> list[Any]:
        if response_id in self.deleted:
            raise KeyError(response_id)
        chain = [response_id]  # back to the first response: a long chain is no recursion
        while (previous := self._sources[chain[-1]].previous) is not None:
            chain.append(previous)
        listed: list[Any] = []
        for number, found in enumerate(reversed(chain)):
            source = self._sources[found]
            if number:
                listed.extend(self._sources[chain[-number]].output)
            start = len(listed)
            listed.extend(stored_items(source.items[start:], found, start))
        return listed

    def __iter__(self) -> Iterator[str]:
        return (found for found in self._sources if found not in self.deleted)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _stored_response(body: Mapping[str, Any], answer: Mapping[str, Any]) -> bytes:
    """The response object as stored: the answer with what the request set on it."""
    instructions = body.get("instructions")
    previous = body.get("previous_response_id")
    stored = {**answer, "instructions": instructions if isinstance(instructions, str) else None,
              "previous_response_id": previous if isinstance(previous, str) else None,
              "store": True}
    return json.dumps(stored, separators=(",", ":"), ensure_ascii=False).encode()


def _holds(dialect: str, body: Mapping[str, Any]) -> bool:
    if dialect == "anthropic":
        thread = body.get("thread")
        return isinstance(thread, Mapping) and thread.get("type") in ("create", "continue")
    if dialect == "openai-responses":
        return body.get("store") is not False
    return False


def _continued_id(dialect: str, body: Mapping[str, Any]) -> str | None:
    if dialect == "anthropic":
        thread = body.get("thread")
        if isinstance(thread, Mapping) and thread.get("type") == "continue":
            previous = thread.get("previous_message_id")
            return previous if isinstance(previous, str) else ""
        return None
    if dialect == "openai-responses":
        previous = body.get("previous_response_id")
        return previous if isinstance(previous, str) and previous else None
    return None


def _unknown_message(dialect: str, previous: str) -> str:
    if dialect == "anthropic":
        return f"thread: no message with id '{previous}' to continue"
    return f"Previous response with id '{previous}' not found."


def _list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _input_items(value: object) -> list[Any]:
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return _list(value)
