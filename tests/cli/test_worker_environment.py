"""A case's worker holds none of the harness's environment: not in ``os.environ``, not in
``/proc/self/environ``, not in :mod:`harness._environment`'s state.

The workers are forked from the harness, so without care they inherit the environment the
harness was started with, which an agent can read back from ``/proc/self/environ`` whatever
``os.environ`` says. The harness runs here as a real process started with the secrets, as
a CI job starts it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# System tier (pytest --system): real harness and worker processes.
pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
SECRETS = {"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI-K7MDENG-worker-environ",
           "OPENAI_API_KEY": "sk-real-worker-0123456789",
           "CI_DEPLOY_TOKEN": "deploy-token-0123456789"}
# Each secret as two halves: the agent, which searches its own memory, holds no whole copy.
HALVES = sorted((value[:8], value[8:]) for value in SECRETS.values())

LOOKING = f'''
import ctypes
import os

from harness.agent import ReferenceAgent

HALVES = {HALVES!r}
_SEEN = []


def _holds(data):
    """Which secrets ``data`` (text, or bytes in a process's text forms) holds, by index."""
    forms = [(data, lambda half: half)] if isinstance(data, str) else [
        (data, lambda half, codec=codec: half.encode(codec))
        for codec in ("utf-8", "utf-16-le", "utf-32-le")]
    found = set()
    for text, encoded in forms:
        for i, (head, tail) in enumerate(HALVES):
            first, rest = encoded(head), encoded(tail)
            at = text.find(first)
            while at >= 0:
                if text[at + len(first):at + len(first) + len(rest)] == rest:
                    found.add(i)
                    break
                at = text.find(first, at + 1)
    return found


def _read(path):
    """The file's text, read by C (past any interception of Python's files), or None where
    the kernel refuses it."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(path.encode(), 0)
    if fd < 0:
        return None
    buffer = ctypes.create_string_buffer(1 << 20)
    size = libc.read(fd, buffer, len(buffer))
    libc.close(fd)
    return None if size < 0 else buffer.raw[:size].decode("utf-8", "replace")


def _opened(path):
    """'' where the file opens (the harness's memory would be readable from it), else None."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(path.encode(), 0)
    if fd < 0:
        return None
    libc.close(fd)
    return ""


def _memory():
    """The secrets found in every readable byte of this process, read through the kernel (an
    unmapped or unreadable page skipped)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.pread.restype = ctypes.c_ssize_t
    libc.pread.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long]
    fd = libc.open(b"/proc/self/mem", 0)
    found = set()
    spans = [line.split()[:2] for line in _read("/proc/self/maps").splitlines()]
    # In bounded chunks that overlap by more than a secret's length: a whole mapping read at
    # once (up to a gigabyte) could meet the case's memory cap.
    chunk, overlap = 1 << 24, 1 << 10
    buffer = ctypes.create_string_buffer(chunk)
    for span, perms in spans:
        low, high = (int(part, 16) for part in span.split("-"))
        if "r" not in perms or high - low > 1 << 30:
            continue
        for start in range(low, high, chunk - overlap):
            size = libc.pread(fd, buffer, min(chunk, high - start), start)
            if size <= 0:
                break
            found |= _holds(buffer.raw[:size])
    libc.close(fd)
    return found


def _ancestors():
    """Every ancestor's environment this process can read, joined; None when none can be."""
    texts, pid = [], os.getppid()
    while pid > 1:
        texts.append(_read(f"/proc/{{pid}}/environ"))
        stat = _read(f"/proc/{{pid}}/stat")
        pid = int(stat.rsplit(")", 1)[1].split()[1]) if stat else 0
    readable = [text for text in texts if text is not None]
    return "".join(readable) if readable else None


def _look(where):
    """Which secrets the places an agent can read hold, as words (a value would be redacted)."""
    from harness import _environment

    places = {{"proc": _read("/proc/self/environ"),
               "parent": _read(f"/proc/{{os.getppid()}}/environ"),
               "parentmem": _opened(f"/proc/{{os.getppid()}}/mem"),
               "ancestors": _ancestors(),
               "memory": _memory(),
               "os": repr(dict(os.environ)),
               "host": repr(dict(_environment.host_environment())),
               "module": repr(vars(_environment))}}
    for place, text in places.items():
        found = text if isinstance(text, set) else _holds(text or "")
        said = "denied" if text is None else "clean" if not found else f"holds{{len(found)}}"
        _SEEN.append(f"{{where}}-{{place}}={{said}}")


_look("import")


def main(prompt):
    _look("case")
    raise RuntimeError(" ".join(_SEEN))


class Factory(ReferenceAgent):
    async def run(self, task):
        _look("case")
        raise RuntimeError(" ".join(_SEEN))
'''
HELLO = """\
name: hello
dialect: openai
model:
  - turn: 1
    text: Hello.
expect:
  stop_state: complete
"""


def under_a_shell(*command: str) -> list[str]:
    """``command`` as the child of a shell that keeps running (and holds the environment),
    as a CI step starts the harness."""
    return ["/bin/sh", "-c", '"$@"; exit $?', "sh", *command]


@pytest.mark.parametrize("agent", ["looking_agents:main", "looking_agents:Factory"])
def test_an_agent_finds_no_secret_of_the_harness_anywhere_in_its_process(
        tmp_path: Path, agent: str) -> None:
    (tmp_path / "looking_agents.py").write_text(LOOKING, encoding="utf-8")
    (tmp_path / "hello.yaml").write_text(HELLO, encoding="utf-8")
    environ = {**os.environ, **SECRETS,
               "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    out = tmp_path / "out"
    done = subprocess.run(under_a_shell(sys.executable, "-m", "harness", "run",
                                        str(tmp_path / "hello.yaml"), "--agent", agent,
                                        "--no-crash", "--case-timeout", "600",
                                        "--out", str(out)),
                          env=environ, cwd=tmp_path, capture_output=True, text=True,
                          timeout=900, check=False)

    assert done.returncode == 1, done.stderr
    reason = json.loads((out / "cases.jsonl").read_text(encoding="utf-8"))["stop_reason"]
    seen = dict(word.split("=") for word in reason.rsplit(": ", 1)[-1].split())
    assert seen == expected("import", "case"), reason


CONTAINED = """
from harness.runner._guest import contained


def look(step):
    import looking_agents  # it looks as it is imported, as an agent does in this process

    return looking_agents._SEEN


print(" ".join(contained(look, timeout=300.0)))
"""


def expected(*when: str) -> dict[str, str]:
    """Every place clean, but the /proc of the harness and of every process above it (the
    shell holding the secrets among them): refused by the kernel."""
    return {f"{at}-{place}": "denied" if place.startswith(("parent", "ancestors")) else "clean"
            for at in when
            for place in ("proc", "parent", "parentmem", "ancestors", "memory", "os", "host",
                          "module")}


def test_the_contained_process_that_imports_and_plans_the_agent_holds_no_secret(
        tmp_path: Path) -> None:
    (tmp_path / "looking_agents.py").write_text(LOOKING, encoding="utf-8")
    environ = {**os.environ, **SECRETS,
               "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run(under_a_shell(sys.executable, "-c", CONTAINED), env=environ,
                          capture_output=True, text=True, timeout=600, check=False)

    assert done.returncode == 0, done.stderr
    assert dict(word.split("=") for word in done.stdout.split()) == expected("import")


EXEC_LOOKING = """
import looking_agents

print(" ".join(looking_agents._SEEN))
raise SystemExit(3)
"""


def test_an_exec_agent_reads_no_environment_above_it(tmp_path: Path) -> None:
    (tmp_path / "looking_agents.py").write_text(LOOKING, encoding="utf-8")
    (tmp_path / "exec_looking.py").write_text(EXEC_LOOKING, encoding="utf-8")
    (tmp_path / "hello.yaml").write_text(HELLO, encoding="utf-8")
    environ = {**os.environ, **SECRETS,
               "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    out = tmp_path / "out"
    done = subprocess.run(under_a_shell(
        sys.executable, "-m", "harness", "run", str(tmp_path / "hello.yaml"), "--exec",
        f"{sys.executable} {tmp_path / 'exec_looking.py'}", "--no-crash", "--out", str(out)),
        env=environ, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)

    assert done.returncode == 1, done.stderr
    said = next(line for line in done.stdout.splitlines() if line.startswith("import-proc="))
    seen = dict(word.split("=") for word in said.split())
    # Its parent is the shell --exec starts, a fresh program holding the agent's environment
    # only: readable, and clean. The harness and the shell above it, which hold the secrets,
    # are further up: the ancestors read clean only because those two are refused.
    assert [seen.pop(f"import-{place}") for place in ("parent", "parentmem", "ancestors")
            ] == ["clean"] * 3
    assert seen == {key: value for key, value in expected("import").items()
                    if key not in ("import-parent", "import-parentmem", "import-ancestors")}
