"""The control calls a test makes at run time: faults, the agent's life, a kill, the journal.

Every call is under ``/_harness/`` and takes the run's token (the door,
:mod:`harness.serve._guard`). Each names the test it is for with ``"test"`` in its
JSON body, or ``?test=`` for a ``GET`` or ``DELETE``; without one it is for the
default scope (:mod:`harness.serve._scope`). Bad input is a 400 (or a 409 for a
request the world's state refuses), with ``{"status": "error", "error": "…"}``
naming the field and what it takes.

``POST /_harness/faults``
    ``{"faults": [FAULT…], "rates": [{"rate": P, "fault": FAULT, "from_turn": T}],
    "replace": false}``: arm scenario faults (``at: {turn, attempt}``) and seeded rates;
    ``replace: true`` switches the armed ones off first. ``GET`` lists them, ``DELETE``
    switches them all off (the scenario's own stay).
``POST /_harness/agent``
    ``{"event": "start" | "exit" | "restart", "code": N, "pid": PID, "group": false}``:
    the agent's process started, exited with ``code``, or started again; ``pid`` is
    whom an armed kill SIGKILLs (its process group with ``group: true``).
``POST /_harness/kill``
    ``{"at": "after_tool:mail#1"}``: kill the agent there, once (``null`` disarms).
``GET /_harness/journal``
    ``?path=&method=&status=&test=&offset=&limit=``: the requests with headers and bodies.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from pydantic import TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

import fakes
from harness._errors import ConfigError, got_expected
from harness.runner import case_result, is_world_point
from harness.scenario import AnyFault
from harness.serve._guard import _Refused, strict_json_loads
from harness.serve._journal import Journal, select
from harness.serve._scope import Rate, Scope, check_test_id
from harness.serve._trace import ProcessRun, served_trace

_FAULT: Final = TypeAdapter(AnyFault)
#: What one page of the journal holds at most (and by default).
MAX_PAGE: Final = 1000
DEFAULT_PAGE: Final = 100
_EVENTS: Final = ("start", "exit", "restart")


#: A control call's input refused: the HTTP status and what to send instead (the door's
#: own refusal, answered as JSON the same way).
BadInput = _Refused


def bad(message: str, status: int = 400) -> _Refused:
    """The refusal of a control call's input: 400 unless the world's state refuses (409)."""
    return _Refused(status, message)


def refusal(error: _Refused) -> Response:
    return JSONResponse({"status": "error", "error": str(error)}, status_code=error.status)


async def json_body(request: Request, example: str) -> dict[str, Any]:
    """The request's JSON object ({} when empty); a :class:`BadInput` naming ``example``."""
    raw = await request.body()
    try:
        value = strict_json_loads(raw) if raw.strip() else {}
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise bad(f"the body must be a JSON object, {example}")
    return value


def body_test(body: dict[str, Any]) -> str | None:
    try:
        return check_test_id(body.get("test"), "'test'")
    except ValueError as error:
        raise bad(str(error)) from None


def query_test(request: Request) -> str | None:
    try:
        return check_test_id(request.query_params.get("test"), "?test=")
    except ValueError as error:
        raise bad(str(error)) from None


def _only(body: dict[str, Any], allowed: tuple[str, ...], call: str) -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise bad(f"{call} takes no field {', '.join(map(repr, unknown))}; it takes "
                       + ", ".join(allowed))


# ----------------------------------------------------------------------- faults


def parse_fault(value: object, where: str, *, keyed: bool) -> tuple[tuple[int, int], fakes.Fault]:
    """A scenario fault (``{"kind": …, "at": {"turn": T}}``) as its key and fake fault.

    ``keyed``: it must say ``at``; a rate's fault strikes wherever its draw says.
    """
    if not isinstance(value, dict):
        raise bad(f"{where} must be a fault as a scenario writes it, such as "
                       '{"kind": "http_error", "status": 503, "at": {"turn": 2}}')
    if not keyed:
        if "at" in value:
            raise bad(f"{where} strikes where its rate's draw says: leave out 'at'")
        value = {**value, "at": {"turn": 1}}
    try:
        model = _FAULT.validate_python(value)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'][1:])) or 'kind'}: {e['msg']}"
                             for e in error.errors(include_url=False))
        raise bad(f"{where}: {problems}") from None
    try:
        fake = fakes.FAULT_KINDS[model.kind](**model.fake_fields())
    except (ValueError, ConfigError) as error:
        raise bad(f"{where}: {error}") from None
    return (model.at.turn, model.at.attempt), fake


def _rate(value: object, where: str) -> Rate:
    if not isinstance(value, dict):
        raise bad(f'{where} must be {{"rate": P, "fault": FAULT}} with 0 < P <= 1')
    _only(value, ("rate", "fault", "from_turn"), where)
    rate, from_turn = value.get("rate"), value.get("from_turn", 1)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= 1:
        raise bad(got_expected(f"{where}.rate", got=repr(rate),
                               expected="a probability, 0 < rate <= 1"))
    if isinstance(from_turn, bool) or not isinstance(from_turn, int) or from_turn < 1:
        raise bad(got_expected(f"{where}.from_turn", got=repr(from_turn),
                               expected="a turn, 1 or more"))
    _, fault = parse_fault(value.get("fault"), f"{where}.fault", keyed=False)
    return Rate(float(rate), fault, from_turn)


def _list(body: dict[str, Any], name: str) -> list[Any]:
    value = body.get(name, [])
    if not isinstance(value, list):
        raise bad(got_expected(f"'{name}'", got=type(value).__name__, expected="a list"))
    return value


def arm_faults(scope: Scope, body: dict[str, Any]) -> None:
    """Check every fault of ``body`` first, then arm them all (or none)."""
    _only(body, ("test", "faults", "rates", "replace"), "POST /_harness/faults")
    replace = body.get("replace", False)
    if not isinstance(replace, bool):
        raise bad(got_expected("'replace'", got=repr(replace), expected="true or false"))
    keyed = [parse_fault(f, f"faults[{i}]", keyed=True)
             for i, f in enumerate(_list(body, "faults"))]
    rates = [_rate(r, f"rates[{i}]") for i, r in enumerate(_list(body, "rates"))]
    if not keyed and not rates and not replace:
        raise bad("give 'faults' or 'rates' to arm (or DELETE /_harness/faults to "
                       "switch them off)")
    provider = scope.world.provider
    for index, ((turn, attempt), _fault) in enumerate(keyed):
        if provider.attempts(turn) >= attempt:
            raise bad(f"faults[{index}]: turn {turn} attempt {attempt} was already "
                           f"served (attempts of turn {turn} so far: "
                           f"{provider.attempts(turn)}); arm a request still to come", 409)
    if replace:
        scope.faults.clear()
    for index, (key, fault) in enumerate(keyed):
        try:
            scope.faults.arm(key, (fault,))
        except (ValueError, ConfigError) as error:
            raise bad(f"faults[{index}]: {error}") from None
    for rate in rates:
        scope.faults.add_rate(rate)


def _fault_json(fault: fakes.Fault) -> dict[str, Any]:
    fields: dict[str, Any] = dataclasses.asdict(fault) if dataclasses.is_dataclass(fault) else {}
    return {"kind": fault.kind, **{k: v for k, v in fields.items() if v is not None}}


def faults_state(scope: Scope) -> dict[str, Any]:
    faults = scope.faults
    return {
        "test": scope.test,
        "armed": [{**_fault_json(f), "at": {"turn": t, "attempt": a}}
                  for (t, a), armed in faults.armed.items() for f in armed],
        "rates": [{"rate": r.rate, "from_turn": r.from_turn, "fault": _fault_json(r.fault)}
                  for r in faults.rates],
    }


# ----------------------------------------------------------------------- the agent's life


def mark_agent(scope: Scope, body: dict[str, Any]) -> dict[str, Any]:
    """Note the agent's process starting, exiting or starting again (see the module)."""
    _only(body, ("test", "event", "code", "pid", "group"), "POST /_harness/agent")
    event = body.get("event")
    if event not in _EVENTS:
        raise bad(got_expected("'event'", got=repr(event),
                               expected=f"one of {', '.join(_EVENTS)}"))
    if event == "exit":
        _exit(scope, body.get("code"))
    else:
        _start(scope, event == "restart", body.get("pid"), body.get("group", False))
    return agent_state(scope)


def _start(scope: Scope, again: bool, pid: object, group: object) -> None:
    if pid is not None and (isinstance(pid, bool) or not isinstance(pid, int) or pid <= 1):
        raise bad(got_expected("'pid'", got=repr(pid),
                               expected="the agent's process id (an integer above 1)"))
    if not isinstance(group, bool):
        raise bad(got_expected("'group'", got=repr(group), expected="true or false"))
    runs = scope.runs
    if runs and not _ended(runs[-1]):
        raise bad(f"process {runs[-1].number} is running: mark its exit "
                       '({"event": "exit", "code": N}) or let an armed kill end it first', 409)
    if again and not runs:
        raise bad("no process has run yet: mark the first one with "
                       '{"event": "start"}', 409)
    if runs:
        scope.world.restart()
    scope.runs.append(ProcessRun(scope.world.incarnation))
    scope.pid, scope.group = pid, group


def _exit(scope: Scope, code: object) -> None:
    if isinstance(code, bool) or not isinstance(code, int):
        raise bad(got_expected("'code'", got=repr(code),
                               expected="the process's exit code (an integer)"))
    run = scope.current()
    if run.killed_at is not None:
        raise bad(f"process {run.number} was killed at {run.killed_at}: mark the next "
                       'one with {"event": "restart"}', 409)
    if run.exit_code is not None:
        raise bad(f"process {run.number} already exited with {run.exit_code}", 409)
    run.exit_code = code
    run.ended_at = scope.world.clock.now()
    if code != 0:
        run.error = f"the agent process exited with {code}"
    scope.pid = None


def _ended(run: ProcessRun) -> bool:
    return run.killed_at is not None or run.exit_code is not None


def agent_state(scope: Scope) -> dict[str, Any]:
    return {"test": scope.test, "incarnation": scope.world.incarnation, "kill_at": scope.kill_at,
            "processes": [{"number": r.number, "killed_at": r.killed_at,
                           "exit_code": r.exit_code} for r in scope.runs]}


def arm_kill(scope: Scope, body: dict[str, Any]) -> dict[str, Any]:
    """Kill the agent at a world event (``after_tool:NAME#K`` …), once; ``null`` disarms."""
    _only(body, ("test", "at"), "POST /_harness/kill")
    if "at" not in body:
        raise bad('give \'at\': a world event such as "after_tool:mail#1", '
                       '"mid_stream:2", "after_response:1", "before_request:2" (null disarms)')
    at = body["at"]
    if at is None:
        scope.kill_at = None
        scope.world.disarm_kill()
        return agent_state(scope)
    if not isinstance(at, str) or not is_world_point(at):
        raise bad(got_expected("'at'", got=repr(at),
                               expected="a world event: after_tool:NAME#K, mid_stream:T, "
                                        "after_response:T or before_request:T"))
    if at in scope.world.events:
        raise bad(f"the world already reached {at}; arm an event still to come", 409)
    scope.kill_at = at
    scope.world.arm_kill(at)
    return agent_state(scope)


def verdicts(scope: Scope) -> dict[str, Any]:
    """Every check over what the world saw so far, and the case's status as a run's."""
    case = scope.case()
    trace = served_trace(scope.world, case, scope.runs)
    result = case_result(case, trace)
    return {"scenario": trace.scenario, "test": scope.test, "limit": scope.limit,
            "status": result.status, "passed": result.passed,
            "verdicts": [{"invariant": v.invariant, "status": v.status, "message": v.message,
                          "evidence": list(v.evidence)} for v in result.verdicts]}


# ----------------------------------------------------------------------- journal


def _int_param(request: Request, name: str, default: int | None, low: int, high: int
               ) -> int | None:
    text = request.query_params.get(name)
    if text is None:
        return default
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise bad(got_expected(f"?{name}=", got=repr(text),
                               expected=f"a whole number from {low} to {high}"))
    return int(text)


def journal_page(request: Request, journal: Journal) -> dict[str, Any]:
    """One page of the journal's entries matching the request's filters."""
    params = request.query_params
    unknown = sorted(set(params) - {"path", "method", "status", "test", "offset", "limit"})
    if unknown:
        raise bad(f"GET /_harness/journal takes no ?{unknown[0]}=; it takes path, method, "
                       "status, test, offset, limit")
    status = _int_param(request, "status", None, 100, 599)
    offset = _int_param(request, "offset", 0, 0, 10**9) or 0
    limit = _int_param(request, "limit", DEFAULT_PAGE, 1, MAX_PAGE) or DEFAULT_PAGE
    found = select(journal.entries, path=params.get("path"), method=params.get("method"),
                   status=status, test=query_test(request), any_test="test" not in params)
    page = found[offset:offset + limit]
    following = offset + limit if offset + limit < len(found) else None
    return {"total": len(found), "offset": offset, "limit": limit, "next_offset": following,
            "dropped": journal.dropped, "entries": [journal.shown(e) for e in page]}
