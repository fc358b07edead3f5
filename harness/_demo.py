"""``harness demo``: the streaming chaos demo, each fault against the reference client.

Every case names a fault plan and the outcome the reference stream client must
reach; the demo prints one row per case and dialect and fails (exit 1) when a
case ends differently. It runs on virtual time: the two-minute stalls and the
minute-long ``Retry-After`` of the table cost milliseconds.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from fakes import (
    ByteAtATime,
    ConnectionReset,
    ErrorInStream,
    Fault,
    HttpError,
    LineEndings,
    MalformedFrame,
    NoTerminalEvent,
    ScriptedResponse,
    ScriptedUsage,
    SplitBetweenCrLf,
    SplitInsideUtf8,
    Stall,
    StallBeforeHeaders,
    Text,
    ToolUse,
    TruncatedToolArguments,
)
from harness._streamcase import StreamCase, run_stream_case
from harness.ports import Dialect

REPLY = ScriptedResponse(
    parts=(
        Text("J'ajoute la note — 中文 🙂"),
        ToolUse("call_1", "append_note", {"line": "hello ✓"}),
    ),
    finish="tool_calls",
    usage=ScriptedUsage(input_tokens=1400, output_tokens=40, cache_read_tokens=1024),
)


@dataclass(frozen=True)
class DemoCase:
    """A named fault plan (keyed by attempt of turn 1) and the outcome it must reach.

    ``otherwise`` names the dialects whose API makes the same fault end another
    way, and how.
    """

    name: str
    faults: tuple[tuple[Fault, ...], ...]
    expected: str
    otherwise: tuple[tuple[Dialect, str], ...] = ()

    def expected_for(self, dialect: Dialect) -> str:
        """The outcome ``dialect`` must reach."""
        return dict(self.otherwise).get(dialect, self.expected)

    def plan(self) -> dict[tuple[int, int], tuple[Fault, ...]]:
        return {(1, n): faults for n, faults in enumerate(self.faults, start=1) if faults}


CASES: tuple[DemoCase, ...] = (
    DemoCase("clean stream", ((),), "committed"),
    DemoCase("120 s stall, then 429 Retry-After 60, then success",
             ((Stall(after_events=3, seconds=120),), (HttpError(429, retry_after=60),)),
             "committed"),
    DemoCase("stall forever mid-stream", ((Stall(after_events=2),),), "committed"),
    DemoCase("stall before headers", ((StallBeforeHeaders(),),), "committed"),
    DemoCase("byte at a time, UTF-8 split, CRLF split",
             ((LineEndings("crlf"), SplitBetweenCrLf(2), SplitInsideUtf8(), ByteAtATime()),),
             "committed"),
    DemoCase("connection reset", ((ConnectionReset(after_events=4),),), "committed"),
    DemoCase("no terminal event", ((NoTerminalEvent(),),), "committed"),
    DemoCase("error inside a 200 stream", ((ErrorInStream(after_events=2),),), "committed"),
    DemoCase("503 three times", ((HttpError(503),), (HttpError(503),), (HttpError(503),)),
             "committed"),
    # Gemini sends a call whole or not at all: a call cut by MAX_TOKENS never arrives,
    # so what the client sees is cut text, which it continues once (S6).
    DemoCase("tool arguments cut at max_tokens", ((TruncatedToolArguments(),),), "truncated",
             otherwise=(("gemini", "committed"),)),
    DemoCase("malformed frame", ((MalformedFrame(index=1),),), "failed"),
    DemoCase("429 with Retry-After above the cap", ((HttpError(429, retry_after=3600),),),
             "failed"),
    DemoCase("401 unauthorized", ((HttpError(401),),), "failed"),
)


@dataclass(frozen=True)
class DemoRow:
    dialect: Dialect
    case: DemoCase
    run: StreamCase

    @property
    def ok(self) -> bool:
        return self.run.result.outcome == self.case.expected_for(self.dialect)

    def cells(self) -> tuple[str, ...]:
        result = self.run.result
        retries = sum(1 for e in self.run.retry_log.events if e.kind == "retry_scheduled")
        return (
            "ok" if self.ok else "FAIL",
            self.dialect,
            self.case.name,
            result.outcome,
            str(len(result.attempts)),
            str(retries),
            f"{self.run.virtual_seconds:.1f}",
        )


HEADER = ("", "dialect", "fault", "outcome", "attempts", "retries", "virtual s")


def run_demo(dialects: Sequence[Dialect], seed: int) -> list[DemoRow]:
    """Run every case in every dialect."""
    return [
        DemoRow(dialect, case, run_stream_case(dialect, REPLY, case.plan(), seed=seed))
        for dialect in dialects
        for case in CASES
    ]


def render_table(rows: Sequence[tuple[str, ...]]) -> str:
    """A plain aligned text table (first row is the header)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def demo(dialects: Sequence[Dialect], seed: int) -> int:
    """Print the demo report; return 0 when every case reached its expected outcome."""
    started = time.perf_counter()  # wall time is reported, never part of a trace
    rows = run_demo(dialects, seed)
    wall_ms = (time.perf_counter() - started) * 1000
    print(render_table([HEADER, *(row.cells() for row in rows)]))
    failed = [row for row in rows if not row.ok]
    virtual = sum(row.run.virtual_seconds for row in rows)
    print(
        f"\n{len(rows) - len(failed)} passed, {len(failed)} failed: "
        f"{virtual:.0f} s of virtual time in {wall_ms:.0f} ms of wall time"
    )
    return 1 if failed else 0
