"""The fakes over real HTTP, for agents outside the process (``harness serve``, ``--exec``).

:class:`ServedWorld` is a scenario's world on real (scaled) time;
:func:`build_app` the ASGI app that plays its providers, tools (plain HTTP and
MCP) and control endpoint; :class:`ServerThread` serves it from a thread on
127.0.0.1; :func:`run_exec_case` runs an agent command as a process against
it, killing and restarting the process at a case's crash point.

Example::

    worlds = Worlds([scenario], lambda s: ServedWorld(s, seed=s.seed, time_scale=0.01))
    token = new_token()
    with ServerThread(build_app(worlds, token)) as url:
        ...   # OPENAI_BASE_URL = url + "/v1"
"""

import typing

from harness import _lazy

# The server's modules (uvicorn, starlette, mcp) load on first use of a name below, so that
# ``harness serve``'s argument parser (harness.serve._command) costs no server import.
_EXPORTS = {
    "harness.serve._app": ["SPLIT_GAP_SECONDS", "Worlds", "agent_environment", "build_app"],
    "harness.serve._command": ["add_serve_command", "add_time_scale_option", "plan_exec",
                               "run_exec_cases", "run_serve"],
    "harness.serve._guard": ["Limits", "new_token"],
    "harness.serve._handle": ["RunningServer", "serving"],
    "harness.serve._server": ["ServerThread", "serve_forever"],
    "harness.serve._world": ["KILL_CLASS", "ScaledClock", "ServedWorld"],
}
if typing.TYPE_CHECKING:
    from harness.serve._app import SPLIT_GAP_SECONDS as SPLIT_GAP_SECONDS
    from harness.serve._app import Worlds as Worlds
    from harness.serve._app import agent_environment as agent_environment
    from harness.serve._app import build_app as build_app
    from harness.serve._command import add_serve_command as add_serve_command
    from harness.serve._command import add_time_scale_option as add_time_scale_option
    from harness.serve._command import plan_exec as plan_exec
    from harness.serve._command import run_exec_cases as run_exec_cases
    from harness.serve._command import run_serve as run_serve
    from harness.serve._guard import Limits as Limits
    from harness.serve._guard import new_token as new_token
    from harness.serve._handle import RunningServer as RunningServer
    from harness.serve._handle import serving as serving
    from harness.serve._server import ServerThread as ServerThread
    from harness.serve._server import serve_forever as serve_forever
    from harness.serve._world import KILL_CLASS as KILL_CLASS
    from harness.serve._world import ScaledClock as ScaledClock
    from harness.serve._world import ServedWorld as ServedWorld
else:
    __getattr__ = _lazy.lazy_exports(__name__, _EXPORTS)

__all__ = list(_lazy.exported_names(_EXPORTS))
