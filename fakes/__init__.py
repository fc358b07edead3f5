"""The outside world of a run: fake providers, counting tools, the virtual clock, the disk.

Import from this package, never from its private modules.
"""

from fakes._clock import VirtualClock
from fakes._faults import (
    FAULT_KINDS,
    ByteAtATime,
    ConnectionReset,
    EmptyBody,
    ErrorInStream,
    Fault,
    HttpError,
    InjectComments,
    InjectPings,
    InvalidToolArguments,
    LineEndings,
    MalformedFrame,
    NoTerminalEvent,
    NoUsageChunk,
    RandomSplits,
    SlowDrip,
    SplitAt,
    SplitBetweenCrLf,
    SplitInsideDataField,
    SplitInsideUtf8,
    Stall,
    StallBeforeHeaders,
    TruncatedToolArguments,
)
from fakes._httpx2_adapter import FakeHttpx2Transport
from fakes._provider import (
    FakeProvider,
    IncomingRequest,
    ProviderRequest,
    Responder,
    ResponsePlan,
)
from fakes._script import ScriptedResponse, ScriptedUsage, Text, ToolUse
from fakes._wire import Emit, Hang, Pause, Reset, Step

__all__ = [
    "FAULT_KINDS",
    "ByteAtATime",
    "ConnectionReset",
    "Emit",
    "EmptyBody",
    "ErrorInStream",
    "FakeHttpx2Transport",
    "FakeProvider",
    "Fault",
    "Hang",
    "HttpError",
    "IncomingRequest",
    "InjectComments",
    "InjectPings",
    "InvalidToolArguments",
    "LineEndings",
    "MalformedFrame",
    "NoTerminalEvent",
    "NoUsageChunk",
    "Pause",
    "ProviderRequest",
    "RandomSplits",
    "Reset",
    "Responder",
    "ResponsePlan",
    "ScriptedResponse",
    "ScriptedUsage",
    "SlowDrip",
    "SplitAt",
    "SplitBetweenCrLf",
    "SplitInsideDataField",
    "SplitInsideUtf8",
    "Stall",
    "StallBeforeHeaders",
    "Step",
    "Text",
    "ToolUse",
    "TruncatedToolArguments",
    "VirtualClock",
]
