"""The command line of the served fakes: ``harness serve`` and ``harness run --exec``.

Kept apart from :mod:`harness._cli` so that the server's imports (uvicorn,
starlette, mcp) load only when one of these commands runs.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness._errors import got_expected
from harness.frontend import input_path, parse_seed, positive_float, whole_number
from harness.serve._scale import MIN_TIME_SCALE, SCALE_REASON

if TYPE_CHECKING:
    from harness.runner import Case, CaseResult, CrashSpec
    from harness.scenario import Scenario


def time_scale(text: str) -> float:
    """``--time-scale``: a factor on every scripted wait, at least :data:`MIN_TIME_SCALE`.

    >>> time_scale("0.01")
    0.01
    >>> time_scale("1e-9")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    argparse.ArgumentTypeError: got '1e-9'; expected at least 0.001: the server keeps time ...
    """
    value = positive_float(text, "a factor > 0 on every scripted wait, such as 0.01 "
                                 "(a 120 s stall: 1.2 s)")
    if value < MIN_TIME_SCALE:
        raise argparse.ArgumentTypeError(got_expected(
            "", got=repr(text), expected=f"at least {MIN_TIME_SCALE:g}: {SCALE_REASON}"))
    return value


def port(text: str) -> int:
    return whole_number(text, 0, 65535, "a port 0-65535 (0 picks a free one)")


def add_serve_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve", help="serve scenarios' fake providers, tools and control endpoint over HTTP "
                      "on 127.0.0.1, for agents in any language")
    serve.add_argument("paths", nargs="+", type=input_path, metavar="SCENARIO",
                       help="scenario files or folders")
    serve.add_argument("--port", type=port, default=0,
                       help="port on 127.0.0.1 (default 0: a free one, printed)")
    add_time_scale_option(serve)
    serve.add_argument("--seed", type=parse_seed, help="use this seed instead of each scenario's")


def add_time_scale_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--time-scale", type=time_scale, default=1.0, metavar="X",
                         help="for an agent served over a real socket (serve, run --exec), "
                              "whose waits pass in real seconds: multiply every scripted "
                              "wait (stalls, slow tools) by X (default 1; in-process "
                              "cases run on virtual time)")


def run_serve(args: argparse.Namespace) -> int:
    from harness.scenario import load_scenarios, scenario_files
    from harness.serve import (
        ServedWorld,
        Worlds,
        agent_environment,
        build_app,
        new_token,
        serve_forever,
    )

    scenarios = load_scenarios(scenario_files(args.paths))
    _check_unique_names(scenarios)
    worlds = Worlds(scenarios, lambda s: ServedWorld(
        s, seed=s.seed if args.seed is None else args.seed, time_scale=args.time_scale))

    token = new_token()

    def announce(url: str) -> None:
        print(f"harness serve: {url}  (scenario {worlds.world.scenario.name}; "
              f"control: {url}/_harness)", flush=True)
        environment = agent_environment(url, worlds.world.scenario, token, args.time_scale)
        for name, value in environment.items():
            if name != "HARNESS_TOOLS":
                print(f"  {name}={value}", flush=True)

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a served run ends
        serve_forever(build_app(worlds, token), args.port, announce)
    return 0


def _check_unique_names(scenarios: Sequence[Scenario]) -> None:
    from harness._errors import ConfigError

    seen: set[str] = set()
    for scenario in scenarios:
        if scenario.name in seen:
            raise ConfigError("SCENARIO", scenario.name, "scenarios with distinct names (the "
                              "control endpoint's reset picks one by name)")
        seen.add(scenario.name)


def plan_exec(loaded: Sequence[tuple[Scenario, Path]], command: str,
              crash_at: CrashSpec | None, crash: str | None = None, *,
              time_scale: float = 1.0, timeout: float = 60.0) -> list[tuple[Case, Scenario]]:
    """The cases of ``--exec``: each crashed by a kill at a world event; ``crash`` is the
    ``--crash`` setting (the scenarios were loaded with it, so only ``sample`` is left).

    A scenario whose points say ``all`` has its uncrashed run recorded first (on
    ``time_scale``, each process bounded by ``timeout``), to find the world events
    it reaches; see :func:`harness.serve._exec.exec_cases`.
    """
    from harness._errors import ConfigError
    from harness.frontend import chosen_cases
    from harness.runner import is_world_point
    from harness.serve._exec import exec_cases, recorded_events, wants_recording

    if crash_at is not None and not is_world_point(crash_at.point_id):
        raise ConfigError("--crash-at", crash_at.point_id, "a world event with --exec "
                          "(after_tool:NAME#K, before_request:T, mid_stream:T, after_response:T): "
                          "the harness kills the process, it does not see its files")
    planned = []
    for scenario, source in loaded:
        reached: list[str] = []
        if crash_at is None and wants_recording(scenario):
            # None reached: the uncrashed case says so (its crash:cases verdict).
            reached = recorded_events(scenario, source, command, time_scale=time_scale,
                                      timeout=timeout)
        cases = [replace(case, exec=command)
                 for case in exec_cases(scenario, source, crash_at, reached)]
        planned += [(case, scenario) for case in chosen_cases(cases, crash)]
    return planned


def run_exec_cases(planned: Sequence[tuple[Case, Scenario]], args: argparse.Namespace,
                   progress: Any) -> list[CaseResult]:
    from harness.serve._exec import run_exec

    if args.agent is not None or args.target or args.jobs != 1 or args.check_determinism:
        from harness._errors import ConfigError

        raise ConfigError("--exec", args.exec, "no --agent, --target, --jobs or "
                          "--check-determinism beside it (the command is the agent; its "
                          "cases run one at a time, on real time)")
    return run_exec(planned, args.exec, time_scale=args.time_scale,
                    timeout=args.case_timeout, on_result=progress)

