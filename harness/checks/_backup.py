"""retry:backup: a model whose route stays down gives way to the declared backup (seed 002 §19.2).

Seed 002 §19.2's table: 网络请求失败 | 429、5xx、断流、空闲超时 | 同请求退避重试或切备用线路,
and the watchdog's "超过 N 秒无数据 → 判定卡死 → 主动 abort → 按错误类型重试、切换备用线路或
停止". The row below it is the other half: 参数或方案错误 … 把确定性失败当瞬态故障 is the
risk, so another model is no cure for a bad request. Judged from what the provider saw, for
a scenario that declares ``provider.backup_model``:

- no request names the backup right after a request on another model failed with a
  client error (400, 401, 403, 404, 422): the same request is as wrong for the backup;
- a run that did not complete, whose last request was the primary failing on its route
  (5xx, 529, an outage, a stream cut or stalled), sent at least one request naming
  another model: the primary's failures did not end the run while a backup was declared.

Any model other than the primary counts as the backup: an agent of its own (a
framework's fallback model, a router) names its fallback itself, and the fake provider
serves any model a request names.

``unknown`` when the primary never failed on its route, or recovered within the agent's
own retries (the run completed on the primary: no switch was needed). How long an agent
retries the primary first is its own budget and not judged; that every attempt on either
model draws on the one budget is I9's. A switch the agent made but never wrote down (so a
restart asks the primary again) is not seen here: an open breaker restored from the log
may spare the primary anyway.

Example::

    check_backup(trace)   # fail: "the run ended infra_paused on 6 failures of 'fake-sonnet' …"
"""

from __future__ import annotations

import itertools

from harness.checks._requests import live_requests
from harness.checks._verdict import Verdict
from harness.trace import RequestRecord, Trace

_ID = "retry:backup"
#: Client errors another model does not fix: the request itself is wrong (or not allowed).
DETERMINISTIC_STATUSES = frozenset({400, 401, 403, 404, 422})
#: TLS handshake and certificate failures: 5xx that no retry or other route fixes either.
_TLS = frozenset({525, 526})
_ADVICE = ("when the primary model keeps failing on its route (5xx, 529, a stall) past "
           "your retries, send the same request to the backup model, drawing on the same "
           "budget; never switch after a client error (400, 401, 403, 404, 422)")


def route_failed(request: RequestRecord) -> bool:
    """The model's route failed this request: an outage, a 5xx (TLS aside) or 529, or a
    200 stream cut or stalled before its end; never a client error."""
    if request.condition == "outage":
        return True
    if request.status >= 500:
        return request.status not in _TLS
    return request.status == 200 and request.delivery in ("partial", "broken")


def check_backup(trace: Trace) -> Verdict | None:
    """retry:backup; ``None`` when the scenario declares no backup model."""
    backup, primary = trace.extra.backup_model, trace.extra.primary_model
    if backup is None or primary is None:
        return None
    live = live_requests(trace)
    # Any model but the primary stands in for it: an agent names its own fallback (a
    # framework's fallback model, a router's), which the fake serves like any model.
    problems = [f"request #{now.index} named {_other(now.model, backup)} right after request "
                f"#{before.index} on {before.model!r} failed with {before.status}: another "
                "model does not fix a bad request"
                for before, now in itertools.pairwise(live)
                if now.model is not None and now.model not in (primary, before.model)
                and before.status in DETERMINISTIC_STATUSES]
    failures = [r for r in live if r.model == primary and route_failed(r)]
    on_backup = [r for r in live if r.model is not None and r.model != primary]
    stop = trace.outcome.stop_state if trace.outcome is not None else None
    stranded = bool(live) and live[-1].model == primary and route_failed(live[-1])
    if stop != "complete" and stranded and not on_backup:
        problems.append(f"the run ended {stop or 'without an outcome'} on {len(failures)} "
                        f"failure(s) of the primary model {primary!r} (the last request "
                        f"#{live[-1].index}: {_said(live[-1])}) without one request naming "
                        f"the backup model {backup!r}")
    if problems:
        return Verdict(_ID, "fail", problems[0], tuple(problems), advice=_ADVICE)
    if not failures:
        return Verdict(_ID, "unknown", f"the primary model {primary!r} never failed on its "
                       "route (5xx, 529, a stall, a cut stream)")
    if not on_backup:
        return Verdict(_ID, "unknown", f"the primary model {primary!r} recovered within the "
                       "agent's retries: no switch was needed")
    named = sorted({r.model for r in on_backup if r.model is not None})
    return Verdict(_ID, "pass", f"after {len(failures)} route failure(s) of {primary!r}, "
                   f"{len(on_backup)} request(s) named {_other(named[0], backup)}"
                   f"{' and another' if len(named) > 1 else ''}, none after a client error")


def _other(model: str | None, backup: str) -> str:
    """How a request's model other than the primary is named: the declared backup, or the
    agent's own fallback."""
    return (f"the backup model {backup!r}" if model == backup
            else f"the fallback model {model!r} (the declared backup: {backup!r})")


def _said(request: RequestRecord) -> str:
    if request.condition == "outage":
        return f"outage {request.status}" if request.status != 200 else "outage, no answer"
    return f"{request.delivery} {request.status}"
