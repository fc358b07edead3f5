"""The two record tables a report reads: one row per request attempt, one per run.

Column names follow the OpenTelemetry GenAI semantic conventions where one
exists (``gen_ai.*``; "Semantic conventions for generative AI", read
2026-11-29: the cache attributes are ``gen_ai.usage.cache_read.input_tokens``
and ``gen_ai.usage.cache_creation.input_tokens`` and both are *included in*
``gen_ai.usage.input_tokens``; time to first chunk is
``gen_ai.response.time_to_first_chunk``, in seconds). Everything else is ours,
under ``harness.*``.

Usage is also kept in the disjoint billing buckets of DESIGN §7
(``harness.usage.*``): uncached input + cache read + cache write 5 min + cache
write 1 h = input. A bucket the run did not report is null, never 0: seed 002
§19.7's cached input share counts only requests that report cache fields.

Every name a report uses is a constant here, so a rename is one edit::

    frame.filter(pl.col(INPUT_TOKENS) > 0)
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import polars as pl

# -- attempt table: OpenTelemetry GenAI names -----------------------------------------------
MODEL = "gen_ai.request.model"
PROVIDER = "gen_ai.provider.name"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION = "gen_ai.usage.cache_creation.input_tokens"
TTFT = "gen_ai.response.time_to_first_chunk"

# -- shared keys (both tables) ---------------------------------------------------------------
RELEASE = "harness.release"
SCENARIO = "harness.scenario"
CASE_ID = "harness.case_id"
SEED = "harness.seed"
CRASH_LABEL = "harness.crash_label"

# -- attempt table: ours ---------------------------------------------------------------------
ATTEMPT_ID = "harness.attempt_id"
REQUEST_INDEX = "harness.request_index"
TURN = "harness.turn"
ATTEMPT = "harness.attempt"
STARTED_AT = "harness.started_at"
ENDED_AT = "harness.ended_at"
OUTCOME = "harness.outcome"
RETRY_LAYER = "harness.retry_layer"
CACHE_MISS = "harness.cache_miss"
PROMPT_VERSION = "harness.prompt_version"
TOOL_LIST_VERSION = "harness.tool_list_version"
INSTRUCTIONS_VERSION = "harness.instructions_version"
COMPACTION_VERSION = "harness.compaction_version"
UNCACHED_INPUT = "harness.usage.uncached_input_tokens"
CACHE_WRITE_5M = "harness.usage.cache_write_5m_tokens"
CACHE_WRITE_1H = "harness.usage.cache_write_1h_tokens"
COST_USD = "harness.cost_usd"

# -- run table: ours -------------------------------------------------------------------------
PASSED = "harness.passed"
STOP_STATE = "harness.stop_state"
STOP_REASON = "harness.stop_reason"
CRASH_REACHED = "harness.crash_reached"
DUPLICATES = "harness.duplicates"
RETRIES = "harness.retries"
VIRTUAL_SECONDS = "harness.virtual_seconds"
ERROR = "harness.error"
FAILED_INVARIANTS = "harness.failed_invariants"
UNKNOWN_INVARIANTS = "harness.unknown_invariants"
VERDICTS = "harness.verdicts"
SKIPPED = "harness.skipped"
ATTEMPTS = "harness.attempts"

VERDICT_TYPE = pl.Struct({"invariant": pl.String, "status": pl.String, "message": pl.String,
                          "evidence": pl.List(pl.String)})

ATTEMPT_SCHEMA = pl.Schema({
    RELEASE: pl.String, SCENARIO: pl.String, CASE_ID: pl.String, SEED: pl.Int64,
    CRASH_LABEL: pl.String, ATTEMPT_ID: pl.String, REQUEST_INDEX: pl.Int64, TURN: pl.Int64,
    ATTEMPT: pl.Int64, MODEL: pl.String, PROVIDER: pl.String, STARTED_AT: pl.Float64,
    ENDED_AT: pl.Float64, TTFT: pl.Float64, OUTCOME: pl.String, RETRY_LAYER: pl.String,
    INPUT_TOKENS: pl.Int64, OUTPUT_TOKENS: pl.Int64, CACHE_READ: pl.Int64,
    CACHE_CREATION: pl.Int64, UNCACHED_INPUT: pl.Int64, CACHE_WRITE_5M: pl.Int64,
    CACHE_WRITE_1H: pl.Int64, CACHE_MISS: pl.String, PROMPT_VERSION: pl.String,
    TOOL_LIST_VERSION: pl.String, INSTRUCTIONS_VERSION: pl.String,
    COMPACTION_VERSION: pl.String, COST_USD: pl.Float64,
})
"""One row per request attempt (a retry is its own row, failed ones included)."""

RUN_SCHEMA = pl.Schema({  # type: ignore[arg-type]  # mypy joins dtype classes to object
    RELEASE: pl.String, SCENARIO: pl.String, CASE_ID: pl.String, SEED: pl.Int64,
    CRASH_LABEL: pl.String, PASSED: pl.Boolean, SKIPPED: pl.Boolean, STOP_STATE: pl.String,
    STOP_REASON: pl.String, CRASH_REACHED: pl.Boolean, DUPLICATES: pl.Int64,
    RETRIES: pl.Int64, VIRTUAL_SECONDS: pl.Float64, ERROR: pl.String,
    FAILED_INVARIANTS: pl.List(pl.String), UNKNOWN_INVARIANTS: pl.List(pl.String),
    VERDICTS: pl.List(VERDICT_TYPE), ATTEMPTS: pl.Int64, COST_USD: pl.Float64,
})
"""One row per run of a case (a scenario, a seed, at most one crash)."""

PAIR_KEY: tuple[str, ...] = (SCENARIO, SEED, CRASH_LABEL)
"""Runs of two releases are paired on these columns (the crash label may be null)."""

# -- where each column comes from ------------------------------------------------------------
# The runner's column (harness/_output.py) behind each of ours; one place to edit when the
# runner grows. Columns derived by the loader are listed in DERIVED; columns the runner
# does not write yet are in NOT_REPORTED and load as null.
ATTEMPT_FROM_RUNNER: Mapping[str, str] = MappingProxyType({
    SCENARIO: "scenario", CASE_ID: "case_id", SEED: "seed", REQUEST_INDEX: "request_index",
    TURN: "turn", ATTEMPT: "attempt", MODEL: "model", STARTED_AT: "started_at",
    ENDED_AT: "ended_at", OUTCOME: "outcome", INPUT_TOKENS: "input_tokens",
    OUTPUT_TOKENS: "output_tokens", CACHE_READ: "cache_read_tokens",
    CACHE_CREATION: "cache_write_tokens", CACHE_MISS: "cache_miss", RETRY_LAYER: "retry_layer",
    ATTEMPT_ID: "attempt_id",
    # Not written by the runner yet; picked up as soon as it writes them.
    CACHE_WRITE_5M: "cache_write_5m_tokens", CACHE_WRITE_1H: "cache_write_1h_tokens",
    PROMPT_VERSION: "prompt_version", TOOL_LIST_VERSION: "tool_list_version",
    INSTRUCTIONS_VERSION: "instructions_version", COMPACTION_VERSION: "compaction_version",
    PROVIDER: "provider",
})

RUN_FROM_RUNNER: Mapping[str, str] = MappingProxyType({
    SCENARIO: "scenario", CASE_ID: "case_id", SEED: "seed", PASSED: "passed",
    STOP_STATE: "stop_state", STOP_REASON: "stop_reason", CRASH_REACHED: "crash_reached",
    DUPLICATES: "duplicates", RETRIES: "retries", VIRTUAL_SECONDS: "virtual_seconds",
    ERROR: "error", FAILED_INVARIANTS: "failed_invariants",
    UNKNOWN_INVARIANTS: "unknown_invariants", VERDICTS: "verdicts",
    SKIPPED: "skipped",
})

DERIVED: Mapping[str, str] = MappingProxyType({
    RELEASE: "manifest 'release', else the result folder's name",
    CRASH_LABEL: "crash_point:crash_when:crash_class[:again], as CrashSpec.label",
    ATTEMPT_ID: "the agent's x-attempt-id; else case_id#request_index.attempt",
    TTFT: "first_byte_at - started_at (virtual seconds)",
    PROVIDER: "the model's family when the runner gives none (fake-gpt* -> openai)",
    UNCACHED_INPUT: "input - cache read - cache write",
    CACHE_WRITE_5M: "the whole cache write when the runner gives no split (the default TTL)",
    COST_USD: "the dated price table, per bucket (fakes.PRICES)",
    ATTEMPTS: "attempt rows of the run", SKIPPED: "false when the runner gives none",
})

NOT_REPORTED: tuple[str, ...] = ()
"""Columns the runner does not write yet: null ("not reported"), never 0. The cache
columns (writes by lifetime, segment versions) are null when a scenario runs without the
prompt cache, and the attempt id and retry layer when the agent does not send them."""
