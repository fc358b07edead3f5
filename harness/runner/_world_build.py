"""The parts of a world that a scenario declares, built as the fakes hold them.

The world (:mod:`harness.runner._world`) is assembled from these: the faults keyed
(turn, attempt), the tools, the provider's quota, cache and standing conditions, and
the client's base URL. Each reads only the scenario, so a new declaration is turned
into its fake here, next to the others.

Example::

    faults = fault_plan(scenario)  # {(1, 1): (Stall(after_events=3, seconds=120),)}
"""

from __future__ import annotations

import functools

import httpx

import fakes
from fakes import CacheConfig, ToolLedger, WorldTool
from harness.agent import StreamConfig
from harness.scenario import Scenario, ToolDeclaration

# Unix time of virtual t=0, the fakes' calendar origin, to read an HTTP-date Retry-After.
CALENDAR_ORIGIN = StreamConfig().clock_epoch_unix


def fault_plan(scenario: Scenario) -> dict[tuple[int, int], tuple[fakes.Fault, ...]]:
    """The scenario's faults as fakes, keyed (turn, attempt), in file order.

    >>> fault_plan(Scenario(name="x", dialect="openai", model=[{"turn": 1, "text": "hi"}],
    ...                     expect={"stop_state": "complete"}))
    {}
    """
    plan: dict[tuple[int, int], list[fakes.Fault]] = {}
    for fault in scenario.faults:
        fake = fakes.FAULT_KINDS[fault.kind](**fault.fake_fields())
        plan.setdefault((fault.at.turn, fault.at.attempt), []).append(fake)
    return {key: tuple(faults) for key, faults in plan.items()}


def quota_of(scenario: Scenario) -> fakes.Quota | None:
    declared = scenario.provider.quota
    return None if declared is None else fakes.Quota(**declared.model_dump())


def world_tool(name: str, spec: ToolDeclaration, ledger: ToolLedger) -> WorldTool:
    """The fake tool a scenario declares."""
    behaviour = None
    if spec.behaviour is not None:
        behaviour = fakes.Behaviour(spec.behaviour.kind, **spec.behaviour.fake_fields())
    return WorldTool(spec.kind, ledger, name=name, behaviour=behaviour,
                     concurrency_safe=spec.concurrency_safe, output_chars=spec.output_chars)


def provider_conditions(scenario: Scenario) -> fakes.ProviderConditions:
    """The scenario's context window and outages, as the fake provider holds them."""
    declared = scenario.provider
    window = fakes.ContextWindow(declared.context_window) if declared.context_window else None
    outages = tuple(fakes.Outage(o.start_seconds, o.end_seconds, o.answer, o.model)
                    for o in declared.outages)
    return fakes.ProviderConditions(window, outages)


def cache_config(scenario: Scenario) -> CacheConfig | None:
    provider = scenario.provider
    if not provider.prompt_cache:
        return None
    return CacheConfig(server_miss_rate=provider.server_miss_rate)


@functools.cache
def client_base_url(base_url: str) -> httpx.URL:
    """``base_url`` parsed once, ending in ``/`` as httpx would make it for each client.

    Parsing it again for every incarnation's client cost more than the rest of
    building the client.
    """
    url = httpx.URL(base_url)
    if url.raw_path.endswith(b"/"):
        return url
    return url.copy_with(raw_path=url.raw_path + b"/")
