"""What frameworks send by themselves: telemetry the world answers, and who sent the rest.

A framework's tracing exporter or usage ping is no part of what the agent does
for its user, so a case must not fail on it. :data:`TELEMETRY` is the one table
of the endpoints the harness answers as their service would (a small success
reply, recorded in the trace as telemetry, with no verdict); each entry names
the library that sends it and the environment variable that turns it off. A
scenario's ``absorb:`` list and ``harness run --absorb HOST`` add hosts.

A framework may call out with a client the harness does not serve
(``urllib.request``): its lookup of a host the table names for that framework's
package is refused as any other, which the framework takes as being offline, but
it is listed as telemetry (:func:`refused_by_itself`), not as the agent's call.

Every other outside call is refused and fails the ``network`` check; the line
recorded for it names the library that made it (:func:`calling_library`) and,
when the table knows that library, its off switch.

>>> absorbed("POST", "https://api.openai.com/v1/traces/ingest").library
'openai-agents'
>>> absorbed("GET", "https://api.openai.com/v1/models") is None
True
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from types import FrameType
from typing import Final
from urllib.parse import urlsplit

from fakes import Emit
from harness.intercept._network import Served


@dataclass(frozen=True)
class Telemetry:
    """One known endpoint a framework calls by itself, and how its service answers."""

    library: str
    """The framework, as its users know it."""
    package: str
    """Its top-level import package: a refused call from it is named by this."""
    host: str
    path: str
    """A path prefix; empty for every path of the host."""
    off_switch: str
    status: int = 200
    body: bytes = b"{}"

    def matches(self, host: str, path: str) -> bool:
        return host == self.host and path.startswith(self.path)


_EMPTY: Final = b""

#: The known telemetry and tracing endpoints, one entry per host (and path).
TELEMETRY: Final[tuple[Telemetry, ...]] = (
    # The OpenAI Agents SDK's trace exporter (a background thread) posts spans here.
    Telemetry("openai-agents", "agents", "api.openai.com", "/v1/traces/ingest",
              "OPENAI_AGENTS_DISABLE_TRACING=1", 204, _EMPTY),
    # LangSmith tracing (LangChain, LangGraph) when LANGSMITH_TRACING is on.
    Telemetry("langsmith", "langsmith", "api.smith.langchain.com", "",
              "LANGSMITH_TRACING=false"),
    Telemetry("langsmith", "langsmith", "eu.api.smith.langchain.com", "",
              "LANGSMITH_TRACING=false"),
    # CrewAI's anonymous usage telemetry (OpenTelemetry over HTTP, port 4319).
    Telemetry("crewai", "crewai", "telemetry.crewai.com", "", "CREWAI_DISABLE_TELEMETRY=true"),
    # smolagents pings through huggingface_hub's telemetry endpoint.
    Telemetry("smolagents (huggingface_hub)", "huggingface_hub", "huggingface.co",
              "/api/telemetry/", "HF_HUB_DISABLE_TELEMETRY=1"),
    # litellm fetches its model price map at import; a 404 makes it use its own copy.
    Telemetry("litellm", "litellm", "raw.githubusercontent.com", "/BerriAI/litellm/",
              "LITELLM_LOCAL_MODEL_COST_MAP=True (and LITELLM_TELEMETRY=False)", 404,
              b"404: Not Found"),
    # Agno posts each run's telemetry from a daemon thread (agno.api.api, over HTTP/2).
    Telemetry("agno", "agno", "os-api.agno.com", "/telemetry/", "AGNO_TELEMETRY=false"),
    # PostHog and Segment: the usage pings of LlamaIndex's, CrewAI's and Chroma's stacks.
    Telemetry("posthog", "posthog", "us.i.posthog.com", "", "POSTHOG_DISABLED=1"),
    Telemetry("posthog", "posthog", "eu.i.posthog.com", "", "POSTHOG_DISABLED=1"),
    Telemetry("posthog", "posthog", "app.posthog.com", "", "POSTHOG_DISABLED=1"),
    Telemetry("segment", "segment", "api.segment.io", "", "DO_NOT_TRACK=1"),
    # CrewAI's update check (crewai_core.version, through urllib.request) when a crew or
    # agent is verbose: refused at the lookup, it finds no newer version and says nothing.
    Telemetry("crewai", "crewai_core", "pypi.org", "/pypi/crewai/",
              "CREWAI_DISABLE_VERSION_CHECK=true", 404, b"Not Found"),
)

#: Off switches of libraries known for calling out by themselves, by import package.
_OFF_SWITCHES: Final[dict[str, str]] = {
    **{t.package: t.off_switch for t in TELEMETRY},
    "llama_index": "DO_NOT_TRACK=1",
    "chromadb": "ANONYMIZED_TELEMETRY=False",
    "smolagents": "HF_HUB_DISABLE_TELEMETRY=1",
    "litellm": "LITELLM_TELEMETRY=False and LITELLM_LOCAL_MODEL_COST_MAP=True",
}


def _off_switch_environment() -> dict[str, str]:
    """Each ``NAME=VALUE`` the off switches name, in the table's order."""
    pairs = (pair for text in (*(t.off_switch for t in TELEMETRY), *_OFF_SWITCHES.values())
             for pair in re.findall(r"\b[A-Z][A-Z0-9_]*=[^\s)]+", text))
    return dict(pair.split("=", 1) for pair in pairs)


#: The off switches as an environment: what a process of the agent (``--exec``, ``harness
#: serve``) is told. Its requests to other hosts never pass through the harness, which can
#: neither absorb nor refuse them: a tracing exporter on by default (the OpenAI Agents SDK
#: for JavaScript posts its spans to api.openai.com when the process exits) would reach the
#: real network with the fake key.
OFF_SWITCH_ENVIRONMENT: Final[dict[str, str]] = _off_switch_environment()


def absorbed(method: str, url: str, extra_hosts: Iterable[str] = ()) -> Telemetry | None:
    """The table's entry for ``url`` (or one made for an added host); None for any other."""
    del method  # every method of a telemetry endpoint is answered alike
    parts = urlsplit(url)
    host, path = parts.hostname or "", parts.path or "/"
    for entry in TELEMETRY:
        if entry.matches(host, path):
            return entry
    if host in set(extra_hosts):
        return Telemetry(host, "", host, "", "(added with absorb)")
    return None


def refused_by_itself(what: str, library: str) -> Telemetry | None:
    """The table's entry for a refused lookup or connection (``resolve HOST``, ``connect
    HOST:PORT``) that ``library`` made to a host the table names for it; None otherwise.

    >>> refused_by_itself("resolve pypi.org", "crewai_core").library
    'crewai'
    >>> refused_by_itself("resolve pypi.org", "pip") is None
    True
    """
    verb, _, where = what.partition(" ")
    if verb == "connect":
        where = where.rsplit(":", 1)[0].strip("[]")
    elif verb != "resolve":
        return None
    return next((t for t in TELEMETRY if t.host == where and t.package == library), None)


def refused_telemetry_line(what: str, entry: Telemetry) -> str:
    """How a refused call a framework makes by itself is listed in the trace."""
    return f"{what} ({entry.library}; refused, not served; off switch: {entry.off_switch})"


def telemetry_answer(entry: Telemetry) -> Served:
    """A telemetry endpoint's reply, as its service gives it: status and a small body, at once."""
    kind = "application/json" if entry.body[:1] == b"{" else "text/plain"
    steps = (Emit(entry.body),) if entry.body else ()
    return Served(entry.status, (("content-type", kind),), (), steps, None)


def telemetry_line(method: str, url: str, entry: Telemetry) -> str:
    """How an absorbed call is listed in the trace."""
    return f"{method} {url} ({entry.library}; off switch: {entry.off_switch})"


# Packages between the caller and the wire: the caller is above them.
_TRANSPORTS: Final = frozenset({
    "httpx", "httpcore", "httpx2", "httpcore2", "aiohttp", "aiohappyeyeballs", "requests",
    "urllib3", "anyio", "sniffio", "h11", "h2", "yarl", "multidict", "certifi", "idna",
    # A database driver and its pools connect for whoever asked (harness.intercept._native).
    "psycopg", "psycopg_pool", "sqlalchemy",
})
_OWN: Final = frozenset({"harness", "fakes", "reports", "_pytest", "pluggy", "pytest",
                         "execnet", "xdist", "__main__"})


def calling_library(frame: FrameType | None = None) -> str:
    """The top-level package of the first frame that is not the standard library, the
    harness, nor an HTTP client library: the code that asked for the connection.

    A call in a background thread or task is walked from that thread's own stack,
    so an exporter thread names its framework.
    """
    current: FrameType | None = frame if frame is not None else sys._getframe(1)
    while current is not None:
        name = str(current.f_globals.get("__name__") or "")
        top = name.split(".", maxsplit=1)[0]
        if top and top not in sys.stdlib_module_names and top not in _TRANSPORTS \
                and top not in _OWN:
            return top
        current = current.f_back
    return "unknown"


def sends_by_itself(library: str) -> bool:
    """Whether ``library`` is one the harness knows to send telemetry of its own accord."""
    return library in _OFF_SWITCHES


def foreign_line(what: str, library: str) -> str:
    """How a refused call is listed for the ``network`` check: what, who, its off switch."""
    off = _OFF_SWITCHES.get(library)
    return f"{what} (by {library}; off switch: {off})" if off else f"{what} (by {library})"
