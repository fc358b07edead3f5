"""The ledger the harness keeps outside the agent's process: each effect is told over a pipe.

A contained case runs in a worker where the agent can change anything, the tool ledger
included (:class:`fakes.ToolLedger`, whose entries are every side effect that really
happened and which I1, I7 and I10 count): an agent that drops an entry, empties the
list or rewrites a key could hide an e-mail it sent twice. So, in a sealed worker, each
counting tool tells its effect to the harness before applying it, and the tool's result
is the harness's answer: one round trip per effect. An agent that skips the telling
gets no result from the harness, and no effect happened; that is behaviour, and judged.

The harness keeps what it was told per *stream*: a world's ledger is one, and a copy
of a world (a crash case built from a scenario's recorded run,
:mod:`harness.runner._explore`) forks a stream that begins with its source's effects as
the harness held them at the copy. A trace carries, beside its effects and outside its
digest, the account of where they came from (:func:`parts_of`): a stream, or for a case
that joined a run already traced, its own stream then the other run's effects after the
join, their incarnations shifted. The harness reads that account against its streams,
and a trace whose effects differ fails the case with a ``judge`` verdict naming the
first difference (:func:`tamper_result`).

The same stream carries the world's account of time and of the model's requests: each
move of its virtual clock (:class:`fakes.VirtualClock`, told while the move is made, under
the witness's lock, so no other message of the world comes between) and each request its
fake provider took (dialect, turn, attempt, incarnation, a digest of the bytes the agent
sent, and the virtual time the world read when it arrived). The harness keeps its own
clock per stream from the moves it was told, and a trace fails ``judge`` when a request in
it was never told, or told otherwise (:func:`first_request_difference`), when it arrived at
a time the harness's clock was not at, or when the world's clock, read as the trace is
written, has moved where the harness was never told: an agent that moved the clock forward
instead of waiting out a ``Retry-After``, deleted a request from the fakes' record, or
held the clock still through a stall its records then showed as quick.

Each stream the world's provider played tells, when it ends, what the trace will carry of
its timing (its first byte, its end, its longest silence, the bytes the client read: what
S1 and the timing and budget checks read), measured beside the stream's record and not
by it, and stamped with the harness's clock as a request is: a trace whose stream records
differ from that (an agent that rewrote how long a stall lasted) fails ``judge`` too.

Each tool invocation tells its start (tool, kind, call id, a digest of its arguments,
incarnation, whether it was refused, whether the case's disk error had been raised) and
its end (outcome, a digest of its result), each with the virtual time read as it is told:
a trace whose invocation records differ (one deleted from the world's log, its arguments
or outcome rewritten, one added that never ran, a time the harness's clock was not at)
fails ``judge`` naming the first (:func:`first_invocation_difference`).

Every time told is read against the harness's clock: a request's arrival, a stream's end,
an effect's time, an invocation's start and end, and where a move of the clock says it
moved from. A clock moved by hand and set back is caught where any of them was told in
between; and a move must give a reason the clock gives (:data:`MOVES`, ``start`` only as
a world's first message). A case that stops at a request to join a run already traced
tells that request's digest, read against the request the run sent next.

What the agent could still do is speak the pipe itself: tell effects that never
happened, or none, or move the clock through its own method (which tells). That forges
the world, not its record, and is out of this module's reach; what it closes is hiding or
changing an effect, a request, an invocation or a move of time the world really made. A
clock moved and set back with nothing told in between (a timer fired early) is not seen.

Messages (the worker's start with a letter, its case's result with ``[``)::

    E[number, forks, stream, kind, tool, key, idempotent, incarnation, at]  an effect
    R[number, forks, stream, dialect, turn, attempt, incarnation, digest, at]  a request
    C[number, forks, stream, to, why, from]              the clock moved to ``to``
    S[number, forks, stream, request, how, first, end, silence, bytes]  a stream ended
    I[number, forks, stream, seq, tool, kind, call_id, arguments, incarnation, refused,
      after_error, at]                                   a tool invocation started
    O[number, forks, stream, seq, outcome, result, at]   it ended (``at`` null: left running)
    J[number, forks, stream, digest]                     stopped at a request to join a run
    F[number, forks]                                     before a case's result: no effect
    A<the tool's result as JSON>                         the harness's answer to an effect

``forks`` are the copies made since the last message, each ``[copy, source, effects,
requests, moves, ends, calls]``: the copy's stream begins with the first ``effects``
effects, ``requests`` requests, ``ends`` ends of streams and ``calls`` invocations' starts
and ends told on its source, its clock where the source's was after ``moves`` moves. A
stream's ``request`` is its request's place among those told on the world's stream (1:
the first). A copy costs no message of its own (a recording copies its world at every
point), and only an effect waits for an answer: everything else is told, and the world
goes on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, Final, TypeGuard, TypeVar

from fakes import IncomingRequest, at_work, effect_result
from harness.checks import Verdict
from harness.trace import TraceDataError

if TYPE_CHECKING:
    from harness.runner._results import Case, CaseResult
    from harness.trace import EffectRecord, InvocationRecord, RequestRecord, Trace

_EFFECT: Final = b"E"[0]
_REQUEST: Final = b"R"[0]
_CLOCK: Final = b"C"[0]
_FORK: Final = b"F"[0]
_ENDED: Final = b"S"[0]
_CALLED: Final = b"I"[0]
_SETTLED: Final = b"O"[0]
_JOINED: Final = b"J"[0]
_SPOKEN: Final = frozenset({_EFFECT, _REQUEST, _CLOCK, _FORK, _ENDED, _CALLED, _SETTLED,
                            _JOINED})
# Why a clock moves (fakes.VirtualClock): a world that starts late, a blocking wait, the
# loop's next timer, a parked worker's sleep, a run held until its last sleeper wakes.
MOVES: Final = frozenset({"start", "advance", "timer", "parked", "held"})
# A stream's counts as told: effects, requests, moves, ends of streams, invocation events.
_NONE: Final = (0, 0, 0, 0, 0)
_ANSWER: Final = b"A"
# Where a trace keeps its account: an attribute outside its fields, so outside its JSON.
_PARTS: Final = "_ledger_parts"

Parts = Any
"""A trace's account of its effects and requests, as JSON: ``["s", stream]`` (or
``["s", stream, reading, moves, calls]``: its clock read ``reading`` after ``moves`` moves,
its first ``calls`` invocations' starts and ends), ``["cat", [parts...]]``,
``["drop", [effects, requests, call], parts]`` (all but the first ``effects`` effects and
``requests`` requests, and the invocations numbered after ``call``), ``["upto", call,
parts]`` (the invocations numbered up to ``call``), ``["inc", shift, parts, renumber]``
(incarnations shifted, invocations numbered ``renumber`` on), ``["join", own, source]``
(``cat``, and where ``own`` stopped at a request, ``source``'s first request is it)."""


# -- the worker's side ----------------------------------------------------------------------


@dataclass
class StreamTiming:
    """A stream's timing as the trace's request record carries it, measured on its own
    (a stream's record measures the same, and the two are read against each other)."""

    first_byte_at: float | None = None
    ended_at: float | None = None
    longest_silence: float = 0.0
    delivered_bytes: int = 0
    last_chunk_at: float | None = None

    def chunk(self, now: float, size: int) -> None:
        if self.first_byte_at is None:
            self.first_byte_at = now
        self._silence(now)
        self.delivered_bytes += size

    def end(self, now: float) -> None:
        self._silence(now)
        self.ended_at = now

    def _silence(self, now: float) -> None:
        if self.last_chunk_at is not None:
            self.longest_silence = max(self.longest_silence, now - self.last_chunk_at)
        if self.first_byte_at is not None:
            self.last_chunk_at = now



class PipeWitness:
    """The worker's end: tells the harness each effect and waits for its answer.

    The pipe is the worker's only one, which also takes its cases and sends back their
    traces: an effect is told only while a case runs (a thread the case left behind gets
    an error, not the next case's message), one at a time (tools called from several
    threads each get their own answer).
    """

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._streams = 0
        self._told = 0  # messages sent: each carries its number, so none is lost unseen
        # Reentrant: a clock holds it while it moves and tells the move (holding()).
        self._lock = threading.RLock()
        self._in_case = False
        # Each stream's effects, requests and clock moves as told (a copy's: its source's
        # then); and the copies not yet told, which go with the next message (a recording
        # copies its world at every point: a message each would cost a round of the
        # harness's loop each).
        self._lengths: dict[int, list[int]] = {}
        self._forks: list[list[int]] = []

    def opened(self) -> int:
        """A stream for a new world's ledger (the harness opens it at its first effect)."""
        with self._lock:
            self._streams += 1
            return self._streams

    def forked(self, stream: int) -> int:
        copy = self.opened()
        with self._lock:
            lengths = self._lengths[copy] = list(self._lengths.get(stream, _NONE))
            self._forks.append([copy, stream, *lengths])
        return copy

    def told(self, stream: int, kind: str, *, tool: str, key: str, idempotent: bool,
             incarnation: int, at: float) -> Any:
        with at_work(), self._lock:
            if not self._in_case:
                raise RuntimeError(f"tool {tool}'s effect came after its case ended")
            self._send(_EFFECT, [stream, kind, tool, key, idempotent, incarnation, at])
            self._counts(stream)[0] += 1
            answer = self._conn.recv_bytes()
        if not answer.startswith(_ANSWER):
            raise RuntimeError("the harness answered a tool's effect with something else")
        return json.loads(answer[1:])

    def asked(self, stream: int, dialect: str, *, turn: int, attempt: int, incarnation: int,
              sent: bytes, now: Callable[[], float]) -> float:
        """Tell a request the world's provider took; the virtual time it arrived at
        (``now()``, read while no move of the clock can come between it and the telling)."""
        digest = bytes_digest(sent)
        with at_work(), self._lock:
            at = now()
            if self._in_case:  # a thread a case left behind: its trace is already sent
                self._send(_REQUEST, [stream, dialect, turn, attempt, incarnation, digest, at])
                self._counts(stream)[1] += 1
            return at

    def joined(self, stream: int, sent: bytes) -> None:
        """Tell that ``stream``'s world stopped at a request (``sent``: its bytes) to join a
        run already traced, which sent the same."""
        with at_work(), self._lock:
            if self._in_case:
                self._send(_JOINED, [stream, bytes_digest(sent)])

    def holding(self) -> contextlib.AbstractContextManager[object]:
        """Hold while a clock moves and :meth:`moved` tells it: no other message of its
        world comes between the two."""
        return self._lock

    def moved(self, stream: int, to: float, why: str, before: float) -> None:
        """Tell that the clock of ``stream`` moved from ``before`` to ``to``. Called under
        :meth:`holding`."""
        if not self._in_case:
            return
        with at_work():
            self._send(_CLOCK, [stream, to, why, before])
        self._counts(stream)[2] += 1

    def called(self, stream: int, seq: int, *, tool: str, kind: str, call_id: str,
               arguments: object, incarnation: int, refused: bool, after_error: bool,
               now: Callable[[], float]) -> float:
        """Tell that the world's ``seq``-th tool invocation started; the virtual time it
        started at (``now()``, read while no move of the clock can come between)."""
        with at_work(), self._lock:
            at = now()
            if self._in_case:
                self._send(_CALLED, [stream, seq, tool, kind, call_id, json_digest(arguments),
                                     incarnation, refused, after_error, at])
                self._counts(stream)[4] += 1
            return at

    def settled(self, stream: int, seq: int, *, outcome: str, result: str | None,
                now: Callable[[], float] | None) -> float | None:
        """Tell that the world's ``seq``-th tool invocation ended ``outcome``, returning
        ``result`` (canonical JSON); the virtual time it ended at (``now()``, None: left
        running)."""
        with at_work(), self._lock:
            at = None if now is None else now()
            if self._in_case:
                self._send(_SETTLED, [stream, seq, outcome, text_digest(result), at])
                self._counts(stream)[4] += 1
            return at

    def ended(self, stream: int, request: int, how: str, *, first: float | None,
              end: float, silence: float, size: int) -> None:
        """Tell that the stream answering ``stream``'s ``request``-th request ended ``how``,
        with the timing the trace will carry."""
        with at_work(), self._lock:
            if self._in_case:
                self._send(_ENDED, [stream, request, how, first, end, silence, size])
                self._counts(stream)[3] += 1

    def read(self, stream: int, now: Callable[[], float]) -> Parts:
        """The account of ``stream`` with its clock as read now (``now()``) and the moves
        told before: the harness reads them against its own clock, with no message; and
        the invocations' starts and ends told before (a later one is not the trace's)."""
        with self._lock:
            counts = self._lengths.get(stream, _NONE)
            return ["s", stream, now(), counts[2], counts[4]]

    def _counts(self, stream: int) -> list[int]:
        return self._lengths.setdefault(stream, list(_NONE))

    def begin_case(self) -> None:
        with self._lock:
            self._in_case = True

    @contextlib.contextmanager
    def case_ended(self) -> Iterator[None]:
        """While the case's result is sent: no effect is told from now on, and the copies
        not yet told go before it."""
        with self._lock:
            self._in_case = False
            if self._forks:
                self._send(_FORK, [])
            yield

    def _send(self, letter: int, fields: list[Any]) -> None:
        self._told += 1
        forks, self._forks = self._forks, []
        self._conn.send_bytes(bytes([letter]) + json.dumps([self._told, forks, *fields])
                              .encode())


_installed: list[PipeWitness] = []


def install(conn: Connection | None) -> PipeWitness | None:
    """Tell every world built in this (worker) process from now on over ``conn``
    (``None``: to no one, as before)."""
    _installed[:] = [] if conn is None else [PipeWitness(conn)]
    return installed()


def installed() -> PipeWitness | None:
    """The witness of this process, if it is a sealed case worker."""
    return _installed[0] if _installed else None


def with_parts(trace: Trace, parts: Parts | None) -> Trace:
    """``trace``, carrying ``parts`` as the account of its effects (not in its JSON)."""
    if parts is not None:
        object.__setattr__(trace, _PARTS, parts)  # a frozen record: not one of its fields
    return trace


def parts_of(trace: Trace) -> Parts | None:
    """The account ``trace`` carries, if its world was told to a harness."""
    return getattr(trace, _PARTS, None)


def stream_parts(stream: int) -> Parts:
    return ["s", stream]


def joined_parts(own: Parts | None, source: Parts | None, *, drop: tuple[int, int, int],
                 shift: int, calls: int) -> Parts | None:
    """A case's own account with its first ``calls`` invocations, then ``source``'s
    effects, requests and invocations after the first ``drop`` (effects, requests, and
    the invocation numbered ``drop[2]``), incarnations shifted by ``shift`` and
    invocations numbered on from ``calls``."""
    if own is None or source is None:
        return None
    return ["join", ["upto", calls, own],
            ["inc", shift, after_parts(source, drop), calls - drop[2]]]


def after_parts(parts: Parts | None, drop: tuple[int, int, int]) -> Parts | None:
    """``parts`` without its first ``drop`` effects and requests, nor its invocations
    numbered up to ``drop[2]`` (the others keep their numbers)."""
    if parts is None or drop == (0, 0, 0):
        return parts
    return ["drop", list(drop), parts]


def sent_bytes(incoming: IncomingRequest) -> bytes:
    """What a request's digest is taken of: its method, URL and body."""
    return b"\n".join((incoming.method.encode(), incoming.url.encode(), incoming.body or b""))


def bytes_digest(sent: bytes) -> str:
    """A short digest of a request's bytes (its method, URL and body)."""
    return hashlib.sha256(sent).hexdigest()[:16]


def json_digest(value: object) -> str:
    """A short digest of ``value`` as canonical JSON (a tool call's arguments)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()
                          ).hexdigest()[:16]


def text_digest(text: str | None) -> str | None:
    """A short digest of ``text`` (a tool's result as canonical JSON); None: none."""
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()[:16]


# -- the harness's side ---------------------------------------------------------------------


Told = tuple[str, str, bool, int, float]
"""One effect as the harness was told it: tool, key, idempotent, incarnation, virtual time."""

Asked = tuple[str, int, int, int, str, float, float]
"""One request as the harness was told it: dialect, turn, attempt, incarnation, digest, the
time the world said it arrived at, and the harness's clock then."""

Ended = tuple[int, str, float | None, float, float, int, float]
"""One stream's end as the harness was told it: its request's place, how it ended, its first
byte, its end, its longest silence, the bytes the client read, and the harness's clock then."""

CallEvent = tuple[Any, ...]
"""An invocation's start as the harness was told it, ``("I", seq, tool, kind, call_id,
arguments' digest, incarnation, refused, after_error, at, the harness's clock then)``, or
its end, ``("O", seq, outcome, result's digest, at or None, the harness's clock then)``."""

Called = tuple[int, str, str, str, str, int, bool, bool, float, float, str, "str | None",
               "float | None", "float | None"]
"""One invocation as the harness holds it: its number, tool, kind, call id, arguments'
digest, incarnation, refused, after the disk error, start (as told, and the harness's
clock then), outcome (``running`` until told its end), result's digest and end (as told,
and the harness's clock then)."""

_Record = TypeVar("_Record", Told, Asked, Ended, CallEvent)
# A record of the trace and what the harness holds of it (_first_difference).
_Held = TypeVar("_Held")
_Kept = TypeVar("_Kept")


@dataclass
class _Stream:
    base: _Stream | None = None
    at: int = 0  # how many of ``base``'s effects it begins with
    own: list[Told] = field(default_factory=list)
    # After each of its own effects, how many of all its effects were ``append`` tools':
    # the lines of the notes file, which an ``append`` answers with.
    own_appends: list[int] = field(default_factory=list)
    at_requests: int = 0  # how many of ``base``'s requests it begins with
    own_requests: list[Asked] = field(default_factory=list)
    at_moves: int = 0  # how many of ``base``'s clock moves it begins with
    own_moves: list[float] = field(default_factory=list)
    at_ends: int = 0  # how many of ``base``'s ends of streams it begins with
    own_ends: list[Ended] = field(default_factory=list)
    at_calls: int = 0  # how many of ``base``'s invocations' starts and ends it begins with
    own_calls: list[CallEvent] = field(default_factory=list)
    # The digest of the request its world stopped at to join a run already traced.
    joined: str | None = None
    now: float = 0.0  # its clock, as the harness keeps it
    # The first time its world's clock was read where the harness's was not.
    wrong: str | None = None

    def __len__(self) -> int:
        return self.at + len(self.own)

    def appends_at(self, length: int) -> int:
        """How many of its first ``length`` effects were ``append`` tools'."""
        if length > self.at:
            return self.own_appends[length - self.at - 1]
        return 0 if self.base is None else self.base.appends_at(length)

    def clock_at(self, moves: int) -> float:
        """Its clock after its first ``moves`` moves."""
        if moves > self.at_moves:
            return self.own_moves[moves - self.at_moves - 1]
        return 0.0 if self.base is None else self.base.clock_at(moves)

    def _chain(self) -> list[_Stream]:
        chain: list[_Stream] = [self]
        while chain[-1].base is not None:
            chain.append(chain[-1].base)
        return chain

    def _all(self, begins_with: Callable[[_Stream], int],
             own: Callable[[_Stream], list[_Record]]) -> list[_Record]:
        """All its records of one kind: from the first stream on, each keeps as many of its
        base's as it ``begins_with`` and adds its ``own``."""
        found: list[_Record] = []
        for stream in reversed(self._chain()):
            del found[begins_with(stream):]
            found += own(stream)
        return found

    def effects(self) -> list[Told]:
        return self._all(lambda s: s.at, lambda s: s.own)

    def requests(self) -> list[Asked]:
        return self._all(lambda s: s.at_requests, lambda s: s.own_requests)

    def ends(self) -> list[Ended]:
        return self._all(lambda s: s.at_ends, lambda s: s.own_ends)

    def calls(self) -> list[CallEvent]:
        return self._all(lambda s: s.at_calls, lambda s: s.own_calls)

    def told_calls(self) -> int:
        return self.at_calls + len(self.own_calls)

    def first_wrong(self) -> str | None:
        return next((s.wrong for s in self._chain() if s.wrong is not None), None)


@dataclass
class Account:
    """What a trace's account names, as the harness holds it."""

    effects: list[Told] = field(default_factory=list)
    requests: list[Asked] = field(default_factory=list)
    wrong: str | None = None
    # The ends of streams, each by its request's place among ``requests`` (1: the first).
    ends: list[Ended] = field(default_factory=list)
    invocations: list[Called] = field(default_factory=list)  # by number
    joined: str | None = None  # the digest of the request it stopped at to join a run


class HarnessLedger:
    """The effects, requests and clock moves one worker's worlds were told to have, by
    stream; see the module docstring."""

    def __init__(self) -> None:
        self._streams: dict[int, _Stream] = {}
        self._told = 0
        self.broken: str | None = None

    @staticmethod
    def speaks(message: bytes) -> bool:
        """Whether ``message`` is for the ledger (not a case's result)."""
        return bool(message) and message[0] in _SPOKEN

    def take(self, message: bytes) -> bytes | None:
        """Keep what ``message`` tells; the answer to send back, if it asks for one."""
        try:
            number, forks, *fields = json.loads(message[1:])
            if number != self._told + 1:
                raise TraceDataError(f"message {number} came after message {self._told}")
            self._told = number
            for fork in forks:
                self._fork(fork)
            letter = message[0]
            if letter == _EFFECT:
                return _ANSWER + json.dumps(self._effect(fields)).encode()
            if letter == _REQUEST:
                self._request(fields)
            elif letter == _CLOCK:
                self._moved(fields)
            elif letter == _ENDED:
                self._ended(fields)
            elif letter == _CALLED:
                self._called(fields)
            elif letter == _SETTLED:
                self._settled(fields)
            elif letter == _JOINED:
                stream, digest = fields
                if not isinstance(digest, str):
                    raise TraceDataError(f"a join {fields!r}")
                self._stream(stream).joined = digest
            return None
        except (ValueError, TypeError) as error:
            self.broken = self.broken or f"the worker's ledger messages broke off ({error})"
            return _ANSWER + b"null" if message[:1] == bytes([_EFFECT]) else None

    def _stream(self, stream: object) -> _Stream:
        if not isinstance(stream, int) or isinstance(stream, bool):
            raise TraceDataError(f"{stream!r} is not a stream")
        return self._streams.setdefault(stream, _Stream())

    def _fork(self, fork: object) -> None:
        if not isinstance(fork, list) or len(fork) not in (5, 6, 7):
            raise TraceDataError(f"{fork!r} is not a copy of a stream")
        copy, source, length, requests, moves, *rest = fork
        ends, calls = (*rest, 0, 0)[:2]
        base = self._stream(source)
        if not isinstance(copy, int) or copy in self._streams or type(length) is not int \
                or not 0 <= length <= len(base) or type(requests) is not int \
                or not 0 <= requests <= base.at_requests + len(base.own_requests) \
                or type(moves) is not int or not 0 <= moves <= base.at_moves + len(
                    base.own_moves) or type(ends) is not int \
                or not 0 <= ends <= base.at_ends + len(base.own_ends) \
                or type(calls) is not int or not 0 <= calls <= base.told_calls():
            raise TraceDataError(f"stream {copy!r} forked again, or from {length!r} effects "
                               f"of the {len(base)} told")
        self._streams[copy] = _Stream(base, length, at_requests=requests, at_moves=moves,
                                      at_ends=ends, at_calls=calls, now=base.clock_at(moves))

    def _effect(self, fields: list[object]) -> Any:
        stream, kind, tool, key, idempotent, incarnation, at = fields
        told = (tool, key, idempotent, incarnation, at)
        if not (isinstance(kind, str) and isinstance(tool, str) and isinstance(key, str)
                and isinstance(idempotent, bool) and isinstance(incarnation, int)
                and isinstance(at, int | float)):
            raise TraceDataError(f"an effect {told!r}")
        kept = self._stream(stream)
        if at != kept.now and kept.wrong is None:
            kept.wrong = (f"effect #{len(kept) + 1} ({tool} key={key}) was told at {at:g}s "
                          f"where the harness's clock was at {kept.now:g}s: the world's "
                          "clock moved without telling the harness")
        appends = kept.appends_at(len(kept)) + (kind == "append")
        kept.own.append((tool, key, idempotent, incarnation, float(at)))
        kept.own_appends.append(appends)
        return effect_result(kind, key, appends)

    def _request(self, fields: list[object]) -> None:
        stream, dialect, turn, attempt, incarnation, digest, at = fields
        if not (isinstance(dialect, str) and type(turn) is int and type(attempt) is int
                and type(incarnation) is int and isinstance(digest, str)
                and isinstance(at, int | float) and not isinstance(at, bool)):
            raise TraceDataError(f"a request {fields!r}")
        kept = self._stream(stream)
        kept.own_requests.append((dialect, turn, attempt, incarnation, digest, float(at),
                                  kept.now))

    def _moved(self, fields: list[object]) -> None:
        stream, to, why, before = fields
        if not isinstance(to, int | float) or isinstance(to, bool) or not isinstance(why, str) \
                or not isinstance(before, int | float) or isinstance(before, bool):
            raise TraceDataError(f"a move of the clock {fields!r}")
        kept = self._stream(stream)
        if kept.wrong is None:
            kept.wrong = _move_wrong(kept, float(to), why, float(before))
        kept.own_moves.append(float(to))
        kept.now = float(to)

    def _ended(self, fields: list[object]) -> None:
        stream, request, how, first, end, silence, size = fields
        if not (type(request) is int and isinstance(how, str) and isinstance(end, int | float)
                and isinstance(silence, int | float) and type(size) is int
                and (first is None or isinstance(first, int | float))):
            raise TraceDataError(f"the end of a stream {fields!r}")
        kept = self._stream(stream)
        kept.own_ends.append((request, how, None if first is None else float(first),
                              float(end), float(silence), size, kept.now))

    def _called(self, fields: list[object]) -> None:
        stream, seq, tool, kind, call_id, arguments, incarnation, refused, after_error, at = \
            fields
        if not (type(seq) is int and isinstance(tool, str) and isinstance(kind, str)
                and isinstance(call_id, str) and isinstance(arguments, str)
                and type(incarnation) is int and isinstance(refused, bool)
                and isinstance(after_error, bool) and _is_time(at)):
            raise TraceDataError(f"the start of a tool invocation {fields!r}")
        kept = self._stream(stream)
        kept.own_calls.append(("I", seq, tool, kind, call_id, arguments, incarnation, refused,
                               after_error, float(at), kept.now))

    def _settled(self, fields: list[object]) -> None:
        stream, seq, outcome, result, at = fields
        if not (type(seq) is int and isinstance(outcome, str)
                and (result is None or isinstance(result, str))
                and (at is None or _is_time(at))):
            raise TraceDataError(f"the end of a tool invocation {fields!r}")
        kept = self._stream(stream)
        kept.own_calls.append(("O", seq, outcome, result,
                               None if at is None else float(at), kept.now))

    def account(self, parts: Parts) -> Account:
        """The effects and requests ``parts`` names, as this ledger holds them
        (``TraceDataError``: none)."""
        if not isinstance(parts, list) or not parts:
            raise TraceDataError(f"{parts!r} is not an account of effects")
        head, *rest = parts
        if head == "s" and len(rest) in (1, 3, 4):
            stream = self._stream(rest[0]) if rest[0] in self._streams else _Stream()
            calls, wrong = _invocations(stream, rest[3:])
            return Account(stream.effects(), stream.requests(),
                           stream.first_wrong() or _read_wrong(stream, rest[1:3]) or wrong,
                           stream.ends(), calls, stream.joined)
        if head == "join" and len(rest) == 2:
            own, source = self.account(rest[0]), self.account(rest[1])
            whole = self.account(["cat", rest])
            # Stopped at a request: the run it joined sent the same one next.
            sent = source.requests[0][4] if source.requests else None
            if own.joined is not None and own.joined != sent:
                whole.wrong = whole.wrong or (
                    f"the case joined a run already traced at a request ({own.joined}) that "
                    f"run never sent there (it sent {sent or 'none'})")
            return whole
        if head == "cat" and len(rest) == 1 and isinstance(rest[0], list):
            whole = Account()
            for part in rest[0]:
                found = self.account(part)
                whole.ends += [_placed(end, len(whole.requests)) for end in found.ends]
                whole.effects += found.effects
                whole.requests += found.requests
                whole.invocations += found.invocations
                whole.wrong = whole.wrong or found.wrong
            return whole
        if head == "drop" and len(rest) == 2 and isinstance(rest[0], list) \
                and len(rest[0]) == 3 and all(type(n) is int for n in rest[0]):
            inner, (effects, drop, calls) = self.account(rest[1]), rest[0]
            return Account(inner.effects[effects:], inner.requests[drop:], inner.wrong,
                           [_placed(end, -drop) for end in inner.ends if end[0] > drop],
                           [c for c in inner.invocations if c[0] > calls])
        if head == "upto" and len(rest) == 2 and type(rest[0]) is int:
            inner = self.account(rest[1])
            inner.invocations = [c for c in inner.invocations if c[0] <= rest[0]]
            return inner
        if head == "inc" and len(rest) in (2, 3) and all(type(n) is int for n in rest[::2]):
            inner, shift, renumber = self.account(rest[1]), rest[0], (*rest[2:], 0)[0]
            return Account([(t, k, i, n + shift, at) for t, k, i, n, at in inner.effects],
                           [(d, turn, attempt, n + shift, digest, at, now)
                            for d, turn, attempt, n, digest, at, now in inner.requests],
                           inner.wrong, inner.ends,
                           [(c[0] + renumber, *c[1:5], c[5] + shift, *c[6:])
                            for c in inner.invocations])
        raise TraceDataError(f"{parts!r} is not an account of effects")

    def effects(self, parts: Parts) -> list[Told]:
        """The effects ``parts`` names, as this ledger holds them (``TraceDataError``: none)."""
        return self.account(parts).effects

    def difference(self, accounts: object, traces: tuple[Trace, ...]) -> str | None:
        """How ``traces``' effects, requests or clock differ from what this ledger was
        told; None: they agree."""
        if self.broken is not None:
            return self.broken
        if not isinstance(accounts, list) or len(accounts) != len(traces):
            return "the case's worker gave no account of its side effects"
        for account, trace in zip(accounts, traces, strict=True):
            try:
                kept = self.account(account)
            except (TraceDataError, RecursionError) as error:
                return ("the case's worker gave an account of its side effects that is none "
                        f"({error})")
            found = first_difference(trace.effects, kept.effects) \
                or first_request_difference(trace, kept.requests) \
                or first_invocation_difference(trace.invocations, kept.invocations) \
                or kept.wrong or first_stream_difference(trace.requests, kept.ends)
            if found is not None:
                return found
        return None


def first_difference(effects: tuple[EffectRecord, ...], kept: list[Told]) -> str | None:
    """Where the trace's ``effects`` first differ from the ``kept`` ones, said; None: nowhere.

    >>> from harness.trace import EffectRecord
    >>> first_difference((EffectRecord(1, "send", "k", False, 1, 0.0),),
    ...                  [("send", "k", False, 1, 0.0), ("send", "k", False, 1, 2.0)])
    'effect #2: the trace has none, the harness was told send key=k (incarnation 1, at 2s)'
    """
    return _first_difference("effect", effects, kept, lambda told: _said(*told), lambda e: (
        e.seq, _said(e.tool, e.key, e.idempotent, e.incarnation, e.at)))


def _is_time(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _move_wrong(kept: _Stream, to: float, why: str, before: float) -> str | None:
    """How a move of ``kept``'s clock, told as from ``before`` to ``to`` for ``why``, is
    not one the harness's clock could make; None: it could."""
    if why not in MOVES:
        return f"the clock was told it moved to {to:g}s for no reason the harness knows ({why!r})"
    if why == "start" and (kept.base is not None or kept.now or kept.own or kept.own_requests
                           or kept.own_moves or kept.own_ends or kept.own_calls):
        return f"the clock was told its world started at {to:g}s after it had begun"
    if before != kept.now:
        return (f"the clock was told it moved from {before:g}s to {to:g}s ({why}) where the "
                f"harness's was at {kept.now:g}s: it moved without telling the harness")
    if to < kept.now:
        return f"the clock was told it went back from {kept.now:g}s to {to:g}s"
    return None


def _invocations(stream: _Stream, read: list[object]) -> tuple[list[Called], str | None]:
    """The invocations ``stream`` was told of, by number: its first ``read[0]`` starts and
    ends (all, where the trace read none); and how the telling went wrong, if it did."""
    events = stream.calls()
    if read:
        count = read[0]
        if type(count) is not int or not 0 <= count <= len(events):
            raise TraceDataError(f"{read!r} is not a count of tool invocations")
        events = events[:count]
    started: dict[int, list[Any]] = {}
    wrong = None
    for event in events:
        seq = event[1]
        if event[0] == "I":
            if seq in started:
                wrong = wrong or f"tool invocation #{seq} was told to start twice"
                continue
            started[seq] = [seq, *event[2:], "running", None, None, None]
        elif seq not in started or started[seq][10] != "running":
            wrong = wrong or f"tool invocation #{seq} was told to end where it was not running"
        else:
            started[seq][10:] = event[2:]
    return [tuple(started[seq]) for seq in sorted(started)], wrong


def _read_wrong(stream: _Stream, read: list[object]) -> str | None:
    """How the clock ``read`` as ``[reading, moves]`` differs from the harness's after as
    many moves; None: it does not (or was not read)."""
    if not read:
        return None
    reading, moves = read
    if not isinstance(reading, int | float) or isinstance(reading, bool) \
            or type(moves) is not int or not 0 <= moves <= stream.at_moves + len(
                stream.own_moves):
        raise TraceDataError(f"{read!r} is not a reading of a clock")
    kept = stream.clock_at(moves)
    if reading == kept:
        return None
    return (f"the world's clock read {reading:g}s where the harness's was at {kept:g}s: it "
            "moved without telling the harness")


def first_request_difference(trace: Trace, kept: list[Asked]) -> str | None:
    """Where the trace's requests first differ from the ``kept`` ones, said; None: nowhere.

    A request is the same when its dialect, turn, attempt and incarnation are, and it
    arrived when the harness's clock said so: the time the world told, and the trace's.
    """
    return _first_difference("request", trace.requests, kept, _asked, lambda r: (
        r.index, _asked((trace.dialect, r.turn, r.attempt, r.incarnation, "", r.started_at,
                         r.started_at))))


def first_invocation_difference(invocations: tuple[InvocationRecord, ...],
                                kept: list[Called]) -> str | None:
    """Where the trace's tool ``invocations`` (by number) first differ from the ``kept``
    ones, said; None: nowhere. An invocation is the same when everything its record holds
    is, its arguments and result by their digests, and it started and ended when the
    harness's clock said so.
    """
    return _first_difference("tool invocation", invocations, kept, _called_said, lambda i: (
        i.seq, _called_said((i.seq, i.tool, i.kind, i.call_id, json_digest(i.arguments),
                             i.incarnation, i.refused, i.after_disk_error, i.started_at,
                             i.started_at, i.outcome, text_digest(i.result), i.ended_at,
                             i.ended_at))))


def _first_difference(what: str, records: Sequence[_Held], kept: Sequence[_Kept],
                      said: Callable[[_Kept], str],
                      theirs: Callable[[_Held], tuple[int, str]]) -> str | None:
    """Where the trace's ``records`` first differ from the ``kept`` ones, each ``said`` as
    the harness was told it, and a record by ``theirs`` (its number, and what it holds said
    the same way); None: nowhere. A record numbered out of place is said so."""
    for index in range(max(len(records), len(kept))):
        ours = said(kept[index]) if index < len(kept) else "none"
        if index < len(records):
            number, trace_has = theirs(records[index])
            if number != index + 1:
                trace_has += f" numbered #{number}"
        else:
            trace_has = "none"
        if trace_has != ours:
            return (f"{what} #{index + 1}: the trace has {trace_has}, the harness was told "
                    f"{ours}")
    return None


def _called_said(called: Called) -> str:
    (_, tool, kind, call_id, arguments, incarnation, refused, after_error, started, then,
     outcome, result, ended, now) = called
    said = (f"{tool} ({kind}) call {call_id!r} with arguments {arguments} (incarnation "
            f"{incarnation}{', refused' if refused else ''}"
            f"{', after the disk error' if after_error else ''}) started at {then:g}s")
    if started != then:
        said += (f" (the world's clock said {started:g}s, moved without telling the "
                 "harness)")
    if outcome == "running" and now is None:
        return said + ", still running"
    said += f", {outcome}" + ("" if ended is None else f" at {now:g}s")
    if ended is not None and ended != now:
        said += f" (the world's clock said {ended:g}s, moved without telling the harness)"
    return said + ("" if result is None else f", result {result}")


def _placed(end: Ended, shift: int) -> Ended:
    place, how, first, at, silence, size, now = end
    return place + shift, how, first, at, silence, size, now


def first_stream_difference(requests: tuple[RequestRecord, ...], ends: list[Ended]
                            ) -> str | None:
    """Where the trace's stream records (of its ``requests``) first differ from the ends of
    streams the harness was told, in the order it was told them, said; None: nowhere.

    >>> first_stream_difference((), [(1, "eof", 0.0, 1.0, 0.5, 9, 1.0)])
    'the stream of request #1: the trace has none, the harness was told it ended (eof) at 1s'
    """
    for place, how, first, end, silence, size, now in ends:
        if not 0 < place <= len(requests):
            return (f"the stream of request #{place}: the trace has none, the harness was "
                    f"told it ended ({how}) at {now:g}s")
        r = requests[place - 1]
        if end != now or (first, end, silence, size) != (
                r.first_byte_at, r.ended_at, r.longest_silence, r.delivered_bytes):
            ours = _timed(first, end, silence, size)
            if end != now:
                ours += (f"; the world's clock said {end:g}s where the harness's was at "
                         f"{now:g}s: it moved without telling the harness")
            theirs = _timed(r.first_byte_at, r.ended_at, r.longest_silence,
                            r.delivered_bytes)
            return (f"the stream of request #{place}: the trace has {theirs}, the harness "
                    f"was told {ours}")
    return None


def _timed(first: float | None, end: float | None, silence: float, size: int) -> str:
    start = "no byte" if first is None else f"first byte at {first:g}s"
    close = "no end" if end is None else f"ended at {end:g}s"
    return f"{start}, {close}, longest silence {silence:g}s, {size} bytes read"


def _asked(told: Asked) -> str:
    dialect, turn, attempt, incarnation, _, at, now = told
    said = f"{dialect} turn {turn} attempt {attempt} (incarnation {incarnation}, at {now:g}s"
    if at != now:
        said += f"; the world's clock said {at:g}s, moved without telling the harness"
    return said + ")"


def _said(tool: str, key: str, idempotent: bool, incarnation: int, at: float) -> str:
    safe = "" if not idempotent else ", idempotent"
    return f"{tool} key={key} (incarnation {incarnation}, at {at:g}s{safe})"


def tamper_result(case: Case, difference: str) -> CaseResult:
    """The result of a case whose trace's side effects differ from the harness's ledger."""
    from harness.runner._results import CaseResult

    message = ("the trace's side effects, requests or clock differ from the account the "
               f"harness kept outside the agent's process: {difference}")
    verdict = Verdict("judge", "fail", message, (difference,), advice=(
        "the agent changed the world's records in its process (the tool ledger, the "
        "requests the provider saw, the virtual clock); the harness's account, told each "
        "effect, request and move of the clock as it happened, is the one that counts"))
    return CaseResult(case, None, "the trace disagrees with the harness's ledger", (verdict,),
                      "", crash_reached=False)
