"""Counting tools that act on the ledger's world (seed 002 §19.6; seed 000 §2.1).

Kinds a scenario can name:

=========== ============== ==============================================
``append``  not idempotent  adds ``text`` as a line to the notes file
``send``    not idempotent  puts a message in the outbox (like an e-mail)
``put``     idempotent      sets ``store[key] = value``
``read``    pure            returns the real world state
``inspect`` pure            the same; the model's check after an unknown outcome
=========== ============== ==============================================

Behaviours: ``instant``; ``slow`` (takes ``seconds`` of virtual time);
``failing`` (raises :class:`ToolFailure`, nothing done); ``reply_lost`` (does its
work, then the connection drops before the reply: raises :class:`ToolReplyLost`, a
``ConnectionResetError``, so the caller cannot tell whether it took effect; over HTTP
the connection is closed without a response); ``hanging`` (until cancelled);
``ignores_cancellation`` (finishes its ``seconds`` of work even when
cancelled, then applies its effect: J7's timeout must wait for it);
``subprocess`` (runs ``argv`` in its own process group, killed on cancel).

A tool built with ``output_chars`` also returns that many characters of a build log
(:func:`long_output`) under ``output``: the long result an agent must not carry whole in
every later request (seed 002 §19.2: 超长输出有稳定引用).

Example::

    ledger = ToolLedger(clock)
    notes = WorldTool("append", ledger, behaviour=Behaviour("slow", seconds=2))
    await notes.run({"text": "hello"}, context)
    ledger.world.notes                # ['hello']
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, final, get_args

from fakes._ledger import ToolLedger
from harness._environment import host_environment
from harness._errors import ConfigError, one_of
from harness.ports import (
    MAX_OUTPUT_CHARS,
    TOOL_KIND_TRAITS,
    TOOL_KINDS,
    ToolContext,
    ToolKind,
    idempotency_key,
)

BehaviourKind = Literal[
    "instant", "slow", "failing", "reply_lost", "hanging", "ignores_cancellation", "subprocess"
]
BEHAVIOURS: tuple[BehaviourKind, ...] = get_args(BehaviourKind)
#: Behaviours that wait on the event loop (an event, a shielded task, a child process):
#: a tool called from blocking code, with no loop running, cannot take them.
LOOP_BOUND_BEHAVIOURS: frozenset[BehaviourKind] = frozenset(
    {"hanging", "ignores_cancellation", "subprocess"})


class ToolFailure(Exception):
    """A ``failing`` tool's error (the model receives it as the tool's reply)."""


class ToolReplyLost(ConnectionResetError):
    """A ``reply_lost`` tool's end: its effect is done, and its answer never came back.

    What a real client meets when the connection drops after the request went out (a mail
    server that accepted the message, a payment API that charged): seed 000 §4 asks to tell
    "没有送出" from "是否送达还不清楚", and this is the second.
    """


@dataclass(frozen=True)
class Behaviour:
    """How a tool behaves in time.

    >>> Behaviour("slow", seconds=3).seconds
    3
    """

    kind: BehaviourKind = "instant"
    seconds: float = 0.0
    argv: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    """Environment variables a ``subprocess`` child gets beyond :data:`CHILD_ENVIRONMENT`."""

    def __post_init__(self) -> None:
        if self.kind not in BEHAVIOURS:
            raise ConfigError("behaviour", self.kind, one_of(BEHAVIOURS))
        if self.kind == "subprocess" and not self.argv:
            raise ConfigError("argv", self.argv, "a command such as ('sleep', '1')")


@final
class WorldTool:
    """A tool of one kind acting on ``ledger``; satisfies ``harness.ports.Tool``."""

    def __init__(
        self,
        kind: ToolKind,
        ledger: ToolLedger,
        *,
        name: str | None = None,
        behaviour: Behaviour | None = None,
        concurrency_safe: bool | None = None,
        output_chars: int | None = None,
    ) -> None:
        if kind not in TOOL_KINDS:
            raise ConfigError("kind", kind, one_of(TOOL_KINDS))
        if output_chars is not None and not 1 <= output_chars <= MAX_OUTPUT_CHARS:
            raise ConfigError("output_chars", output_chars,
                              f"a number of characters from 1 to {MAX_OUTPUT_CHARS:,}")
        self.kind = kind
        self.output_chars = output_chars
        self.ledger = ledger
        self.behaviour = behaviour or Behaviour()
        self._name = name or kind
        # Pure tools may run beside others; writers queue behind each other (L2).
        self._concurrency_safe = TOOL_KIND_TRAITS[kind].concurrency_safe
        if concurrency_safe is not None:
            self._concurrency_safe = concurrency_safe
        self.started = 0
        self.settled = 0
        self.pids: list[int] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def concurrency_safe(self) -> bool:
        return self._concurrency_safe

    @property
    def idempotent(self) -> bool:
        return TOOL_KIND_TRAITS[self.kind].idempotent

    @property
    def read_only(self) -> bool:
        """A pure kind (``read``, ``inspect``) changes nothing (``harness.ports.reads_only``)."""
        return TOOL_KIND_TRAITS[self.kind].pure

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        self.ledger.incarnations.check(context.incarnation, f"tool {self._name}")
        self.started += 1
        try:
            cancelled = await self._behave(context)
            result = self._apply(dict(arguments), context)
            if self.output_chars is not None:
                result = with_output(result, long_output(self.output_chars))
            if self.behaviour.kind == "reply_lost":
                raise ToolReplyLost(f"{self._name}: the connection was reset after the request "
                                    "was sent; no answer came back")
            if cancelled:
                # It finished its work and applied its effect after all; the
                # caller still sees the cancellation it asked for.
                raise asyncio.CancelledError
            return result
        finally:
            self.settled += 1

    async def _behave(self, context: ToolContext) -> bool:
        """Spend the behaviour's time; True if a cancellation was deferred."""
        kind, seconds = self.behaviour.kind, self.behaviour.seconds
        if kind == "slow":
            await context.clock.sleep(seconds)
        elif kind == "failing":
            raise ToolFailure(f"{self._name} failed (scripted)")
        elif kind == "hanging":
            await asyncio.Event().wait()
        elif kind == "ignores_cancellation":
            return await _uncancellable(context.clock.sleep(seconds))
        elif kind == "subprocess":
            await run_in_process_group(self.behaviour.argv, self.pids,
                                       env=subprocess_environment(self.behaviour.env,
                                                                  context.env))
        return False

    def _apply(self, arguments: dict[str, Any], context: ToolContext) -> Any:
        ledger = self.ledger
        world = ledger.world
        if self.kind in ("read", "inspect"):
            return world.snapshot()
        key = idempotency_key(self._name, arguments)
        answer = None
        if ledger.witness is not None:
            # Told before it is applied here: the harness's ledger is the one that counts,
            # and the result the agent gets is the harness's answer.
            ledger.incarnations.check(context.incarnation, f"tool {self._name} ({key})")
            answer = ledger.witness.told(ledger.stream, self.kind, tool=self._name, key=key,
                                         idempotent=self.idempotent,
                                         incarnation=context.incarnation,
                                         at=ledger.clock.now())
        ledger.apply(
            tool=self._name,
            key=key,
            idempotent=self.idempotent,
            incarnation=context.incarnation,
            detail=arguments,
        )
        if self.kind == "append":
            world.notes.append(str(arguments.get("text", "")))
        elif self.kind == "send":
            world.outbox.append(arguments)
        else:
            world.store[str(arguments.get("key", key))] = arguments.get("value")
        return effect_result(self.kind, key, len(world.notes)) if answer is None else answer


def long_output(chars: int) -> str:
    """``chars`` characters of a build log, numbered lines, the same every time.

    >>> long_output(40)
    'line 1: step 1 of the build ok\\nline 2: s'
    >>> len(long_output(100_000))
    100000
    """
    lines: list[str] = []
    total, number = 0, 0
    while total < chars:
        number += 1
        line = f"line {number}: step {number} of the build ok\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)[:chars]


def with_output(result: Any, output: str) -> dict[str, Any]:
    """``result`` with ``output`` beside it: a mapping gains the key, anything else is kept
    under ``result``.

    >>> with_output({"lines": 1}, "log")
    {'lines': 1, 'output': 'log'}
    >>> with_output([1], "log")
    {'result': [1], 'output': 'log'}
    """
    if isinstance(result, Mapping):
        return {**result, "output": output}
    return {"result": result, "output": output}


def effect_result(kind: str, key: str, notes: int) -> dict[str, Any]:
    """What a counting tool of ``kind`` returns, its effect applied; ``notes``: the lines
    the notes file holds then. The harness answers a contained case's tools with it.

    >>> effect_result("send", "k", 0)
    {'sent': True, 'key': 'k'}
    """
    if kind == "append":
        return {"appended": True, "lines": notes}
    if kind == "send":
        return {"sent": True, "key": key}
    return {"stored": True, "key": key}


async def _uncancellable(work: Any) -> bool:
    """Finish ``work`` even if cancelled meanwhile; return whether a cancel came."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
    return cancelled


#: The only variables of the harness's environment a tool's child process sees, besides
#: those a scenario names (seed 000 sanitizes the child environment): API keys and tokens
#: of the machine running the suite must not reach the code under test.
CHILD_ENVIRONMENT: tuple[str, ...] = (
    "PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TZ",
    "TMPDIR", "TMP", "TEMP", "USER", "LOGNAME", "SHELL",
)


def child_environment(extra: Iterable[str] = ()) -> dict[str, str]:
    """The harness's environment cut down to :data:`CHILD_ENVIRONMENT` and ``extra`` names.

    >>> import os; os.environ["CANARY_API_KEY"] = "x"
    >>> "CANARY_API_KEY" in child_environment(), "PATH" in child_environment()
    (False, True)
    """
    allowed = {*CHILD_ENVIRONMENT, *extra}
    # The harness's environment even while the agent that called the tool sees its own.
    return {name: value for name, value in host_environment().items() if name in allowed}


def subprocess_environment(declared: Iterable[str] = (),
                           handed: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a ``subprocess`` tool's child receives: the environment its caller handed it,
    with the variables the scenario declares for it (``env:``, the harness's values);
    :func:`child_environment` when the caller handed none.

    >>> subprocess_environment((), {"PATH": "/bin", "OPENAI_API_KEY": "k"})
    {'PATH': '/bin', 'OPENAI_API_KEY': 'k'}
    """
    if handed is None:
        return child_environment(declared)
    host = host_environment()
    # Whatever the caller handed, a declared variable is the world's to give.
    return {**handed, **{name: host[name] for name in declared if name in host}}


async def run_in_process_group(argv: tuple[str, ...], pids: list[int] | None = None, *,
                               env: Mapping[str, str] | None = None) -> int:
    """Run ``argv`` in a new process group; on cancel, kill the whole group (J7).

    ``env`` is the child's whole environment (default: :func:`child_environment`).
    Returns the exit status; appends the process id to ``pids`` if given. The
    wait is a pidfd registered with the loop, so the virtual clock sees real
    I/O pending and does not jump past a process that is still running.
    """
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=dict(child_environment() if env is None else env),
    )
    if pids is not None:
        pids.append(process.pid)
    try:
        await _exited(process)
    except asyncio.CancelledError:
        # Dropping the coroutine would leave the process (and its children)
        # running; kill the group and reap the leader before re-raising. The reap
        # blocks the loop on purpose: SIGKILL cannot be ignored, so it takes
        # milliseconds, and a wait through the loop would let the virtual clock run
        # on past other timers while a loaded machine delivers the exit, settling
        # the call at a different virtual time from one run to the next.
        _kill_group(process.pid)
        process.wait()
        raise
    return process.returncode


async def _exited(process: subprocess.Popen[bytes]) -> None:
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[None] = loop.create_future()
    pidfd = os.pidfd_open(process.pid)

    def mark_exited() -> None:
        if not exited.done():
            exited.set_result(None)

    # On a virtual loop the clock holds still while a quick child runs (fakes._clock).
    add_process_reader = getattr(loop, "add_process_reader", loop.add_reader)
    add_process_reader(pidfd, mark_exited)
    try:
        await exited
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)
    process.wait()  # already exited: this only reaps it


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(pid, signal.SIGKILL)
