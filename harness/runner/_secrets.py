"""Look for the case's secrets in the files the agent left on the crash disk (J3).

Seed 000 §5: "诊断日志在持久化前对结构化敏感字段脱敏" — structured secret fields are
redacted before anything is persisted. The secrets of a case are the values the
scenario's script passes under arguments its tools mark ``secret`` or under
secret-looking keys, and the values any tool call actually received under such keys
(an agent may build its own). After every incarnation the runner searches every byte
the agent handed to the crash disk, a superset of what any crash class leaves
durable, for each of them as written and as escaped inside a JSON string, and keeps
where it found one: path, byte offset and the argument it was passed as, never the
value::

    look = SecretLook(scenario)
    look.after(incarnation=1, files=disk.files, invocations=world.invocations)
    look.record()   # SecretsRecord(looked_for=('mail.password',), files=2, leaks=(...))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from harness._redact import secret_leaves, value_forms
from harness.scenario import Scenario
from harness.trace import InvocationRecord, SecretLeak, SecretsRecord

# A leak a file keeps is found again after every later incarnation; one report is enough,
# and a log that repeats a secret on every line needs no more than a few lines of evidence.
_MAX_LEAKS = 20


class SecretLook:
    """The secrets of one case and what the agent's files held of them so far."""

    def __init__(self, scenario: Scenario) -> None:
        self._scenario = scenario
        self._secrets = dict(scenario.secret_values())
        self._files = 0
        self._leaks: dict[tuple[str, str], SecretLeak] = {}

    def after(self, incarnation: int, files: Callable[[], Mapping[str, bytes]],
              invocations: Iterable[InvocationRecord]) -> None:
        """Search the files (path to bytes) as incarnation ``incarnation`` left them.

        ``files`` is called only when there is a secret to look for: most cases have none,
        and copying every file after every incarnation would cost them all.
        """
        self._learn(invocations)
        if not self._secrets:
            return
        found = files()
        self._files = max(self._files, len(found))
        for leak in _leaks(incarnation, found, self._secrets):
            if len(self._leaks) < _MAX_LEAKS:
                self._leaks.setdefault((leak.path, leak.secret), leak)

    def any_to_look_for(self, invocations: Iterable[InvocationRecord]) -> bool:
        """Whether the case has a secret, counting what ``invocations`` were passed."""
        self._learn(invocations)
        return bool(self._secrets)

    def _learn(self, invocations: Iterable[InvocationRecord]) -> None:
        for invocation in invocations:
            declared = self._scenario.tools.get(invocation.tool)
            marked = declared.secret if declared is not None else ()
            for key, value in secret_leaves(invocation.arguments, marked):
                self._secrets.setdefault(value, f"{invocation.tool}.{key}")

    def record(self) -> SecretsRecord | None:
        """What was found; ``None`` when the case had nothing secret to look for."""
        if not self._secrets:
            return None
        return SecretsRecord(tuple(sorted(set(self._secrets.values()))), self._files,
                             tuple(self._leaks.values()))


def _leaks(incarnation: int, files: Mapping[str, bytes],
           secrets: Mapping[str, str]) -> Iterator[SecretLeak]:
    for path, data in sorted(files.items()):
        for value, label in secrets.items():
            offsets = [data.find(form.encode()) for form in value_forms(value)]
            found = [offset for offset in offsets if offset >= 0]
            if found:
                yield SecretLeak(incarnation, path, min(found), label)
