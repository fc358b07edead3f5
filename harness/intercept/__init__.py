"""Run a user's agent unchanged: interception instead of ports (DESIGN §4, depth 1).

The harness hands an unchanged agent nothing; it intercepts what the agent
touches instead: HTTP (:func:`intercepted_network`), time (:func:`virtual_time`),
its own files (:class:`AgentFiles`), its SQLite databases (:class:`WorldDatabases`)
and the tool functions a scenario names (:func:`replaced_targets`). :class:`PlainEntry`
and :class:`PlainAgent` put them together around a plain ``main(prompt) -> str``.
"""

from harness.intercept._files import REAL_FS_PACKAGES, AgentFiles
from harness.intercept._frameworks import schemas_derived_once
from harness.intercept._intercepted import intercepted_network
from harness.intercept._native import NATIVE_CLIENTS, native_clients
from harness.intercept._network import ForeverStalled, Route, Served
from harness.intercept._plain import (
    FAKE_API_KEY,
    PROVIDER_ENVIRONMENT,
    CaseWorld,
    PlainAgent,
    PlainEntry,
    guest_factory,
    imported_writing_aside,
    outcome_of_error,
    outcome_of_value,
    provider_environment,
    stop_state_for,
)
from harness.intercept._processes import PROCESS_ADVICE, ProcessRefused, no_processes
from harness.intercept._sqlite import SQLITE_ROLE, WorldDatabases
from harness.intercept._start_folder import (
    HIDDEN_VARIABLE,
    StartFolder,
    hidden_folders,
    keep_hidden_folders,
)
from harness.intercept._targets import (
    Target,
    called_from_blocking_code,
    import_from_cwd,
    missing_function,
    refused_arguments,
    replaced_targets,
    stand_in,
)
from harness.intercept._telemetry import (
    OFF_SWITCH_ENVIRONMENT,
    absorbed,
    calling_library,
    foreign_line,
    refused_by_itself,
    refused_telemetry_line,
    sends_by_itself,
    telemetry_answer,
    telemetry_line,
)
from harness.intercept._time import VIRTUAL_EPOCH, virtual_time

__all__ = [
    "FAKE_API_KEY",
    "HIDDEN_VARIABLE",
    "NATIVE_CLIENTS",
    "OFF_SWITCH_ENVIRONMENT",
    "PROCESS_ADVICE",
    "PROVIDER_ENVIRONMENT",
    "REAL_FS_PACKAGES",
    "SQLITE_ROLE",
    "VIRTUAL_EPOCH",
    "AgentFiles",
    "CaseWorld",
    "ForeverStalled",
    "PlainAgent",
    "PlainEntry",
    "ProcessRefused",
    "Route",
    "Served",
    "StartFolder",
    "Target",
    "WorldDatabases",
    "absorbed",
    "called_from_blocking_code",
    "calling_library",
    "foreign_line",
    "guest_factory",
    "hidden_folders",
    "import_from_cwd",
    "imported_writing_aside",
    "intercepted_network",
    "keep_hidden_folders",
    "missing_function",
    "native_clients",
    "no_processes",
    "outcome_of_error",
    "outcome_of_value",
    "provider_environment",
    "refused_arguments",
    "refused_by_itself",
    "refused_telemetry_line",
    "replaced_targets",
    "schemas_derived_once",
    "sends_by_itself",
    "stand_in",
    "stop_state_for",
    "telemetry_answer",
    "telemetry_line",
    "virtual_time",
]
