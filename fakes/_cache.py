"""A deterministic prompt cache for the fake providers, on virtual time.

A :class:`PromptCache` lives in the world, one per provider, so it survives
agent crashes: a restarted agent that rebuilds the same prefix still hits. For
each request it returns a :class:`CacheOutcome` -- prompt tokens, cache read,
cache writes by lifetime -- and, when the request did not get the best hit it
could have had, a miss label (seed 002 §19.7 asks to record "the prefix
changed" apart from "the server did not hit"):

======================  =====================================================
label                   decided when
======================  =====================================================
``no_breakpoint``       Anthropic: the request has no ``cache_control`` at all
``below_min``           no cacheable boundary reaches the model's minimum (but
                        see ``prefix_changed``: a short request that changed
                        what an earlier one cached is labelled with the change)
``cold``                nothing was cached before under this conversation key
                        (OpenAI ``prompt_cache_key``, Anthropic
                        ``metadata.user_id``; ``""`` when absent)
``prefix_changed:<s>``  the nearest earlier request (longest common prefix)
                        differs at or before its last cached boundary; ``<s>``
                        is the segment of the first differing block. Also given
                        to a request below the minimum that changed a cached
                        prefix (a history rewritten shorter): it could not hit,
                        and what cost the hit is the change
``cold``                nothing changed, but nothing this request can reach
                        was ever written (e.g. a breakpoint moved more than
                        the look-back window)
``ttl_expired``         a matching prefix was written but has expired
``server_miss``         the seeded routing roll missed (``server_miss_rate``)
(none)                  a full hit: the longest prefix ever cached for this
                        request was read
======================  =====================================================

The labels are tried in that order; the first that applies wins. A partial hit
(history edited at the end) reads what still matches and is labelled with the
change that cost the rest.

Example::

    cache = PromptCache("openai", CacheConfig(), clock=clock.now)
    first = cache.serve(prompt_view("openai", body))     # miss == "cold"
    again = cache.serve(prompt_view("openai", body))     # miss is None
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import final

from fakes._clock import _VirtualEventLoop
from fakes._script import ScriptedUsage
from fakes._segments import SEGMENTS, CacheTtl, PromptView, Segment
from harness._errors import ConfigError
from harness.ports import Dialect, UsageBuckets, check_dialect, family_of, rng_stream

MISS_KINDS: tuple[str, ...] = (
    "no_breakpoint", "below_min", "cold", "prefix_changed", "ttl_expired", "server_miss",
)


@dataclass(frozen=True)
class OpenAICacheRules:
    """Automatic prompt caching, as OpenAI documents it.

    Source: OpenAI, "Prompt caching" guide (developers.openai.com/docs/guides/
    prompt-caching) and the "Prompt Caching 201" cookbook, read 2026-11-29:
    caching starts at 1,024 prompt tokens, hits grow in 128-token increments,
    ``usage.prompt_tokens_details.cached_tokens`` counts inside
    ``prompt_tokens``; in-memory caches are "typically cleared within 5 to 10
    minutes of inactivity" and "always removed within one hour". We take the
    5-minute end (a fake must pick one; the shorter one exposes more misses).

    >>> OpenAICacheRules().cached_tokens(1300)
    1280
    """

    min_tokens: int = 1024
    increment: int = 128
    idle_ttl_seconds: float = 300.0
    max_age_seconds: float = 3600.0

    def cached_tokens(self, matched: int) -> int:
        """Tokens a matched prefix of ``matched`` tokens reports as cached."""
        if matched < self.min_tokens:
            return 0
        return self.min_tokens + (matched - self.min_tokens) // self.increment * self.increment


@dataclass(frozen=True)
class AnthropicCacheRules:
    """Explicit ``cache_control`` breakpoints, as Anthropic documents them.

    Source: Anthropic, "Prompt caching" (platform.claude.com/docs/en/
    build-with-claude/prompt-caching), read 2026-11-29: at most 4 breakpoints
    per request; lifetimes "5m" (default) and "1h", refreshed at no cost on
    every use; the prefix is tools → system → messages; at each breakpoint
    the system also checks earlier block boundaries, about 20 blocks back;
    ``cache_creation_input_tokens`` and ``cache_read_input_tokens`` are
    reported apart from ``input_tokens``. Minimum cacheable prompt: 1,024
    tokens for Sonnet/Opus-class models, 2,048 for Haiku 3-class ones (newer
    models list higher floors, e.g. 4,096 for Haiku 4.5 and Opus 4.5/4.6;
    put their patterns first to model them).

    >>> AnthropicCacheRules().min_tokens_for("fake-haiku")
    2048
    """

    max_breakpoints: int = 4
    # (fnmatch pattern on the model name, minimum tokens); the first match wins.
    min_tokens: tuple[tuple[str, int], ...] = (("*haiku*", 2048), ("*", 1024))
    ttl_seconds: tuple[tuple[CacheTtl, float], ...] = (("5m", 300.0), ("1h", 3600.0))
    lookback_blocks: int = 20

    def min_tokens_for(self, model: str) -> int:
        """The minimum cacheable prefix of ``model``."""
        for pattern, tokens in self.min_tokens:
            if fnmatchcase(model, pattern):
                return tokens
        return self.min_tokens[-1][1] if self.min_tokens else 0

    def lifetime(self, ttl: CacheTtl) -> float:
        """Seconds an entry written with ``ttl`` lives after its last use."""
        return dict(self.ttl_seconds)[ttl]


@dataclass(frozen=True)
class CacheConfig:
    """Which rules the fake cache follows, and how often routing misses.

    ``server_miss_rate`` is the chance, drawn from the seeded stream
    ``rng_stream(seed, "cache")``, that a request lands on a server without
    its prefix (seed 002 §19.7: the server may still not reuse a prefix).

    >>> CacheConfig(server_miss_rate=0.1).openai.min_tokens
    1024
    """

    openai: OpenAICacheRules = field(default_factory=OpenAICacheRules)
    anthropic: AnthropicCacheRules = field(default_factory=AnthropicCacheRules)
    server_miss_rate: float = 0.0

    def __post_init__(self) -> None:
        rate = self.server_miss_rate
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
            raise ConfigError("CacheConfig.server_miss_rate", rate, "a number from 0 to 1")


@dataclass(frozen=True)
class CacheOutcome:
    """What the cache did for one request.

    ``input_tokens`` counts every prompt token (OpenAI's ``prompt_tokens``);
    the read and write buckets are parts of it. ``miss`` is ``None`` for a
    full hit, else one of the labels in the module docstring. ``versions``
    holds one version per prompt segment (see ``PromptView.versions``).

    >>> CacheOutcome(2000, 1536, miss=None).uncached_input_tokens
    464
    """

    input_tokens: int
    cache_read_tokens: int = 0
    cache_write_5m_tokens: int = 0
    cache_write_1h_tokens: int = 0
    miss: str | None = None
    versions: Mapping[Segment, str] = field(default_factory=dict)

    @property
    def cache_write_tokens(self) -> int:
        """Tokens written to the cache, whatever their lifetime."""
        return self.cache_write_5m_tokens + self.cache_write_1h_tokens

    @property
    def uncached_input_tokens(self) -> int:
        """Prompt tokens neither read from nor written to the cache."""
        return self.input_tokens - self.cache_read_tokens - self.cache_write_tokens

    @property
    def hit(self) -> bool:
        """True when nothing was missed."""
        return self.miss is None

    def usage(self, output_tokens: int) -> ScriptedUsage:
        """The usage the provider reports on the wire for this outcome."""
        return ScriptedUsage(self.input_tokens, output_tokens, self.cache_read_tokens,
                             self.cache_write_tokens)

    def buckets(self, output_tokens: int) -> UsageBuckets:
        """Disjoint billing buckets, for :func:`fakes.cost`."""
        return UsageBuckets(self.uncached_input_tokens, self.cache_read_tokens,
                            self.cache_write_5m_tokens, self.cache_write_1h_tokens,
                            output_tokens)


@dataclass
class _Entry:
    """One cached prefix: its lifetime after last use, and when it was made."""

    ttl: float
    created: float
    last_used: float
    max_age: float | None = None

    def live(self, now: float) -> bool:
        if self.max_age is not None and now >= self.created + self.max_age:
            return False
        return now < self.last_used + self.ttl


@dataclass(frozen=True)
class _Written:
    """An earlier request that reached the cache, kept to name what changed."""

    key: str
    prefixes: tuple[str, ...]
    segments: tuple[Segment, ...]
    last_boundary: int


@final
class PromptCache:
    """The world's prompt cache for one provider; see the module docstring.

    ``clock`` gives the virtual now (e.g. ``VirtualClock.now``); without it
    the cache reads the running :class:`~fakes.VirtualClock` loop, and outside
    one time stands still at 0 -- never the wall clock.
    """

    def __init__(self, dialect: Dialect, config: CacheConfig | None = None, seed: int = 0,
                 clock: Callable[[], float] | None = None) -> None:
        self.dialect: Dialect = check_dialect(dialect)
        # Responses and Gemini cache like Chat Completions: automatic prefixes, no marks.
        self._family = family_of(self.dialect)
        self.config = config if config is not None else CacheConfig()
        if not isinstance(self.config, CacheConfig):
            raise ConfigError("cache", self.config, "a CacheConfig")
        self._clock = clock
        self._rng = rng_stream(seed, "cache")
        self._entries: dict[str, _Entry] = {}
        self._written: list[_Written] = []

    def now(self) -> float:
        """Virtual now: the given clock, else the running virtual loop, else 0."""
        if self._clock is not None:
            return self._clock()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return 0.0
        return loop.time() if isinstance(loop, _VirtualEventLoop) else 0.0

    def check(self, view: PromptView) -> str | None:
        """Why the API would reject this request with a 400, or ``None``."""
        if view.problem is not None:
            return view.problem
        found, limit = len(view.breakpoints), self.config.anthropic.max_breakpoints
        if self._family == "anthropic" and found > limit:
            # Worded as the Messages API words it.
            return (f"A maximum of {limit} blocks with cache_control may be provided. "
                    f"Found {found}.")
        return None

    def serve(self, view: PromptView, now: float | None = None) -> CacheOutcome:
        """Look ``view`` up, read and write the cache, and say what happened."""
        now = self.now() if now is None else now
        versions = view.versions
        if self._family == "anthropic" and not view.breakpoints:
            return CacheOutcome(view.tokens, miss="no_breakpoint", versions=versions)
        boundaries = self._boundaries(view)
        if not boundaries:
            # Too short to cache; if it changed what an earlier request cached, that
            # change (not the length) is what a rebuilt history got wrong.
            changed = _changed_against(view, [w for w in self._written if w.key == view.key])
            short = "below_min" if changed is None else f"prefix_changed:{changed}"
            return CacheOutcome(view.tokens, miss=short, versions=versions)
        # Drawn for every cacheable request, so the n-th request always gets
        # the n-th roll whatever the cache state.
        routed_away = self._rng.random() < self.config.server_miss_rate
        read_at = self._lookup(view, now, live_only=True)
        miss = self._label(view, read_at, self._lookup(view, now, live_only=False), routed_away)
        if routed_away:
            read_at = -1
        self._refresh(view, read_at, now)
        write_5m, write_1h = self._write(view, boundaries, read_at, now)
        self._written.append(_Written(view.key, tuple(b.prefix for b in view.blocks),
                                      tuple(b.segment for b in view.blocks), boundaries[-1]))
        return CacheOutcome(view.tokens, self._read_tokens(view, read_at), write_5m, write_1h,
                            miss, versions)

    def _boundaries(self, view: PromptView) -> tuple[int, ...]:
        """Block indexes whose prefix this request may cache, in order."""
        if self._family == "openai":
            floor = self.config.openai.min_tokens
            return tuple(i for i, end in enumerate(view.ends) if end >= floor)
        floor = self.config.anthropic.min_tokens_for(view.model)
        return tuple(i for i in view.breakpoints if view.ends[i] >= floor)

    def _lookup(self, view: PromptView, now: float, *, live_only: bool) -> int:
        """Index of the longest cached prefix this request can reach, or -1."""
        for i in sorted(self._reachable(view), reverse=True):
            entry = self._entries.get(view.blocks[i].prefix)
            if entry is not None and (entry.live(now) or not live_only):
                return i
        return -1

    def _reachable(self, view: PromptView) -> set[int]:
        if self._family == "openai":
            return set(range(len(view.blocks)))
        # At each breakpoint the API also checks a window of earlier boundaries.
        back = self.config.anthropic.lookback_blocks
        return {i for b in view.breakpoints for i in range(max(0, b - back), b + 1)}

    def _label(self, view: PromptView, read_at: int, possible_at: int,
               routed_away: bool) -> str | None:
        earlier = [w for w in self._written if w.key == view.key]
        if not earlier:
            return "cold"
        changed = _changed_against(view, earlier)
        if changed is not None:
            return f"prefix_changed:{changed}"
        if possible_at < 0:
            return "cold"
        if read_at < possible_at:
            return "ttl_expired"
        return "server_miss" if routed_away else None

    def _read_tokens(self, view: PromptView, read_at: int) -> int:
        if read_at < 0:
            return 0
        if self._family == "openai":
            return self.config.openai.cached_tokens(view.ends[read_at])
        return view.ends[read_at]

    def _refresh(self, view: PromptView, read_at: int, now: float) -> None:
        # Every use restarts an entry's lifetime (both providers document this).
        for block in view.blocks[: read_at + 1]:
            entry = self._entries.get(block.prefix)
            if entry is not None and entry.live(now):
                entry.last_used = now

    def _write(self, view: PromptView, boundaries: tuple[int, ...], read_at: int,
               now: float) -> tuple[int, int]:
        if self._family == "openai":
            self._write_openai(view, boundaries, now)
            return 0, 0  # OpenAI neither bills nor reports cache writes.
        return self._write_anthropic(view, boundaries, read_at, now)

    def _write_openai(self, view: PromptView, boundaries: tuple[int, ...], now: float) -> None:
        rules = self.config.openai
        for i in boundaries:
            entry = self._entries.get(view.blocks[i].prefix)
            if entry is None or not entry.live(now):
                self._entries[view.blocks[i].prefix] = _Entry(
                    rules.idle_ttl_seconds, now, now, rules.max_age_seconds)
            else:
                entry.last_used = now

    def _write_anthropic(self, view: PromptView, boundaries: tuple[int, ...], read_at: int,
                         now: float) -> tuple[int, int]:
        rules = self.config.anthropic
        written = {"5m": 0, "1h": 0}
        done = view.ends[read_at] if read_at >= 0 else 0
        for i in boundaries:
            ttl = view.blocks[i].breakpoint
            if i <= read_at or ttl is None:
                continue
            # The tokens between the previous cached point and this breakpoint
            # are written with this breakpoint's lifetime.
            written[ttl] += view.ends[i] - done
            done = view.ends[i]
            self._entries[view.blocks[i].prefix] = _Entry(rules.lifetime(ttl), now, now)
        return written["5m"], written["1h"]


def _changed_against(view: PromptView, earlier: list[_Written]) -> Segment | None:
    """The first changed segment against the nearest earlier request, if it mattered."""
    if not earlier:
        return None
    nearest, common = earlier[-1], -1
    for candidate in reversed(earlier):  # the latest wins a tie
        shared = _common_blocks(view, candidate)
        if shared > common:
            nearest, common = candidate, shared
    if common >= min(len(view.blocks), len(nearest.prefixes)) or common > nearest.last_boundary:
        return None  # one is a prefix of the other, or it changed after the cached part
    ours, theirs = view.blocks[common].segment, nearest.segments[common]
    return min(ours, theirs, key=SEGMENTS.index)


def _common_blocks(view: PromptView, written: _Written) -> int:
    # Prefix hashes are chained, so the first unequal one ends the shared part.
    shared = 0
    for block, prefix in zip(view.blocks, written.prefixes, strict=False):
        if block.prefix != prefix:
            break
        shared += 1
    return shared
