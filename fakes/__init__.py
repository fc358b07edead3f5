"""The outside world of a run: fake providers, counting tools, the virtual clock, the disk.

Import from this package, never from its private modules. The names are imported on
first use (PEP 562): a reader of scenarios takes the crash classes and the quota from
here without loading the fake providers' stream machinery.
"""

from __future__ import annotations

from harness._lazy import lazy_exports as _lazy_exports

# Not ``typing.TYPE_CHECKING``: the type checker treats any constant of this name alike.
TYPE_CHECKING = False

# Where each public name lives; the block under TYPE_CHECKING repeats it as imports.
_HOMES: dict[str, list[str]] = {
    "fakes._cache": [
        "MISS_KINDS", "AnthropicCacheRules", "CacheConfig", "CacheOutcome", "OpenAICacheRules",
        "PromptCache"
    ],
    "fakes._clock": [
        "ClockRunner", "VirtualClock"
    ],
    "fakes._conditions": [
        "ContextWindow", "Outage", "ProviderConditions"
    ],
    "fakes._crashdisk": [
        "CRASH_CLASSES", "CRASH_CLASS_MEANINGS", "POINT_OPS", "CrashClass", "CrashDisk",
        "CrashPlan", "DeadIncarnationError", "HarnessLimitExceeded", "Incarnations",
        "PersistencePoint", "ProcessGone", "SimulatedCrash", "crash_class_applies"
    ],
    "fakes._dialects": [
        "WIRE", "WireDialect", "chat_view"
    ],
    "fakes._faults": [
        "apply_response"
    ],
    "fakes._goals": [
        "LEASE_SECONDS", "GoalEdit", "GoalService", "GoalServicePort"
    ],
    "fakes._httpx2_adapter": [
        "FakeHttpx2Transport"
    ],
    "fakes._jobs": [
        "FakeJobRunner", "JobSpec", "RunnerJob", "RunnerPort"
    ],
    "fakes._latency": [
        "Latency"
    ],
    "fakes._ledger": [
        "ToolLedger", "Witness", "WorldState"
    ],
    "fakes._provider": [
        "FakeProvider", "ProviderRequest", "Responder", "output_tokens"
    ],
    "fakes._quota": [
        "RATE_LIMIT_WIRES", "Quota", "QuotaWindow", "RateLimitWire", "go_duration",
        "quota_fields"
    ],
    "fakes._script": [
        "ScriptedResponse", "ScriptedUsage", "Text", "ToolUse"
    ],
    "fakes._segments": [
        "COMPACTION_MARKER", "INSTRUCTIONS_MARKER", "SEGMENTS", "PromptBlock", "PromptView",
        "prompt_view"
    ],
    "fakes._threads": [
        "CASE_THREADS", "at_work", "settle_threads", "standing_by"
    ],
    "fakes._tokenizer": [
        "count_tokens"
    ],
    "fakes._tools": [
        "BEHAVIOURS", "CHILD_ENVIRONMENT", "LOOP_BOUND_BEHAVIOURS", "Behaviour", "ToolFailure",
        "WorldTool", "child_environment", "effect_result", "run_in_process_group",
        "subprocess_environment"
    ],
    "fakes._transport": [
        "CONNECTION_RESET", "IncomingRequest", "ResponsePlan", "play_steps", "wait_before_headers"
    ],
    "fakes._verifier": [
        "ScriptedVerifier", "VerifierRule"
    ],
    "fakes._wire": [
        "Emit", "Hang", "Pause", "Reset", "Step", "compact_json"
    ],
    "harness.ports": [
        "OUTAGE_ANSWERS", "OutageAnswer",
        "BROKEN_STREAM_FAULTS", "CONCURRENCY_SAFE_TOOL_KINDS", "CUTTING_FAULTS", "FAULT_KINDS",
        "HTTP_ERROR_STATUSES", "MAX_COUNT", "MAX_SECONDS", "NEIGHBOUR_SESSION", "PRICES",
        "PRICES_AS_OF", "PURE_TOOL_KINDS", "SILENCING_FAULTS", "TOOL_KINDS", "TOOL_KIND_TRAITS",
        "ByteAtATime",
        "ConnectionReset", "Doc", "DoomLoop", "EmptyBody", "ErrorInStream", "Fault", "HttpError",
        "HttpErrorStatus", "InjectComments", "InjectPings", "InvalidToolArguments",
        "LineEndings", "MalformedFrame", "ModelPrice", "NoTerminalEvent", "NoUsageChunk",
        "OneLine", "RandomSplits", "SlowDrip", "SplitAt", "SplitBetweenCrLf",
        "SplitInsideDataField", "SplitInsideUtf8", "Stall", "StallBeforeHeaders",
        "StallConnecting", "ToolKind", "ToolKindTraits", "TruncatedToolArguments",
        "UsageBuckets", "Wording", "check_faults", "cost", "has_price", "idempotency_key",
        "own_prices", "price_of", "use_prices"
    ],
}

if TYPE_CHECKING:
    from fakes._cache import (
        MISS_KINDS,
        AnthropicCacheRules,
        CacheConfig,
        CacheOutcome,
        OpenAICacheRules,
        PromptCache,
    )
    from fakes._clock import (
        ClockRunner,
        VirtualClock,
    )
    from fakes._conditions import (
        ContextWindow,
        Outage,
        ProviderConditions,
    )
    from fakes._crashdisk import (
        CRASH_CLASS_MEANINGS,
        CRASH_CLASSES,
        POINT_OPS,
        CrashClass,
        CrashDisk,
        CrashPlan,
        DeadIncarnationError,
        HarnessLimitExceeded,
        Incarnations,
        PersistencePoint,
        ProcessGone,
        SimulatedCrash,
        crash_class_applies,
    )
    from fakes._dialects import (
        WIRE,
        WireDialect,
        chat_view,
    )
    from fakes._faults import (
        apply_response,
    )
    from fakes._goals import (
        LEASE_SECONDS,
        GoalEdit,
        GoalService,
        GoalServicePort,
    )
    from fakes._httpx2_adapter import (
        FakeHttpx2Transport,
    )
    from fakes._jobs import (
        FakeJobRunner,
        JobSpec,
        RunnerJob,
        RunnerPort,
    )
    from fakes._latency import (
        Latency,
    )
    from fakes._ledger import (
        ToolLedger,
        Witness,
        WorldState,
    )
    from fakes._provider import (
        FakeProvider,
        ProviderRequest,
        Responder,
        output_tokens,
    )
    from fakes._quota import (
        RATE_LIMIT_WIRES,
        Quota,
        QuotaWindow,
        RateLimitWire,
        go_duration,
        quota_fields,
    )
    from fakes._script import (
        ScriptedResponse,
        ScriptedUsage,
        Text,
        ToolUse,
    )
    from fakes._segments import (
        COMPACTION_MARKER,
        INSTRUCTIONS_MARKER,
        SEGMENTS,
        PromptBlock,
        PromptView,
        prompt_view,
    )
    from fakes._threads import (
        CASE_THREADS,
        at_work,
        settle_threads,
        standing_by,
    )
    from fakes._tokenizer import (
        count_tokens,
    )
    from fakes._tools import (
        BEHAVIOURS,
        CHILD_ENVIRONMENT,
        LOOP_BOUND_BEHAVIOURS,
        Behaviour,
        ToolFailure,
        WorldTool,
        child_environment,
        effect_result,
        run_in_process_group,
        subprocess_environment,
    )
    from fakes._transport import (
        CONNECTION_RESET,
        IncomingRequest,
        ResponsePlan,
        play_steps,
        wait_before_headers,
    )
    from fakes._verifier import (
        ScriptedVerifier,
        VerifierRule,
    )
    from fakes._wire import (
        Emit,
        Hang,
        Pause,
        Reset,
        Step,
        compact_json,
    )
    from harness.ports import (
        BROKEN_STREAM_FAULTS,
        CONCURRENCY_SAFE_TOOL_KINDS,
        CUTTING_FAULTS,
        FAULT_KINDS,
        HTTP_ERROR_STATUSES,
        MAX_COUNT,
        MAX_SECONDS,
        NEIGHBOUR_SESSION,
        OUTAGE_ANSWERS,
        PRICES,
        PRICES_AS_OF,
        PURE_TOOL_KINDS,
        SILENCING_FAULTS,
        TOOL_KIND_TRAITS,
        TOOL_KINDS,
        ByteAtATime,
        ConnectionReset,
        Doc,
        DoomLoop,
        EmptyBody,
        ErrorInStream,
        Fault,
        HttpError,
        HttpErrorStatus,
        InjectComments,
        InjectPings,
        InvalidToolArguments,
        LineEndings,
        MalformedFrame,
        ModelPrice,
        NoTerminalEvent,
        NoUsageChunk,
        OneLine,
        OutageAnswer,
        RandomSplits,
        SlowDrip,
        SplitAt,
        SplitBetweenCrLf,
        SplitInsideDataField,
        SplitInsideUtf8,
        Stall,
        StallBeforeHeaders,
        StallConnecting,
        ToolKind,
        ToolKindTraits,
        TruncatedToolArguments,
        UsageBuckets,
        Wording,
        check_faults,
        cost,
        has_price,
        idempotency_key,
        own_prices,
        price_of,
        use_prices,
    )
else:
    __getattr__ = _lazy_exports(__name__, _HOMES)
del TYPE_CHECKING


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "BEHAVIOURS",
    "BROKEN_STREAM_FAULTS",
    "CASE_THREADS",
    "CHILD_ENVIRONMENT",
    "COMPACTION_MARKER",
    "CONCURRENCY_SAFE_TOOL_KINDS",
    "CONNECTION_RESET",
    "CRASH_CLASSES",
    "CRASH_CLASS_MEANINGS",
    "CUTTING_FAULTS",
    "FAULT_KINDS",
    "HTTP_ERROR_STATUSES",
    "INSTRUCTIONS_MARKER",
    "LEASE_SECONDS",
    "LOOP_BOUND_BEHAVIOURS",
    "MAX_COUNT",
    "MAX_SECONDS",
    "MISS_KINDS",
    "NEIGHBOUR_SESSION",
    "OUTAGE_ANSWERS",
    "POINT_OPS",
    "PRICES",
    "PRICES_AS_OF",
    "PURE_TOOL_KINDS",
    "RATE_LIMIT_WIRES",
    "SEGMENTS",
    "SILENCING_FAULTS",
    "TOOL_KINDS",
    "TOOL_KIND_TRAITS",
    "WIRE",
    "AnthropicCacheRules",
    "Behaviour",
    "ByteAtATime",
    "CacheConfig",
    "CacheOutcome",
    "ClockRunner",
    "ConnectionReset",
    "ContextWindow",
    "CrashClass",
    "CrashDisk",
    "CrashPlan",
    "DeadIncarnationError",
    "Doc",
    "DoomLoop",
    "Emit",
    "EmptyBody",
    "ErrorInStream",
    "FakeHttpx2Transport",
    "FakeJobRunner",
    "FakeProvider",
    "Fault",
    "GoalEdit",
    "GoalService",
    "GoalServicePort",
    "Hang",
    "HarnessLimitExceeded",
    "HttpError",
    "HttpErrorStatus",
    "Incarnations",
    "IncomingRequest",
    "InjectComments",
    "InjectPings",
    "InvalidToolArguments",
    "JobSpec",
    "Latency",
    "LineEndings",
    "MalformedFrame",
    "ModelPrice",
    "NoTerminalEvent",
    "NoUsageChunk",
    "OneLine",
    "OpenAICacheRules",
    "Outage",
    "OutageAnswer",
    "Pause",
    "PersistencePoint",
    "ProcessGone",
    "PromptBlock",
    "PromptCache",
    "PromptView",
    "ProviderConditions",
    "ProviderRequest",
    "Quota",
    "QuotaWindow",
    "RandomSplits",
    "RateLimitWire",
    "Reset",
    "Responder",
    "ResponsePlan",
    "RunnerJob",
    "RunnerPort",
    "ScriptedResponse",
    "ScriptedUsage",
    "ScriptedVerifier",
    "SimulatedCrash",
    "SlowDrip",
    "SplitAt",
    "SplitBetweenCrLf",
    "SplitInsideDataField",
    "SplitInsideUtf8",
    "Stall",
    "StallBeforeHeaders",
    "StallConnecting",
    "Step",
    "Text",
    "ToolFailure",
    "ToolKind",
    "ToolKindTraits",
    "ToolLedger",
    "ToolUse",
    "TruncatedToolArguments",
    "UsageBuckets",
    "VerifierRule",
    "VirtualClock",
    "WireDialect",
    "Witness",
    "Wording",
    "WorldState",
    "WorldTool",
    "apply_response",
    "at_work",
    "chat_view",
    "check_faults",
    "child_environment",
    "compact_json",
    "cost",
    "count_tokens",
    "crash_class_applies",
    "effect_result",
    "go_duration",
    "has_price",
    "idempotency_key",
    "output_tokens",
    "own_prices",
    "play_steps",
    "price_of",
    "prompt_view",
    "quota_fields",
    "run_in_process_group",
    "settle_threads",
    "standing_by",
    "subprocess_environment",
    "use_prices",
    "wait_before_headers",
]
