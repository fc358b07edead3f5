"""The ports between an agent and its world, and what both sides compute alike.

The agent core (:mod:`harness.agent`) talks to the world only through these
small protocols, and the fakes (:mod:`fakes`) implement them; neither side
imports the other's internals (DESIGN §4). Besides the ports (:class:`Disk`,
:class:`AppendFile`, :class:`Clock`, :class:`Tool`), this package holds the
helpers both sides must compute identically: the seeded random streams and ids,
the hashes of arguments and side effects, the remembered path helpers, the
mapping of ``OSError`` to :class:`harness.DiskError`, the reading of a tool
reply's outcome the scripted model and the checkers share (:func:`classify_reply`),
and the reading of a stream and its waits that the reference client, the world and
the recorder share (:class:`SSEDecoder`, :func:`parse_retry_after`, the headers that
name an attempt).

It also holds the contract every agent is run under (:class:`Agent`,
:class:`AgentPorts`, :class:`Task`, :class:`AgentOutcome`, the stop states, the reply
statuses, the finish reasons and :class:`Usage`), so the scenario loader, the runner
and the checkers know what an agent is without loading the reference agent. And it
holds the tables the world and the checkers both read: what each tool kind is
(:data:`TOOL_KIND_TRAITS`), what each fault is and does to a stream (:data:`FAULT_KINDS`,
:data:`FAULT_MEANINGS`) and what each model costs (:data:`PRICES`, :func:`cost`), so
judging a trace never loads the fakes and loading a scenario never loads their stream
machinery.

The names are imported on first use (PEP 562), listed once in ``_EXPORTS`` as the other
lazy packages list theirs: a module that needs the stop states does not load the fault
catalogue or the price table.
"""

from harness._lazy import exported_names as _exported_names
from harness._lazy import lazy_exports as _lazy_exports

# Not ``typing.TYPE_CHECKING``: the type checker treats any constant of this name alike.
TYPE_CHECKING = False

# Where each public name lives: the lazy import reads it and ``__all__`` is made from it;
# the block under TYPE_CHECKING repeats it as imports for the type checker
# (tests/test_lazy_exports.py holds the two alike).
_EXPORTS: dict[str, list[str]] = {
    "harness.ports._agent": [
        "REPLY_STATUS_MEANINGS", "REPLY_STATUSES", "STOP_STATES", "Agent", "AgentFactory",
        "AgentOutcome", "AgentPorts", "RecoveryReport", "ReplyStatus", "StopState", "Task",
        "ToolCallView", "ToolSpec", "TranscriptMessage", "UsagePrices"
    ],
    "harness.ports._clock": [
        "CALENDAR_ORIGIN_UNIX", "Clock", "LoopClock"
    ],
    "harness.ports._dialect": [
        "ATTEMPT_ID_HEADER", "DIALECTS", "FINISH_REASONS", "RETRY_LAYER_HEADER", "SPECS",
        "WITHHELD_FINISHES", "Dialect", "DialectSpec", "Family", "FinishReason", "check_dialect",
        "cut_at_limit", "family_of"
    ],
    "harness.ports._disk": [
        "AppendFile", "AppendFileHandle", "ClosesOnExit", "Disk", "call_os", "dirname", "normpath"
    ],
    "harness.ports._fault_meanings": [
        "BROKEN_STREAM_FAULTS", "CUTTING_FAULTS", "FAULT_MEANINGS", "LOOPING_FAULTS",
        "SILENCING_FAULTS", "FaultMeaning"
    ],
    "harness.ports._faults": [
        "FAULT_KINDS", "FAULT_TYPES", "HTTP_ERROR_STATUSES", "LAYERS", "OUTAGE_ANSWERS",
        "ByteAtATime", "ByteFault", "ConnectionReset", "CutToolArguments", "DoomLoop", "EmptyBody",
        "ErrorInStream", "Fault", "FaultRule", "FrameFault", "HttpError", "HttpErrorStatus",
        "InjectComments", "InjectPings", "InvalidToolArguments", "Layer", "LineEnding",
        "LineEndings", "MalformedFrame", "NoTerminalEvent", "NoUsageChunk", "OutageAnswer",
        "RandomSplits", "RuleBreach", "SlowDrip", "SplitAt", "SplitBetweenCrLf",
        "SplitInsideDataField", "SplitInsideUtf8", "Stall", "StallBeforeHeaders",
        "StallConnecting", "TruncatedToolArguments", "check_faults", "is_http_date",
        "retry_after_breach", "rule_breaches", "whole_seconds"
    ],
    "harness.ports._goals": [
        "RESTART_POLICIES", "TERMINAL_GOAL_STATUSES", "VERIFIER_OUTCOMES",
        "WAITING_GOAL_STATUSES", "CheckRun",
        "CompletionProof", "CriterionVerdict", "Goal", "GoalAction", "GoalAnswer", "GoalBudget",
        "GoalEventKind", "GoalPort", "GoalStatus", "JudgeKind", "Lease", "RestartPolicy",
        "Verification", "VerifierOutcome", "protecting_pattern"
    ],
    "harness.ports._hashing": [
        "asked_for", "idempotency_key", "sha256_json"
    ],
    "harness.ports._ids": [
        "IdSource", "rng_stream"
    ],
    "harness.ports._jobs": [
        "CANCEL_STATUSES", "CANCEL_TARGETS", "JOB_COMPLETED_MARKER", "NEIGHBOUR_SESSION",
        "CancelAck", "CancelHook", "CancelRequest", "CancelStatus", "CancelTarget", "JobIdentity",
        "JobPort", "JobRunnerUnavailable", "JobState", "JobStatus", "OutputChunk", "Signal",
        "Wakeup"
    ],
    "harness.ports._limits": [
        "MAX_COUNT", "MAX_OUTPUT_CHARS", "MAX_SECONDS", "MIN_INLINE_CHARS", "Count", "Doc",
        "OneLine", "Wording"
    ],
    "harness.ports._prices": [
        "PRICES", "PRICES_AS_OF", "ModelPrice", "UsageBuckets", "cost", "has_price", "own_prices",
        "price_of", "use_prices"
    ],
    "harness.ports._replies": [
        "TOOL_OUTCOME_MEANINGS", "TOOL_OUTCOMES", "ToolOutcome", "classify_reply", "reply_failed"
    ],
    "harness.ports._retry_after": [
        "parse_retry_after"
    ],
    "harness.ports._sse": [
        "SSEDecoder", "SSEEvent"
    ],
    "harness.ports._tool_kinds": [
        "CONCURRENCY_SAFE_TOOL_KINDS", "PURE_TOOL_KINDS", "TOOL_KIND_TRAITS", "TOOL_KINDS",
        "TOOL_PARAMETERS", "ToolKind", "ToolKindTraits"
    ],
    "harness.ports._tools": [
        "KeyedCall", "PassThroughTool", "Tool", "ToolContext", "ToolInvocation", "named_path",
        "reads_only"
    ],
    "harness.ports._usage": [
        "Usage"
    ],
}

if TYPE_CHECKING:
    from harness.ports._agent import REPLY_STATUS_MEANINGS as REPLY_STATUS_MEANINGS
    from harness.ports._agent import REPLY_STATUSES as REPLY_STATUSES
    from harness.ports._agent import STOP_STATES as STOP_STATES
    from harness.ports._agent import Agent as Agent
    from harness.ports._agent import AgentFactory as AgentFactory
    from harness.ports._agent import AgentOutcome as AgentOutcome
    from harness.ports._agent import AgentPorts as AgentPorts
    from harness.ports._agent import RecoveryReport as RecoveryReport
    from harness.ports._agent import ReplyStatus as ReplyStatus
    from harness.ports._agent import StopState as StopState
    from harness.ports._agent import Task as Task
    from harness.ports._agent import ToolCallView as ToolCallView
    from harness.ports._agent import ToolSpec as ToolSpec
    from harness.ports._agent import TranscriptMessage as TranscriptMessage
    from harness.ports._agent import UsagePrices as UsagePrices
    from harness.ports._clock import CALENDAR_ORIGIN_UNIX as CALENDAR_ORIGIN_UNIX
    from harness.ports._clock import Clock as Clock
    from harness.ports._clock import LoopClock as LoopClock
    from harness.ports._dialect import ATTEMPT_ID_HEADER as ATTEMPT_ID_HEADER
    from harness.ports._dialect import DIALECTS as DIALECTS
    from harness.ports._dialect import FINISH_REASONS as FINISH_REASONS
    from harness.ports._dialect import RETRY_LAYER_HEADER as RETRY_LAYER_HEADER
    from harness.ports._dialect import SPECS as SPECS
    from harness.ports._dialect import WITHHELD_FINISHES as WITHHELD_FINISHES
    from harness.ports._dialect import Dialect as Dialect
    from harness.ports._dialect import DialectSpec as DialectSpec
    from harness.ports._dialect import Family as Family
    from harness.ports._dialect import FinishReason as FinishReason
    from harness.ports._dialect import check_dialect as check_dialect
    from harness.ports._dialect import cut_at_limit as cut_at_limit
    from harness.ports._dialect import family_of as family_of
    from harness.ports._disk import AppendFile as AppendFile
    from harness.ports._disk import AppendFileHandle as AppendFileHandle
    from harness.ports._disk import ClosesOnExit as ClosesOnExit
    from harness.ports._disk import Disk as Disk
    from harness.ports._disk import call_os as call_os
    from harness.ports._disk import dirname as dirname
    from harness.ports._disk import normpath as normpath
    from harness.ports._fault_meanings import BROKEN_STREAM_FAULTS as BROKEN_STREAM_FAULTS
    from harness.ports._fault_meanings import CUTTING_FAULTS as CUTTING_FAULTS
    from harness.ports._fault_meanings import FAULT_MEANINGS as FAULT_MEANINGS
    from harness.ports._fault_meanings import LOOPING_FAULTS as LOOPING_FAULTS
    from harness.ports._fault_meanings import SILENCING_FAULTS as SILENCING_FAULTS
    from harness.ports._fault_meanings import FaultMeaning as FaultMeaning
    from harness.ports._faults import FAULT_KINDS as FAULT_KINDS
    from harness.ports._faults import FAULT_TYPES as FAULT_TYPES
    from harness.ports._faults import HTTP_ERROR_STATUSES as HTTP_ERROR_STATUSES
    from harness.ports._faults import LAYERS as LAYERS
    from harness.ports._faults import OUTAGE_ANSWERS as OUTAGE_ANSWERS
    from harness.ports._faults import ByteAtATime as ByteAtATime
    from harness.ports._faults import ByteFault as ByteFault
    from harness.ports._faults import ConnectionReset as ConnectionReset
    from harness.ports._faults import CutToolArguments as CutToolArguments
    from harness.ports._faults import DoomLoop as DoomLoop
    from harness.ports._faults import EmptyBody as EmptyBody
    from harness.ports._faults import ErrorInStream as ErrorInStream
    from harness.ports._faults import Fault as Fault
    from harness.ports._faults import FaultRule as FaultRule
    from harness.ports._faults import FrameFault as FrameFault
    from harness.ports._faults import HttpError as HttpError
    from harness.ports._faults import HttpErrorStatus as HttpErrorStatus
    from harness.ports._faults import InjectComments as InjectComments
    from harness.ports._faults import InjectPings as InjectPings
    from harness.ports._faults import InvalidToolArguments as InvalidToolArguments
    from harness.ports._faults import Layer as Layer
    from harness.ports._faults import LineEnding as LineEnding
    from harness.ports._faults import LineEndings as LineEndings
    from harness.ports._faults import MalformedFrame as MalformedFrame
    from harness.ports._faults import NoTerminalEvent as NoTerminalEvent
    from harness.ports._faults import NoUsageChunk as NoUsageChunk
    from harness.ports._faults import OutageAnswer as OutageAnswer
    from harness.ports._faults import RandomSplits as RandomSplits
    from harness.ports._faults import RuleBreach as RuleBreach
    from harness.ports._faults import SlowDrip as SlowDrip
    from harness.ports._faults import SplitAt as SplitAt
    from harness.ports._faults import SplitBetweenCrLf as SplitBetweenCrLf
    from harness.ports._faults import SplitInsideDataField as SplitInsideDataField
    from harness.ports._faults import SplitInsideUtf8 as SplitInsideUtf8
    from harness.ports._faults import Stall as Stall
    from harness.ports._faults import StallBeforeHeaders as StallBeforeHeaders
    from harness.ports._faults import StallConnecting as StallConnecting
    from harness.ports._faults import TruncatedToolArguments as TruncatedToolArguments
    from harness.ports._faults import check_faults as check_faults
    from harness.ports._faults import is_http_date as is_http_date
    from harness.ports._faults import retry_after_breach as retry_after_breach
    from harness.ports._faults import rule_breaches as rule_breaches
    from harness.ports._faults import whole_seconds as whole_seconds
    from harness.ports._goals import RESTART_POLICIES as RESTART_POLICIES
    from harness.ports._goals import TERMINAL_GOAL_STATUSES as TERMINAL_GOAL_STATUSES
    from harness.ports._goals import VERIFIER_OUTCOMES as VERIFIER_OUTCOMES
    from harness.ports._goals import WAITING_GOAL_STATUSES as WAITING_GOAL_STATUSES
    from harness.ports._goals import CheckRun as CheckRun
    from harness.ports._goals import CompletionProof as CompletionProof
    from harness.ports._goals import CriterionVerdict as CriterionVerdict
    from harness.ports._goals import Goal as Goal
    from harness.ports._goals import GoalAction as GoalAction
    from harness.ports._goals import GoalAnswer as GoalAnswer
    from harness.ports._goals import GoalBudget as GoalBudget
    from harness.ports._goals import GoalEventKind as GoalEventKind
    from harness.ports._goals import GoalPort as GoalPort
    from harness.ports._goals import GoalStatus as GoalStatus
    from harness.ports._goals import JudgeKind as JudgeKind
    from harness.ports._goals import Lease as Lease
    from harness.ports._goals import RestartPolicy as RestartPolicy
    from harness.ports._goals import Verification as Verification
    from harness.ports._goals import VerifierOutcome as VerifierOutcome
    from harness.ports._goals import protecting_pattern as protecting_pattern
    from harness.ports._hashing import asked_for as asked_for
    from harness.ports._hashing import idempotency_key as idempotency_key
    from harness.ports._hashing import sha256_json as sha256_json
    from harness.ports._ids import IdSource as IdSource
    from harness.ports._ids import rng_stream as rng_stream
    from harness.ports._jobs import CANCEL_STATUSES as CANCEL_STATUSES
    from harness.ports._jobs import CANCEL_TARGETS as CANCEL_TARGETS
    from harness.ports._jobs import JOB_COMPLETED_MARKER as JOB_COMPLETED_MARKER
    from harness.ports._jobs import NEIGHBOUR_SESSION as NEIGHBOUR_SESSION
    from harness.ports._jobs import CancelAck as CancelAck
    from harness.ports._jobs import CancelHook as CancelHook
    from harness.ports._jobs import CancelRequest as CancelRequest
    from harness.ports._jobs import CancelStatus as CancelStatus
    from harness.ports._jobs import CancelTarget as CancelTarget
    from harness.ports._jobs import JobIdentity as JobIdentity
    from harness.ports._jobs import JobPort as JobPort
    from harness.ports._jobs import JobRunnerUnavailable as JobRunnerUnavailable
    from harness.ports._jobs import JobState as JobState
    from harness.ports._jobs import JobStatus as JobStatus
    from harness.ports._jobs import OutputChunk as OutputChunk
    from harness.ports._jobs import Signal as Signal
    from harness.ports._jobs import Wakeup as Wakeup
    from harness.ports._limits import MAX_COUNT as MAX_COUNT
    from harness.ports._limits import MAX_OUTPUT_CHARS as MAX_OUTPUT_CHARS
    from harness.ports._limits import MAX_SECONDS as MAX_SECONDS
    from harness.ports._limits import MIN_INLINE_CHARS as MIN_INLINE_CHARS
    from harness.ports._limits import Count as Count
    from harness.ports._limits import Doc as Doc
    from harness.ports._limits import OneLine as OneLine
    from harness.ports._limits import Wording as Wording
    from harness.ports._prices import PRICES as PRICES
    from harness.ports._prices import PRICES_AS_OF as PRICES_AS_OF
    from harness.ports._prices import ModelPrice as ModelPrice
    from harness.ports._prices import UsageBuckets as UsageBuckets
    from harness.ports._prices import cost as cost
    from harness.ports._prices import has_price as has_price
    from harness.ports._prices import own_prices as own_prices
    from harness.ports._prices import price_of as price_of
    from harness.ports._prices import use_prices as use_prices
    from harness.ports._replies import TOOL_OUTCOME_MEANINGS as TOOL_OUTCOME_MEANINGS
    from harness.ports._replies import TOOL_OUTCOMES as TOOL_OUTCOMES
    from harness.ports._replies import ToolOutcome as ToolOutcome
    from harness.ports._replies import classify_reply as classify_reply
    from harness.ports._replies import reply_failed as reply_failed
    from harness.ports._retry_after import parse_retry_after as parse_retry_after
    from harness.ports._sse import SSEDecoder as SSEDecoder
    from harness.ports._sse import SSEEvent as SSEEvent
    from harness.ports._tool_kinds import CONCURRENCY_SAFE_TOOL_KINDS as CONCURRENCY_SAFE_TOOL_KINDS
    from harness.ports._tool_kinds import PURE_TOOL_KINDS as PURE_TOOL_KINDS
    from harness.ports._tool_kinds import TOOL_KIND_TRAITS as TOOL_KIND_TRAITS
    from harness.ports._tool_kinds import TOOL_KINDS as TOOL_KINDS
    from harness.ports._tool_kinds import TOOL_PARAMETERS as TOOL_PARAMETERS
    from harness.ports._tool_kinds import ToolKind as ToolKind
    from harness.ports._tool_kinds import ToolKindTraits as ToolKindTraits
    from harness.ports._tools import KeyedCall as KeyedCall
    from harness.ports._tools import PassThroughTool as PassThroughTool
    from harness.ports._tools import Tool as Tool
    from harness.ports._tools import ToolContext as ToolContext
    from harness.ports._tools import ToolInvocation as ToolInvocation
    from harness.ports._tools import named_path as named_path
    from harness.ports._tools import reads_only as reads_only
    from harness.ports._usage import Usage as Usage
else:
    __getattr__ = _lazy_exports(__name__, _EXPORTS)
del TYPE_CHECKING


__all__ = list(_exported_names(_EXPORTS))
