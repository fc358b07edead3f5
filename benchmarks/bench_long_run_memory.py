"""Memory and time of one uncrashed long run of the reference agent: 100, 500 and 1,000 turns.

Side by side in one run: "whole bodies" keeps each request's parsed body as it
came (the provider before it shared repeated messages: the conversation held once
per turn), "shared" is the harness as it is. Each run is a fresh process, so its
peak resident memory (max RSS) is its own; "above idle" subtracts a 3-turn run's
(the interpreter and the imports). The trace digest shows both keep the same trace.

Time: a turn's own work is the same at turn 1,000 as at turn 1 (the agent reads
its session log incrementally, the fakes each request's conversation from where
the previous one left off); only sending the conversation grows with it. The
last line gives each longer run's time over the linear extrapolation of the
shorter one's ("shared"): 1,000 turns must be within 2.5x of twice 500 turns'.

    .venv/bin/python benchmarks/bench_long_run_memory.py [TURNS ...] [--quick]
"""

from __future__ import annotations

import itertools
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

from _quick import scaled

TURNS = scaled((100, 500, 1000), (4, 8))
# The most a run of twice the turns may take, over twice the shorter run's time.
WITHIN = 2.5
STYLES = ("whole bodies", "shared")


def _keep_whole_bodies(_body: object, previous: list[object], _key: str = "messages", *,
                       ordered: bool = False) -> list[object]:
    """The provider as it was: each request's body kept as parsed, nothing shared.

    Takes what ``share_repeated_messages`` takes (``ordered``: key order too, for the
    prompt cache), which it stands in for.
    """
    del ordered
    return previous


def _one(turns: int, style: str) -> dict[str, object]:
    """Run ``turns`` turns in this process; what it cost."""
    import fakes._provider as provider
    from harness.runner import plan_cases, run_case

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "runner"))
    from long_run import long_scenario  # type: ignore[import-not-found]

    scenario = long_scenario(turns)
    case = next(c for c in plan_cases(scenario, Path("long.yaml"), None) if not c.crash)
    keep_whole = mock.patch.object(provider, "share_repeated_messages", _keep_whole_bodies)
    started = time.perf_counter()
    if style == "whole bodies":
        with keep_whole:
            result = run_case(case, scenario, None)
    else:
        result = run_case(case, scenario, None)
    return {"seconds": time.perf_counter() - started, "passed": result.passed,
            "digest": result.digest,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _child(turns: int, style: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, __file__, "--one", str(turns), style],
                         check=True, capture_output=True, text=True).stdout
    figures: dict[str, object] = json.loads(out.splitlines()[-1])
    return figures


def main(turns: tuple[int, ...]) -> None:
    idle = {style: float(_child(3, style)["max_rss_mb"]) for style in STYLES}  # type: ignore[arg-type]
    print(f"{'turns':>6}  {'style':<13} {'max RSS':>9} {'above idle':>11} {'seconds':>8}  digest")
    above: dict[str, list[float]] = {style: [] for style in STYLES}
    seconds: list[float] = []
    for count in turns:
        digests = set()
        for style in STYLES:
            figures = _child(count, style)
            rss = float(figures["max_rss_mb"])  # type: ignore[arg-type]
            above[style].append(rss - idle[style])
            digests.add(figures["digest"])
            if style == "shared":
                seconds.append(float(figures["seconds"]))  # type: ignore[arg-type]
            assert figures["passed"], (count, style)
            print(f"{count:>6}  {style:<13} {rss:>6.0f} MB {rss - idle[style]:>8.0f} MB "
                  f"{float(figures['seconds']):>8.1f}  {str(figures['digest'])[:12]}")  # type: ignore[arg-type]
        assert len(digests) == 1, f"the two styles gave different traces at {count} turns"
    for style in STYLES:
        growth = [later / max(earlier, 1.0) for earlier, later in zip(above[style],
                                                                      above[style][1:],
                                                                      strict=False)]
        steps = ", ".join(f"{b}->{a} turns: x{g:.1f}" for b, a, g in zip(turns, turns[1:],
                                                                          growth, strict=False))
        print(f"memory above idle, {style}: {steps}")
    ratio = [w / max(s, 1.0) for w, s in zip(above["whole bodies"], above["shared"],
                                              strict=True)]
    print("whole bodies / shared: " + ", ".join(f"{t} turns x{r:.1f}"
                                                 for t, r in zip(turns, ratio, strict=True)))
    print("time over linear, shared: " + _over_linear(turns, seconds))


def _over_linear(turns: tuple[int, ...], seconds: list[float]) -> str:
    """Each run's time over the shorter run's scaled by the turns (1.0: linear).

    Twice the turns must take at most ``WITHIN`` times twice the time: sending the
    conversation itself grows with it, the rest of a turn must not.
    """
    steps = []
    runs = list(zip(turns, seconds, strict=True))
    for (short, short_s), (long, long_s) in itertools.pairwise(runs):
        ratio = long_s / (short_s * long / short)
        verdict = "" if long != 2 * short else \
            f" ({'ok' if ratio <= WITHIN else 'TOO SLOW'}: at most x{WITHIN} for twice the turns)"
        steps.append(f"{short}->{long} turns: {long_s:.1f} s / ({long / short:g} x "
                     f"{short_s:.1f} s) = x{ratio:.2f}{verdict}")
    return "; ".join(steps)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(_one(int(sys.argv[2]), sys.argv[3])))
    else:
        main(tuple(int(arg) for arg in sys.argv[1:]) or TURNS)
