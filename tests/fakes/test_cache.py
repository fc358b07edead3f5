"""The prompt cache: segments, OpenAI's automatic rules, Anthropic's breakpoints, miss labels."""

from __future__ import annotations

from typing import Any

import pytest

from fakes import (
    COMPACTION_MARKER,
    INSTRUCTIONS_MARKER,
    CacheConfig,
    CacheOutcome,
    PromptCache,
    prompt_view,
)
from harness import ConfigError


def words(n: int, word: str = "abcd") -> str:
    """Text of exactly ``n`` tokens (a 4-letter word is one token; single spaces are free)."""
    return " ".join([word] * n)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


def serve(cache: PromptCache, body: dict[str, Any]) -> CacheOutcome:
    return cache.serve(prompt_view(cache.dialect, body))


# -- segments ---------------------------------------------------------------------------------


def test_openai_segments_are_labelled_in_cache_order() -> None:
    view = prompt_view("openai", {
        "model": "fake-gpt",
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": "Use tabs."},
            {"role": "user", "content": f"{COMPACTION_MARKER} earlier we fixed the build"},
            {"role": "user", "content": "hi"},
        ],
    })
    assert [b.segment for b in view.blocks] == [
        "model", "tools", "system", "instructions", "compaction", "history"]
    assert view.blocks[2].tokens == 3 + 4  # message overhead + "Be brief."
    assert view.tokens == sum(b.tokens for b in view.blocks)


def test_anthropic_segments_cut_content_blocks_and_read_breakpoints() -> None:
    view = prompt_view("anthropic", {
        "model": "fake-sonnet",
        "tools": [{"name": "f", "input_schema": {}, "cache_control": {"type": "ephemeral"}}],
        "system": [{"type": "text", "text": "Be brief."},
                   {"type": "text", "text": f"{INSTRUCTIONS_MARKER} use tabs",
                    "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
    })
    assert [b.segment for b in view.blocks] == [
        "model", "tools", "system", "instructions", "history", "history"]
    assert [b.breakpoint for b in view.blocks] == [None, "5m", None, "1h", None, None]
    assert view.breakpoints == (1, 3)


def test_moving_a_breakpoint_keeps_the_content_identity() -> None:
    plain = {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "x"}]}]}
    marked = {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]}]}
    a, b = prompt_view("anthropic", plain), prompt_view("anthropic", marked)
    assert [x.prefix for x in a.blocks] == [x.prefix for x in b.blocks]
    assert a.versions == b.versions


def test_versions_name_the_segment_that_changed() -> None:
    body = {"model": "fake-gpt", "messages": [{"role": "system", "content": "v1"},
                                              {"role": "user", "content": "hi"}]}
    changed = {**body, "messages": [{"role": "system", "content": "v2"},
                                    {"role": "user", "content": "hi"}]}
    old, new = prompt_view("openai", body).versions, prompt_view("openai", changed).versions
    assert {k for k in old if old[k] != new[k]} == {"system"}
    assert old["model"] == "fake-gpt"
    assert old["tools"] == ""


# -- OpenAI -----------------------------------------------------------------------------------


def openai_body(system: str = words(1300), *history: str, model: str = "fake-gpt",
                **extra: object) -> dict[str, Any]:
    messages = [{"role": "system", "content": system}]
    messages += [{"role": "user", "content": text} for text in history or ("hi",)]
    return {"model": model, "messages": messages, **extra}


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def openai(clock: Clock) -> PromptCache:
    return PromptCache("openai", CacheConfig(), clock=clock.now)


def test_openai_below_1024_tokens_is_never_cached(openai: PromptCache) -> None:
    body = openai_body(words(900))
    outcomes = [serve(openai, body), serve(openai, body)]
    assert [(o.cache_read_tokens, o.miss) for o in outcomes] == [(0, "below_min")] * 2


def test_openai_first_request_is_cold_and_the_second_hits_in_128_token_steps(
    openai: PromptCache,
) -> None:
    body = openai_body(words(1300), words(200))  # 1303 + 203 = 1506 tokens
    first, second = serve(openai, body), serve(openai, body)
    assert (first.input_tokens, first.cache_read_tokens, first.miss) == (1506, 0, "cold")
    assert (second.input_tokens, second.cache_read_tokens, second.miss) == (1506, 1408, None)
    assert (second.cache_read_tokens - 1024) % 128 == 0
    assert second.cache_write_tokens == 0  # OpenAI neither bills nor reports writes


def test_openai_a_changed_system_prompt_is_named(openai: PromptCache) -> None:
    serve(openai, openai_body(words(1300)))
    outcome = serve(openai, openai_body(words(1300, "wxyz")))
    assert (outcome.cache_read_tokens, outcome.miss) == (0, "prefix_changed:system")


def test_openai_a_short_request_that_changed_a_cached_prefix_is_named_for_the_change(
    openai: PromptCache,
) -> None:
    # A history rebuilt shorter and different (the long text dropped): it cannot hit, and
    # the change, not its length, is what lost the cached prefix (seed 002 §19.7).
    serve(openai, openai_body("Be brief.", "q1", words(1300), "q2"))
    outcome = serve(openai, openai_body("Be brief.", "q1", "(text dropped)", "q2"))
    assert (outcome.cache_read_tokens, outcome.miss) == (0, "prefix_changed:history")


def test_openai_a_short_request_that_is_a_cached_requests_prefix_is_below_min(
    openai: PromptCache,
) -> None:
    # A history cut short (its end lost in a crash) changed nothing it sends.
    serve(openai, openai_body("Be brief.", "q1", words(1300), "q2"))
    assert serve(openai, openai_body("Be brief.", "q1")).miss == "below_min"
    # Nor does a short request that differs from a short one only: nothing was cached.
    other = PromptCache("openai", CacheConfig())
    serve(other, openai_body("Be terse.", "q1"))
    assert serve(other, openai_body("Be terse.", "q2")).miss == "below_min"


def test_openai_a_change_at_the_end_of_history_is_a_partial_hit(openai: PromptCache) -> None:
    serve(openai, openai_body(words(1300), "first question", words(200)))
    outcome = serve(openai, openai_body(words(1300), "first question", words(200, "wxyz")))
    # The system message and the first question (1303 + 5 = 1308) still match.
    assert (outcome.cache_read_tokens, outcome.miss) == (1280, "prefix_changed:history")


def test_openai_a_growing_conversation_is_a_full_hit(openai: PromptCache) -> None:
    serve(openai, openai_body(words(1300), "q1"))
    outcome = serve(openai, openai_body(words(1300), "q1", words(300)))
    assert (outcome.cache_read_tokens, outcome.miss) == (1280, None)


def test_openai_a_changed_model_is_named(openai: PromptCache) -> None:
    serve(openai, openai_body())
    assert serve(openai, openai_body(model="fake-gpt-mini")).miss == "prefix_changed:model"


def test_openai_entries_expire_after_five_idle_minutes_and_use_refreshes_them(
    openai: PromptCache, clock: Clock,
) -> None:
    body = openai_body()
    serve(openai, body)
    clock.t = 299.0
    assert serve(openai, body).miss is None  # refreshed at 299 s
    clock.t = 598.0
    assert serve(openai, body).miss is None
    clock.t = 898.0
    expired = serve(openai, body)
    assert (expired.cache_read_tokens, expired.miss) == (0, "ttl_expired")
    clock.t = 899.0
    assert serve(openai, body).miss is None  # the expired request wrote it again


def test_openai_entries_are_dropped_within_an_hour_even_when_used(
    openai: PromptCache, clock: Clock,
) -> None:
    body = openai_body()
    for minute in range(0, 60, 4):
        clock.t = minute * 60.0
        serve(openai, body)
    clock.t = 3600.0
    assert serve(openai, body).miss == "ttl_expired"


def test_openai_cache_keys_keep_conversations_apart(openai: PromptCache) -> None:
    serve(openai, openai_body(prompt_cache_key="a"))
    assert serve(openai, openai_body(prompt_cache_key="b")).miss == "cold"


def server_misses(seed: int) -> list[str | None]:
    cache = PromptCache("openai", CacheConfig(server_miss_rate=0.3), seed=seed)
    return [serve(cache, openai_body()).miss for _ in range(40)]


def test_openai_seeded_server_misses_are_reproducible() -> None:
    misses = server_misses(seed=7)
    assert misses == server_misses(seed=7)
    assert misses != server_misses(seed=8)
    assert misses[0] == "cold"
    assert 4 <= misses.count("server_miss") <= 20
    assert set(misses[1:]) == {None, "server_miss"}


def test_a_server_miss_reads_nothing() -> None:
    cache = PromptCache("openai", CacheConfig(server_miss_rate=1.0))
    serve(cache, openai_body())
    outcome = serve(cache, openai_body())
    assert (outcome.cache_read_tokens, outcome.miss) == (0, "server_miss")


def test_the_cache_outlives_the_agent_not_the_provider(openai: PromptCache) -> None:
    # A restarted agent that rebuilds the same prefix hits: the cache is world state.
    serve(openai, openai_body())
    rebuilt = openai_body()
    assert serve(openai, rebuilt).miss is None


def test_a_bad_server_miss_rate_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^CacheConfig.server_miss_rate: got 2; expected a "
                                          r"number from 0 to 1$"):
        CacheConfig(server_miss_rate=2)


# -- Anthropic --------------------------------------------------------------------------------


def ephemeral(ttl: str | None = None) -> dict[str, str]:
    return {"type": "ephemeral"} if ttl is None else {"type": "ephemeral", "ttl": ttl}


def anthropic_body(system: str = words(1300), *turns: str, model: str = "fake-sonnet",
                   system_ttl: str | None = "5m", last_ttl: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": system}
    if system_ttl is not None:
        block["cache_control"] = ephemeral(system_ttl)
    messages: list[dict[str, Any]] = []
    for index, text in enumerate(turns or ("hi",)):
        role = "user" if index % 2 == 0 else "assistant"
        messages.append({"role": role, "content": [{"type": "text", "text": text}]})
    if last_ttl is not None:
        messages[-1]["content"][-1]["cache_control"] = ephemeral(last_ttl)
    return {"model": model, "max_tokens": 100, "system": [block], "messages": messages}


@pytest.fixture
def anthropic(clock: Clock) -> PromptCache:
    return PromptCache("anthropic", CacheConfig(), clock=clock.now)


def test_anthropic_writes_then_reads_at_the_breakpoint(anthropic: PromptCache) -> None:
    body = anthropic_body(words(1300), "hi")  # system 1300 (no message overhead), user 4
    first, second = serve(anthropic, body), serve(anthropic, body)
    assert (first.input_tokens, first.cache_write_5m_tokens, first.cache_read_tokens,
            first.uncached_input_tokens, first.miss) == (1304, 1300, 0, 4, "cold")
    assert (second.cache_write_tokens, second.cache_read_tokens, second.uncached_input_tokens,
            second.miss) == (0, 1300, 4, None)


def test_anthropic_without_breakpoints_caches_nothing(anthropic: PromptCache) -> None:
    outcome = serve(anthropic, anthropic_body(system_ttl=None))
    assert (outcome.cache_read_tokens, outcome.cache_write_tokens, outcome.miss) == (
        0, 0, "no_breakpoint")


def test_anthropic_a_top_level_cache_control_marks_the_last_block() -> None:
    body = {**anthropic_body(system_ttl=None), "cache_control": ephemeral()}
    assert prompt_view("anthropic", body).breakpoints == (2,)


@pytest.mark.parametrize(("model", "system_tokens", "miss"), [
    ("fake-sonnet", 1000, "below_min"),
    ("fake-sonnet", 1100, "cold"),
    ("fake-haiku", 1100, "below_min"),  # Haiku-class models need 2,048
    ("fake-haiku", 2100, "cold"),
])
def test_anthropic_minimum_length_depends_on_the_model(
    anthropic: PromptCache, model: str, system_tokens: int, miss: str,
) -> None:
    outcome = serve(anthropic, anthropic_body(words(system_tokens), model=model))
    assert outcome.miss == miss
    assert outcome.cache_write_tokens == (system_tokens if miss == "cold" else 0)


def test_anthropic_a_moving_breakpoint_reads_the_last_turn_and_writes_the_new_one(
    anthropic: PromptCache,
) -> None:
    serve(anthropic, anthropic_body(words(1300), "q1", last_ttl="5m"))
    outcome = serve(anthropic, anthropic_body(words(1300), "q1", "a1", "q2", last_ttl="5m"))
    # Each of q1, a1, q2 costs 3 (message) + 2 ("q" and "1").
    assert (outcome.cache_read_tokens, outcome.cache_write_5m_tokens, outcome.miss) == (
        1305, 10, None)


@pytest.mark.parametrize(("later_blocks", "read", "miss"), [(20, 1304, None), (21, 0, "cold")])
def test_anthropic_looks_back_twenty_blocks_from_a_breakpoint(
    anthropic: PromptCache, later_blocks: int, read: int, miss: str | None,
) -> None:
    serve(anthropic, anthropic_body(words(1300), "q", system_ttl=None, last_ttl="5m"))
    turns = [f"t{i}" for i in range(later_blocks)]
    outcome = serve(anthropic, anthropic_body(words(1300), "q", *turns, system_ttl=None,
                                              last_ttl="5m"))
    assert (outcome.cache_read_tokens, outcome.miss) == (read, miss)


def test_anthropic_five_minute_and_one_hour_lifetimes_are_refreshed_on_use(
    anthropic: PromptCache, clock: Clock,
) -> None:
    short, long = anthropic_body(words(1300), system_ttl="5m"), anthropic_body(
        words(1400), system_ttl="1h")
    assert serve(anthropic, short).cache_write_5m_tokens == 1300
    assert serve(anthropic, long).cache_write_1h_tokens == 1400
    clock.t = 290.0
    assert [serve(anthropic, b).miss for b in (short, long)] == [None, None]
    clock.t = 580.0  # 290 s after the refresh: the 5-minute entry is still alive
    assert [serve(anthropic, b).miss for b in (short, long)] == [None, None]
    clock.t = 881.0
    assert serve(anthropic, short).miss == "ttl_expired"
    clock.t = 580.0 + 3599.0
    assert serve(anthropic, long).miss is None
    clock.t += 3601.0
    expired = serve(anthropic, long)
    assert (expired.miss, expired.cache_read_tokens, expired.cache_write_1h_tokens) == (
        "ttl_expired", 0, 1400)


def test_anthropic_writes_are_split_by_the_lifetime_of_each_breakpoint(
    anthropic: PromptCache,
) -> None:
    body = anthropic_body(words(1300), words(500), system_ttl="1h", last_ttl="5m")
    outcome = serve(anthropic, body)
    assert (outcome.cache_write_1h_tokens, outcome.cache_write_5m_tokens) == (1300, 503)
    assert outcome.uncached_input_tokens == 0


def test_anthropic_a_changed_tool_list_is_named(anthropic: PromptCache) -> None:
    tool = {"name": "read", "input_schema": {"type": "object"}}
    body = {**anthropic_body(), "tools": [tool]}
    serve(anthropic, body)
    changed = {**body, "tools": [tool, {"name": "write", "input_schema": {"type": "object"}}]}
    assert serve(anthropic, changed).miss == "prefix_changed:tools"


def test_anthropic_a_new_compaction_summary_is_named(anthropic: PromptCache) -> None:
    serve(anthropic, anthropic_body(words(1300), "q1", "a1", "q2", last_ttl="5m"))
    compacted = anthropic_body(words(1300), f"{COMPACTION_MARKER} q1 and a1", "q2",
                               last_ttl="5m")
    outcome = serve(anthropic, compacted)
    assert (outcome.miss, outcome.cache_read_tokens) == ("prefix_changed:compaction", 1300)


def test_anthropic_a_fifth_breakpoint_is_a_bad_request(anthropic: PromptCache) -> None:
    body = anthropic_body(words(1300), "a", "b", "c", "d")
    for message in body["messages"]:
        message["content"][0]["cache_control"] = ephemeral()
    assert anthropic.check(prompt_view("anthropic", body)) == (
        "A maximum of 4 blocks with cache_control may be provided. Found 5.")
    body["system"][0].pop("cache_control")
    assert anthropic.check(prompt_view("anthropic", body)) is None


def test_anthropic_an_unknown_ttl_is_a_bad_request(anthropic: PromptCache) -> None:
    body = anthropic_body(system_ttl="2h")
    assert anthropic.check(prompt_view("anthropic", body)) == (
        "cache_control.ttl: Input should be '5m' or '1h' (got '2h')")
