"""env:children: a process the agent asks the world to start gets a cleaned environment.

Seed 000 §5: "shell、后台任务、Hook 和 MCP 子进程使用清理过的环境变量 … 减少凭据被传入无关子进程"
— a child process runs with what it needs, never the agent's credentials. The world
starts every child of a ``subprocess`` tool, with the environment the agent handed it
(``ToolContext.env`` on the ports; an ``env`` argument of a plain agent's tool function
standing in for its target) and the variables the scenario declares for the tool. It
records each child's variable names and which of them it should not have had
(``TraceExtra.child_environments``; :mod:`harness.runner._child_env`): a model
provider's key or base URL, a setting of the harness, or a secret-looking name the
scenario does not declare for the tool. The agent passing its whole ``os.environ`` hands
the child the provider's API key it runs with.

A background job whose declaration names its environment (``jobs: {build: {env: []}}``)
is such a child too: the agent hands its process an environment through
``JobPort.start(env=...)``, and the world records it alike.

Applies to scenarios with a subprocess tool or such a job. ``unknown`` when no child
started, or when
a plain agent's function stood in for by its target handed no ``env``: what its own code
would have given the child (``subprocess`` passes the whole ``os.environ`` by default)
cannot be seen, because its code never ran.

Example::

    check_child_environments(trace)  # fail: "call c1 of build: its child got OPENAI_API_KEY ..."
"""

from __future__ import annotations

from typing import Final

from harness.checks._verdict import Verdict
from harness.trace import ChildEnvironment, Trace

_ID: Final = "env:children"
_ADVICE: Final = ("hand a child process a cleaned environment: the variables it needs "
                  "(PATH, HOME, the locale, the temporary folder, what the tool declares), "
                  "never a copy of os.environ with the model provider's key in it")


def check_child_environments(trace: Trace) -> Verdict | None:
    """No child of a subprocess tool received a credential or a variable it should not."""
    children = trace.extra.child_environments
    if children is None:
        return None
    if not children:
        return Verdict(_ID, "unknown", "no child process of the scenario's subprocess tool "
                       "or job started in this run (nothing to judge)")
    bad = [c for c in children if c.unwanted]
    if bad:
        lines = [_line(c) for c in bad]
        return Verdict(_ID, "fail", f"{len(bad)} child process(es) received variables they "
                       f"should not have: {lines[0]}", tuple(lines), advice=_ADVICE)
    if trace.extra.plain and not any(c.handed for c in children):
        return Verdict(_ID, "unknown", "the agent's tool function was stood in for by its "
                       "target and handed no env argument, so the environment its own code "
                       "would give the child (subprocess passes all of os.environ unless "
                       "told otherwise) cannot be seen")
    handed = sum(c.handed for c in children)
    return Verdict(_ID, "pass", f"{len(children)} child process(es), none with a provider's "
                   f"key, a harness setting or an undeclared secret ({handed} with an "
                   "environment the agent handed, the rest the world's clean one)")


def _line(child: ChildEnvironment) -> str:
    source = "the environment the agent handed" if child.handed else "the world's default"
    return (f"call {child.call_id} of {child.tool} (incarnation {child.incarnation}), "
            f"{source}: {'; '.join(child.unwanted)}")
