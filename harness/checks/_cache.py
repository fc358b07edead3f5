"""cache:restart: a restarted agent's first request keeps the prefix it had cached.

Seed 002 §19.7: "恢复会话或创建分支后第一次请求没有命中,也不一定是程序错误。只有模型、配置和
重建出的前缀都一致时,它才保留命中机会;服务端仍可能因为缓存过期或路由变化而不复用" — after a
restart the agent rebuilds its history from its own files; rebuilt faithfully (the same
system prompt, tool list, messages, their order and rendering, the same cache key), the
first request still reaches the prefix the crashed process cached. The world's prompt
cache survives the crash and labels each request's miss (:mod:`fakes._cache`), telling
"the request's prefix changed" apart from "the server did not hit", as the seed asks:

- ``prefix_changed:<segment>``: the rebuilt request differs inside the cached prefix
  (a reordered or re-rendered history, a restart note or a start time stamped at the
  top, a new tool order, the model's text dropped beside its calls), even when that
  left it too short to cache;
- ``cold``: nothing was cached under the request's key (a cache key drawn anew per
  process), or nothing it can reach (Anthropic breakpoints moved out of reach);
- ``no_breakpoint``: the rebuilt request lost its ``cache_control`` marks.

Each of these fails. ``ttl_expired`` and ``server_miss`` are the server's doing and pass:
the prefix was the same. Judged for the first request of each later incarnation that is
long enough to cache or changed a cached prefix (a shorter one that only repeats the
start of what was sent has nothing to hit; a history lost in the crash is the durability
checks' to judge). Applies to cases with a prompt cache and a restart;
``unknown`` when no earlier incarnation cached anything, or no later one sent a request
long enough to.

Example::

    check_cache_after_restart(trace)  # fail: "incarnation 2's first request (…): cold"
"""

from __future__ import annotations

from typing import Final

from harness.checks._verdict import Verdict
from harness.trace import RequestRecord, Trace, request_turn

_ID: Final = "cache:restart"
# Misses the agent made: its rebuilt request is not the prefix it cached.
_REBUILT_WRONG: Final = ("prefix_changed", "cold", "no_breakpoint")
# Misses where nothing was cacheable to begin with.
_UNCACHEABLE: Final = ("below_min", "no_breakpoint")


def check_cache_after_restart(trace: Trace) -> Verdict | None:
    """Fail when a restarted agent's first cacheable request rebuilt a different prefix.

    None without a prompt cache or without a restart.
    """
    served = [r for r in trace.requests if r.cache is not None]
    if not served or trace.final_incarnation < 2:
        return None
    firsts = _first_after_restart(served)
    if not firsts:
        return Verdict(_ID, "unknown", "no request after a restart reached the prompt cache "
                       "with a prefix written before the crash: nothing restored to judge")
    wrong = [_line(trace, r) for r in firsts if _miss_kind(r) in _REBUILT_WRONG]
    if wrong:
        return Verdict(_ID, "fail", "the first request after a restart did not rebuild the "
                       "prefix the crashed process had cached", tuple(wrong),
                       advice="restore the history byte for byte as it was sent: the same "
                              "system prompt, tool list, message order and rendering, and "
                              "the same cache key; put anything new after it")
    hits = sum(1 for r in firsts if _miss_kind(r) is None)
    return Verdict(_ID, "pass", f"{len(firsts)} restart(s): the rebuilt prefix was the cached "
                   f"one ({hits} hit, {len(firsts) - hits} missed on the server's side)")


def _first_after_restart(served: list[RequestRecord]) -> list[RequestRecord]:
    """The first request of each later incarnation long enough to cache, when an earlier
    incarnation had written something it could reach."""
    firsts: list[RequestRecord] = []
    cached_before = False
    seen: set[int] = set()
    for r in served:
        kind = _miss_kind(r)
        # A request below the minimum leaves the incarnation's first cacheable one to judge;
        # one that changed a cached prefix is labelled with the change, and judged.
        if r.incarnation > 1 and r.incarnation not in seen and kind != "below_min":
            seen.add(r.incarnation)
            if cached_before:
                firsts.append(r)
        if kind not in _UNCACHEABLE:
            cached_before = True
    return firsts


def _miss_kind(request: RequestRecord) -> str | None:
    miss = request.cache.miss if request.cache is not None else None
    return None if miss is None else miss.split(":", 1)[0]


def _line(trace: Trace, request: RequestRecord) -> str:
    miss = request.cache.miss if request.cache is not None else None
    return (f"incarnation {request.incarnation}'s first request ({request_turn(trace, request)}, "
            f"request #{request.index}): {miss}")
