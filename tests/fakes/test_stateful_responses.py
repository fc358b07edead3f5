"""The Responses API's stored state, as the official openai SDK reaches it.

``previous_response_id`` continues the stored conversation (the follow-up is turn 2,
not turn 1 again), ``store: false`` responses cannot be continued or retrieved, and
``GET /v1/responses/{id}`` returns the stored response object and
``GET /v1/responses/{id}/input_items`` the items it was generated from. Each is checked
through the harness's in-process interception (an unchanged agent's SDK call) and,
in the system tier, over ``harness serve``'s real port.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import openai
import pytest

from harness.intercept import PROVIDER_ENVIRONMENT, intercepted_network, virtual_time
from harness.intercept._time import threads_the_clock_sees, virtual_event_loops
from harness.runner import World
from harness.scenario import Scenario, load_scenario

SCENARIO = """
name: responses-two-turns
dialect: openai-responses
seed: 5
tools: {mail: {kind: send}}
model:
  - turn: 1
    calls: [{tool: mail, args: {to: a@b}}]
  - turn: 2
    text: "Sent."
  - turn: 3
    text: "Anything else?"
expect: {stop_state: complete}
"""

Connect = Callable[[Scenario], Any]


def two_turns(folder: Path) -> Scenario:
    path = folder / "two.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return load_scenario(path)


@contextmanager
def in_process_world(loaded: Scenario) -> Iterator[World]:
    """The scenario's world, as an unchanged agent inside a case meets it: its network
    intercepted, on virtual time."""
    world = World(loaded, seed=loaded.seed)
    with ExitStack() as stack:
        stack.enter_context(virtual_time(world.clock))
        stack.enter_context(virtual_event_loops(world.clock))
        stack.enter_context(threads_the_clock_sees())
        stack.enter_context(intercepted_network(world.route(1)))
        yield world


@contextmanager
def in_process(loaded: Scenario) -> Iterator[tuple[openai.OpenAI, World]]:
    """The SDK as an unchanged agent inside a case uses it: intercepted, on virtual time."""
    with in_process_world(loaded) as world, ExitStack() as stack:
        client = stack.enter_context(openai.OpenAI(
            api_key="k", base_url=PROVIDER_ENVIRONMENT["OPENAI_BASE_URL"], max_retries=0))
        yield client, world


def follow_up(client: openai.OpenAI, first: Any, **extra: Any) -> Any:
    call = first.output[0]
    return client.responses.create(
        model="gpt-4.1", previous_response_id=first.id, **extra,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sent"}])


def check_continues_and_retrieves(client: openai.OpenAI) -> None:
    """Create, continue twice and retrieve."""
    first = client.responses.create(model="gpt-4.1", input="mail a@b", instructions="brief")
    assert first.output[0].type == "function_call"
    second = follow_up(client, first)
    # Turn 2 of the script: the held call and its output came before the new input.
    assert second.output_text == "Sent."
    third = client.responses.create(model="gpt-4.1", previous_response_id=second.id,
                                    input="and?")
    assert third.output_text == "Anything else?"  # a chain of three: turn 3

    stored = client.responses.retrieve(second.id)
    assert stored.id == second.id
    assert stored.output_text == "Sent."
    assert stored.previous_response_id == first.id
    assert stored.model == "gpt-4.1"
    assert stored.instructions is None  # instructions are not carried over by the chain
    assert client.responses.retrieve(first.id).instructions == "brief"


def check_store_false(client: openai.OpenAI) -> None:
    first = client.responses.create(model="gpt-4.1", input="mail a@b", store=False)
    with pytest.raises(openai.BadRequestError) as refused:
        follow_up(client, first)
    assert refused.value.body == {
        "message": f"Previous response with id '{first.id}' not found.",
        "type": "invalid_request_error", "param": "previous_response_id",
        "code": "previous_response_not_found"}
    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.retrieve(first.id)
    assert missing.value.body == {
        "message": f"Response with id '{first.id}' not found.",
        "type": "invalid_request_error", "param": None, "code": None}
    with pytest.raises(openai.NotFoundError):  # nothing stored: no input items either
        client.responses.input_items.list(first.id)


def check_delete(client: openai.OpenAI) -> None:
    first = client.responses.create(model="gpt-4.1", input="mail a@b")
    client.responses.delete(first.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)
    with pytest.raises(openai.BadRequestError):
        follow_up(client, first)


def check_input_items(client: openai.OpenAI) -> None:
    """``GET /v1/responses/{id}/input_items``: the items the response was generated from
    (the chain's, then its own), with ids, newest first by default, paged by ``after``."""
    first = client.responses.create(model="gpt-4.1", input="mail a@b", instructions="brief")
    second = follow_up(client, first)

    own = client.responses.input_items.list(first.id)
    assert [(item.type, item.role) for item in own.data] == [("message", "user")]
    assert own.data[0].content[0].text == "mail a@b"  # a bare string is a user message
    assert own.data[0].id.startswith("msg_")
    assert own.has_more is False

    listed = client.responses.input_items.list(second.id, order="asc")
    assert [item.type for item in listed.data] == \
        ["message", "function_call", "function_call_output"]
    # The chain's items keep their ids: the first input and the first answer's call.
    assert listed.data[0].id == own.data[0].id
    assert listed.data[1].id == first.output[0].id
    assert listed.data[2].id.startswith("fco_")
    assert listed.data[2].output == "sent"
    page = listed.model_dump()
    assert (page["object"], page["first_id"], page["last_id"]) == \
        ("list", listed.data[0].id, listed.data[2].id)
    newest = client.responses.input_items.list(second.id)  # order: desc by default
    assert [item.id for item in newest.data] == [item.id for item in reversed(listed.data)]

    one = client.responses.input_items.list(second.id, order="asc", limit=1)
    assert [item.id for item in one.data] == [listed.data[0].id]
    assert one.has_more is True
    # The SDK pages with after=<last id> until has_more is false.
    paged = [item.id for each in one.iter_pages() for item in each.data]
    assert paged == [item.id for item in listed.data]

    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.input_items.list("resp_unknown")
    assert missing.value.body == {
        "message": "Response with id 'resp_unknown' not found.",
        "type": "invalid_request_error", "param": None, "code": None}
    with pytest.raises(openai.BadRequestError) as bad_limit:
        client.responses.input_items.list(second.id, limit=101)
    assert bad_limit.value.body["param"] == "limit"  # type: ignore[index]
    assert "100" in bad_limit.value.body["message"]  # type: ignore[index]


@pytest.mark.parametrize("check", [check_continues_and_retrieves, check_store_false,
                                   check_delete, check_input_items])
def test_stored_responses_in_process(tmp_path: Path, check: Callable[[openai.OpenAI], Any]
                                     ) -> None:
    with in_process(two_turns(tmp_path)) as (client, world):
        check(client)
    if check is check_continues_and_retrieves:
        turns = [r.turn for r in world.provider.requests if r.turn]
        assert turns == [1, 2, 3]
        # What the model saw of the follow-up: the stored input and output, then the new item.
        seen = world.provider.requests[1].json["input"]
        assert [item.get("type", "message") for item in seen] == \
            ["message", "function_call", "function_call_output"]


@pytest.mark.system
@pytest.mark.parametrize("check", [check_continues_and_retrieves, check_store_false,
                                   check_delete, check_input_items])
def test_stored_responses_over_serve(tmp_path: Path, check: Callable[[openai.OpenAI], Any]
                                     ) -> None:
    from harness.serve import serving

    with serving([two_turns(tmp_path)], time_scale=0.01) as served, openai.OpenAI(
            api_key="k", base_url=served.env["OPENAI_BASE_URL"], max_retries=0) as client:
        check(client)
