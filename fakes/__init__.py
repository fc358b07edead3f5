"""The outside world of a run: fake providers, counting tools, the virtual clock, the disk.

Import from this package, never from its private modules. The names are imported on
first use (PEP 562): a reader of scenarios takes the crash classes and the quota from
here without loading the fake providers' stream machinery.
"""

from __future__ import annotations

from harness._lazy import exported_names as _exported_names
from harness._lazy import lazy_exports as _lazy_exports

# Not ``typing.TYPE_CHECKING``: the type checker treats any constant of this name alike.
TYPE_CHECKING = False

# Where each public name lives: the lazy import reads it and ``__all__`` is made from it;
# the block under TYPE_CHECKING repeats it as imports for the type checker
# (tests/test_lazy_exports.py holds the two alike).
_EXPORTS: dict[str, list[str]] = {
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
        "ToolReplyLost", "WorldTool", "child_environment", "effect_result", "long_output",
        "run_in_process_group",
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
    from fakes._cache import MISS_KINDS as MISS_KINDS
    from fakes._cache import AnthropicCacheRules as AnthropicCacheRules
    from fakes._cache import CacheConfig as CacheConfig
    from fakes._cache import CacheOutcome as CacheOutcome
    from fakes._cache import OpenAICacheRules as OpenAICacheRules
    from fakes._cache import PromptCache as PromptCache
    from fakes._clock import ClockRunner as ClockRunner
    from fakes._clock import VirtualClock as VirtualClock
    from fakes._conditions import ContextWindow as ContextWindow
    from fakes._conditions import Outage as Outage
    from fakes._conditions import ProviderConditions as ProviderConditions
    from fakes._crashdisk import CRASH_CLASS_MEANINGS as CRASH_CLASS_MEANINGS
    from fakes._crashdisk import CRASH_CLASSES as CRASH_CLASSES
    from fakes._crashdisk import POINT_OPS as POINT_OPS
    from fakes._crashdisk import CrashClass as CrashClass
    from fakes._crashdisk import CrashDisk as CrashDisk
    from fakes._crashdisk import CrashPlan as CrashPlan
    from fakes._crashdisk import DeadIncarnationError as DeadIncarnationError
    from fakes._crashdisk import HarnessLimitExceeded as HarnessLimitExceeded
    from fakes._crashdisk import Incarnations as Incarnations
    from fakes._crashdisk import PersistencePoint as PersistencePoint
    from fakes._crashdisk import ProcessGone as ProcessGone
    from fakes._crashdisk import SimulatedCrash as SimulatedCrash
    from fakes._crashdisk import crash_class_applies as crash_class_applies
    from fakes._dialects import WIRE as WIRE
    from fakes._dialects import WireDialect as WireDialect
    from fakes._dialects import chat_view as chat_view
    from fakes._faults import apply_response as apply_response
    from fakes._goals import LEASE_SECONDS as LEASE_SECONDS
    from fakes._goals import GoalEdit as GoalEdit
    from fakes._goals import GoalService as GoalService
    from fakes._goals import GoalServicePort as GoalServicePort
    from fakes._httpx2_adapter import FakeHttpx2Transport as FakeHttpx2Transport
    from fakes._jobs import FakeJobRunner as FakeJobRunner
    from fakes._jobs import JobSpec as JobSpec
    from fakes._jobs import RunnerJob as RunnerJob
    from fakes._jobs import RunnerPort as RunnerPort
    from fakes._latency import Latency as Latency
    from fakes._ledger import ToolLedger as ToolLedger
    from fakes._ledger import Witness as Witness
    from fakes._ledger import WorldState as WorldState
    from fakes._provider import FakeProvider as FakeProvider
    from fakes._provider import ProviderRequest as ProviderRequest
    from fakes._provider import Responder as Responder
    from fakes._provider import output_tokens as output_tokens
    from fakes._quota import RATE_LIMIT_WIRES as RATE_LIMIT_WIRES
    from fakes._quota import Quota as Quota
    from fakes._quota import QuotaWindow as QuotaWindow
    from fakes._quota import RateLimitWire as RateLimitWire
    from fakes._quota import go_duration as go_duration
    from fakes._quota import quota_fields as quota_fields
    from fakes._script import ScriptedResponse as ScriptedResponse
    from fakes._script import ScriptedUsage as ScriptedUsage
    from fakes._script import Text as Text
    from fakes._script import ToolUse as ToolUse
    from fakes._segments import COMPACTION_MARKER as COMPACTION_MARKER
    from fakes._segments import INSTRUCTIONS_MARKER as INSTRUCTIONS_MARKER
    from fakes._segments import SEGMENTS as SEGMENTS
    from fakes._segments import PromptBlock as PromptBlock
    from fakes._segments import PromptView as PromptView
    from fakes._segments import prompt_view as prompt_view
    from fakes._threads import CASE_THREADS as CASE_THREADS
    from fakes._threads import at_work as at_work
    from fakes._threads import settle_threads as settle_threads
    from fakes._threads import standing_by as standing_by
    from fakes._tokenizer import count_tokens as count_tokens
    from fakes._tools import BEHAVIOURS as BEHAVIOURS
    from fakes._tools import CHILD_ENVIRONMENT as CHILD_ENVIRONMENT
    from fakes._tools import LOOP_BOUND_BEHAVIOURS as LOOP_BOUND_BEHAVIOURS
    from fakes._tools import Behaviour as Behaviour
    from fakes._tools import ToolFailure as ToolFailure
    from fakes._tools import ToolReplyLost as ToolReplyLost
    from fakes._tools import WorldTool as WorldTool
    from fakes._tools import child_environment as child_environment
    from fakes._tools import effect_result as effect_result
    from fakes._tools import long_output as long_output
    from fakes._tools import run_in_process_group as run_in_process_group
    from fakes._tools import subprocess_environment as subprocess_environment
    from fakes._transport import CONNECTION_RESET as CONNECTION_RESET
    from fakes._transport import IncomingRequest as IncomingRequest
    from fakes._transport import ResponsePlan as ResponsePlan
    from fakes._transport import play_steps as play_steps
    from fakes._transport import wait_before_headers as wait_before_headers
    from fakes._verifier import ScriptedVerifier as ScriptedVerifier
    from fakes._verifier import VerifierRule as VerifierRule
    from fakes._wire import Emit as Emit
    from fakes._wire import Hang as Hang
    from fakes._wire import Pause as Pause
    from fakes._wire import Reset as Reset
    from fakes._wire import Step as Step
    from fakes._wire import compact_json as compact_json
    from harness.ports import BROKEN_STREAM_FAULTS as BROKEN_STREAM_FAULTS
    from harness.ports import CONCURRENCY_SAFE_TOOL_KINDS as CONCURRENCY_SAFE_TOOL_KINDS
    from harness.ports import CUTTING_FAULTS as CUTTING_FAULTS
    from harness.ports import FAULT_KINDS as FAULT_KINDS
    from harness.ports import HTTP_ERROR_STATUSES as HTTP_ERROR_STATUSES
    from harness.ports import MAX_COUNT as MAX_COUNT
    from harness.ports import MAX_SECONDS as MAX_SECONDS
    from harness.ports import NEIGHBOUR_SESSION as NEIGHBOUR_SESSION
    from harness.ports import OUTAGE_ANSWERS as OUTAGE_ANSWERS
    from harness.ports import PRICES as PRICES
    from harness.ports import PRICES_AS_OF as PRICES_AS_OF
    from harness.ports import PURE_TOOL_KINDS as PURE_TOOL_KINDS
    from harness.ports import SILENCING_FAULTS as SILENCING_FAULTS
    from harness.ports import TOOL_KIND_TRAITS as TOOL_KIND_TRAITS
    from harness.ports import TOOL_KINDS as TOOL_KINDS
    from harness.ports import ByteAtATime as ByteAtATime
    from harness.ports import ConnectionReset as ConnectionReset
    from harness.ports import Doc as Doc
    from harness.ports import DoomLoop as DoomLoop
    from harness.ports import EmptyBody as EmptyBody
    from harness.ports import ErrorInStream as ErrorInStream
    from harness.ports import Fault as Fault
    from harness.ports import HttpError as HttpError
    from harness.ports import HttpErrorStatus as HttpErrorStatus
    from harness.ports import InjectComments as InjectComments
    from harness.ports import InjectPings as InjectPings
    from harness.ports import InvalidToolArguments as InvalidToolArguments
    from harness.ports import LineEndings as LineEndings
    from harness.ports import MalformedFrame as MalformedFrame
    from harness.ports import ModelPrice as ModelPrice
    from harness.ports import NoTerminalEvent as NoTerminalEvent
    from harness.ports import NoUsageChunk as NoUsageChunk
    from harness.ports import OneLine as OneLine
    from harness.ports import OutageAnswer as OutageAnswer
    from harness.ports import RandomSplits as RandomSplits
    from harness.ports import SlowDrip as SlowDrip
    from harness.ports import SplitAt as SplitAt
    from harness.ports import SplitBetweenCrLf as SplitBetweenCrLf
    from harness.ports import SplitInsideDataField as SplitInsideDataField
    from harness.ports import SplitInsideUtf8 as SplitInsideUtf8
    from harness.ports import Stall as Stall
    from harness.ports import StallBeforeHeaders as StallBeforeHeaders
    from harness.ports import StallConnecting as StallConnecting
    from harness.ports import ToolKind as ToolKind
    from harness.ports import ToolKindTraits as ToolKindTraits
    from harness.ports import TruncatedToolArguments as TruncatedToolArguments
    from harness.ports import UsageBuckets as UsageBuckets
    from harness.ports import Wording as Wording
    from harness.ports import check_faults as check_faults
    from harness.ports import cost as cost
    from harness.ports import has_price as has_price
    from harness.ports import idempotency_key as idempotency_key
    from harness.ports import own_prices as own_prices
    from harness.ports import price_of as price_of
    from harness.ports import use_prices as use_prices
else:
    __getattr__ = _lazy_exports(__name__, _EXPORTS)
del TYPE_CHECKING


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = list(_exported_names(_EXPORTS))
