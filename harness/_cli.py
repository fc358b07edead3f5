"""The ``harness`` command line: a thin layer over the library.

Commands and exit codes::

    harness run PATH... [--crash SETTING | --crash-at POINT:WHEN:CLASS | --no-crash]
                        [--seed N] [--out DIR] [--jobs N] [--case-timeout SECONDS]
                        [--case-memory MIB] [--strict] [--resume]
                                      0 no case failed, 1 a case failed (or, under
                                      --strict, something no case reached), 2 bad input,
                                      130 / 143 stopped by SIGINT / SIGTERM (finished cases
                                      kept; --resume runs the rest)
    harness run PATH... --exec COMMAND [--time-scale X]
                                      the same, with the agent as a process (any language)
    harness run PATH... --shard K/N   the same, for this shard's share of the cases only
    harness merge OUT SHARD_DIR... [--strict]
                                      0 merged, no case failed; 1 a case failed (or, under
                                      --strict, something no case of any shard reached);
                                      2 bad input (shards of different runs, one missing,
                                      given twice or interrupted), nothing written
    harness serve SCENARIO... [--port P] [--time-scale X]
                                      serves until interrupted; 0, or 2 bad input
    harness validate PATH... [--agent SPEC] [--target TOOL=MODULE:FUNCTION]
                                      0 every check run makes passes, 1 some file has
                                      errors, 2 a bad --agent or --target
    harness points SCENARIO           0, or 2 when the scenario does not load or the
                                      agent exits, hangs or raises before the stop
                                      the scenario expects (the list stops there)
    harness demo                      0 every streaming fault handled, 1 otherwise
    harness fuzz SCENARIO [--agent SPEC] [--budget N] [--out DIR] [--seed S]
                                      0 nothing found, 1 a repro written, 2 bad input
    harness record --upstream URL --out DIR [--port P]
                                      0 after Ctrl-C, 2 bad input
    harness import CAPTURE [--out FILE] 0 scenario written, 2 bad capture
    harness compare BASE CAND [--out DIR] [--format md,html,json]
                                      0 reports written, 2 bad input
    harness gate BASE CAND [--threshold METRIC=VALUE]...
                                      0 pass, 2 bad input, 3-6 see reports.EXIT_CODES

Bad input is one ``harness: error: ...`` line per problem on stderr, never a traceback;
Ctrl-C stops any command with exit 130.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from harness import __version__
from harness._errors import ConfigError, HarnessError, ScenarioError, WorkerError
from harness._journal import JOURNAL_VERSION
from harness._options import (
    CHECK_DETERMINISM_HELP,
    DEFAULT_CASE_MEMORY_MIB,
    DEFAULT_CASE_TIMEOUT,
    REPLAY_HELP,
    command_text,
    crash_settings_help,
    input_path,
    output_path,
    parse_env_name,
    parse_host,
    parse_seed,
    parse_target,
    positive_float,
    with_absorbed,
    with_overrides,
)
from harness._price_file import add_prices_option, use_price_file
from harness.ports import DIALECTS

if TYPE_CHECKING:
    from harness._journal import JournalRead
    from harness._output import RunFolder
    from harness._preflight import Request
    from harness.runner import Case, CaseResult, CrashSpec, CrashWhen, StepTo
    from harness.scenario import Scenario

#: What each exit code of ``harness run`` means (``--exec`` too).
RUN_EXIT_CODES: Final[Mapping[int, str]] = {
    0: "no case failed (without --strict, cases that proved nothing are counted on the "
       "summary's first line)",
    1: "a case failed, or under --strict a crash point, fault or expectation no case reached",
    2: "bad input: a scenario, an option, --agent or a target; nothing ran",
    130: "stopped by Ctrl-C (SIGINT): every finished case kept, --resume runs the rest",
    143: "stopped by SIGTERM: every finished case kept, --resume runs the rest",
}
#: What each exit code of ``harness validate`` means.
VALIDATE_EXIT_CODES: Final[Mapping[int, str]] = {
    0: "every file passes every check run makes before its first case",
    1: "some file has errors, each listed with its file:line:column",
    2: "a bad --agent or --target",
}

CRASH_AT_FORM = ("POINT:WHEN:CLASS[:again], such as 'journal:fsync#3:after:unsynced_lost' "
                 "or 'after_tool:mail#1:at:unsynced_lost'")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Chaos harness for LLM agents: fake providers, faults, crash recovery checks.",
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_run(commands)
    from reports import add_report_commands

    add_report_commands(commands)
    from harness._fuzz_options import add_fuzz_command

    add_fuzz_command(commands)
    from harness.record import add_record_commands

    add_record_commands(commands)
    from harness.serve import add_serve_command

    add_serve_command(commands)
    from harness._shard import add_merge_command

    add_merge_command(commands)
    validate = commands.add_parser("validate", help="check scenario files; list every error")
    validate.add_argument("paths", nargs="+", type=input_path, metavar="PATH",
                          help="scenario files or folders")
    validate.add_argument("--agent", metavar="MODULE:CALLABLE",
                          help="also check what run checks with this agent: it imports, its "
                               "targets take the scripted arguments, its recorded run "
                               "reaches every listed point of its own files, and its "
                               "crash-free case can take every scripted fault (no reason "
                               "run would call it unknown)")
    _add_target_option(validate)
    points = commands.add_parser("points", help="list the persistence points a scenario reaches")
    points.add_argument("scenario", type=input_path, metavar="SCENARIO",
                        help="one scenario file")
    points.add_argument("--seed", type=parse_seed,
                        help="record with this seed instead of the file's")
    points.add_argument("--agent", metavar="MODULE:CALLABLE",
                        help="record the points of this agent (default: the reference agent)")
    _add_target_option(points)
    demo = commands.add_parser(
        "demo", help="run every streaming fault against the reference stream client"
    )
    demo.add_argument("--dialect", choices=DIALECTS, action="append",
                      help=f"limit to one dialect of {', '.join(DIALECTS)} (repeatable; "
                           "default: all)")
    demo.add_argument("--seed", type=parse_seed, default=0, help="run seed (default: 0)")
    return parser


def _add_run(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser("run", help="run every case of the scenarios and judge them")
    run.add_argument("paths", nargs="+", type=input_path, metavar="PATH",
                     help="scenario files or folders")
    crash = run.add_mutually_exclusive_group()
    crash.add_argument("--crash", metavar="SETTING",
                       help=f"what every scenario crashes (default: as-written): "
                            f"{crash_settings_help()}")
    crash.add_argument("--crash-at", metavar="POINT:WHEN:CLASS",
                       help=f"run only this crash case ({CRASH_AT_FORM})")
    crash.add_argument("--no-crash", action="store_true",
                       help="run each scenario once, uncrashed (the same as --crash none)")
    run.add_argument("--seed", type=parse_seed, help="use this seed instead of each scenario's")
    add_prices_option(run)
    run.add_argument("--out", type=output_path, default=Path("results"),
                     help="folder for cases/attempts JSONL and Parquet (default: results)")
    run.add_argument("--resume", action="store_true",
                     help="finish the interrupted run in --out: run only the cases its "
                          "journal lacks (same paths and options, else refused)")
    run.add_argument("--agent", metavar="MODULE:CALLABLE",
                     help="the agent to test: a plain main(prompt) -> str run unchanged, or a "
                          "factory from AgentPorts to an Agent (default: the reference agent)")
    _add_target_option(run)
    run.add_argument("--absorb", action="append", type=parse_host, default=[], metavar="HOST",
                     help="answer calls to HOST as telemetry (listed in the trace, no verdict) "
                          "beside the tracing and usage endpoints the harness knows; repeatable")
    run.add_argument("--dialect", action="append", choices=DIALECTS, metavar="DIALECT",
                     help=f"a dialect the agent speaks, one of {', '.join(DIALECTS)}; "
                          "repeatable; scenarios in another dialect are skipped")
    run.add_argument("--strict", action="store_true",
                     help="turn warnings (advice such as no backoff between retries) into "
                          "failures, and fail the run when a crash point, scripted fault "
                          "or written-out expectation was reached by no case, naming each")
    run.add_argument("--check-determinism", action="store_true", help=CHECK_DETERMINISM_HELP)
    run.add_argument("--replay", action="store_true", help=REPLAY_HELP)
    run.add_argument("--jobs", type=_positive, default=1, metavar="N",
                     help="run cases in N processes, at most one per case and per core "
                          "(default: 1)")
    run.add_argument("--case-timeout", type=_seconds, default=DEFAULT_CASE_TIMEOUT,
                     metavar="SECONDS",
                     help="real seconds a case may take before its agent is killed and the "
                          f"case fails (default: {DEFAULT_CASE_TIMEOUT:g})")
    run.add_argument("--case-memory", type=_positive, default=DEFAULT_CASE_MEMORY_MIB,
                     metavar="MIB",
                     help="MiB of memory a case's agent may hold before it is stopped with "
                          f"a harness_limit verdict (default: {DEFAULT_CASE_MEMORY_MIB})")
    run.add_argument("--pass-env", action="append", type=parse_env_name, default=[],
                     metavar="NAME",
                     help="give the agent this variable of the harness's environment; "
                          "repeatable (it sees only PATH, HOME, the locale and a few more "
                          "besides the fake providers' keys: see README, 'The agent's "
                          "environment')")
    run.add_argument("--exec", type=command_text, metavar="COMMAND",
                     help="run the agent as this shell command, a process in any language, "
                          "against the fakes served on 127.0.0.1 (see README, 'Any language'); "
                          "killed with SIGKILL at the scenarios' world-event crash points and "
                          "started again in the same working folder")
    from harness._shard import parse_shard
    from harness.serve import add_time_scale_option

    add_time_scale_option(run)
    run.add_argument("--shard", type=parse_shard, metavar="K/N",
                     help="run only shard K of N (1 <= K <= N): the cases whose id hashes "
                          "(SHA-256) to K, so the share stays put when scenarios are added; "
                          "join the shards' --out folders with 'harness merge OUT DIR...' "
                          "(--strict's check for things no case reached is made there)")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"got {text!r}; expected a whole number >= 1")
    return value


def _seconds(text: str) -> float:
    return positive_float(text, "a number of seconds > 0, such as 60")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    parser = _parser()
    words = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(words)
    args.argv = words  # for the command that resumes an interrupted run
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return _dispatch(args)
    except HarnessError as error:
        print_error(error, sys.stderr)
        return 2
    except KeyboardInterrupt:  # run keeps its cases itself; the others have nothing to keep
        print(f"harness {args.command}: interrupted by SIGINT; stopped", file=sys.stderr)
        return 130


def print_error(error: HarnessError, out: TextIO) -> None:
    """Each problem of ``error`` on its own ``harness: error:`` line.

    What an agent raised at import may quote a credential of the environment: not here.
    """
    from harness._redact import known_secrets, redact_values

    problems: Sequence[object] = [error]
    if isinstance(error, ScenarioError):
        problems = error.errors
    elif isinstance(error, WorkerError):
        problems = error.problems
    for problem in problems:
        print(redact_values(f"harness: error: {problem}", known_secrets()), file=out)


def _dispatch(args: argparse.Namespace) -> int:
    commands: dict[str, Callable[[argparse.Namespace], int]] = {
        "run": _run, "validate": _validate, "points": _points, "demo": _demo,
    }
    if args.command == "fuzz":
        from harness._fuzz_command import run_fuzz

        return run_fuzz(args)
    if args.command in {"record", "import"}:
        from harness.record import run_import, run_record

        return {"record": run_record, "import": run_import}[args.command](args)
    if args.command == "merge":
        from harness._shard import run_merge

        return run_merge(args)
    if args.command == "serve":
        from harness.serve import run_serve

        return run_serve(args)
    if args.command in {"compare", "gate"}:
        from reports import run_compare, run_gate

        return {"compare": run_compare, "gate": run_gate}[args.command](args)
    return commands[args.command](args)


def _demo(args: argparse.Namespace) -> int:
    from harness._demo import demo

    return demo(args.dialect or DIALECTS, args.seed)


# --- harness validate ---------------------------------------------------------------


def _validate(args: argparse.Namespace) -> int:
    from harness._preflight import Request, preflight

    checked = preflight(Request(args.paths, agent=args.agent, targets=tuple(args.target)),
                        thorough=True, timeout=DEFAULT_CASE_TIMEOUT)
    for error in checked.errors:
        print(error.message)
    if checked.errors:
        bad = len({error.path for error in checked.errors})
        print(f"harness: {len(checked.errors)} error(s) in {bad} of {checked.files} file(s)",
              file=sys.stderr)
        return 1
    print(f"{checked.files} scenario file(s) ok", file=sys.stderr)
    return 0


# --- harness points -----------------------------------------------------------------




def _add_target_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--target", action="append", type=parse_target, default=[],
                         metavar="TOOL=MODULE:FUNCTION",
                         help="the agent's own function that scenario tool TOOL stands for "
                              "(replaced by the counting tool during a case); repeatable")


def _points(args: argparse.Namespace) -> int:
    from harness.scenario import load_scenario

    scenario = with_overrides(load_scenario(args.scenario), crash=None, seed=args.seed)
    from harness.runner import contained, tool_env_names

    recorded = contained(lambda step: _recorded(args, scenario, step),
                         timeout=DEFAULT_CASE_TIMEOUT, tool_names=tool_env_names([scenario]),
                         agent=args.agent, memory_mib=DEFAULT_CASE_MEMORY_MIB)
    parts = [(point, *point_parts(point)) for point in recorded["points"]]
    parts += [(event, "world", event.partition(":")[0]) for event in recorded["events"]]
    points = [point for point, _, _ in parts]
    width = max((len(point) for point in points), default=0)
    op_width = max((len(op) for _, _, op in parts), default=0)
    for point, role, op in parts:
        print(f"{point:<{width}}  op={op:<{op_width}}  role={role}")
    if recorded["broke_off"]:
        # The list stops where the agent did: a short list read as the whole would hide
        # every point after it from the crashes built on it.
        print(f"harness points: error: {recorded['broke_off'][0]}, so the list above stops "
              f"there (the scenario expects '{scenario.expect.stop_state}'); see why with "
              f"'harness run {args.scenario}"
              + (f" --agent {args.agent}'" if args.agent else "'"), file=sys.stderr)
        return 2
    return 0


def _recorded(args: argparse.Namespace, scenario: Scenario,
              step: StepTo) -> dict[str, list[str]]:
    """In a contained process: import the agent and record its crash-free run."""
    from harness import runner
    from harness._preflight import load_agent
    from harness.runner import RECORDING

    agent = load_agent(args.agent, args.target)
    step(RECORDING)
    recorded = runner.record_run(scenario, agent)
    broke_off = [] if recorded.broke_off is None else [recorded.broke_off]
    return {"points": recorded.points, "events": recorded.events, "broke_off": broke_off}


def point_parts(point: str) -> tuple[str, str]:
    """The role and the operation of a point id.

    >>> point_parts("journal:fsync#3")
    ('journal', 'fsync')
    """
    role, _, rest = point.partition(":")
    return role, rest.partition("#")[0]


# --- harness run --------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    """``harness run``: a stop signal ends it cleanly, keeping every finished case."""
    from harness._environment import hiding, passing
    from harness._output import removed_if_left_empty
    from harness.runner import Interrupted, stopping_cleanly

    state = _RunState(args)
    # The results fill while the cases run: an agent listing its folder must not see them.
    with removed_if_left_empty(args.out), stopping_cleanly(), passing(args.pass_env), \
            hiding(args.out):
        try:
            return _run_planned(args, state)
        except Interrupted as stop:
            return state.stopped(stop.name, stop.exit_code)
        except KeyboardInterrupt:  # raised before the handlers were in place
            return state.stopped("SIGINT", 130)
        finally:
            state.close()


def _run_planned(args: argparse.Namespace, state: _RunState) -> int:
    from harness._options import crash_setting_note
    from harness._preflight import Request, preflight

    use_price_file(args.prices)
    crash_at: CrashSpec | None = (None if args.crash_at is None
                                  else parse_crash_at(args.crash_at))
    request = Request(args.paths, agent=args.agent, targets=tuple(args.target),
                      absorb=tuple(args.absorb), dialects=tuple(args.dialect or ()),
                      crash=_crash_setting(args), seed=args.seed, crash_at=crash_at)
    note = crash_setting_note(args.crash)
    if note is not None:
        print(f"harness run: --crash: {note}", file=sys.stderr)
    if args.exec is not None:
        return _run_exec(args, request, state)
    checked = preflight(request, timeout=args.case_timeout, memory_mib=args.case_memory,
                        longer="raise --case-timeout if it is honest work")
    checked.raise_errors()
    if checked.loaded and not checked.spoken:
        print(f"harness run: all {len(checked.loaded)} scenario(s) skipped: none is in a "
              "dialect the agent speaks; nothing ran", file=sys.stderr)
        return 0
    targets = tuple(args.target)
    planned = [(replace(case, agent=args.agent, targets=targets), scenario)
               for case, scenario in checked.planned]
    todo = state.open(checked.spoken, planned)
    run_cases([state.planned[index] for index in todo], jobs=args.jobs, on_result=state.record,
              agent=args.agent, targets=targets, twice=args.check_determinism,
              timeout=args.case_timeout, replay=args.replay, memory_mib=args.case_memory)
    return _report(args, checked.spoken, state)


def _run_exec(args: argparse.Namespace, request: Request, state: _RunState) -> int:
    """The agent is a process: only the files are checked here (it has no module to import)."""
    from harness._preflight import load_each, speaking
    from harness.serve import plan_exec, run_exec_cases

    _, loaded, errors = load_each(request.paths, crash=request.crash, seed=request.seed)
    if errors:
        raise ScenarioError.combine(errors)
    loaded = speaking([(with_absorbed(s, request.absorb), f) for s, f in loaded], None,
                      request.dialects)
    planned = plan_exec(loaded, args.exec, request.crash_at, request.crash,
                        time_scale=args.time_scale, timeout=args.case_timeout)
    todo = state.open(loaded, planned)
    run_exec_cases([state.planned[index] for index in todo], args, state.record)
    return _report(args, loaded, state)


def _crash_option(args: argparse.Namespace) -> str:
    """How the run chose its crashes, as the manifest and the journal name it."""
    return str(args.crash_at or _crash_setting(args))


def _crash_setting(args: argparse.Namespace) -> str:
    """The ``--crash`` setting by its name (``--no-crash`` is ``none``); an unknown name
    is bad input listing the names (an old spelling works: see :func:`_run_planned`)."""
    from harness._options import AS_WRITTEN, parse_crash_setting

    if args.no_crash:
        return "none"
    if args.crash is None:
        return AS_WRITTEN
    try:
        setting = parse_crash_setting(args.crash)
    except argparse.ArgumentTypeError as error:
        raise ConfigError("--crash", args.crash,
                          str(error).partition("; expected ")[2]) from None
    return setting


class _RunState:
    """A run's plan, its results folder (:class:`harness._output.RunFolder`) and progress.

    :meth:`open` checks ``--out`` (and, with ``--resume``, that the journal there is of
    this very plan) and says which planned cases are still to run; :meth:`record` takes
    each result as it comes; :meth:`stopped` reports a run a signal ended.
    """

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.planned: list[tuple[Case, Scenario]] = []
        self.folder: RunFolder | None = None
        self.live: dict[int, CaseResult] = {}
        self._indices: dict[Case, list[int]] = {}
        self._progress = _Progress(0, sys.stderr)
        #: What a --shard run's manifest says of it (harness._shard.shard_record).
        self.shard: dict[str, Any] | None = None

    def open(self, loaded: list[tuple[Scenario, Path]],
             planned: list[tuple[Case, Scenario]]) -> list[int]:
        """Check the folder, start or resume the journal; the indices of the cases to run."""
        from harness._output import RunFolder, check_writable_folder

        plan = _plan_identity(self.args, loaded, planned)
        if self.args.shard is not None:
            plan, planned = self._take_shard(plan, loaded, planned)
        resumed = _resumable(self.args.out, plan) if self.args.resume else None
        # After every input check (bad input leaves no folder behind), before any case runs.
        check_writable_folder(self.args.out, "--out")
        header = {"journal": JOURNAL_VERSION, "plan": plan,
                  "resume": _resume_command(self.args.argv)}
        self.planned = planned
        self.folder = RunFolder(self.args.out, header, resumed)
        todo = [index for index in range(len(planned)) if index not in self.folder.entries]
        for index in todo:
            self._indices.setdefault(planned[index][0], []).append(index)
        self._progress = _Progress(len(planned), sys.stderr, done=len(planned) - len(todo))
        if resumed is not None:
            print(f"harness run: resuming {self.args.out}/: {len(planned) - len(todo)} of "
                  f"{len(planned)} cases done, {len(todo)} to run", file=sys.stderr)
        return todo

    def _take_shard(self, whole: dict[str, Any], loaded: list[tuple[Scenario, Path]],
                    planned: list[tuple[Case, Scenario]]
                    ) -> tuple[dict[str, Any], list[tuple[Case, Scenario]]]:
        """This shard's plan (the journal's, for --resume) and cases; the whole plan is
        kept for the manifest, where ``harness merge`` checks every shard is of it."""
        from harness._shard import shard_record
        from harness.runner import declared_expectations

        shard = self.args.shard
        chosen = shard.chosen(whole["cases"])
        self.shard = shard_record(shard, whole, chosen, {
            scenario.name: declared_expectations(scenario) for scenario, _ in loaded})
        part = {**whole, "options": {**whole["options"], "shard": str(shard)},
                "cases": [whole["cases"][index] for index in chosen]}
        return part, [planned[index] for index in chosen]

    def record(self, result: CaseResult) -> None:
        from harness.runner import strictly

        assert self.folder is not None
        index = self._indices[result.case].pop(0)
        if self.args.strict:
            result = strictly(result)
        self.folder.record(index, result)
        self.live[index] = result
        self._progress.step(result)

    def results(self) -> list[CaseResult]:
        """Every planned case's result in the planned order: those of this process as
        they came (with their traces), the journal's for cases an earlier run finished."""
        from harness._output import result_from_entry

        assert self.folder is not None
        return [self.live.get(index) or result_from_entry(case, self.folder.entries[index])
                for index, (case, _) in enumerate(self.planned)]

    def stopped(self, signal_name: str, code: int) -> int:
        """Say how far the run got and how to resume it; the exit code (130, 143)."""
        if self._progress.live and self._progress.drawn:
            sys.stderr.write("\n")
        folder = self.folder
        if folder is None or not folder.started:
            print(f"harness run: interrupted by {signal_name} before any case finished; "
                  "nothing was written", file=sys.stderr)
            return code
        print(f"harness run: interrupted by {signal_name} after {len(folder.entries)} of "
              f"{folder.total} cases; every finished case is kept in {folder.journal}",
              file=sys.stderr)
        print(f"resume with: {folder.header['resume']}", file=sys.stderr)
        return code

    def close(self) -> None:
        if self.folder is not None:
            self.folder.close()


def _plan_identity(args: argparse.Namespace, loaded: list[tuple[Scenario, Path]],
                   planned: list[tuple[Case, Scenario]]) -> dict[str, Any]:
    """What makes two runs the same run: a journal is resumed only by the same plan.

    ``--jobs``, ``--case-timeout``, ``--case-memory`` and ``--out`` are left out: they
    change how the cases run, not what they are.
    """
    import json

    from harness._output import file_digest

    plan = {
        "harness_version": __version__,
        "options": {
            "seed": args.seed, "crash": _crash_option(args), "agent": args.agent,
            "targets": [list(pair) for pair in args.target], "absorb": list(args.absorb),
            "dialect": list(args.dialect or []), "strict": args.strict,
            "check_determinism": args.check_determinism, "replay": args.replay,
            "exec": args.exec, "time_scale": args.time_scale,
        },
        "scenarios": [{"name": scenario.name, "path": str(source), "seed": scenario.seed,
                       "sha256": file_digest(source)} for scenario, source in loaded],
        "cases": [case.case_id for case, _ in planned],
    }
    # As a journal reads it back (lists, not tuples), so that the two compare.
    loaded_back: dict[str, Any] = json.loads(json.dumps(plan))
    return loaded_back


def _resumable(out: Path, plan: dict[str, Any]) -> JournalRead:
    """The journal in ``out`` when it is of ``plan``; else a ConfigError saying why not."""
    from harness._journal import JOURNAL_NAME, plan_differences, read_journal

    found = read_journal(out / JOURNAL_NAME)
    if found is None:
        what = ("its journal's first line is damaged" if (out / JOURNAL_NAME).exists()
                else f"it has no {JOURNAL_NAME}: its run finished, or none was started there")
        raise ConfigError("--resume", str(out), "a results folder holding an interrupted "
                          f"run; {what}", "Run without --resume to start the run afresh")
    differences = plan_differences(found.header.get("plan") or {}, plan)
    if differences:
        raise ConfigError("--resume", str(out), "the same scenarios and options as the "
                          f"interrupted run there, but {'; '.join(differences)}",
                          "Resume with the inputs it started with, or run without --resume "
                          "to start afresh (its finished cases are then discarded)")
    return found


def _resume_command(argv: Sequence[str]) -> str:
    """The command line that resumes this run: the same words, with ``--resume``."""
    import shlex

    words = list(argv)
    if "--resume" not in words:
        words.append("--resume")
    return shlex.join(["harness", *words])


def _report(args: argparse.Namespace, loaded: list[tuple[Scenario, Path]],
            state: _RunState) -> int:
    """Print the warnings, failures and summary of a run; write its results; the exit code.

    ``--strict`` was applied as each result came (:meth:`_RunState.record`).
    """
    assert state.folder is not None
    results = state.results()
    _print_warnings(results)
    by_name = {scenario.name: scenario for scenario, _ in loaded}
    _print_failures([r for r in results if r.status == "fail"], by_name)
    for line in _unknown_lines(results):
        print(line, file=sys.stderr)
    _print_summary(results)
    state.folder.finish([(s.name, source, s.seed) for s, source in loaded], seed=args.seed,
                        crash=_crash_option(args), shard=state.shard)
    print(f"results written to {args.out}/", file=sys.stderr)
    if args.strict and state.shard is not None:
        # A point this shard missed may be reached in another: judged over all of them.
        print(f"harness run --shard {args.shard}: what no case reached is checked over "
              "every shard by 'harness merge'", file=sys.stderr)
    unreached = _strictly_unreached(results, by_name) \
        if args.strict and state.shard is None else []
    failed = any(result.status == "fail" for result in results)
    return 1 if failed or unreached else 0


def _print_summary(results: Sequence[CaseResult]) -> None:
    """The summary table, led by how many cases proved nothing when some did: a run whose
    crash points were never reached must not read as a green one."""
    from harness.runner import proved_nothing_line

    line = proved_nothing_line(results)
    if line is not None:
        print(line)
    print(summary_table(results))


def _strictly_unreached(results: Sequence[CaseResult], by_name: dict[str, Scenario]
                        ) -> list[str]:
    """``--strict``: each crash point, fault and expectation no case reached, printed on
    stderr; any one of them fails the run."""
    from harness.runner import never_reached

    unreached = [str(thing) for thing in never_reached(results, by_name)]
    if unreached:
        # An --exec agent's points are the world events its run reaches: 'harness points'
        # does not run processes.
        hint = ("an --exec agent is crashed at the world events its uncrashed run reaches"
                if any(result.case.exec for result in results) else
                "list the agent's points with 'harness points SCENARIO --agent SPEC'")
        print(f"harness run --strict: {len(unreached)} thing(s) no case reached, so the run "
              f"proves nothing of them ({hint}):", file=sys.stderr)
    for thing in unreached:
        print(f"  {thing}", file=sys.stderr)
    return unreached


def _print_warnings(results: Sequence[CaseResult]) -> None:
    from harness._report_text import warning_lines

    for result in results:
        for line in warning_lines(result):
            print(line)


def parse_crash_at(text: str) -> CrashSpec:
    """Read ``--crash-at``: ``POINT:WHEN:CLASS`` with an optional ``:again``.

    >>> parse_crash_at("journal:fsync#3:after:unsynced_lost").label
    'journal:fsync#3:after:unsynced_lost'
    """
    import re

    from harness.runner import ERROR_CLASSES, WORLD_POINT_PATTERN, CrashSpec
    from harness.scenario import CRASH_CLASSES, did_you_mean

    match = re.fullmatch(r"([a-z][a-z0-9_]*:[a-z][a-z0-9_]*#[1-9][0-9]*):(before|after):"
                         r"([a-z_]+)(:again)?", text) or re.fullmatch(
        rf"({WORLD_POINT_PATTERN}):(at):([a-z_]+)()", text)
    if match is None:
        raise ConfigError("--crash-at", text, CRASH_AT_FORM,
                          "List a scenario's points with 'harness points SCENARIO'")
    point, when, crash_class, again = match.groups()
    side: CrashWhen = "before" if when == "before" else "at" if when == "at" else "after"
    if side == "at" and crash_class in ERROR_CLASSES:
        raise ConfigError("--crash-at", crash_class, "a class that kills the process at a "
                          "world event (an error class needs a disk operation to fail)")
    if crash_class not in CRASH_CLASSES:
        raise ConfigError("--crash-at", crash_class, "a crash class, one of "
                          + ", ".join(CRASH_CLASSES), did_you_mean(crash_class, CRASH_CLASSES))
    if again and crash_class in ERROR_CLASSES:
        raise ConfigError("--crash-at", f"{crash_class}:again", "':again' only with a class "
                          f"that kills the process (an error class such as {crash_class!r} "
                          "raises at the point and the agent carries on: there is no recovery "
                          "to crash)", "Drop ':again'")
    return CrashSpec(point, side, crash_class, during_recovery=bool(again))


def run_cases(planned: Sequence[tuple[Case, Scenario]], *, jobs: int,
              on_result: Callable[[CaseResult], object], agent: str | None = None,
              targets: tuple[tuple[str, str], ...] = (), twice: bool = False,
              timeout: float | None = None, replay: bool = False,
              memory_mib: int = DEFAULT_CASE_MEMORY_MIB) -> list[CaseResult]:
    """Run every case in worker processes (at most ``jobs``); results in plan order.

    ``on_result`` takes each result as it comes (in the order cases finish).
    ``agent`` is the ``--agent`` spec and ``targets`` its ``--target`` tool
    functions; each process imports the agent for itself. ``twice`` runs each
    case twice and judges its determinism too; ``replay`` runs every crash case from
    its start instead of from the scenario's recorded run. A case that exits, dies or runs
    past ``timeout`` real seconds (default
    :data:`~harness.runner._contain.DEFAULT_CASE_TIMEOUT`) fails with the reason; one
    whose agent holds more than ``memory_mib`` MiB is stopped with a harness_limit verdict.
    """
    from harness.runner import AgentChoice, run_contained

    if not planned:
        return []
    from fakes import own_prices

    choice = AgentChoice(agent, targets, twice, replay, tuple(own_prices().items()))
    return run_contained(planned, agent=choice, workers=jobs,
                         timeout=timeout or DEFAULT_CASE_TIMEOUT, on_result=on_result,
                         memory_mib=memory_mib)


class _Progress:
    """``[12/40] 1 failed  name[point]`` on stderr: redrawn in place on a terminal,
    every tenth of the run in a log. A resumed run counts on from the cases done."""

    def __init__(self, total: int, out: TextIO, done: int = 0) -> None:
        self.total, self.out, self.done, self.failed = total, out, done, 0
        self.live = out.isatty()
        self.drawn = False  # a line is on the terminal without its newline

    def step(self, result: CaseResult) -> None:
        self.done += 1
        self.failed += result.status == "fail"
        line = f"[{self.done}/{self.total}] {self.failed} failed  {result.case.case_id}"
        if self.live:
            end = "\n" if self.done == self.total else ""
            self.out.write(f"\r\x1b[K{line}{end}")
            self.drawn = not end
        elif self.done == self.total or self.done % max(1, self.total // 10) == 0:
            self.out.write(line + "\n")
        self.out.flush()


def _unknown_lines(results: Sequence[CaseResult]) -> list[str]:
    """``UNKNOWN case: why`` for each case that proved nothing, cases of one scenario with
    the same reason once, with a count: a scenario not written for the agent makes every
    one of its crash cases unknown for one reason. A scenario whose ``points: all`` made
    no crash case gets one too, on its uncrashed case, whatever that case's own verdict.

    >>> from harness.runner import Case, CaseResult
    >>> from harness.checks import Verdict
    >>> def case(i, why):
    ...     return CaseResult(Case("s", Path("s.yaml"), i), None, "", (Verdict("script",
    ...                       "unknown", why),), "", crash_reached=False)
    >>> _unknown_lines([case(1, "a"), case(2, "b"), case(3, "a")])
    ['UNKNOWN s: a (+1 alike)', 'UNKNOWN s: b']

    Checks that failed on the way are named: they judged a run the case is not about,
    but the agent did what they say (a final answer the model never gave, say).

    >>> failing = CaseResult(Case("s", Path("s.yaml"), 4), None, "", (Verdict("script",
    ...     "unknown", "a"), Verdict("I4", "fail", "no")), "", crash_reached=False)
    >>> _unknown_lines([failing])
    ['UNKNOWN s: a; on the way it failed I4 (replay the case to see why)']
    """
    groups: dict[tuple[str, str], list[CaseResult]] = {}
    for result in results:
        # Else the uncrashed case of a scenario whose points: all made no crash case.
        why = _unknown_why(result) if result.status == "unknown" else result.no_crash_case
        if why is not None:
            groups.setdefault((result.case.scenario_name, why), []).append(result)
    return [f"UNKNOWN {first.case.case_id}: {why}" + (f" (+{len(others)} alike)" if others
                                                       else "")
            for (_, why), (first, *others) in groups.items()]


def _unknown_why(result: CaseResult) -> str:
    failed = [v.invariant for v in result.failed_verdicts]
    if not failed:
        return result.unknown_reason
    return (f"{result.unknown_reason}; on the way it failed {', '.join(failed)} "
            "(replay the case to see why)")


def _print_failures(failed: Sequence[CaseResult], by_name: dict[str, Scenario]) -> None:
    """Each failure in full, but cases that failed the same checks with the same messages
    only once, with a count and the ids of the others."""
    from harness._report_text import fold_failures, folded_note, render_failure

    for first, *others in fold_failures(failed):
        more = f" (+{len(others)} alike)" if others else ""
        title = f" FAILED {first.case.case_id}{more} "
        print(f"{title:_^100}")
        print(render_failure(first, by_name[first.case.scenario_name]))
        if others:
            print(f"\n{folded_note(others)}")
        print()


_COLUMNS = ("scenario", "cases", "passed", "failed", "unknown", "crash runs", "duplicates",
            "virtual s")


def summary_table(results: Sequence[CaseResult]) -> str:
    """One row per scenario and a total: cases, and of them passed, failed and unknown (the
    crash point or a scripted fault was never reached), crash runs, duplicate side effects
    and virtual seconds."""
    names = list(dict.fromkeys(result.case.scenario_name for result in results))
    rows = [_summary_row(name, [r for r in results if r.case.scenario_name == name])
            for name in names]
    rows.append(_summary_row("total", list(results)))
    widths = [max(len(str(row[i])) for row in [_COLUMNS, *rows]) for i in range(len(_COLUMNS))]
    lines = [_format_row(_COLUMNS, widths)]
    lines.append("  ".join("-" * width for width in widths))
    lines += [_format_row(row, widths) for row in rows]
    return "\n".join(lines)


def _summary_row(name: str, results: Sequence[CaseResult]) -> tuple[str, ...]:
    statuses = [result.status for result in results]
    return (name, str(len(results)), str(statuses.count("pass")), str(statuses.count("fail")),
            str(statuses.count("unknown")),
            str(sum(result.case.crash is not None for result in results)),
            str(sum(result.duplicates for result in results)),
            f"{sum(result.virtual_seconds for result in results):.1f}")


def _format_row(row: Sequence[str], widths: Sequence[int]) -> str:
    cells = [row[0].ljust(widths[0])] + [cell.rjust(w) for cell, w in zip(row[1:], widths[1:],
                                                                            strict=True)]
    return "  ".join(cells).rstrip()
